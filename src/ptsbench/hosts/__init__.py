"""Many hosts through fio's own client/server mode: host lists, fio servers, pre-flight checks, per-host results.

Every host runs `fio --server`; the controller runs one `fio --client=HOSTLIST job.fio`, which sends the same job to
every host at once and gets one json+ entry per host job back (`client_stats`). ptsbench adds, per case, an all-hosts
entry (fio's group arithmetic: IOs over the longest runtime; latency merged exactly from the hosts' bins) and the
per-host status (what fio said about a host that dropped off).

Before any IO, `preflight` asks every host, with tiny fio jobs (1-byte reads, a 4 KiB scratch file removed again),
whether it answers, runs the same fio version as the controller and can use each target path.
"""

import contextlib
import errno
import ipaddress
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ptsbench.errors import PtsbenchError, UnsafeTargetError
from ptsbench.fio.output import DIRECTIONS, JobResult, merge_directions, percentile_key
from ptsbench.target.target import TESTFILE_NAME, Target

DEFAULT_PORT = 8765
ALL_ADDRESSES = ("0.0.0.0", "::")
OPEN_SERVER_WARNING = (
    "fio servers have no authentication and can run commands (fio's exec engine): bound to every address, anyone "
    "who can reach this host on port {port} can run anything here as this user. Let only the controller reach it "
    "(firewall, private network or a tunnel)."
)
HOST_LIST = "hosts.list"
PREFLIGHT_TIMEOUT_S = 30.0
MAX_PARALLEL_CHECKS = 64
ALL_HOSTS = "all hosts"

_PROBE_RE = re.compile(
    r"^hostname=(?P<name>.*?), be=\d+, (?P<bits>\d+)-bit, os=(?P<os>[^,]*), arch=(?P<arch>[^,]*), "
    r"fio=(?P<version>[^,]*), flags="
)
_NAME_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.\-_]*[A-Za-z0-9])?$")
_EISDIR = errno.EISDIR
_MISSING_ERRORS = (0, errno.EINVAL, errno.ENOENT)  # fio: "you need to specify size=" for a missing or empty file


class HostError(PtsbenchError):
    """A host list is malformed, a host is unusable, or a fio server cannot be started or stopped."""


@dataclass(frozen=True)
class Host:
    """One fio server: a name or address and a port."""

    name: str
    port: int = DEFAULT_PORT

    @property
    def ipv6(self) -> bool:
        return ":" in self.name

    @property
    def fio_arg(self) -> str:
        """The host as fio's --client (and host list file) spells it."""
        return f"{'ip6:' if self.ipv6 else ''}{self.name},{self.port}"

    @property
    def label(self) -> str:
        return f"[{self.name}]:{self.port}" if self.ipv6 else f"{self.name}:{self.port}"


# ---------------------------------------------------------------------------------------------------------------
# host lists


