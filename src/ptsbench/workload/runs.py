"""store: a workload's run directory. A capture (kind "capture") keeps the trace with its facts and its
characterisation; a replay is a case-runner run (kind "run") that also keeps the trace it replayed, that trace's
characterisation and the comparison of what fio did with what the trace holds.

  manifest.json               kind, versions, command line, host; a capture's facts (device, duration, events,
                              dropped events, the command it ran)
  trace.blktrace | trace.iolog  the trace (a replay's copy of the trace it replayed)
  characterisation.json       the trace's statistics (workload/characterise.py)
  replay.json                 a replay: the trace's IOs and bytes per direction beside fio's
  steady.json                 a replay --steady: each round's IOPS and mean latency, the PTS criterion's verdict
  purge.json                  a replay --steady: each purge of the target before the preconditioning (method,
                              commands, outcome), one more on each resume that preconditions again
"""

import contextlib
from pathlib import Path
from typing import Any

from ptsbench.errors import StoreError

TRACE_NAMES = ("trace.blktrace", "trace.iolog")
CHARACTERISATION = "characterisation.json"
REPLAY = "replay.json"
STEADY = "steady.json"
PURGE = "purge.json"


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
    """The characterisation of a run directory's trace: as stored, or made again from the stored trace when it is
    missing or of another version (then stored again); None for a run directory without a trace."""
    from ptsbench.store import read_json
    from ptsbench.workload.characterise import VERSION

    path = run_dir / CHARACTERISATION
    found = read_json(path) if path.is_file() else None
    if isinstance(found, dict) and found.get("version") == VERSION:
        return found
    try:
        trace = trace_in(run_dir)
    except StoreError:
        return None
    from ptsbench.workload.characterise import characterise
    from ptsbench.workload.stream import load_stream

    found = characterise(load_stream(trace))
    with contextlib.suppress(StoreError):  # a read-only copy of the run directory: shown, not stored
        write_characterisation(run_dir, found)
    return found
