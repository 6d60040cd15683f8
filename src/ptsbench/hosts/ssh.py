"""Hosts reached through SSH: per host, one `ssh` that starts a fio server on a Unix socket in a fresh root-only
folder there and forwards it to a local Unix socket in this process's private tunnel folder; stopping it stops the
remote server and removes its folder.

ssh authenticates the controller (BatchMode: keys or an agent, never a password prompt; a host key it does not know
fails) and no TCP port is open on the host. The remote side is a small POSIX shell script: it makes the folder
(umask 077, refusing one that exists), starts fio's server in a process group of its own, says when the socket is
there, then waits for end of input. Its input is a pipe from this process: when ptsbench closes it, exits or is
killed, the script stops the whole process group (the server and the jobs it runs) and removes the folder. When the
server dies by itself the script ends too, and so does ssh: the next fio client run opens a new tunnel.
"""

import atexit
import os
import secrets
import select
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ptsbench.hosts.hostlist import Host

CONNECT_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
# Remote folders start with this: fio's server names a Unix-socket client by bytes 2-5 of its own socket path
# (fio/opens.py unix_client_address), so every remote server here names its client the same way.
REMOTE_FOLDER_PREFIX = "/tmp/ptsbench-fio-"
REMOTE_SOCKET = "fio.sock"
FOLDER_PREFIX = "ptsbench-ssh-"  # the local tunnel folder: ptsbench-ssh-PID-RANDOM in the temporary folder
READY = "ptsbench-fio-server-ready"
SSH_CONFIG_ENV = "PTSBENCH_SSH_CONFIG"
_SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with its terminating NUL

_REMOTE_SCRIPT = """umask 077
d={folder}
mkdir "$d" || exit 3
setsid fio --server=sock:"$d"/{socket} </dev/null >"$d"/server.log 2>&1 &
p=$!
while [ ! -S "$d"/{socket} ]; do
  kill -0 $p 2>/dev/null || {{ echo "fio --server did not start: $(tail -n 2 "$d"/server.log)"; rm -rf "$d"; exit 4; }}
  sleep 0.1
done
echo {ready}
exec 3<&0
{{ cat <&3; [ -d "$d" ] && kill -TERM -$p; }} >/dev/null 2>&1 &
exec 3<&-
wait $p
kill -TERM -$p 2>/dev/null
n=0
while kill -0 -$p 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done
kill -KILL -$p 2>/dev/null
rm -rf "$d"
"""


@dataclass
class _Tunnel:
    host: Host
    process: "subprocess.Popen[bytes]"
    local_socket: Path
    remote_folder: str


class _Tunnels:
    """The open tunnels of this process, in one private folder; closed at exit."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: dict[Host, _Tunnel] = {}
        self.folder: Path | None = None

    def ensure_folder(self) -> Path:
        if self.folder is None:
            remove_stale_folders()
            # mode 0700, this user's; named by this process, so that a later ptsbench can tell it was left behind
            self.folder = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
            atexit.register(close_all)
        return self.folder


_tunnels = _Tunnels()


def remove_stale_folders() -> None:
    """Remove the tunnel folders a killed ptsbench of this user left (their sockets only: its ssh ended with it):
    those named by a process that is gone, found in the temporary folder."""
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*-*"):
        pid = folder.name.removeprefix(FOLDER_PREFIX).split("-")[0]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        try:
            mine = folder.lstat().st_uid == os.getuid() and folder.is_dir() and not folder.is_symlink()
        except OSError:
            continue
        if mine:
            shutil.rmtree(folder, ignore_errors=True)


def ssh_argv(host: Host, local_socket: Path, remote_folder: str) -> list[str]:
    """The ssh command of one host's tunnel (and remote fio server)."""
    config = os.environ.get(SSH_CONFIG_ENV)
    script = _REMOTE_SCRIPT.format(folder=shlex.quote(remote_folder), socket=REMOTE_SOCKET, ready=READY)
    return ["ssh", *(["-F", config] if config else []), "-T",
            "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes",
            "-o", f"ConnectTimeout={int(CONNECT_TIMEOUT_S)}",
            "-L", f"{local_socket}:{remote_folder}/{REMOTE_SOCKET}",
            *(["-p", str(host.port)] if host.port else []), *(["-l", host.user] if host.user else []),
            "--", host.name, "sh -c " + shlex.quote(script)]