def parse_host(text: str) -> Host:
    """`host`, `host:port`, `[ipv6]` or `[ipv6]:port` -> Host; HostError when it is not one."""
    item = text.strip()
    port_text = ""
    if item.startswith("["):
        name, bracket, rest = item[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise HostError(f"{text!r} is not a host", "write an IPv6 address as [ADDR] or [ADDR]:PORT")
        port_text = rest[1:]
    elif item.count(":") > 1:
        name = item  # a bare IPv6 address
    else:
        name, _, port_text = item.partition(":")
    if not _valid_name(name):
        raise HostError(f"{text!r} is not a host name or address", "write HOST or HOST:PORT, e.g. node1:8765")
    if not port_text:
        return Host(name)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise HostError(f"{text!r}: port {port_text!r} is not a number from 1 to 65535", "write HOST:PORT")
    return Host(name, int(port_text))


def _valid_name(name: str) -> bool:
    if ":" in name:
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return False
        return True
    return bool(_NAME_RE.match(name))


def parse_hosts(spec: str) -> list[Host]:
    """`host[:port],...`, or a file with one host per line (# starts a comment); duplicates are refused."""
    path = Path(spec)
    if path.is_file():
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise HostError(f"cannot read host list {spec}: {error}",
                            "pass a text file, one HOST[:PORT] per line") from None
        items = [line.split("#", 1)[0].strip() for line in lines]
        where = f"host list {spec}"
    else:
        items = spec.split(",")
        where = "--hosts"
    items = [item for item in items if item.strip()]
    if not items:
        raise HostError(f"{where} names no host", "give HOST[:PORT],... or a file with one per line")
    hosts = [parse_host(item) for item in items]
    seen: dict[str, Host] = {}
    for host in hosts:
        if host.name in seen:
            raise HostError(
                f"{where}: {host.name} is listed twice ({seen[host.name].label} and {host.label})",
                "one fio server per host: fio tells hosts apart (and names their logs) by address only",
            )
        seen[host.name] = host
    return hosts


def write_host_list(directory: Path, hosts: Sequence[Host]) -> Path:
    """The host list file fio's `--client=FILE` reads: the same job goes to every host in it."""
    from ptsbench.store import atomic_write_text

    path = Path(directory).resolve() / HOST_LIST
    text = "".join(f"{host.fio_arg}\n" for host in hosts)
    if not path.is_file() or path.read_text() != text:
        atomic_write_text(path, text)
    return path


# ---------------------------------------------------------------------------------------------------------------
# fio servers


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


# ---------------------------------------------------------------------------------------------------------------
# pre-flight


@dataclass(frozen=True)
class HostRun:
    """What one tiny fio client run against one host left: its probe answer, job entries and fio's words."""

    host: Host
    returncode: int | None  # None: no answer within the time limit
    probe: dict[str, str]
    entries: dict[str, Mapping[str, Any]]
    lines: tuple[str, ...]
    disks: tuple[str, ...] = ()  # the disks fio reported IO on (its disk_util), e.g. ('nvme0n1',)

    def said(self, limit: int = 3) -> str:
        """fio's own words about this run (errors first), for messages."""
        wanted = [line for line in self.lines if _is_problem_line(line)] or list(self.lines)
        return " | ".join(wanted[:limit]) or "no message"


def _is_problem_line(line: str) -> bool:
    return bool(re.search(r"fio:|error|failed|disconnected|timed out|refused|unable|cannot|denied", line, re.I))


def _check_job_text(jobs: Sequence[tuple[str, Mapping[str, str | None]]]) -> str:
    from ptsbench.fio.jobs import render_job_file

    probe = ("ptsbench-probe", {"ioengine": "null", "rw": "read", "size": "4k", "bs": "4k"})
    return render_job_file({}, [probe, *jobs])


def run_checks(host: Host, jobs: Sequence[tuple[str, Mapping[str, str | None]]],
               timeout_s: float = PREFLIGHT_TIMEOUT_S) -> HostRun:
    """Run tiny check jobs on one host through fio's client, with a time limit; never raises for host problems."""
    from ptsbench.fio.runner import fio_binary

    with tempfile.NamedTemporaryFile("w", suffix=".fio", prefix="ptsbench-check-", delete=False) as handle:
        handle.write(_check_job_text(jobs))
    argv = [fio_binary(), "--output-format=normal,json", f"--client={host.fio_arg}", handle.name]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
        returncode: int | None = done.returncode
        text = done.stdout + "\n" + done.stderr
    except subprocess.TimeoutExpired as expired:
        returncode = None
        text = _text(expired.stdout) + "\n" + _text(expired.stderr)
    finally:
        os.unlink(handle.name)
    document, other = _split_json(text)
    entries = {str(e.get("jobname")): e for e in document.get("client_stats", []) if e.get("jobname") != "All clients"}
    probe: dict[str, str] = {}
    lines: list[str] = []
    for line in other.splitlines():
        match = _PROBE_RE.match(line.strip())
        if match:
            probe = match.groupdict()
        elif line.strip():
            lines.append(re.sub(r"^<[^>]*>\s*", "", line.strip()))  # fio prefixes server text with <hostname>
    disks = tuple(dict.fromkeys(str(disk["name"]) for disk in document.get("disk_util", []) if disk.get("name")))
    return HostRun(host, returncode, probe, entries, tuple(lines), disks)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode(errors="replace")


def _split_json(text: str) -> tuple[dict[str, Any], str]:
    """fio's JSON document (the part from a line '{' to the matching last '}') and the other text."""
    text = "\n" + text
    start = text.find("\n{\n")
    if start < 0:
        return {}, text
    try:
        document, end = json.JSONDecoder().raw_decode(text, start + 1)
    except json.JSONDecodeError:
        return {}, text
    return (document if isinstance(document, dict) else {}), text[:start] + text[end:]


@dataclass(frozen=True)
class HostTarget:
    """A target path as fio found it on one host in pre-flight."""

    path: str  # the path fio uses (a test file inside a directory target)
    kind: str  # "block" or "file"
    disks: tuple[str, ...]  # the disks fio reported the check's IO on (disk_util); () when it named none
    size_checked_bytes: int | None  # a block device: fio read its byte at this size - 1 (--size); else None


@dataclass(frozen=True)
class HostInfo:
    """A host that passed pre-flight: what its fio said about itself and about each target path."""

    host: str
    port: int
    fio_version: str
    hostname: str
    os: str
    arch: str
    targets: tuple[HostTarget, ...] = ()


@dataclass(frozen=True)
class Preflight:
    """Pre-flight result: every host usable, and the target paths as fio will use them on every host."""

    hosts: tuple[HostInfo, ...]
    targets: tuple[Target, ...]


def _read_check(path: str) -> dict[str, str | None]:
    """Read one byte, never create anything: tells existing (file or device), directory and missing apart.

    No `size`: given a size larger than an existing file, fio unlinks the file to lay it out anew. Without it, a
    missing or empty file (or a directory whose size reads 0, as an empty btrfs one) fails with 'you need to specify
    size=' and no IO.
    """
    return {"ioengine": "psync", "rw": "read", "bs": "1", "number_ios": "1", "allow_file_create": "0",
            "filename": _escape(path)}


def _write_check(directory: str, engine: str = "psync", direct: bool = False) -> dict[str, str | None]:
    """Write a 4 KiB scratch file in `directory` and remove it again."""
    name = os.path.join(directory, f".ptsbench-preflight-{engine}-{os.getpid()}")
    return {"ioengine": engine, "rw": "write", "bs": "4k", "size": "4k", "unlink": "1",
            "direct": "1" if direct else "0", "filename": _escape(name)}


def _escape(path: str) -> str:
    return path.replace(":", "\\:")


def _entry_state(run: HostRun, job: str) -> str:
    """'ok', 'directory', 'missing' or 'error' for one check job."""
    entry = run.entries.get(job)
    if entry is None:
        return "error"
    error = int(entry.get("error", 0))
    ios = sum(int((entry.get(d) or {}).get("total_ios", 0)) for d in DIRECTIONS)
    if error == 0 and ios > 0:
        return "ok"
    if error == _EISDIR:
        return "directory"
    if ios == 0 and error in _MISSING_ERRORS:
        return "missing"
    return "error"


def _entry_error(run: HostRun, job: str, path: str) -> str:
    """Why a check job failed: the error number fio recorded, and fio's lines about that path."""
    entry = run.entries.get(job)
    about = [line for line in run.lines if path in line and _is_problem_line(line)]
    said = " | ".join(about[:2]) if about else run.said(2)
    if entry is None:
        return f"fio ran no check ({said})"
    error = int(entry.get("error", 0))
    return f"{os.strerror(error) if error else 'no IO done'} (fio: {said})"


def _host_problem(run: HostRun, controller_version: str, timeout_s: float) -> str | None:
    """Why a host cannot be used at all (no answer, other fio version), else None."""
    if run.returncode is None and not run.probe:
        return f"no answer within {timeout_s:g} s (is `ptsbench server` running there and the port open?)"
    if not run.probe and any("connect" in line for line in run.lines):
        return f"cannot connect to its fio server: {run.said()} (is `ptsbench server` running there?)"
    if not run.probe:
        return (f"cannot talk to its fio server: {run.said()} (if one runs there, check that it is "
                f"{controller_version} like the controller: other versions may speak another protocol)")
    if run.probe["version"] != controller_version:
        return (f"runs {run.probe['version']}, the controller runs {controller_version}: "
                "install the same fio version on every host")
    return None


@dataclass
class _TargetCheck:
    """One target on one host, checked in rounds so that no check names a file in a directory not known to exist
    (fio creates missing parent directories of every job's file before it runs any job)."""

    path: str
    size_bytes: int | None = None  # a block device must hold this much: fio reads its byte at size - 1
    step: str = "parent"  # parent -> path -> create -> done
    used: str = ""  # the path fio will use (a test file inside a directory target)
    new_in: str = ""  # directory that must take a new file
    problem: str = ""
    disks: tuple[str, ...] = ()
    size_checked_bytes: int | None = None

    def __post_init__(self) -> None:
        self.used = self.path
        if os.path.dirname(self.path) == "/":
            self.step = "path"

    def job(self) -> dict[str, str | None] | None:
        """The check job for the current step, None when done."""
        if self.problem or self.step == "done":
            return None
        if self.step == "parent":
            return _read_check(os.path.dirname(self.path))
        if self.step == "path":
            return _read_check(self.path)
        return _write_check(self.new_in)

    def jobs(self, name: str) -> list[tuple[str, dict[str, str | None]]]:
        """The current step's check job as `name`, and on a device with a size to hold, its end check."""
        job = self.job()
        if job is None:
            return []
        if self.step == "path" and self.size_bytes and self.path.startswith("/dev/"):
            return [(name, job), (f"{name}-end", {**job, "offset": str(self.size_bytes - 1)})]
        return [(name, job)]

    def advance(self, run: HostRun, job: str, sole: bool = True) -> None:
        """Move to the next step from this round's answer (`sole`: the run checked no other target, so the disks
        fio reported are this target's)."""
        self._advance(run, job)
        if self.step == "done" and not self.problem and sole and not self.disks:
            self.disks = run.disks

    def _advance(self, run: HostRun, job: str) -> None:
        state = _entry_state(run, job)
        parent = os.path.dirname(self.path)
        if self.step == "parent":
            if state == "directory":
                self.step = "path"
            elif state == "missing":
                self.problem = f"{self.path}: no such directory {parent} (create it or choose another path)"
            elif state == "ok":
                self.problem = f"{self.path}: {parent} is a file or device, not a directory"
            else:
                self.problem = f"{self.path}: {parent} is not a usable directory: {_entry_error(run, job, parent)}"
        elif self.step == "path":
            if state == "ok" and self.size_bytes and self.path.startswith("/dev/"):
                self._check_end(run, f"{job}-end")
            elif state == "ok":
                self.step = "done"
            elif state == "missing" and self.path.startswith("/dev/"):
                self.problem = f"{self.path}: no such device, or its size is 0"
            elif state in ("directory", "missing"):
                self.new_in = self.path if state == "directory" else parent
                self.used = os.path.join(self.path, TESTFILE_NAME) if state == "directory" else self.path
                self.step = "create"
            else:
                self.problem = f"{self.path}: {_entry_error(run, job, self.path)}"
        elif state == "ok":
            self.step = "done"
        else:
            self.problem = f"{self.path}: cannot create a file in {self.new_in}: {_entry_error(run, job, self.new_in)}"

    def _check_end(self, run: HostRun, job: str) -> None:
        from ptsbench.units import format_bytes

        assert self.size_bytes
        if _entry_state(run, job) == "ok":
            self.step, self.size_checked_bytes = "done", self.size_bytes
        else:
            self.problem = (f"{self.path} is smaller than --size {format_bytes(self.size_bytes)} ({self.size_bytes} "
                            f"bytes): fio cannot read its byte at offset {self.size_bytes - 1} (give the smallest "
                            "device's size)")


def _parallel_checks(hosts: Sequence[Host], jobs: Mapping[Host, Sequence[tuple[str, Mapping[str, str | None]]]],
                     timeout_s: float) -> dict[Host, HostRun]:
    with ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL_CHECKS, len(hosts)))) as pool:
        futures = {host: pool.submit(run_checks, host, jobs[host], timeout_s) for host in hosts}
        return {host: future.result() for host, future in futures.items()}


