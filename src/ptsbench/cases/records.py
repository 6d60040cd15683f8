"""Finished cases as stored: each case's result.json (what ran, how it ended, what fio measured), read back."""

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ptsbench.errors import StoreError
from ptsbench.fio.output import JobResult
from ptsbench.store import RunStore, read_json

RESULT = "result.json"


def job_result_dict(result: JobResult) -> dict[str, Any]:
    """A JobResult for result.json: everything but the bins (those stay in fio.json; each percentile's IOs beyond
    it, counted in them, are kept as lat.beyond)."""
    data = asdict(result)
    data["note"] = result.merge_note
    for direction in data["directions"]:
        direction["lat"].pop("bins")
    return data


@dataclass
class CaseRecord:
    """A finished case as stored: what ran, how it ended, what fio measured."""

    index: int
    name: str
    source: str
    target: str | None
    status: str
    message: str
    started_utc: str
    ended_utc: str
    jobs: list[dict[str, Any]]
    hosts: list[dict[str, Any]] = field(default_factory=list)  # with --hosts: each host's status and fio's words
    fio_io_span_ms: list[int] | None = None  # [start, end] in Unix ms within fio's run (fio/output.py io_span_ms)
    repetition: int = 0  # with --repeat: which repetition of its job file and target (1..N); 0: ran once
    telemetry: list[dict[str, Any]] = field(default_factory=list)  # NVMe namespaces written: device/case_telemetry.py


def load_records(store: RunStore) -> list[CaseRecord]:
    """Finished cases of a run directory, in case order. A run that ended names its cases in the manifest: one
    without its result.json (or without cases/) is a damaged store, refused naming what is missing."""
    cases_dir = store.root / "cases"
    manifest = store.manifest
    planned = manifest.get("cases")
    if isinstance(planned, list) and manifest.get("status") == "done":
        missing = [cases_dir / str(name) / RESULT for name in planned if not (cases_dir / str(name) / RESULT).is_file()]
        if missing:
            what = f"{cases_dir} is missing" if not cases_dir.is_dir() else \
                f"{missing[0]} is missing" + (f" (and {len(missing) - 1} more result.json)" if len(missing) > 1 else "")
            raise StoreError(f"{what}: the run finished {len(planned)} case(s)",
                             "restore the run directory from a copy, or run it again")
    if not cases_dir.is_dir():
        return []
    return [read_record(path) for path in sorted(cases_dir.glob(f"*/{RESULT}"))]


def read_record(path: Path) -> CaseRecord:
    data = read_json(path)
    try:
        return CaseRecord(**data)
    except TypeError as error:  # not a mapping, or fields missing or unknown: edited or damaged by hand
        raise StoreError(f"{path} is damaged: not a case result as ptsbench wrote it ({error})",
                         "restore it from a copy, or run the case again") from error
