"""How long this program's fio processes waited for a CPU: the host's share in a slow second.

A second with fewer IOs on a busy host is the drive's only when fio got the CPU it asked for. The kernel counts, per
thread, the time it was runnable but not running (/proc/PID/task/TID/schedstat, second field, ns: run-queue wait).
A fio process blocked on its IOs does not wait there; one the host starves does. Read beside every status document
(fio/intervals.py SecondSamples) for the threads of fio's job processes, it gives the largest share of the interval
one of them waited: 0 % when fio ran whenever it could, 50 % when one of them waited half the time.
"""

import time
from pathlib import Path

from ptsbench.fio.runner import running_fio_pids

PROC = Path("/proc")


def _waits_ns(pid: int) -> dict[int, int]:
    """Thread id -> its run-queue wait so far, for each thread of a process ({} when it is gone or the kernel does
    not say)."""
    waits = {}
    try:
        for task in (PROC / str(pid) / "task").iterdir():
            waits[int(task.name)] = int((task / "schedstat").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return {}
    return waits


def _children(pid: int) -> list[int]:
    try:
        return [int(child) for task in (PROC / str(pid) / "task").iterdir()
                for child in (task / "children").read_text().split()]
    except (OSError, ValueError):
        return []


class FioWaits:
    """The largest share of the time since the previous call (%) that one thread of this program's fio jobs spent
    waiting for a CPU (the job processes fio forks; fio's own threads where its jobs are threads); None at the first
    call, or where the kernel keeps no schedstat."""

    def __init__(self) -> None:
        self.last_s = time.monotonic()
        self.waited: dict[int, int] = {}  # thread id -> run-queue wait so far, ns

    def share_pct(self) -> float | None:
        now_s = time.monotonic()
        waited: dict[int, int] = {}
        for fio in running_fio_pids():
            for pid in _children(fio) or [fio]:
                waited.update(_waits_ns(pid))
        interval_ns = (now_s - self.last_s) * 1e9
        shares = [(ns - self.waited[tid]) / interval_ns for tid, ns in waited.items() if tid in self.waited]
        self.last_s, self.waited = now_s, waited
        return round(min(100.0, 100 * max(shares)), 1) if shares and interval_ns > 0 else None