def preflight(hosts: Sequence[Host], target_paths: Sequence[str], timeout_s: float = PREFLIGHT_TIMEOUT_S, *,
              size_bytes: int | None = None) -> Preflight:
    """Check every host before any IO; HostError listing every problem, host by host, when one is not usable.

    A target path may be an existing file or block device, a directory (a test file is used inside it, as locally)
    or a new file in an existing directory; it must resolve to the same path on every host. Nothing is created
    but a 4 KiB scratch file, removed again. With `size_bytes`, a block device must hold that much (fio reads its
    last byte). Each host's HostInfo.targets says what fio found there.
    """
    from ptsbench.fio.runner import fio_version

    if not hosts:
        raise HostError("no host given", "pass --hosts HOST[:PORT],... or a file with one host per line")
    controller_version = fio_version()
    relative = [path for path in target_paths if not os.path.isabs(path)]
    if relative:
        raise HostError(f"target {relative[0]!r} is a relative path", "with --hosts give absolute paths, valid on "
                        "every host (a remote fio server does not share the controller's working directory)")
    checks = {host: [_TargetCheck(os.path.normpath(path), size_bytes) for path in target_paths] for host in hosts}
    problems: dict[Host, list[str]] = {}
    first_runs: dict[Host, HostRun] = {}
    pending = list(hosts)
    while pending:
        jobs = {host: [item for i, check in enumerate(checks[host]) for item in check.jobs(f"t{i}")]
                for host in pending}
        runs = _parallel_checks(pending, jobs, timeout_s)
        for host, run in runs.items():
            if host not in first_runs:
                first_runs[host] = run
                problem = _host_problem(run, controller_version, timeout_s)
                if problem:
                    problems[host] = [problem]
                    continue
            names = [name for name, _job in jobs[host] if not name.endswith("-end")]
            for name in names:
                checks[host][int(name[1:])].advance(run, name, sole=len(names) == 1)
        pending = [host for host in pending if host not in problems and any(c.job() for c in checks[host])]
    for host in hosts:
        problems_here = [check.problem for check in checks[host] if check.problem]
        if problems_here:
            problems.setdefault(host, []).extend(problems_here)
    _check_same_paths(target_paths, checks, problems)
    if problems:
        raise HostError(_problem_text(problems, len(hosts)),
                        "fix these hosts (or leave them out of --hosts); nothing was run")
    infos = tuple(_host_info(host, first_runs[host], checks[host]) for host in hosts)
    targets = tuple(Target(path=check.used, kind="block" if check.used.startswith("/dev/") else "file",
                           size_bytes=None, requested=requested)
                    for check, requested in zip(checks[hosts[0]], target_paths, strict=True))
    return Preflight(infos, targets)


