"""The fio server's lifecycle: where it listens (a Unix socket in a folder only its user enters, or TCP when asked),
its command line, the daemon and its pid file, and stopping it with the job processes it started."""

import contextlib
import errno
import ipaddress
import os
import signal
import socket
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ptsbench.hosts.hostlist import HostError

DEFAULT_SOCKET = Path("/run/ptsbench-fio/fio.sock")
TCP_WARNING = (
    "a fio server over TCP has no authentication and runs what it is sent, commands included (fio's exec engine): "
    "anyone who can reach {where} can run anything on this host as this user. Use it only on a network that only "
    "the controller reaches; `--hosts ssh://HOST` needs no server here at all."
)


@dataclass(frozen=True)
class Listen:
    """Where a fio server listens: a Unix socket (`socket`), or a TCP address and port."""

    socket: Path | None = None
    bind: str = ""
    port: int = 0

    @property
    def spec(self) -> str:
        """fio's --server value."""
        if self.socket is not None:
            return f"sock:{self.socket}"
        return f"{'ip6' if _ip_version(self.bind) == 6 else 'ip'}:{self.bind},{self.port}"

    def __str__(self) -> str:
        return f"socket {self.socket}" if self.socket is not None else f"{self.bind} port {self.port}"


def _ip_version(bind: str) -> int:
    try:
        return ipaddress.ip_address(bind).version
    except ValueError:
        raise HostError(f"--bind {bind!r} is not an IP address", "give one of this host's, e.g. 10.0.0.5") from None


def server_argv(listen: Listen, pidfile: Path | None = None, binary: str | None = None) -> list[str]:
    """The fio command line of a server (daemonized with its pid in `pidfile` when given)."""
    from ptsbench.fio.runner import fio_binary

    argv = [binary or fio_binary(), f"--server={listen.spec}"]
    if pidfile is not None:
        argv.append(f"--daemonize={Path(pidfile).resolve()}")
    return argv


MAX_SOCKET_PATH_BYTES = 107  # sockaddr_un's sun_path holds 108 bytes, the last a NUL: bind() refuses longer paths


def prepare(listen: Listen) -> None:
    """HostError when a server cannot listen there; for a socket, its folder made (or found) private first."""
    if listen.socket is not None:
        length = len(os.fsencode(str(listen.socket)))
        if length > MAX_SOCKET_PATH_BYTES:
            raise HostError(f"--socket {listen.socket} is {length} bytes long: a Unix socket's path holds at most "
                            f"{MAX_SOCKET_PATH_BYTES} bytes", "give a shorter --socket path (e.g. under /run or /tmp)")
        _private_folder(listen.socket.parent)
        _check_socket_free(listen.socket)
    else:
        check_port_free(listen.bind, listen.port)


def _private_folder(folder: Path) -> None:
    """The socket's folder, only this user may enter it: made with mode 0700, or refused when it exists as a
    symlink, not a folder, another user's, or open to others (anyone who can reach the socket runs commands)."""
    try:
        folder.mkdir(mode=0o700)
        os.chmod(folder, 0o700)
        return
    except FileExistsError:
        pass
    except OSError as error:
        raise HostError(f"cannot make the socket folder {folder}: {error.strerror}",
                        "its parent must exist and be writable; give another --socket") from None
    found = os.lstat(folder)
    problem = ("is a symlink" if stat.S_ISLNK(found.st_mode) else "is not a folder" if not stat.S_ISDIR(found.st_mode)
               else f"belongs to uid {found.st_uid}, not {os.geteuid()}" if found.st_uid != os.geteuid()
               else f"has mode {stat.S_IMODE(found.st_mode):04o}: others may enter it"
               if stat.S_IMODE(found.st_mode) & 0o077 else "")
    if problem:
        raise HostError(f"the socket folder {folder} {problem}",
                        "the fio server's socket must be in a folder only its user can enter: remove it (ptsbench "
                        "makes it with mode 0700) or give another --socket")


