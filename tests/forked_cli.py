"""`python -m ptsbench ARGS` without the interpreter's start: a process forked from a server that has already
imported what `python -m ptsbench` imports first (ptsbench.cli) and what a case run imports later (PRELOAD), then
run by the same code (runpy, as `-m` does).

Python's start and ptsbench's imports are about 0.05 CPU-s of a bad-input row and 0.2-0.3 of a short `ptsbench run`; the
suite starts ptsbench some thousands of times. Each call is still a process of its own, as a user's is: its own working
folder, environment, umask, stdin/stdout/stderr (pipes, as subprocess.run's), exit code or signal, and the interpreter's
own exit (SystemExit, a traceback, atexit, the modules' finalization). What differs from a fresh interpreter: the
modules of PRELOAD (and the server's few: socket) are in place before the command asks for them, the hash seed is the
server's, /proc/PID/cmdline shows the server's command line, the imported objects are frozen out of the garbage
collector (gc.freeze: they live as long as the process anyway), the version of the fio on the server's PATH is known
(`fio --version`, 0.02 CPU-s, asked by each run otherwise; another path's fio is asked), and the parent is the server's
helper (which waits for it and reports its exit status and CPU). What Python and numpy read only as they start (PYTHON*,
the locale, OpenBLAS's and numpy's settings, the exec log of tests/exec_audit) cannot change after the fork: a call that
changes one of them runs `python -m ptsbench`.

The server runs as `python tests/forked_cli.py SOCKET`, one per pytest process, started at its first call; it ends
when that pytest does (it looks for its parent every second, and the client stops it at exit).
"""

import array
import atexit
import contextlib
import io
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

# read only as an interpreter starts, or as the preloaded modules are imported (numpy and its OpenBLAS)
STARTUP_KEYS = ("PYTHON", "LC_", "LANG", "PTSBENCH_EXEC_LOG", "NUMPY", "NPY_", "OPENBLAS", "OMP_", "GOTO", "MKL_")
# the modules a case run (`ptsbench run`: its plan, fio, results, workbook) imports after ptsbench.cli, where it needs
# them (found with `python -X importtime -m ptsbench run ...`): 0.2-0.3 CPU-s of a run's 0.5. Imported by the server
# after the settings ptsbench's main() makes before any of them (OpenBLAS on one thread). Not matplotlib: its import
# reads the environment and files (MPLBACKEND, MPLCONFIGDIR), which may differ from call to call.
PRELOAD = ("ptsbench.cli.case_run", "ptsbench.cli.check", "ptsbench.cli.health", "ptsbench.cli.metrics",
           "ptsbench.cases.schedule", "ptsbench.cases.plan", "ptsbench.cases.checks", "ptsbench.catalog.gates",
           "ptsbench.catalog.monitor_host", "ptsbench.device.latency_monitor", "ptsbench.device.same_device",
           "ptsbench.drops.stored", "ptsbench.fio.log_merge", "ptsbench.outfolder", "ptsbench.pts.store",
           "ptsbench.report.build", "ptsbench.report.common", "ptsbench.report.fleet_members",
           "ptsbench.report.glance", "ptsbench.report.core.workbook", "ptsbench.report.core.progress",
           "ptsbench.workload.runs", "ptsbench.confidence", "rich.console", "rich.progress", "xlsxwriter", "numpy")
FDS = 3  # stdin, stdout, stderr, passed to the server with each request
_lock = threading.Lock()
_server: dict[str, Any] = {}  # the running server: process, socket path, the environment it started with
_cpu = [0.0]  # CPU-s of every forked ptsbench and what it waited for (suite_costs adds them)


def cpu_s() -> float:
    """CPU time of the calls forked so far, which this process's RUSAGE_CHILDREN does not count."""
    return _cpu[0]


def _startup(env: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key.startswith(STARTUP_KEYS)}