def _check_same_paths(paths: Sequence[str], checks: Mapping[Host, Sequence[_TargetCheck]],
                      problems: dict[Host, list[str]]) -> None:
    """One job file goes to every host: each target must be the same kind (file or directory) everywhere."""
    for index, path in enumerate(paths):
        seen = {host: items[index].used for host, items in checks.items() if host not in problems}
        if len(set(seen.values())) > 1:
            for host, used in seen.items():
                kind = "a directory" if used.endswith("/" + TESTFILE_NAME) else "a file or device"
                problems.setdefault(host, []).append(f"{path} is {kind} here but not on every host")


def _problem_text(problems: Mapping[Host, Sequence[str]], total: int) -> str:
    lines = [f"pre-flight failed on {len(problems)} of {total} host(s):"]
    for host, items in problems.items():
        lines.extend(f"  {host.label}: {item}" for item in items)
    return "\n".join(lines)


def _host_info(host: Host, run: HostRun, checks: Sequence[_TargetCheck]) -> HostInfo:
    probe = run.probe
    targets = tuple(HostTarget(check.used, "block" if check.used.startswith("/dev/") else "file", check.disks,
                               check.size_checked_bytes) for check in checks)
    return HostInfo(host.name, host.port, probe["version"], probe["name"], probe["os"], probe["arch"], targets)


