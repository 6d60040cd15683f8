"""Child processes that end with ptsbench: every fio ptsbench starts (and every tool that writes a device and may
safely be stopped) gets a parent-death signal, so a kill -9 of ptsbench stops its IO within a second.

`subprocess.Popen(..., preexec_fn=ends_with_ptsbench())` (or subprocess.run) in the child, between fork and exec:
- prctl(PR_SET_PDEATHSIG, SIGTERM): the kernel sends SIGTERM when its parent goes. SIGTERM, not SIGKILL: fio's main
  process then tells its job processes to stop and waits for them. They run in sessions of their own (fio calls
  setsid) and have no death signal of their own, so a SIGKILLed fio main would leave them writing to the end of
  their runtime.
- SIGPIPE ignored: ptsbench reads fio's stdout; once ptsbench is dead, fio's next write there (its "terminating on
  signal" line comes first in its SIGTERM handler, before it stops its jobs) would kill fio's main process half-way
  and orphan the job processes. Ignored, the write fails with EPIPE and fio goes on stopping its jobs.
- the race: ptsbench may die between fork and prctl; then no signal would ever come. The child compares its parent
  with the pid ptsbench had before the fork and exits at once when they differ.

The "parent" the kernel watches is the thread that started the child, not the process: start these processes only
from a thread that waits for them to end (run_fio and subprocess.run do; so do the threads of fio/chain.py,
cases.py's parallel runs and hosts/preflight.py). A thread that ended early would stop its fio: a safe failure.

preexec_fn runs Python between fork and exec, which the subprocess docs warn against when threads exist; here it
only makes three system calls through ctypes functions resolved before the fork (CPython re-creates its own locks in
the child before calling it), so no lock another thread held can block it.
"""

import ctypes
import os
import signal
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
_SIG_IGN = 1
_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_prctl.restype = ctypes.c_int
_signal = _libc.signal
_signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
_signal.restype = ctypes.c_void_p
_FAILED = b"ptsbench: prctl(PR_SET_PDEATHSIG) failed: this child would outlive ptsbench, so it does not start\n"


def ends_with_ptsbench(signal_number: int = signal.SIGTERM) -> Callable[[], None]:
    """A preexec_fn that binds the child to this process's life: `signal_number` reaches it when the thread that
    started it ends (see the module docstring)."""
    parent_pid = os.getpid()

    def in_child() -> None:
        _signal(signal.SIGPIPE, _SIG_IGN)
        if _prctl(_PR_SET_PDEATHSIG, signal_number, 0, 0, 0) != 0:
            os.write(2, _FAILED)
            os._exit(127)
        if os.getppid() != parent_pid:  # ptsbench died before prctl: the signal will never come
            os._exit(128 + signal_number)

    return in_child
