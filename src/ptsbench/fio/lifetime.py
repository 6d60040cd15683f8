"""fio never outlives ptsbench: every fio ptsbench starts (and every tool that writes a device and may safely be
stopped) ends with it, so a kill -9 of ptsbench stops its IO within a second. Two parts:

1. A parent-death signal, set in the child before it runs the program (`run_bound` and `start_bound` for
   subprocess.run and Popen): by the compiled launcher `_bound_exec` (_bound_exec.c) where it was built, so that Python
   starts the child with vfork; otherwise by a preexec_fn (`ends_with_ptsbench()`) between fork and exec. A fork
   copies ptsbench's page tables and breaks copy-on-write pages for every fio a PTS round starts, which was the
   larger part of ptsbench's own CPU per cell. Either way the child gets:
   - prctl(PR_SET_PDEATHSIG, SIGTERM): the kernel sends SIGTERM when its parent goes. SIGTERM, not SIGKILL: fio's
     main process then tells its job processes to stop and waits for them. They run in sessions of their own (fio
     calls setsid) and have no death signal of their own, so a SIGKILLed fio main would leave them writing to the
     end of their job.
   - SIGPIPE ignored: ptsbench reads fio's stdout; once ptsbench is dead, fio's next write there (its "terminating
     on signal" line comes first in its SIGTERM handler, before it stops its jobs) would kill fio's main process
     half-way and orphan the job processes. Ignored, the write fails with EPIPE and fio goes on stopping its jobs.
   - SIGINT at its default: a child started while a fleet stops its parts (SIGINT ignored meanwhile) would inherit
     the ignore and miss the one SIGINT the fleet sends it.
   - the race: ptsbench may die between fork and prctl; then no signal would ever come. The child compares its
     parent with the pid ptsbench had before the fork and exits at once when they differ.
   The "parent" the kernel watches is the thread that started the child, not the process: start these processes
   only from a thread that waits for them to end (run_fio and subprocess.run do; so do the threads of fio/chain.py,
   cases/schedule.py's parallel runs and hosts/preflight.py). A thread that ended early would stop its fio: a safe
   failure.
   The preexec_fn runs Python between fork and exec, which the subprocess docs warn against when threads exist; it
   only makes three system calls through ctypes functions resolved before the fork (CPython re-creates its own
   locks in the child before calling it), so no lock another thread held can block it.

2. A watcher (`stop_with_ptsbench(job_path)`, the script watcher.py) for when fio's main process dies
   with ptsbench: a kill -9 of ptsbench's whole process group (or the OOM killer taking fio's main process) leaves
   the job processes writing. The watcher runs in a session of its own, reads the job paths of every fio ptsbench
   starts from a pipe, and when the pipe ends (ptsbench is gone, however it went) stops every fio process that names
   one of them and started before that moment: SIGTERM, then SIGKILL for any still there after WATCHER_TERM_S. It is
   watcher.py, a script of the standard library alone run by its path (`python -I -S`): every run starts one.
   `ptsbench server`'s fio server is watched by its --server option (`stop_server_with_ptsbench`): on its
   parent-death SIGTERM it keeps serving a client's running jobs, which would write on to their end.
"""

import contextlib
import ctypes
import errno
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ptsbench.fio import watcher

_PR_SET_PDEATHSIG = 1
_SIG_DFL = 0
_SIG_IGN = 1
_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_prctl.restype = ctypes.c_int
_signal = _libc.signal
_signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
_signal.restype = ctypes.c_void_p
_FAILED = b"ptsbench: prctl(PR_SET_PDEATHSIG) failed: this child would outlive ptsbench, so it does not start\n"
WATCHER_SCRIPT = watcher.__file__  # run by its path: a script of the standard library alone (see watcher.py)
START_ENV = "PTSBENCH_FIO_START"  # "fork": bind children with a preexec_fn even where the launcher is built
_watcher: "subprocess.Popen[bytes] | None" = None
_watcher_lock = threading.Lock()


def ends_with_ptsbench(signal_number: int = signal.SIGTERM) -> Callable[[], None]:
    """A preexec_fn that binds the child to this process's life: `signal_number` reaches it when the thread that
    started it ends (see the module docstring)."""
    parent_pid = os.getpid()

    def in_child() -> None:
        _signal(signal.SIGPIPE, _SIG_IGN)
        _signal(signal.SIGINT, _SIG_DFL)
        if _prctl(_PR_SET_PDEATHSIG, signal_number, 0, 0, 0) != 0:
            os.write(2, _FAILED)
            os._exit(127)
        if os.getppid() != parent_pid:  # ptsbench died before prctl: the signal will never come
            os._exit(128 + signal_number)

    return in_child


@functools.cache
def launcher() -> str | None:
    """The compiled launcher (setup.py builds _bound_exec.c beside this module), or None where it was not built (no C
    compiler): children are then bound by a preexec_fn."""
    path = Path(__file__).with_name("_bound_exec")
    return str(path) if os.access(path, os.X_OK) else None