def remote_target_facts(infos: Sequence[HostInfo], size_bytes: int) -> dict[str, object]:
    """The facts of a run's first target on hosts (the manifest's `target`), all from fio or the user: its kind
    and path, the size to test (--size), and per host the disks fio reported IO on and whether fio read the
    device's byte at --size."""
    from ptsbench.units import format_bytes

    first = [info.targets[0] for info in infos if info.targets]
    if not first:
        return {}
    described = []
    for info, target in zip(infos, first, strict=True):
        disks = f"disk {', '.join(target.disks)}" if target.disks else "disk not named by fio"
        holds = (f", holds {format_bytes(target.size_checked_bytes)}" if target.size_checked_bytes else "")
        described.append(f"{info.host}: {disks}{holds}")
    return {"kind": first[0].kind, "path": first[0].path, "size_bytes": size_bytes,
            "size_source": "--size (the capacity tested; the controller cannot read the hosts' devices)",
            "hosts": "; ".join(described)}


def probe_remote_engine(hosts: Sequence[Host], target: Target, timeout_s: float = PREFLIGHT_TIMEOUT_S,
                        ) -> tuple[str, str]:
    """The best async engine that works with direct IO on `target` on every host: io_uring, libaio, then psync."""
    engines = ("io_uring", "libaio")
    directory = os.path.dirname(target.path)
    if target.kind == "block":
        checks = [(engine, {**_read_check(target.path), "ioengine": engine, "bs": "4k", "direct": "1"})
                  for engine in engines]
    else:
        checks = [(engine, _write_check(directory, engine, direct=True)) for engine in engines]
    runs = _parallel_checks(hosts, {host: checks for host in hosts}, timeout_s)
    tried: list[str] = []
    for engine in engines:
        failing = [host.label for host, run in runs.items() if _entry_state(run, engine) != "ok"]
        if not failing:
            return engine, f"ioengine {engine} on every host" + (f" ({'; '.join(tried)})" if tried else "")
        tried.append(f"{engine} unavailable on {', '.join(failing)}")
    return "psync", "ioengine psync (" + "; ".join(tried) + ")"


