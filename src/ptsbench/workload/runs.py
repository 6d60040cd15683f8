"""store: a workload's run directory. A capture (kind "capture") keeps the trace with its facts and its
characterisation; a replay is a case-runner run (kind "run") that also keeps the trace it replayed, that trace's
characterisation and the comparison of what fio did with what the trace holds.

  manifest.json               kind, versions, command line, host; a capture's facts (device, duration, events,
                              dropped events, the command it ran)
  trace.blktrace | trace.iolog  the trace (a replay's copy of the trace it replayed)
  characterisation.json       the trace's statistics (workload/characterise.py)
  replay.json                 a replay: the trace's IOs and bytes per direction beside fio's
  steady.json                 a replay --steady: each round's IOPS and mean latency, the PTS criterion's verdict
"""

from pathlib import Path
from typing import Any

from ptsbench.errors import StoreError

TRACE_NAMES = ("trace.blktrace", "trace.iolog")
CHARACTERISATION = "characterisation.json"
REPLAY = "replay.json"
STEADY = "steady.json"


def trace_name(trace_format: str) -> str:
    return TRACE_NAMES[0] if trace_format == "blktrace" else TRACE_NAMES[1]


def trace_in(path: Path) -> Path:
    """The trace file `path` names: itself, or the trace a capture or replay run directory keeps."""
    if not path.is_dir():
        return path
    for name in TRACE_NAMES:
        if (path / name).is_file():
            return path / name
    raise StoreError(f"{path} holds no trace ({' or '.join(TRACE_NAMES)})",
                     "give a run directory of ptsbench capture or replay, or a trace file")


def write_characterisation(run_dir: Path, found: dict[str, Any]) -> None:
    from ptsbench.atomic import atomic_write_json

    atomic_write_json(run_dir / CHARACTERISATION, found)


def read_characterisation(run_dir: Path) -> dict[str, Any] | None:
    """The stored characterisation of a run directory, or None when it has none."""
    from ptsbench.store import read_json

    path = run_dir / CHARACTERISATION
    if not path.is_file():
        return None
    found = read_json(path)
    if not isinstance(found, dict):
        raise StoreError(f"{path} is damaged: not a JSON object", f"run `ptsbench characterise {run_dir}` again")
    return found
