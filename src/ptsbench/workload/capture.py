"""Recording a block device's IO as a blktrace binary, for a time or while a command runs.

The kernel's block tracer writes the records. blktrace (the program) reads them through debugfs relay files, which
a kernel in lockdown refuses (`Lockdown: blktrace: debugfs access is restricted`); the same tracer also reaches the
ftrace ring buffer (tracefs), which lockdown's integrity mode leaves open: with the `blk` tracer, the `bin` option
and without `context-info`, `trace_pipe` gives struct blk_io_trace records exactly as blktrace stores them (blkparse
and fio's read_iolog read the file). That path works on every kernel with CONFIG_BLK_DEV_IO_TRACE, so it is the
one used. tracefs is one per machine: a capture refuses to start while another tracer is set, and puts back every
setting it changed.
"""

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ptsbench.errors import PtsbenchError, TargetError

TRACEFS = Path("/sys/kernel/tracing")
BUFFER_KB_PER_CPU = 16384  # the ring buffer while capturing: room for bursts between two reads
READ_BYTES = 1 << 20
POLL_S = 0.2


@dataclass(frozen=True)
class CaptureFacts:
    device: str
    duration_s: float
    event_count: int  # records written to the trace
    dropped_events: int  # records the kernel lost (its ring buffer was full): the trace misses IOs when not 0
    command: tuple[str, ...] = ()
    command_exit_code: int | None = None


def check_can_capture(device: str) -> str:
    """The kernel's name of the whole disk `device` (loop0, nvme0n1) whose IO can be traced, or a one-line error."""
    import stat

    if os.geteuid() != 0:
        raise PtsbenchError("capturing a device's IO needs root (the kernel's block tracer)",
                            "run ptsbench capture as root (sudo); reading a trace needs no root")
    try:
        found = os.stat(device)
    except OSError as error:
        raise TargetError(f"{device}: {error.strerror}", "name a block device, e.g. /dev/nvme0n1") from None
    if not stat.S_ISBLK(found.st_mode):
        raise TargetError(f"{device} is not a block device", "capture a block device (a file's IO is captured "
                          "on the device holding it)")
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(found.st_rdev)}:{os.minor(found.st_rdev)}"))
    if not Path(f"/sys/block/{name}/trace/enable").exists():
        raise TargetError(f"{device} ({name}) has no block trace switch (/sys/block/{name}/trace): a partition, "
                          "or a kernel without CONFIG_BLK_DEV_IO_TRACE", "capture the whole disk it belongs to")
    return name


class _Tracefs:
    """The tracefs settings a capture changes, set and put back."""

    def __init__(self, disk: str) -> None:
        self.disk = disk
        self.saved: list[tuple[Path, str]] = []

    def _set(self, path: Path, value: str, saved: str | None = None) -> None:
        self.saved.append((path, saved if saved is not None else path.read_text().strip()))
        path.write_text(value)

    def start(self) -> None:
        if not (TRACEFS / "trace_pipe").exists():
            subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], check=False, capture_output=True)
        if not (TRACEFS / "trace_pipe").exists():
            raise PtsbenchError(f"tracefs is not mounted at {TRACEFS} and cannot be",
                                f"mount it (mount -t tracefs nodev {TRACEFS}) and capture again")
        tracer = (TRACEFS / "current_tracer").read_text().strip()
        enable = Path(f"/sys/block/{self.disk}/trace/enable")
        if tracer != "nop" or enable.read_text().strip() != "0":
            raise PtsbenchError(f"the kernel's tracer is in use (current_tracer {tracer}, {self.disk} traced: "
                                f"{enable.read_text().strip()})",
                                "wait until the other trace ends, then capture (a capture killed with SIGKILL leaves "
                                f"it so: echo 0 > {enable}; echo nop > {TRACEFS / 'current_tracer'})")
        options = (TRACEFS / "trace_options").read_text().split()
        self._set(TRACEFS / "tracing_on", "0")
        self._set(TRACEFS / "buffer_size_kb", str(BUFFER_KB_PER_CPU))
        self._set(TRACEFS / "current_tracer", "blk")
        self._set(TRACEFS / "trace_options", "bin", "bin" if "bin" in options else "nobin")
        self._set(TRACEFS / "trace_options", "nocontext-info",
                  "nocontext-info" if "nocontext-info" in options else "context-info")
        (TRACEFS / "trace").write_text("")
        self._set(enable, "1")
        (TRACEFS / "tracing_on").write_text("1")

    def stop_tracing(self) -> None:
        Path(f"/sys/block/{self.disk}/trace/enable").write_text("0")
        (TRACEFS / "tracing_on").write_text("0")

    def dropped(self) -> int:
        total = 0
        for stats in (TRACEFS / "per_cpu").glob("cpu*/stats"):
            for line in stats.read_text().splitlines():
                key, _, value = line.partition(":")
                if key.strip() in ("overrun", "dropped events") and value.strip().isdigit():
                    total += int(value.strip())
        return total

    def restore(self) -> None:
        for path, value in reversed(self.saved):
            try:
                path.write_text(value)
            except OSError:
                continue  # put back what can be; a lost setting is the kernel's default after a reboot


def capture(device: str, out_file: Path, duration_s: float | None = None, command: Sequence[str] = (),
            on_tick: Callable[[float, int], None] | None = None) -> CaptureFacts:
    """Trace the IO of `device` into `out_file` (blktrace binary) for `duration_s`, or while `command` runs."""
    disk = check_can_capture(device)
    tracefs = _Tracefs(disk)
    started = time.monotonic()
    process: subprocess.Popen[bytes] | None = None
    exit_code = None
    # SIGTERM ends the capture like Ctrl-C: the trace so far is kept and tracefs put back (not so SIGKILL)
    previous = signal.signal(signal.SIGTERM, _interrupt) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        # the trace file exists before the device's trace switch turns on: a capture stopped at any moment after it
        # keeps a trace, if an empty one
        with open(out_file, "xb") as sink:
            tracefs.start()
            pipe = os.open(TRACEFS / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
            try:
                if command:
                    process = subprocess.Popen(list(command))
                while True:
                    _drain(pipe, sink)
                    elapsed = time.monotonic() - started
                    if on_tick:
                        on_tick(elapsed, sink.tell())
                    if process is not None and process.poll() is not None:
                        exit_code = process.returncode
                        break
                    if process is None and duration_s is not None and elapsed >= duration_s:
                        break
                    select.select([pipe], [], [], POLL_S)
                duration = time.monotonic() - started
                tracefs.stop_tracing()
                _drain(pipe, sink)
                sink.flush()
                os.fsync(sink.fileno())
            finally:
                os.close(pipe)
        dropped = tracefs.dropped()
    finally:
        if process is not None and process.poll() is None:
            process.terminate()
            process.wait()
        tracefs.restore()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return CaptureFacts(device, duration, _count_records(out_file), dropped, tuple(command), exit_code)


def _interrupt(_signal: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _drain(pipe: int, sink: BinaryIO) -> None:
    """Copy what the trace pipe holds now into `sink`."""
    while True:
        try:
            chunk = os.read(pipe, READ_BYTES)
        except BlockingIOError:
            return
        if not chunk:
            return
        sink.write(chunk)


def _count_records(path: Path) -> int:
    from ptsbench.workload.blktrace import read_blktrace

    return read_blktrace(path).event_count if path.stat().st_size else 0