def host_addresses(host: Host) -> list[str]:
    """The addresses a host name stands for ([] when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host.name, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    return sorted({str(info[4][0]) for info in infos})


def is_this_machine(host: Host) -> bool:
    """Whether a host's address is one of this machine's (loopback or an own interface address: it can be bound
    here), so its fio server opens this machine's devices."""
    for address in host_addresses(host):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.bind((address, 0))
                return True
        except OSError:
            continue
    return False


def check_remote_writes(cases: Sequence[Any], destructive: bool, hosts: Sequence[Host],
                        allow_mounted: bool = False) -> None:
    """The guard for cases run on hosts, on every path fio's parser says the jobs open: for hosts that are this
    machine as for a local run; for other hosts a device path is written only with --destructive (their mounts
    cannot be inspected)."""
    from ptsbench.target.guard import check_opened

    local = [host for host in hosts if is_this_machine(host)]
    remote = [host for host in hosts if host not in local]
    for case in cases:
        if case.rejected:
            continue  # fio's parser rejects it: fio is not started for it
        expanded = [line for line in case.job_text.splitlines() if "${" in line.split("#")[0].split(";")[0]]
        if expanded:
            raise UnsafeTargetError(f"case {case.name}: {expanded[0].strip()!r} uses an environment variable, which "
                                    "each host's fio server expands with its own environment",
                                    "write the value itself in the job file")
        if local:  # the server puts the client's address into names under `directory`: judge those too
            on_servers = [item for host in local for address in host_addresses(host) for item in case.opened(address)]
            check_opened(case.opened() + on_servers, case.unknown_writes(), destructive, allow_mounted)
        for path, written in case.opened() if remote else ():
            _check_remote_path(path, destructive, remote, f"case {case.name}", written)
        if remote and case.unknown_writes() and not destructive:
            raise UnsafeTargetError(f"case {case.name}: {case.unknown_writes()[0]}, so ptsbench cannot check which "
                                    "devices it writes", "check every host yourself, then add --destructive")


def check_remote_path(path: str, destructive: bool, hosts: Sequence[Host], what: str) -> None:
    """The guard for a target written on hosts (`what` writes there: the PTS run): judged as a local target on
    hosts that are this machine, by its path on the others."""
    from ptsbench.target.guard import check_path_allowed

    local = [host for host in hosts if is_this_machine(host)]
    if local:
        check_path_allowed(path, True, destructive)
    if len(local) < len(hosts):
        _check_remote_path(path, destructive, [host for host in hosts if host not in local], what, True)


