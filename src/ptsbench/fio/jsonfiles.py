"""fio JSON / json+ output files from anywhere (ptsbench's fio.json, plain `fio --output-format=json`, client/server
runs): found in folders by content, not by name, and read into results with the facts charts group by.

Plain fio reports latency percentiles for completion latency (clat) only, unless the job set lat_percentiles=1; then
the results carry clat, and say so, rather than total latency without percentiles.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptsbench.errors import PtsbenchError
from ptsbench.fio.output import DIRECTIONS, JobResult, job_entries, parse_jobs
from ptsbench.textfile import not_found_reason, open_regular

MIXED_RW = ("rw", "readwrite", "randrw")
MAX_FIO_NUMBER = 2**64  # fio counts in 64 bits: a number past this (1e308, say) is not one it wrote
MAX_JSON_BYTES = 1 << 30  # fio JSON of thousands of jobs with all their bins stays far below this


@dataclass(frozen=True)
class FoundJob:
    """One job (or reporting group, per host in client/server runs) of one fio output file."""

    result: JobResult
    rwmixread: int | None  # mixed workloads: the read share fio ran with
    latency: str  # "lat" (total latency) or "clat" (completion latency: plain fio's only percentiles)
    path: Path
    filename: str = ""  # the job's filename option (what it ran on), when the document echoes it


def load_document(path: Path) -> dict[str, Any] | None:
    """fio's JSON document in a file (text fio printed before it, such as warnings, is skipped); None when the file
    holds no fio output."""
    hint = "pass fio's JSON output files (or folders holding them)"
    try:
        with open_regular(path, "fio JSON file", hint) as handle:
            data = handle.read(MAX_JSON_BYTES + 1)
    except OSError as error:
        raise PtsbenchError(f"cannot read {path}: {error.strerror}", "check the path and its permissions") from error
    if len(data) > MAX_JSON_BYTES:
        raise PtsbenchError(f"{path} is larger than {MAX_JSON_BYTES >> 30} GiB: not fio's JSON output", hint)
    text = data.decode(errors="replace")
    start = text.find("{")
    decoder = json.JSONDecoder(parse_constant=_no_constant)
    while start >= 0:
        try:
            doc, _end = decoder.raw_decode(text, start)
        except _NotFio as error:
            raise PtsbenchError(f"{path} holds {error}, which fio never writes: it is not fio's output as fio wrote "
                                "it", "pass the JSON file fio wrote (--output-format=json)") from None
        except json.JSONDecodeError:
            start = text.find("\n{", start + 1)
            start = start + 1 if start >= 0 else -1
            continue
        if isinstance(doc, dict) and "fio version" in doc and ("jobs" in doc or "client_stats" in doc):
            return doc
        return None
    return None


class _NotFio(ValueError):
    """A JSON constant fio never writes (NaN, Infinity), met while reading a document."""


def _no_constant(name: str) -> Any:
    raise _NotFio(name)


def _check_values(path: Path, found: Sequence[FoundJob], entries: Sequence[Mapping[str, Any]]) -> None:
    """PtsbenchError for a number fio cannot have written, so it is never drawn: a negative or larger than 64 bits
    count, rate or latency, or a queue depth or job count that is no whole number (fio echoes the job's own)."""
    for job in found:
        for direction in job.result.directions:
            lat = direction.lat
            values = {"iops": direction.iops, "bw_bytes": direction.bw_bytes, "io_bytes": direction.io_bytes,
                      "total_ios": direction.total_ios, "lat mean": lat.mean_ns, "lat max": lat.max_ns,
                      **{f"lat p{key}": value for key, value in lat.percentiles_ns.items()}}
            for name, value in values.items():
                if value is not None and not 0 <= value < MAX_FIO_NUMBER:
                    raise PtsbenchError(f"{path}: job {job.result.name}: {direction.direction} {name} is {value:g}, "
                                        "which fio cannot have measured", "pass the JSON file fio wrote")
    for entry in entries:
        for key in ("iodepth", "numjobs"):
            value = (entry.get("job options") or {}).get(key)
            if value is not None and not (isinstance(value, str) and value.strip().isdigit()):
                raise PtsbenchError(f"{path}: job {entry.get('jobname')}: {key} {value!r} is not a whole number",
                                    "pass the JSON file fio wrote")


def _has_lat_percentiles(entries: Sequence[Mapping[str, Any]]) -> bool:
    return any((entry.get(d) or {}).get("lat_ns", {}).get("percentile") for entry in entries for d in DIRECTIONS)


def _clat_as_lat(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document with each direction's clat_ns in the place of lat_ns."""
    def entry(item: Mapping[str, Any]) -> dict[str, Any]:
        changed = dict(item)
        for direction in DIRECTIONS:
            if isinstance(item.get(direction), Mapping) and "clat_ns" in item[direction]:
                changed[direction] = {**item[direction], "lat_ns": item[direction]["clat_ns"]}
        return changed

    key = "client_stats" if "client_stats" in doc else "jobs"
    return {**doc, key: [entry(item) for item in doc.get(key, [])]}


def _read_share(options: Mapping[str, Any]) -> int | None:
    rw = str(options.get("rw") or options.get("readwrite") or "read").partition(":")[0]
    if rw not in MIXED_RW:
        return None
    try:
        if "rwmixread" in options:
            return int(options["rwmixread"])
        if "rwmixwrite" in options:
            return 100 - int(options["rwmixwrite"])
    except ValueError:
        return None
    return 50  # fio's default


def document_jobs(doc: Mapping[str, Any], path: Path) -> list[FoundJob]:
    """Every job of a fio document, total latency when fio has its percentiles, else completion latency."""
    entries = job_entries(doc)
    latency = "lat" if _has_lat_percentiles(entries) or not entries else "clat"
    parsed = parse_jobs(doc if latency == "lat" else _clat_as_lat(doc))
    options = {(str(e.get("jobname", "")), str(e.get("hostname", ""))): {**doc.get("global options", {}),
                                                                       **e.get("job options", {})} for e in entries}
    found = []
    for result in parsed:
        job_options = options.get((result.name, str(result.hostname or "")), {})
        found.append(FoundJob(result, _read_share(job_options), latency, path,
                              str(job_options.get("filename", "")).replace("\\:", ":")))
    _check_values(path, found, entries)
    return found


def find_json_files(inputs: Sequence[str]) -> list[Path]:
    """Files named, and every *.json under folders named (in name order); none found is an error."""
    found: list[Path] = []
    for raw in inputs:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.json") if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise PtsbenchError(f"{raw}: {not_found_reason(raw)}", "name fio JSON files or folders holding them")
    return found
