"""The pre-flight: before any IO, tiny fio jobs (1-byte reads, a 4 KiB scratch file removed again) ask every host
whether it answers, runs the controller's fio version and can use each target path; the guard for paths written on
hosts."""

import errno
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ptsbench.device.target import TESTFILE_NAME, Target
from ptsbench.errors import UnsafeTargetError
from ptsbench.fio.output import DIRECTIONS
from ptsbench.hosts.hostlist import Host, HostError, host_addresses, is_problem_line, is_this_machine

PREFLIGHT_TIMEOUT_S = 30.0
MAX_PARALLEL_CHECKS = 64

_PROBE_RE = re.compile(
    r"^hostname=(?P<name>.*?), be=\d+, (?P<bits>\d+)-bit, os=(?P<os>[^,]*), arch=(?P<arch>[^,]*), "
    r"fio=(?P<version>[^,]*), flags="
)
_EISDIR = errno.EISDIR
_MISSING_ERRORS = (0, errno.EINVAL, errno.ENOENT)  # fio: "you need to specify size=" for a missing or empty file


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
        wanted = [line for line in self.lines if is_problem_line(line)] or list(self.lines)
        return " | ".join(wanted[:limit]) or "no message"



def _check_job_text(jobs: Sequence[tuple[str, Mapping[str, str | None]]]) -> str:
    from ptsbench.fio.jobs import render_job_file

    probe = ("ptsbench-probe", {"ioengine": "null", "rw": "read", "size": "4k", "bs": "4k"})
    return render_job_file({}, [probe, *jobs])


def run_checks(host: Host, jobs: Sequence[tuple[str, Mapping[str, str | None]]],
               timeout_s: float = PREFLIGHT_TIMEOUT_S) -> HostRun:
    """Run tiny check jobs on one host through fio's client, with a time limit; never raises for host problems."""
    from ptsbench.fio.lifetime import run_bound
    from ptsbench.fio.runner import fio_binary
    from ptsbench.hosts.ssh import client_folder

    folder = client_folder([host])
    with tempfile.NamedTemporaryFile("w", suffix=".fio", prefix="ptsbench-check-", delete=False) as handle:
        handle.write(_check_job_text(jobs))
    argv = [fio_binary(), "--output-format=normal,json", f"--client={host.fio_arg}", os.path.abspath(handle.name)]
    try:
        done = run_bound(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL, cwd=folder)
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
    transport: str = "tcp"  # how the controller reached its fio server: "ssh" or "tcp"
    user: str = ""  # the SSH user, when --hosts named one


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
    about = [line for line in run.lines if path in line and is_problem_line(line)]
    said = " | ".join(about[:2]) if about else run.said(2)
    if entry is None:
        return f"fio ran no check ({said})"
    error = int(entry.get("error", 0))
    return f"{os.strerror(error) if error else 'no IO done'} (fio: {said})"


def _host_problem(run: HostRun, controller_version: str, timeout_s: float) -> str | None:
    """Why a host cannot be used at all (no answer, other fio version), else None."""
    server = "its fio server started over SSH" if run.host.transport == "ssh" else "`ptsbench server --tcp` there"
    if run.returncode is None and not run.probe:
        return f"no answer within {timeout_s:g} s (check {server}, and the network)"
    version = run.probe.get("version") or _other_protocol_version(run, timeout_s)
    if version and version != controller_version:
        return f"runs {version}, the controller runs {controller_version}: install the same fio version on every host"
    if not run.probe and any("connect" in line for line in run.lines):
        return f"cannot connect to its fio server: {run.said()} (check {server})"
    if not run.probe:
        return (f"cannot talk to its fio server: {run.said()} (if one runs there, check that it is "
                f"{controller_version} like the controller: other versions may speak another protocol)")
    return None


def _other_protocol_version(run: HostRun, timeout_s: float) -> str | None:
    """The fio version of a server the client refused for speaking another protocol, asked in that protocol."""
    from ptsbench.fio.netprobe import probe_version, server_protocol
    from ptsbench.hosts.ssh import client_folder

    protocol = server_protocol(run.lines)
    if protocol is None:
        return None
    host = run.host
    address = str(client_folder([host]) or "") + "/" + host.name if host.transport == "ssh" else (host.name, host.port)
    return probe_version(address, protocol, timeout_s)


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
    from ptsbench.hosts.ssh import connect

    if not hosts:
        raise HostError("no host given", "pass --hosts ssh://HOST,... or a file with one host per line")
    controller_version = fio_version()
    relative = [path for path in target_paths if not os.path.isabs(path)]
    if relative:
        raise HostError(f"target {relative[0]!r} is a relative path", "with --hosts give absolute paths, valid on "
                        "every host (a remote fio server does not share the controller's working directory)")
    checks = {host: [_TargetCheck(os.path.normpath(path), size_bytes) for path in target_paths] for host in hosts}
    problems: dict[Host, list[str]] = {host: [f"cannot start its fio server over SSH: {problem}"]
                                       for host, problem in connect(hosts).items()}
    first_runs: dict[Host, HostRun] = {}
    pending = [host for host in hosts if host not in problems]
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
    return HostInfo(host.name, host.port, probe["version"], probe["name"], probe["os"], probe["arch"], targets,
                    host.transport, host.user)


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



def check_remote_writes(cases: Sequence[Any], destructive: bool, hosts: Sequence[Host],
                        allow_mounted: bool = False) -> None:
    """The guard for cases run on hosts, on every path fio's parser says the jobs open: for hosts that are this
    machine as for a local run; for other hosts a device path is written only with --destructive (their mounts
    cannot be inspected)."""
    from ptsbench.device.guard import check_opened

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
            on_servers = [item for host in local for address in client_addresses(host)
                          for item in case.opened(address)]
            check_opened(case.opened() + on_servers, case.unknown_writes(), destructive, allow_mounted,
                         case.changed_files())
        for path, written in case.opened() if remote else ():
            _check_remote_path(path, destructive, remote, f"case {case.name}", written)
        if remote and case.unknown_writes() and not destructive:
            raise UnsafeTargetError(f"case {case.name}: {case.unknown_writes()[0]}, so ptsbench cannot check which "
                                    "devices it writes", "check every host yourself, then add --destructive")


def client_addresses(host: Host) -> list[str]:
    """The addresses a host's fio server sees the controller's client come from: over TCP each address of the
    host's name; through SSH the one a server on a Unix socket gives every client."""
    from ptsbench.fio.opens import unix_client_address
    from ptsbench.hosts.ssh import REMOTE_FOLDER_PREFIX, REMOTE_SOCKET

    if host.transport == "ssh":
        return [unix_client_address(f"{REMOTE_FOLDER_PREFIX}0/{REMOTE_SOCKET}")]
    return host_addresses(host)


def check_remote_path(path: str, destructive: bool, hosts: Sequence[Host], what: str) -> None:
    """The guard for a target written on hosts (`what` writes there: the PTS run): judged as a local target on
    hosts that are this machine, by its path on the others."""
    from ptsbench.device.guard import check_path_allowed
    from ptsbench.device.userfile import check_whole_file

    local = [host for host in hosts if is_this_machine(host)]
    if local:
        check_path_allowed(path, True, destructive)
        check_whole_file(path, destructive)
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


def unchecked_targets(paths: Sequence[str]) -> list[Target]:
    """Target paths on the hosts as given (for a dry run, which asks no host anything)."""
    return [Target(path=os.path.normpath(path), kind="block" if path.startswith("/dev/") else "file",
                   size_bytes=None, requested=path) for path in paths]