def _check_remote_path(path: str, destructive: bool, hosts: Sequence[Host], what: str, written: bool) -> None:
    """Refuse writing a device path on other machines without --destructive, and any file of their kernel file
    systems (sysfs, procfs)."""
    path = os.path.normpath(path)
    if path.startswith(("/sys/", "/proc/")) or path in ("/sys", "/proc"):
        raise UnsafeTargetError(f"{what} opens {path} on {len(hosts)} host(s): a file of the kernel, not a device",
                                "name a device, or a file on a real file system")
    if written and not destructive and path.startswith("/dev/") and not path.startswith("/dev/shm/"):
        raise UnsafeTargetError(
            f"{what} writes to {path} on {len(hosts)} host(s), whose mounts and data ptsbench cannot inspect "
            "from the controller",
            "check every host yourself, then add --destructive",
        )


# ---------------------------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class HostStatus:
    """How one host ended a case: 'ok' or 'failed', with fio's words about it."""

    host: str
    status: str
    message: str = ""


def host_lines(text: str, host: Host) -> list[str]:
    """fio client lines that name one host (e.g. 'client: host=10.0.0.2 disconnected')."""
    pattern = re.compile(rf"(?<![\w.:]){re.escape(host.name)}(?![\w.])")
    return [line.strip() for line in text.splitlines()
            if pattern.search(line) and not line.lstrip().startswith(("{", '"')) and _is_problem_line(line)]


def host_statuses(hosts: Sequence[Host], results: Sequence[JobResult], fio_text: str,
                  jobs: Mapping[str, Collection[str]] | None = None) -> list[HostStatus]:
    """A host is failed when it returned fewer job results than the others (or than its own job file's `jobs`,
    by host name, when hosts ran different job files), or fio reported a problem with it."""
    names_per_host: dict[str, set[tuple[int, str] | str]] = {}
    for result in results:
        names_per_host.setdefault(result.hostname or "", set()).add(
            result.name if jobs is not None else (result.groupid, result.name))
    every = set().union(*names_per_host.values()) if names_per_host else set()
    statuses = []
    for host in hosts:
        said = host_lines(fio_text, host)
        got = names_per_host.get(host.name, set())
        expected: set[tuple[int, str] | str] = set(jobs[host.name]) if jobs is not None else every
        if said or got != expected or not expected:
            missing = "" if got == expected and got else "no results; " if not got else \
                f"results for {len(got)} of {len(expected)} jobs; "
            fio_words = " | ".join(said[:3]) or "no message about this host"
            statuses.append(HostStatus(host.name, "failed", f"{host.label}: {missing}fio: {fio_words}"))
        else:
            statuses.append(HostStatus(host.name, "ok"))
    return statuses


def job_keys(results: Sequence[JobResult]) -> list[tuple[int, str, int]]:
    """Each result's job across hosts: its group, its name and which job of that name it is on its host (two job
    sections of one name are two jobs, on every host in the same order)."""
    seen: dict[tuple[str | None, int, str], int] = {}
    keys = []
    for result in results:
        on_host = (result.hostname, result.groupid, result.name)
        seen[on_host] = seen.get(on_host, -1) + 1
        keys.append((result.groupid, result.name, seen[on_host]))
    return keys


def aggregate_hosts(results: Sequence[JobResult], label: str = ALL_HOSTS) -> list[JobResult]:
    """One result per job over all hosts, with fio's group arithmetic (as its All clients entry): IOs summed over the
    longest runtime, latency merged from the bins."""
    by_job: dict[tuple[int, str, int], list[JobResult]] = {}
    for key, result in zip(job_keys(results), results, strict=True):
        by_job.setdefault(key, []).append(result)
    merged = []
    for parts in by_job.values():
        directions = []
        for name in (*DIRECTIONS, "total"):
            found = [d for part in parts for d in part.directions if d.direction == name]
            if found:
                directions.append(merge_directions(name, found))
        merged.append(replace(
            parts[0], hostname=label, directions=tuple(directions), error=max(part.error for part in parts),
            usr_cpu=sum(part.usr_cpu for part in parts), sys_cpu=sum(part.sys_cpu for part in parts),
        ))
    return merged