def start_way() -> str:
    """How this process starts fio, for `ptsbench info`."""
    if os.environ.get(START_ENV) == "fork":
        return f"fork and preexec_fn ({START_ENV}=fork)"
    return "compiled launcher (vfork)" if launcher() else "fork and preexec_fn (the compiled launcher was not built)"


def bound_command(argv: Sequence[str], signal_number: int = signal.SIGTERM
                  ) -> tuple[list[str], Callable[[], None] | None]:
    """(args, preexec_fn) for subprocess that start `argv` bound to this process's life (see the module docstring):
    the launcher's command line and no preexec_fn, or `argv` and ends_with_ptsbench(). Either way the program run
    is the one found here (PATH, or a path from this process's folder), by its absolute path. A program that
    cannot be found raises the OSError subprocess would raise (the launcher would only exit 127)."""
    found = shutil.which(argv[0])
    if found is None:
        code = errno.EACCES if os.sep in argv[0] and os.path.exists(argv[0]) else errno.ENOENT
        raise OSError(code, os.strerror(code), argv[0])  # FileNotFoundError or PermissionError, as subprocess's
    argv = [os.path.abspath(found), *argv[1:]]
    program = None if os.environ.get(START_ENV) == "fork" else launcher()
    if program is None:
        return argv, ends_with_ptsbench(signal_number)
    return [program, str(os.getpid()), str(int(signal_number)), *argv], None


def run_bound(argv: Sequence[str], **options: Any) -> "subprocess.CompletedProcess[Any]":
    """subprocess.run of `argv` bound to this process's life."""
    args, preexec = bound_command(argv)
    return subprocess.run(args, preexec_fn=preexec, **options)


def start_bound(argv: Sequence[str], **options: Any) -> "subprocess.Popen[Any]":
    """subprocess.Popen of `argv` bound to this process's life."""
    args, preexec = bound_command(argv)
    return subprocess.Popen(args, preexec_fn=preexec, **options)


def stop_with_ptsbench(job_path: Path) -> None:
    """Have the watcher stop every fio naming `job_path` once this process is gone (started at the first call)."""
    _tell_watcher(str(Path(job_path).absolute()))


def stop_server_with_ptsbench(server_option: str) -> None:
    """Have the watcher stop the fio server started with `server_option` (`--server=sock:PATH`, or `ip:...`) once
    this process is gone, its job processes too: fio's server stops neither them nor itself on the SIGTERM of its
    parent-death signal while a client's jobs run, and they, in sessions of their own, outlive a kill of its
    process group."""
    _tell_watcher(server_option)


def _tell_watcher(marker: str) -> None:
    """Send the watcher one marker (an absolute path, or an fio server's option), starting it at the first call."""
    global _watcher
    line = marker.encode() + b"\n"
    with _watcher_lock:
        if _watcher is None or _watcher.poll() is not None:
            _watcher = subprocess.Popen([sys.executable, "-I", "-S", WATCHER_SCRIPT], stdin=subprocess.PIPE,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                                        start_new_session=True)
        assert _watcher.stdin is not None
        with contextlib.suppress(OSError):  # a watcher that died: the parent-death signal still holds
            _watcher.stdin.write(line)
            _watcher.stdin.flush()


def fio_pids(path: Path) -> list[int]:
    """fio processes whose arguments name `path` or a path under it (a job file, or a run directory)."""
    return watcher.fio_pids_of([str(Path(path).absolute())])


def server_pids(server_option: str) -> list[int]:
    """The processes of the fio server started with `server_option` (its job processes carry the same arguments)."""
    return watcher.fio_pids_of([server_option])


def kill_fio_processes(path: Path, signal_number: int = signal.SIGKILL) -> None:
    """Send `signal_number` to every fio process of `path` (see fio_pids)."""
    for pid in fio_pids(path):
        with contextlib.suppress(OSError):  # gone meanwhile, or not ours to signal
            os.kill(pid, signal_number)


def stop_orphan_fio(root: Path, term_timeout_s: float = 5.0, kill_timeout_s: float = 10.0) -> None:
    """Stop the fio processes a killed ptsbench left running on this run's job files, and wait until they are gone;
    refuse to start a second fio on the same target while one runs. Called with the run directory locked, so they
    belong to no live ptsbench. (fio's main process ends at its next status write, but its job processes go on
    for seconds, to the end of the cell, or hang on a lock the dead main process held.) SIGTERM first, so fio ends
    cleanly; SIGKILL for any still there after `term_timeout_s`: their round is run again anyway."""
    from ptsbench.errors import PtsbenchError

    if not fio_pids(root):  # the usual case: one look at /proc, not five
        return
    for signal_number, timeout_s in ((signal.SIGTERM, term_timeout_s), (signal.SIGKILL, kill_timeout_s)):
        kill_fio_processes(root, signal_number)
        deadline = time.monotonic() + timeout_s
        while fio_pids(root) and time.monotonic() < deadline:
            time.sleep(0.05)
    if pids := fio_pids(root):
        raise PtsbenchError(f"fio from an earlier attempt of this run is still running (pid {pids[0]})",
                            f"wait for it to end or stop it (kill -9 {pids[0]}), then resume")
