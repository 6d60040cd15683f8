"""fio's IO logs (`write_iolog`, versions 2 and 3) read back, and the job that replays a trace (`read_iolog`).

Version 2 lines are `FILE ACTION` (add, open, close) or `FILE ACTION OFFSET LENGTH` (read, write, trim, sync,
datasync, wait); version 3 puts the time in microseconds since the log began in front of each line. fio replays a
blktrace binary through the same `read_iolog` option; `replay_redirect` sends every IO of the log, whatever file or
device it names, to one target.
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ptsbench.errors import PtsbenchError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

HEADER_PREFIX = "fio version "
HEADER_SUFFIX = " iolog"
DATA_ACTIONS = {"read": 0, "write": 1, "trim": 2}  # codes as in the workload's DIRECTIONS
OTHER_ACTIONS = ("add", "open", "close", "sync", "datasync", "wait")  # file and timing actions without data
BLKTRACE_MAGIC = 0x65617400  # blk_io_trace's magic word, its low byte the format version
MAX_LOG_BYTES = 8 << 30  # a text log larger than this is not one fio wrote for a replay ptsbench reads


@dataclass(frozen=True)
class IologEvents:
    """The data-moving lines of an fio IO log, in the log's order."""

    version: int
    line_count: int  # every line after the header
    time_ns: "npt.NDArray[np.int64] | None"  # version 3 only (version 2 logs carry no times)
    direction: "npt.NDArray[np.uint8]"
    size_bytes: "npt.NDArray[np.int64]"
    offset_bytes: "npt.NDArray[np.int64]"
    files: tuple[str, ...]  # the files the log names (replay_redirect sends them all to one target)


def blktrace_byte_order(head: bytes) -> str | None:
    """The byte order ("<" or ">") of a blktrace binary starting with `head` (its first record's magic word
    0x656174NN), or None for another file."""
    for order, name in (("<", "little"), (">", "big")):
        if len(head) >= 4 and int.from_bytes(head[:4], name) & 0xFFFFFF00 == BLKTRACE_MAGIC:  # type: ignore[arg-type]
            return order
    return None


def iolog_version(head: bytes) -> int | None:
    """The version of an fio IO log starting with `head` (its first line), or None."""
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if first.startswith(HEADER_PREFIX) and first.endswith(HEADER_SUFFIX):
        number = first[len(HEADER_PREFIX):-len(HEADER_SUFFIX)]
        return int(number) if number.isdigit() else None
    return None


def read_iolog(path: Path) -> IologEvents:
    """The IO lines of the fio IO log `path`. A line fio would not replay as written (an unknown action, an
    `unlink`, a missing number) is refused with its line number: the log is hostile input, like a job file."""
    import numpy as np

    if path.stat().st_size > MAX_LOG_BYTES:
        raise PtsbenchError(f"{path} is larger than {MAX_LOG_BYTES >> 30} GiB", "give fio's iolog of one workload")
    with open(path, "rb") as handle:
        version = iolog_version(handle.readline())
        if version not in (2, 3):
            raise PtsbenchError(f"{path} is not an fio IO log of version 2 or 3 (first line `fio version N iolog`)",
                                "give a log fio's write_iolog wrote, or a blktrace binary")
        lines = handle.read().decode("utf-8", "replace").splitlines()
    timed = version == 3
    times: list[int] = []
    directions: list[int] = []
    sizes: list[int] = []
    offsets: list[int] = []
    files: dict[str, None] = {}
    for number, line in enumerate(lines, start=2):
        fields = line.split()
        if not fields:
            continue
        if timed:
            stamp, fields = fields[0], fields[1:]
        if len(fields) not in (2, 4) or (timed and not stamp.isdigit()):
            raise _bad_line(path, number, line)
        name, action = fields[0], fields[1]
        files[name] = None
        if action in DATA_ACTIONS and len(fields) == 4 and fields[2].isdigit() and fields[3].isdigit():
            directions.append(DATA_ACTIONS[action])
            offsets.append(int(fields[2]))
            sizes.append(int(fields[3]))
            if timed:
                times.append(int(stamp) * 1000)
        elif action not in OTHER_ACTIONS:
            raise _bad_line(path, number, line)
    return IologEvents(version, len(lines), np.asarray(times, dtype=np.int64) if timed else None,
                       np.asarray(directions, dtype=np.uint8), np.asarray(sizes, dtype=np.int64),
                       np.asarray(offsets, dtype=np.int64), tuple(files))


def _bad_line(path: Path, number: int, line: str) -> PtsbenchError:
    return PtsbenchError(f"{path} line {number}: {line.strip()[:80]!r} is no IO log line fio replays only where "
                         "ptsbench sends it (FILE ACTION [OFFSET LENGTH], actions "
                         f"{', '.join((*DATA_ACTIONS, *OTHER_ACTIONS))})",
                         "give a log fio's write_iolog wrote, unchanged")


def replay_redirect_only(log_path: str) -> str | None:
    """Why replaying `log_path` with replay_redirect may do more than IO on the redirect target, or None when it
    does only that: a blktrace binary (fio replays its queue events as reads, writes and trims) or an fio IO log
    whose every line reads, writes, trims, syncs, waits, adds, opens or closes (no `unlink`)."""
    import stat

    try:
        if not stat.S_ISREG(os.stat(log_path).st_mode):  # a FIFO or device would block the guard, or change
            return f"its IO log {log_path} is not a regular file"
        with open(log_path, "rb") as handle:
            head = handle.read(64)
        if blktrace_byte_order(head) is not None:
            return None
        if iolog_version(head) in (2, 3):
            read_iolog(Path(log_path))
            return None
    except (OSError, PtsbenchError) as error:
        return f"its IO log {log_path} cannot be judged ({error})"
    return f"its IO log {log_path} is neither a blktrace binary nor an fio IO log of version 2 or 3"


def replay_job_text(log_path: Path, target: str, engine: str, rate_percent: int | None, no_stall: bool) -> str:
    """The job that replays `log_path` onto `target`: direct IO through `engine`, at the captured pace, scaled
    (replay_time_scale: `rate_percent` of the captured IO rate, 200 twice as fast), or as fast as fio can
    (replay_no_stall)."""
    from ptsbench.fio.jobs import render_job_file

    options: dict[str, str | None] = {"read_iolog": str(log_path), "replay_redirect": target, "ioengine": engine,
                                      "direct": "1"}
    if no_stall:
        options["replay_no_stall"] = "1"
    elif rate_percent is not None:
        options["replay_time_scale"] = str(rate_percent)
    return render_job_file({}, [("replay", options)])



def fill_job_text(target: str, engine: str, loops: int) -> str:
    """RWSW's workload-independent preconditioning of `target` before a replay's rounds: sequential 128 KiB
    writes over the whole file or device (fio takes its size), `loops` times, direct IO through `engine`."""
    from ptsbench.fio.jobs import render_job_file

    return render_job_file({}, [("precondition", {"filename": target, "rw": "write", "bs": "128k", "iodepth": "32",
                                                  "ioengine": engine, "direct": "1", "loops": str(loops)})])