def _check_socket_free(socket_path: Path) -> None:
    """HostError when a server answers on the socket or the path is not a socket; a dead server's socket (fio
    leaves it behind, then cannot bind again) is removed."""
    if not os.path.lexists(socket_path):
        return
    if not stat.S_ISSOCK(os.lstat(socket_path).st_mode):
        raise HostError(f"{socket_path} exists and is not a socket", "give another --socket")
    if _answers(Listen(socket=socket_path)):
        raise HostError(f"a fio server already listens on {socket_path}", "stop it first, or give another --socket")
    socket_path.unlink()


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


def _family(bind: str) -> socket.AddressFamily:
    return socket.AF_INET6 if _ip_version(bind) == 6 else socket.AF_INET


def _answers(listen: Listen) -> bool:
    """Whether something accepts connections where `listen` says."""
    if listen.socket is not None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(0.5)
            try:
                probe.connect(str(listen.socket))
            except OSError:
                return False
            return True
    connect_to = "127.0.0.1" if listen.bind == "0.0.0.0" else "::1" if listen.bind == "::" else listen.bind
    try:
        with socket.create_connection((connect_to, listen.port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_listening(listen: Listen, timeout_s: float = 10.0) -> bool:
    """True once something accepts connections where `listen` says, False after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if _answers(listen):
            return True
        time.sleep(0.05)
    return False


def start_daemon(listen: Listen, pidfile: Path, timeout_s: float = 10.0) -> int:
    """Start a daemonized fio server, wait until it listens, return its pid. fio starts listening even when it
    cannot write the pid file: that is checked first, and a server whose pid file did not appear is stopped (it
    could not be stopped later)."""
    _check_pidfile_writable(Path(pidfile))
    prepare(listen)
    argv = server_argv(listen, pidfile)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    said = " | ".join(line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip())
    if done.returncode != 0:
        raise HostError(f"fio --server exited with code {done.returncode}: {said or 'no message'}",
                        "check the address and port")
    listening = wait_listening(listen, timeout_s)
    try:
        pid = read_pidfile(pidfile)
    except HostError as error:
        for server_pid in _server_pids(argv[1]):
            stop_process(server_pid, timeout_s)
        raise HostError(f"the fio server wrote no pid file ({error.message}); it was stopped again",
                        "give a --pidfile in a folder you can write") from None
    if not listening:
        raise HostError(f"the fio server did not start listening on {listen} within {timeout_s:g} s",
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
    from ptsbench.textfile import read_user_text

    # a regular file of a few bytes: /dev/zero or a FIFO given by mistake is an error, not an endless read
    text = read_user_text(pidfile, "pid file", "is the server running?", HostError, limit_bytes=64).strip()
    if not (text.isascii() and text.isdigit()):
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
    """Stop the fio server named by a pid file (SIGTERM, then SIGKILL to it and its jobs); return its pid. Only a
    server `server --daemon --pidfile` started: its command line names this pid file (--daemonize=PIDFILE) and it
    runs as this user; a pid planted in the file (another user's server, any fio server) is left alone."""
    pid = read_pidfile(pidfile)
    if _is_fio_server(pid) and not _started_with(pid, Path(pidfile)):
        raise HostError(f"pid {pid} (from {pidfile}) is a fio server that `ptsbench server --daemon --pidfile "
                        f"{pidfile}` did not start ({_command_of(pid)}): it was left alone",
                        "stop only servers you started, with the pid file they wrote")
    if _is_fio_server(pid) and _owner(pid) != os.geteuid():
        raise HostError(f"pid {pid} (from {pidfile}) is a fio server of another user (uid {_owner(pid)}): it was "
                        "left alone", "its user stops it")
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


def _started_with(pid: int, pidfile: Path) -> bool:
    """Whether the process's command line is a daemonized server's with exactly this pid file (server_argv)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return os.fsencode(f"--daemonize={pidfile.resolve()}") in argv


def _owner(pid: int) -> int | None:
    """The real user id the process runs as (None when it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    line = next((line for line in status.splitlines() if line.startswith("Uid:")), "")
    return int(line.split()[1]) if len(line.split()) > 1 else None


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