def all_clients_mismatches(doc: Mapping[str, Any], results: Sequence[JobResult]) -> list[str]:
    """Compare our merge of every host job with fio's own 'All clients' entry (which sums all jobs of all hosts).

    Checked: IO counts and bytes, latency sample count, min, max and mean, and percentiles when fio gives them.
    Empty when they agree or fio gave no such entry.
    """
    entry = next((e for e in doc.get("client_stats", []) if e.get("jobname") == "All clients"), None)
    if entry is None:
        return []
    problems = []
    for name in DIRECTIONS:
        theirs = entry.get(name) or {}
        ours = [d for result in results for d in result.directions if d.direction == name]
        if not ours and not theirs.get("total_ios"):
            continue
        if not ours:
            problems.append(f"{name}: fio's All clients has {theirs.get('total_ios')} IOs, the hosts none")
            continue
        merged = merge_directions(name, ours)
        lat = theirs.get("lat_ns") or {}
        pairs: list[tuple[str, float | None, Any]] = [
            ("total_ios", merged.total_ios, theirs.get("total_ios")),
            ("io_bytes", merged.io_bytes, theirs.get("io_bytes")),
            ("lat N", merged.lat.n, lat.get("N")), ("lat min", merged.lat.min_ns, lat.get("min")),
            ("lat max", merged.lat.max_ns, lat.get("max")),
        ]
        pairs += [(f"lat p{percentile_key(key)}", merged.lat.percentiles_ns.get(percentile_key(key)), value)
                  for key, value in (lat.get("percentile") or {}).items()]
        problems += [f"{name} {what}: {mine} here, {fio} in fio's All clients" for what, mine, fio in pairs
                     if fio is not None and mine != fio]
        mean = lat.get("mean")
        if mean is not None and abs(merged.lat.mean_ns - mean) > 1e-6 * max(abs(mean), 1.0):
            problems.append(f"{name} lat mean: {merged.lat.mean_ns} here, {mean} in fio's All clients")
    return problems


@dataclass(frozen=True)
class HostOutcome:
    """What a multi-host case adds to its record."""

    jobs: list[JobResult]  # per job: each host in --hosts order, then the all-hosts merge
    statuses: list[HostStatus]
    problem: str  # empty when every host finished


def host_outcome(hosts: Sequence[Host], results: Sequence[JobResult], doc: Mapping[str, Any] | None,
                 fio_text: str) -> HostOutcome:
    """Per-host status and the all-hosts aggregate of one case (over the hosts that finished)."""
    statuses = host_statuses(hosts, results, fio_text)
    failed = [status for status in statuses if status.status != "ok"]
    finished = {status.host for status in statuses if status.status == "ok"}
    kept = [result for result in results if result.hostname in finished]
    label = ALL_HOSTS if not failed else f"{len(finished)} of {len(hosts)} hosts"
    aggregates = aggregate_hosts(kept, label) if kept and len(hosts) > 1 else []
    problem = "; ".join(status.message for status in failed)
    if not failed and doc is not None:
        mismatches = all_clients_mismatches(doc, kept)
        if mismatches:
            problem = "the all-hosts merge disagrees with fio's All clients: " + "; ".join(mismatches)
    host_order = {host.name: index for index, host in enumerate(hosts)}
    every = [*results, *aggregates]
    keys = job_keys(every)
    job_order: dict[tuple[int, str, int], int] = {}
    for key in keys:
        job_order.setdefault(key, len(job_order))
    ordered = sorted(zip(keys, every, strict=True),
                     key=lambda pair: (job_order[pair[0]], host_order.get(pair[1].hostname or "", len(host_order))))
    return HostOutcome([result for _, result in ordered], statuses, problem)


def unchecked_targets(paths: Sequence[str]) -> list[Target]:
    """Target paths on the hosts as given (for a dry run, which asks no host anything)."""
    return [Target(path=os.path.normpath(path), kind="block" if path.startswith("/dev/") else "file",
                   size_bytes=None, requested=path) for path in paths]