def _start() -> dict[str, Any]:
    folder = tempfile.mkdtemp(prefix="ptsbench-forked-")
    path = os.path.join(folder, "server.sock")
    # stdout and stderr pipes, like a call's: the server's sys.stdout and sys.stderr are what the forked calls use
    process = subprocess.Popen([sys.executable, __file__, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    said = process.stdout.readline() if process.stdout else b""  # "ready": listening
    if said != b"ready\n":
        process.kill()
        raise RuntimeError(f"the fork server did not start: {said!r} {process.communicate()[1].decode()}")

    def stop() -> None:
        if process.poll() is None or os.path.exists(path):  # once: at exit, or when a new server replaces it
            process.kill()
            process.communicate()
            os.unlink(path)
            os.rmdir(folder)

    atexit.register(stop)
    return {"process": process, "path": path, "env": _startup(dict(os.environ)), "pid": os.getpid(), "stop": stop}


def run(argv: list[str], cwd: str | os.PathLike[str] | None, env: dict[str, str],
        timeout: float | None) -> subprocess.CompletedProcess[str]:
    """What subprocess.run([sys.executable, "-m", "ptsbench", *argv], capture_output=True, text=True, cwd=cwd,
    env=env, timeout=timeout) returns (or raises, on timeout: the process killed), from a forked process."""
    command = [sys.executable, "-m", "ptsbench", *argv]
    with _lock:
        if _server.get("pid") != os.getpid():  # none yet, or this is a forked copy of the process that started it
            _server.clear()
            _server.update(_start())
        elif _startup(env) != _server["env"] and _startup(env) == _startup(dict(os.environ)):
            # this process's own environment changed since the server started (a test that runs ptsbench's main()
            # in-process gets its OPENBLAS_NUM_THREADS): a new server, else every later call would start afresh
            _server["stop"]()
            _server.clear()
            _server.update(_start())
    if _startup(env) != _server["env"]:
        return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    umask = int(next(line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
                     if line.startswith("Umask:")), 8)
    request = json.dumps({"argv": argv, "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(), "env": env,
                          "umask": umask}).encode()
    with socket.socket(socket.AF_UNIX) as conn:
        try:
            conn.connect(_server["path"])
            conn.sendmsg([len(request).to_bytes(8, "big")], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                              array.array("i", [0, out_w, err_w]))])
            conn.sendall(request)
        finally:
            os.close(out_w)
            os.close(err_w)
        reader = conn.makefile("rb")
        pid = int(reader.readline())
        out, err, timed_out = _read(out_r, err_r, timeout)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
            more_out, more_err, _ = _read(out_r, err_r, None)
            out, err = out + more_out, err + more_err
        ended = json.loads(reader.readline())
        reader.close()
    with _lock:
        _cpu[0] += ended["cpu_s"]
    stdout, stderr = (io.TextIOWrapper(io.BytesIO(data)).read() for data in (out, err))  # as text=True decodes
    if timed_out:
        raise subprocess.TimeoutExpired(command, timeout or 0, stdout, stderr)
    return subprocess.CompletedProcess(command, ended["returncode"], stdout, stderr)


def _read(out_r: int, err_r: int, timeout: float | None) -> tuple[bytes, bytes, bool]:
    """Both pipes to their end (closing them), or what came until `timeout` (leaving them open)."""
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return b"".join(chunks[out_r]), b"".join(chunks[err_r]), True
            for key, _events in selector.select(left):
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
                    os.close(key.fd)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r]), False


def _serve(path: str) -> tuple[dict[str, Any], list[int]]:
    """Accept calls, each in a forked helper that forks the call and reports its end; returns only in a call's
    process (the request and its stdin, stdout, stderr)."""
    parent = os.getppid()
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}

    def end(_number: int, _frame: object) -> None:  # a Ctrl-C of pytest's process group reaches the server too
        with contextlib.suppress(OSError):
            os.unlink(path)
            os.rmdir(os.path.dirname(path))
        os._exit(0)

    for number in handlers:
        signal.signal(number, end)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    os.write(1, b"ready\n")
    while True:
        while True:  # reap ended helpers
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if os.getppid() != parent:  # the pytest that started this server is gone (killed: its atexit never ran)
            with contextlib.suppress(OSError):
                os.unlink(path)
                os.rmdir(os.path.dirname(path))
            os._exit(0)
        try:
            conn, _address = listener.accept()
        except TimeoutError:
            continue
        conn.settimeout(None)
        header, fds, _flags, _address = socket.recv_fds(conn, 8, FDS)
        request = json.loads(_receive(conn, int.from_bytes(header, "big")))
        if os.fork() != 0:
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        listener.close()  # the helper: fork the call, tell its pid, wait for it, tell how it ended
        pid = os.fork()
        if pid == 0:
            conn.close()
            for number, handler in handlers.items():  # the call's, as a fresh interpreter has them
                signal.signal(number, handler)
            return request, fds
        try:
            for fd in fds:
                os.close(fd)
            conn.sendall(f"{pid}\n".encode())
            _pid, status, usage = os.wait4(pid, 0)
            conn.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status),
                                     "cpu_s": usage.ru_utime + usage.ru_stime}).encode() + b"\n")
        finally:
            os._exit(0)


def _receive(conn: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("the client went away")
        data += chunk
    return bytes(data)


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """Make this forked process the call: its stdio, folder, environment, umask, argv, as a new process has them."""
    import time

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # the temporary folder is found again from this call's TMPDIR, as a new process does
    time.tzset()
    os.umask(request["umask"])
    sys.argv = ["-m", *request["argv"]]
    sys.path[0] = os.getcwd()  # as `python -m` puts it


if __name__ == "__main__":
    import gc
    import runpy

    sys.path[0] = os.getcwd()  # not this file's folder (tests/), as `python -m ptsbench` here would have it

    import importlib

    import ptsbench.cli  # noqa: F401 (what `python -m ptsbench` imports before it runs anything)

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as ptsbench.cli.main() sets them, before numpy's import
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    for name in PRELOAD:
        importlib.import_module(name)
    from ptsbench.errors import PtsbenchError
    from ptsbench.fio.runner import fio_version

    with contextlib.suppress(PtsbenchError):  # asked once here, not by every call (runner.py keeps it per binary path)
        fio_version()

    gc.freeze()  # the imported modules' objects: a forked call's collections leave them (and their pages) alone
    _become(*_serve(sys.argv[1]))
    runpy._run_module_as_main("ptsbench")  # type: ignore[attr-defined]  # what `python -m ptsbench` runs
