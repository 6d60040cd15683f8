"""A trace read as one IO stream, whatever its format: a blktrace binary or an fio IO log (version 2 or 3).

The stream is what the application asked for: blktrace's queue events (or the log's reads, writes and trims), each
with its time, direction, size and offset. A blktrace binary also says when the device got each IO (issue) and
finished it (complete): from those come the IOs outstanding and the idle times.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ptsbench.errors import PtsbenchError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

TRACE_HEAD_BYTES = 64


@dataclass(frozen=True)
class IOStream:
    source: str  # "blktrace" or "fio iolog v2" / "fio iolog v3"
    event_count: int  # records (blktrace) or lines (iolog) in the file
    time_ns: "npt.NDArray[np.int64] | None"  # when each IO was queued, from the trace's start (None: no times)
    direction: "npt.NDArray[np.uint8]"  # 0 read, 1 write, 2 trim (workload.blktrace.DIRECTIONS)
    size_bytes: "npt.NDArray[np.int64]"
    offset_bytes: "npt.NDArray[np.int64]"
    issue_ns: "npt.NDArray[np.int64] | None" = None  # the device got an IO (blktrace only)
    complete_ns: "npt.NDArray[np.int64] | None" = None  # the device finished one
    pid: "npt.NDArray[np.uint32] | None" = None  # the process that queued each IO (blktrace only)
    devices: tuple[int, ...] = ()  # the traced devices (dev_t), blktrace only
    files: tuple[str, ...] = ()  # the files an fio IO log names


def trace_format(path: Path) -> str:
    """"blktrace" or "iolog": the format of the trace file `path`, by its first bytes."""
    from ptsbench.fio.iolog import blktrace_byte_order, iolog_version

    try:
        with open(path, "rb") as handle:
            head = handle.read(TRACE_HEAD_BYTES)
    except OSError as error:
        raise PtsbenchError(f"cannot read the trace {path}: {error.strerror}",
                            "give a blktrace binary or an fio IO log") from None
    if not head or blktrace_byte_order(head) is not None:  # empty: a capture of a device that did no IO
        return "blktrace"
    if iolog_version(head) is not None:
        return "iolog"
    raise PtsbenchError(f"{path} is neither a blktrace binary nor an fio IO log",
                        "give a file `ptsbench capture`, blktrace or fio's write_iolog wrote (blkparse's text "
                        "output is not read: give its binary input)")


def load_stream(path: Path) -> IOStream:
    """The IO stream of the trace file `path`."""
    import os
    import stat

    try:
        found = os.stat(path)
    except OSError as error:
        raise PtsbenchError(f"cannot read the trace {path}: {error.strerror}", "check the path") from None
    if not stat.S_ISREG(found.st_mode):
        raise PtsbenchError(f"{path} is not a regular file", "give the trace file itself")
    if trace_format(path) == "blktrace":
        return _from_blktrace(path)
    from ptsbench.fio.iolog import read_iolog

    log = read_iolog(path)
    return IOStream(f"fio iolog v{log.version}", log.line_count, log.time_ns, log.direction, log.size_bytes,
                    log.offset_bytes, files=log.files)


def _from_blktrace(path: Path) -> IOStream:
    from ptsbench.workload.blktrace import ACT_COMPLETE, ACT_ISSUE, ACT_QUEUE, read_blktrace

    events = read_blktrace(path)
    queued = events.act == ACT_QUEUE
    return IOStream("blktrace", events.event_count, events.time_ns[queued], events.direction[queued],
                    events.size_bytes[queued], events.offset_bytes[queued],
                    events.time_ns[events.act == ACT_ISSUE], events.time_ns[events.act == ACT_COMPLETE],
                    events.pid[queued], events.devices)


def of_process(stream: IOStream, pid: int) -> IOStream:
    """The IOs of `stream` that process `pid` queued (outstanding IOs, counted at the device for all, are left
    out)."""
    import dataclasses

    if stream.pid is None:
        raise PtsbenchError(f"a {stream.source} trace does not say which process queued an IO",
                            "select by process in blktrace binaries only")
    chosen = stream.pid == pid
    return dataclasses.replace(
        stream, time_ns=stream.time_ns[chosen] if stream.time_ns is not None else None,
        direction=stream.direction[chosen], size_bytes=stream.size_bytes[chosen],
        offset_bytes=stream.offset_bytes[chosen], pid=stream.pid[chosen], issue_ns=None, complete_ns=None)
