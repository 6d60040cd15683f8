"""The watcher of fio/lifetime.py: collects markers (absolute paths, or an fio server's option) from stdin, one per
line, until ptsbench's end of the pipe closes (ptsbench is gone, however it went), then stops every fio process of
those markers that started before that moment: SIGTERM, then SIGKILL for any still there after WATCHER_TERM_S.

Every ptsbench command that runs fio starts one, so it is a script of the standard library alone, run by its path
with `python -I -S` (no site-packages, no ptsbench package): about 20 ms of CPU, where `python -m
ptsbench.fio.lifetime` took 40-50 (site, pathlib, subprocess, ctypes). lifetime.py uses the same look through /proc
for its own searches (fio_pids, stop_orphan_fio).
"""

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterable, Sequence

WATCHER_TERM_S = 5.0


def fio_pids_of(markers: Sequence[str]) -> list[int]:
    """fio processes of any of `markers`: an fio server's option among its arguments as given, or a path its
    arguments name (itself or a path under it, from fio's working folder, by whole components: neither /runs/a1 nor
    /runs/a/../b is under /runs/a, whose run must never stop theirs). One look through /proc for all of them:
    each look reads every process's arguments (a few ms on a busy host), and the watcher of a long sweep holds a
    marker per cell."""
    if not markers:
        return []
    servers = [marker for marker in markers if marker.startswith("--server=")]
    paths = {os.path.normpath(marker) for marker in markers if not marker.startswith("--server=")}
    folders = tuple(path.rstrip("/") + "/" for path in paths)
    return [pid for pid, given, words in fio_processes()
            if any(server in given for server in servers)
            or any((word := os.path.normpath(path)) in paths or word.startswith(folders) for path in words)]


def fio_processes() -> list[tuple[int, list[str], list[str]]]:
    """Every fio process: its pid, its arguments as given and as paths from its working folder (the program left
    out). fio is known by its program's name: `fio`, or the name of the program PTSBENCH_FIO points to (say
    fio-3.36), whose job processes would otherwise be found by no watcher, watchdog or resume."""
    programs = {"fio", os.path.basename(os.environ.get("PTSBENCH_FIO") or "fio")}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            if not argv[0] or os.path.basename(argv[0].decode(errors="replace")) not in programs:
                continue  # no fio: its working folder is not read (most processes; each read costs)
            cwd = os.readlink(f"/proc/{name}/cwd")
        except OSError:
            continue
        given = [word.decode(errors="replace") for word in argv if word]
        words = [os.path.join(cwd, word) for word in given]  # relative to its cwd
        found.append((int(name), given[1:], words[1:]))
    return found


def started_ticks(pid: int) -> int | None:
    """When a process started, in clock ticks since boot (/proc/PID/stat field 22); None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def stop_fio_of(markers: Iterable[str], term_s: float = WATCHER_TERM_S) -> None:
    """SIGTERM every fio process of `markers` started before now, then SIGKILL those still there after `term_s` (a
    fio started later belongs to someone else, e.g. a resume of the same run)."""
    with open("/proc/uptime") as handle:
        now_ticks = float(handle.read().split()[0]) * os.sysconf("SC_CLK_TCK")
    watched = list(markers)

    def ours() -> list[int]:
        return [pid for pid in fio_pids_of(watched) if (ticks := started_ticks(pid)) is not None and ticks <= now_ticks]

    # SIGTERM once (fio ends cleanly), then SIGKILL to each one still found until none is: a process the single look
    # missed (its /proc entry unreadable for a moment) must not be left to write on
    for signal_number, wait_s in ((signal.SIGTERM, term_s), (signal.SIGKILL, term_s)):
        signalled: set[int] = set()
        deadline = time.monotonic() + wait_s
        while (pids := ours()) and time.monotonic() < deadline:
            for pid in pids:
                if signal_number == signal.SIGKILL or pid not in signalled:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal_number)
                    signalled.add(pid)
            time.sleep(0.05)


def watch() -> None:
    """The watcher's life: collect markers until ptsbench's end of the pipe closes, then stop their fio."""
    markers = {line.decode(errors="replace").rstrip("\n") for line in sys.stdin.buffer}
    stop_fio_of(sorted(markers))


if __name__ == "__main__":
    watch()
