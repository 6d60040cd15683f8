"""The fio server's lifecycle: its command line, the port check, the daemon and its pid file, and stopping it with
the job processes it started."""

import contextlib
import errno
import ipaddress
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from ptsbench.hosts.hostlist import HostError

ALL_ADDRESSES = ("0.0.0.0", "::")
OPEN_SERVER_WARNING = (
    "fio servers have no authentication and can run commands (fio's exec engine): bound to every address, anyone "
    "who can reach this host on port {port} can run anything here as this user. Let only the controller reach it "
    "(firewall, private network or a tunnel)."
)


def is_all_addresses(bind: str) -> bool:
    return bind in ALL_ADDRESSES


def _ip_version(bind: str) -> int:
    try:
        return ipaddress.ip_address(bind).version
    except ValueError:
        raise HostError(f"--bind {bind!r} is not an IP address", "give one of this host's, e.g. 10.0.0.5") from None


def server_spec(bind: str, port: int) -> str:
    """fio's --server value for an address and port."""
    return f"{'ip6' if _ip_version(bind) == 6 else 'ip'}:{bind},{port}"


def server_argv(bind: str, port: int, pidfile: Path | None = None, binary: str | None = None) -> list[str]:
    """The fio command line of a server (daemonized with its pid in `pidfile` when given)."""
    from ptsbench.fio.runner import fio_binary

    argv = [binary or fio_binary(), f"--server={server_spec(bind, port)}"]
    if pidfile is not None:
        argv.append(f"--daemonize={Path(pidfile).resolve()}")
    return argv


def _family(bind: str) -> socket.AddressFamily:
    return socket.AF_INET6 if _ip_version(bind) == 6 else socket.AF_INET


def check_port_free(bind: str, port: int) -> None:
    """HostError when nothing can listen on bind:port (in use, or not an address of this host)."""
    with socket.socket(_family(bind), socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((bind, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise HostError(f"port {port} on {bind} is in use", "stop what listens there or pick --port") from None
            raise HostError(f"cannot listen on {bind} port {port}: {error.strerror}",
                            "give an address of this host with --bind") from None


def wait_listening(address: str, port: int, timeout_s: float = 10.0) -> bool:
    """True once something accepts connections on address:port, False after timeout_s."""
    connect_to = "127.0.0.1" if address == "0.0.0.0" else "::1" if address == "::" else address
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((connect_to, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def start_daemon(bind: str, port: int, pidfile: Path, timeout_s: float = 10.0) -> int:
    """Start a daemonized fio server, wait until it listens, return its pid. fio starts listening even when it
    cannot write the pid file: that is checked first, and a server whose pid file did not appear is stopped (it
    could not be stopped later)."""
    check_port_free(bind, port)
    _check_pidfile_writable(Path(pidfile))
    argv = server_argv(bind, port, pidfile)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    said = " | ".join(line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip())
    if done.returncode != 0:
        raise HostError(f"fio --server exited with code {done.returncode}: {said or 'no message'}",
                        "check the address and port")
    listening = wait_listening(bind, port, timeout_s)
    try:
        pid = read_pidfile(pidfile)
    except HostError as error:
        for server_pid in _server_pids(argv[1]):
            stop_process(server_pid, timeout_s)
        raise HostError(f"the fio server wrote no pid file ({error.message}); it was stopped again",
                        "give a --pidfile in a folder you can write") from None
    if not listening:
        raise HostError(f"the fio server did not start listening on {bind} port {port} within {timeout_s:g} s",
                        f"run `{' '.join(argv[:2])}` by hand to see why")
    return pid


def _check_pidfile_writable(pidfile: Path) -> None:
    folder = pidfile.resolve().parent
    if not folder.is_dir():
        raise HostError(f"cannot write the pid file {pidfile}: folder {folder} does not exist",
                        "give a --pidfile in an existing folder you can write")
    if not os.access(folder, os.W_OK | os.X_OK) or (pidfile.exists() and not os.access(pidfile, os.W_OK)):
        raise HostError(f"cannot write the pid file {pidfile}: permission denied",
                        "give a --pidfile you can write (e.g. under /tmp, or run as root for /run)")
    if pidfile.is_dir():
        raise HostError(f"the pid file {pidfile} is a folder", "give a file name for --pidfile")


def _server_pids(server_arg: str) -> list[int]:
    """fio processes started with exactly this --server=... argument."""
    wanted = server_arg.encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if wanted in argv:
                pids.append(int(entry.name))
    return pids


def read_pidfile(pidfile: Path) -> int:
    try:
        text = Path(pidfile).read_text().strip()
    except OSError as error:
        raise HostError(f"cannot read pid file {pidfile}: {error.strerror}", "is the server running?") from error
    if not text.isdigit():
        raise HostError(f"pid file {pidfile} holds no pid", "remove it and start the server again")
    return int(text)


def _is_fio_server(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(arg.startswith(b"--server") for arg in argv)


def process_tree(pid: int) -> list[int]:
    """pid and all its descendants (from /proc), parents first."""
    found = [pid]
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except OSError:
            continue
        for child in children:
            found.extend(process_tree(int(child)))
    return found


def kill_tree(pid: int, sig: int = signal.SIGKILL) -> None:
    """Send `sig` to a process and every descendant (fio's job processes leave the server's process group)."""
    for member in process_tree(pid):
        try:
            os.kill(member, sig)
        except ProcessLookupError:
            continue


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def stop_server(pidfile: Path, timeout_s: float = 10.0) -> int:
    """Stop the fio server named by a pid file (SIGTERM, then SIGKILL to it and its jobs); return its pid."""
    pid = read_pidfile(pidfile)
    if not _is_fio_server(pid):
        if _alive(pid):  # the pid was reused: another program's process, not ours to signal
            raise HostError(f"pid {pid} (from {pidfile}) is {_command_of(pid)}, not a fio server: it was left alone",
                            "the server stopped earlier and the pid now belongs to another process; remove the "
                            "pid file")
        Path(pidfile).unlink(missing_ok=True)
        raise HostError(f"no fio server runs as pid {pid} (from {pidfile})", "it has stopped already; pid file removed")
    stop_process(pid, timeout_s)
    Path(pidfile).unlink(missing_ok=True)
    return pid


def _command_of(pid: int) -> str:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "a process"
    return f"`{' '.join(word.decode(errors='replace') for word in words if word)[:80]}`"


def stop_process(pid: int, timeout_s: float = 10.0) -> None:
    """SIGTERM a fio server, then SIGKILL it and its job processes (which leave its process group) if they stay."""
    members = process_tree(pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(member) for member in members):
        time.sleep(0.05)
    for member in members:
        if _alive(member):
            kill_tree(member)