def client_folder(hosts: Sequence[Host]) -> Path | None:
    """The working folder of a fio client for these hosts: the tunnel folder, with every SSH host's tunnel open
    (reopened if it ended; a host that cannot be reached again is left to fio's client, which reports it as failed
    and goes on with the others), or None when no host uses SSH."""
    if not any(host.transport == "ssh" for host in hosts):
        return None
    connect(hosts)
    return _tunnels.ensure_folder()


def connect(hosts: Sequence[Host]) -> dict[Host, str]:
    """Open the tunnels of the SSH hosts that have none yet (or whose tunnel ended), all at once; the problem of
    each that failed, in ssh's words."""
    with _tunnels.lock:
        wanted = [host for host in dict.fromkeys(hosts) if host.transport == "ssh" and not _alive(host)]
        if not wanted:
            return {}
        for host in wanted:
            if host in _tunnels.open:  # its ssh ended: reap it first
                _close(_tunnels.open.pop(host))
        folder = _tunnels.ensure_folder()
        with ThreadPoolExecutor(max_workers=min(64, len(wanted))) as pool:
            opened = dict(zip(wanted, pool.map(lambda host: _open(host, folder), wanted), strict=True))
        problems = {}
        for host, result in opened.items():
            if isinstance(result, str):
                problems[host] = result
            else:
                _tunnels.open[host] = result
        return problems


def _alive(host: Host) -> bool:
    tunnel = _tunnels.open.get(host)
    return tunnel is not None and tunnel.process.poll() is None


def _open(host: Host, folder: Path) -> "_Tunnel | str":
    """Start one host's ssh and wait until its remote server listens and the local socket is there."""
    if not shutil.which("ssh"):
        return "no ssh client here (install openssh-client)"
    local_socket = folder / host.name
    if len(os.fsencode(local_socket)) > _SOCKET_PATH_MAX:
        return f"the tunnel socket path {local_socket} is too long for a Unix socket (set TMPDIR to a short folder)"
    local_socket.unlink(missing_ok=True)  # a tunnel of this host that died
    remote_folder = REMOTE_FOLDER_PREFIX + secrets.token_hex(8)
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(ssh_argv(host, local_socket, remote_folder), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=errors, start_new_session=True)
        tunnel = _Tunnel(host, process, local_socket, remote_folder)
        said = _wait_ready(process, local_socket, CONNECT_TIMEOUT_S)
        if said is None:
            return tunnel
        _close(tunnel)
        errors.seek(0)
        lines = [line.strip() for line in errors.read().decode(errors="replace").splitlines() if line.strip()]
    return " | ".join([*lines[-2:], said] if said else lines[-2:]) or "ssh ended without a message"


def _wait_ready(process: "subprocess.Popen[bytes]", local_socket: Path, timeout_s: float) -> str | None:
    """None once the remote server said it listens and the local socket exists, else what went wrong."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    heard = b""
    while time.monotonic() < deadline:
        if READY.encode() in heard and local_socket.exists():
            return None
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:  # ssh ended
                process.wait()
                return heard.decode(errors="replace").strip() or f"ssh exited with code {process.returncode}"
            heard += chunk
    return f"no fio server answered within {timeout_s:g} s"


def _close(tunnel: _Tunnel) -> None:
    """End of input to the remote script (it stops the server and removes its folder), then wait for ssh."""
    process = tunnel.process
    if process.stdin is not None and not process.stdin.closed:
        process.stdin.close()
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
    tunnel.local_socket.unlink(missing_ok=True)


def close_all() -> None:
    """Close every tunnel (their remote servers stop) and remove the tunnel folder."""
    with _tunnels.lock:
        tunnels = list(_tunnels.open.values())
        _tunnels.open.clear()
        closing = [threading.Thread(target=_close, args=(tunnel,)) for tunnel in tunnels]  # at exit: no pools
        for thread in closing:
            thread.start()
        for thread in closing:
            thread.join()
        if _tunnels.folder is not None:
            shutil.rmtree(_tunnels.folder, ignore_errors=True)
            _tunnels.folder = None
