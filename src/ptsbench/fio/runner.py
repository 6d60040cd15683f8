"""The only place that starts fio: run a job file, stream its status, keep its final JSON document.

fio is started with `--output-format=json+ --status-interval=1`: every second it appends a cumulative JSON document
to stdout. We read stdout with blocking line reads (no polling, no CPU taken from fio), decode each document when its
closing brace arrives, turn it into a FioStatus for progress, and keep the last one as the result.
"""

import json
import math
import os
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_text
from ptsbench.errors import FioNotFoundError, FioRunError
from ptsbench.fio.documents import read_documents
from ptsbench.fio.iosize import io_size
from ptsbench.fio.jobs import target_options
from ptsbench.fio.lifetime import kill_fio_processes, run_bound, start_bound, stop_with_ptsbench
from ptsbench.fio.output import load_fio_json
from ptsbench.fio.versions import MIN_FIO_VERSION, version_tuple

INSTALL_HINT = "install it with `apt-get install fio` (Debian/Ubuntu) or `dnf install fio`"
_UNKNOWN_ETA = 2**31 - 1
STOP_TIMEOUT_S = 10.0
# fio's line when a SIGINT ended it: a Ctrl-C of the terminal reaches fio and ptsbench at once, and on a busy host
# fio's end can be read before ptsbench's own KeyboardInterrupt is raised; it is the same interruption, not a failure
SIGINT_END = f"terminating on signal {int(signal.SIGINT)}"
# fio prints a status document every second; this long without one, past the expected end, fio is hung
HANG_SILENCE_S = 30.0


def hang_silence_s() -> float:
    """HANG_SILENCE_S, or the seconds PTSBENCH_HANG_S gives (for slow hosts, or a test)."""
    text = os.environ.get("PTSBENCH_HANG_S")
    if text is None:
        return HANG_SILENCE_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise FioRunError(f"PTSBENCH_HANG_S={text!r} is not a number of seconds", "e.g. PTSBENCH_HANG_S=120")
    return seconds
_running: set["subprocess.Popen[str]"] = set()  # fio processes of this program, for stop_all()
_found_fio: dict[tuple[str | None, str | None], str] = {}  # fio_binary's answers
_stopped: dict[int, tuple[float, float]] = {}  # pids of those stop_all() asked to stop: when first, when last
RESEND_S = 1.0  # stop_all() asks a fio still running this long after it last asked again


def running_fio_pids() -> list[int]:
    """The pids of the fio processes this program runs now (fio/waits.py reads how long they waited for a CPU)."""
    return [process.pid for process in list(_running) if process.returncode is None]


@dataclass(frozen=True)
class FioStatus:
    """One live sample: rates since the previous sample, and fio's own elapsed time and ETA."""

    elapsed_s: float
    eta_s: float | None
    iops: float
    bw_bytes: float
    running_job: str | None


@dataclass(frozen=True)
class FioOutcome:
    """What one fio process left: exit code, final JSON document (None if it printed none), its other text."""

    returncode: int
    doc: dict[str, Any] | None
    stdout_text: str
    stderr_text: str
    hung_s: float | None = None  # set when the watchdog stopped fio: seconds without a status document

    @property
    def ok(self) -> bool:
        return (self.returncode == 0 and self.doc is not None and self.hung_s is None and not self.job_errors()
                and not self.jobs_not_run())

    def _job_entries(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = (self.doc or {}).get("jobs", []) + (self.doc or {}).get("client_stats", [])
        return entries

    def job_errors(self) -> list[str]:
        return [f"job {job.get('jobname')}: error {job['error']}" for job in self._job_entries() if job.get("error")]

    def jobs_not_run(self) -> list[str]:
        """Jobs fio lists but never ran: no runtime and no IO (fio aborts some, such as a write to a mounted
        device without allow_mounted_write, with exit code 0 and a line on stderr). fio's nameless placeholder
        entries (group -1, left by `stats=0` and by jobs folded into a group_reporting entry; 3.39 names them '')
        are not jobs."""
        return [f"job {job.get('jobname')}" + (f" on {job['hostname']}" if job.get("hostname") else "")
                for job in self._job_entries()
                if job.get("jobname") and not job.get("job_runtime")
                and not any((job.get(direction) or {}).get("total_ios") for direction in ("read", "write", "trim"))]

    def error_line(self) -> str:
        """One line saying why the run failed, in fio's own words where it gave any."""
        if self.hung_s is not None:
            prefix = f"fio hung: no status for {self.hung_s:.0f} s past its expected end; it was stopped"
        elif self.returncode < 0:
            prefix = f"fio was killed by signal {signal.Signals(-self.returncode).name}"
        elif self.returncode:
            prefix = f"fio exited with code {self.returncode}"
        elif self.doc is None:
            prefix = "fio printed no JSON result"
        else:
            not_run = self.jobs_not_run()
            prefix = "; ".join(self.job_errors() + ([", ".join(not_run) + " did not run"] if not_run else [])) or "ok"
        said = [line.strip() for line in (self.stderr_text + "\n" + self.stdout_text).splitlines() if line.strip()]
        # fio states the problem first, then may list valid values (lines starting with ':'): keep the statement
        fio_lines = [line for line in said if not line.startswith(("{", ":", "valid values"))][:3]
        return f"{prefix}: {' | '.join(fio_lines)}" if fio_lines else prefix


def fio_binary() -> str:
    """Path of fio, or FioNotFoundError saying how to install it (PTSBENCH_FIO overrides the lookup). A path found
    is kept for the same PTSBENCH_FIO and PATH: a PTS round starts an fio per cell, each searching PATH again."""
    configured = os.environ.get("PTSBENCH_FIO")
    key = (configured, os.environ.get("PATH"))
    found = _found_fio.get(key) or shutil.which(configured or "fio")
    if not found:
        raise FioNotFoundError(f"fio not found{f' at {configured}' if configured else ''}", INSTALL_HINT)
    _found_fio[key] = found
    return found


_version_lock = threading.Lock()  # a plan's threads ask at once (sweep.plan_together): fio is asked once all the same


def fio_version(binary: str | None = None) -> str:
    """fio's version string (e.g. 'fio-3.33'); FioNotFoundError when it is too old to stream JSON status."""
    with _version_lock:
        return _version_of(binary or fio_binary())


@cache
def _version_of(binary: str) -> str:
    """fio_version of one program, asked once per process (whether its caller named it or found it on PATH)."""
    try:
        said = run_bound([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
        lines = said.strip().splitlines()  # another program's --version may run to many lines: its first one
        text = next((line.strip() for line in lines if line.startswith("fio-")), lines[0] if lines else "")
    except OSError as error:
        raise FioNotFoundError(f"cannot run {binary}: {error.strerror}", INSTALL_HINT) from error
    parsed = version_tuple(text)
    if parsed is None:
        raise FioNotFoundError(f"{binary} does not look like fio (it says {text!r})", INSTALL_HINT)
    if parsed < MIN_FIO_VERSION:
        wanted = ".".join(map(str, MIN_FIO_VERSION))
        raise FioNotFoundError(f"{text} is too old (ptsbench needs fio {wanted} or newer)", INSTALL_HINT)
    return text


def fio_has_option(name: str) -> bool:
    """Whether the fio ptsbench runs knows job option `name` (`fio --cmdhelp=NAME` describes it; a fio without it
    says "No such command", and exits 0 all the same)."""
    return _has_option(fio_binary(), name)


@cache
def _has_option(binary: str, name: str) -> bool:
    said = run_bound([binary, f"--cmdhelp={name}"], capture_output=True, text=True, timeout=30).stdout
    return any(line.strip().startswith(f"{name}:") for line in said.splitlines())


def fio_command(job_path: Path, extra_args: Sequence[str] = (), client: str | None = None) -> list[str]:
    """The exact fio command line for a job file; `client` (a host, or a file listing hosts) runs it through
    fio's client/server mode, on every listed host at once."""
    clients = [f"--client={client}"] if client else []
    return [fio_binary(), "--output-format=json+", "--status-interval=1", *extra_args, *clients, str(job_path)]


def client_pairs(pairs: Sequence[tuple[str, Path]]) -> tuple[Path, list[str], str]:
    """A job file of its own for each host in one fio client process (`--client=H1 j1 --client=H2 j2`), as the
    job_path, extra_args and client of run_fio and fio_command: the last pair is the job and client, the others
    come before them."""
    *first, (client, job_path) = pairs
    return Path(job_path), [arg for host, path in first for arg in (f"--client={host}", str(path))], client


def _entry_io(doc: dict[str, Any]) -> dict[tuple[str, int, str], tuple[int, int, int]]:
    """Cumulative (IOs, bytes, latency samples) of every job entry's direction (an entry is a thread: its name and
    its place among entries of that name)."""
    found: dict[tuple[str, int, str], tuple[int, int, int]] = {}
    places: dict[str, int] = {}
    for job in doc.get("jobs", []) + doc.get("client_stats", []):
        name = str(job.get("jobname", ""))
        place = places[name] = places.get(name, -1) + 1
        for direction in ("read", "write", "trim"):
            stats = job.get(direction) or {}
            found[(name, place, direction)] = (int(stats.get("total_ios", 0)), int(stats.get("io_bytes", 0)),
                                               int((stats.get("clat_ns") or stats.get("lat_ns") or {}).get("N", 0)))
    return found


class _StatusTracker:
    """Turns cumulative status documents into rates since the previous document. IOPS and bandwidth come from the
    same bytes over the same interval: a direction's IOs are its new bytes over its one IO size (iosize.py), since fio
    reads a document's IO counts a moment after its bytes (up to hundreds of ms on a busy host). fio resets an
    entry's counters when its ramp_time ends (IOs and bytes a moment apart, and they may climb past their old values
    before the next document): an entry that reset between two documents counts in neither rate for that interval.
    The reset shows as the first latency sample of an entry that did IO without one (fio records no latency during
    ramp_time), or as a counter going down."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.last_time = self.started
        self.last: dict[tuple[str, int, str], tuple[int, int, int]] = {}
        self.bytes_gcd: dict[tuple[str, int, str], int] = {}  # of every document's bytes so far (io_size's running)
        self.sizes: dict[tuple[str, int, str], int] = {}  # each entry's IO size, once found

    def sample(self, doc: dict[str, Any]) -> FioStatus:
        now = time.monotonic()
        counts = _entry_io(doc)
        interval_s = max(now - self.last_time, 1e-6)
        delta_ios: dict[str, float] = {}
        delta_bytes = 0
        for key, (ios, io_bytes, latencies) in counts.items():
            last_ios, last_bytes, last_latencies = self.last.get(key, (0, 0, 0))
            ramp_ended = last_ios > 0 and last_latencies == 0 and latencies > 0
            if ramp_ended or ios < last_ios or io_bytes < last_bytes:
                continue
            self.bytes_gcd[key] = math.gcd(self.bytes_gcd.get(key, 0), io_bytes)
            found = io_size([self.bytes_gcd[key], io_bytes], [None, ios], running=True)
            kept = self.sizes.get(key)
            # a size once found stays while it divides the bytes: a later document whose count lags its bytes by
            # more than io_size allows (a busy host, a fast job just past its ramp reset) cannot unsettle it
            size = kept if kept and self.bytes_gcd[key] % kept == 0 else found
            if size:
                self.sizes[key] = size
            new_ios = (io_bytes - last_bytes) / size if size else ios - last_ios
            delta_ios[key[0]] = delta_ios.get(key[0], 0) + new_ios
            delta_bytes += io_bytes - last_bytes
        running = max(delta_ios, key=lambda name: delta_ios[name], default=None)
        jobs = doc.get("jobs", [])
        etas = [job.get("eta", _UNKNOWN_ETA) for job in jobs]
        eta_s = max(etas) if etas and max(etas) < _UNKNOWN_ETA else None
        self.last_time, self.last = now, counts
        return FioStatus(
            elapsed_s=now - self.started,
            eta_s=eta_s,
            iops=sum(delta_ios.values()) / interval_s,
            bw_bytes=delta_bytes / interval_s,
            running_job=running if running is not None and delta_ios[running] > 0 else None,
        )


@dataclass(frozen=True)
class FioLaunch:
    """How run_fio starts fio and watches it: command-line arguments after the job file's (`extra_args`), the host
    list of fio's client (`client`), fio's working folder (`cwd`), how long it should run (`expected_s`, for the
    watchdog) and, for a chained job, the event set when it may begin (`released`: it waits at its gate until then,
    silent; the watchdog's clock starts there)."""

    extra_args: Sequence[str] = ()
    client: str | None = None
    expected_s: float | None = None
    cwd: Path | None = None
    released: threading.Event | None = None


def run_fio(
    job_path: Path,
    *,
    json_path: Path,
    stderr_path: Path,
    on_status: Callable[[FioStatus], None] | None = None,
    on_document: Callable[[dict[str, Any]], None] | None = None,
    status_bins: bool = True,
    launch: FioLaunch = FioLaunch(),
) -> FioOutcome:
    """Run fio on a job file as `launch` says; stream status to on_status (and every document to on_document);
    write the final JSON document atomically to json_path. A watchdog stops fio when it hangs (see _Watchdog).
    `status_bins=False`: on_document gets the documents without their latency histograms, parsed every second for
    nothing when the caller reads only counters and means (the outcome's final document has them)."""
    client = launch.client
    argv = fio_command(job_path, launch.extra_args, client)
    tracker = _StatusTracker()
    last: list[tuple[str, dict[str, Any]]] = []
    watchdog = _Watchdog(job_path, launch.expected_s, streams_status=client is None, released=launch.released)

    def each_document(text: str, doc: dict[str, Any]) -> None:
        watchdog.heard()
        last[:] = [(text, doc)]
        if on_document is not None:
            on_document(doc)
        if on_status is not None:
            on_status(tracker.sample(doc))

    interrupted = False
    stop_with_ptsbench(job_path)
    with open(stderr_path, "w") as stderr_file:
        # fio's client in a session of its own: a kill -9 of ptsbench's whole process group spares it, so its
        # parent-death SIGTERM reaches it and it tells every server to stop the jobs it started there (killed with
        # ptsbench, it could not, and a plain TCP server would run them to the end of their runtime)
        process = start_bound(argv, stdout=subprocess.PIPE, stderr=stderr_file, stdin=subprocess.DEVNULL, text=True,
                              cwd=launch.cwd, start_new_session=client is not None)
        assert process.stdout is not None
        _running.add(process)
        threading.Thread(target=_stop_jobs_of_killed_fio, args=(process, job_path), daemon=True).start()
        watchdog.watch(process)
        try:
            other_text = read_documents(process.stdout, each_document, without_bins=not status_bins)
        except KeyboardInterrupt:
            interrupted = True
            other_text = _final_document(process, each_document, without_bins=not status_bins)
        except BaseException:
            _stop(process)
            raise
        finally:
            _running.discard(process)
            watchdog.close()
        returncode = process.wait()
    if last:
        atomic_write_text(json_path, last[0][0])
    final = (last[0][1] if status_bins else _whole_document(last[0][0])) if last else None
    stderr_text = Path(stderr_path).read_text(errors="replace")
    outcome = FioOutcome(returncode, final, other_text, stderr_text, watchdog.hung_s)
    ended_by_sigint = returncode == -signal.SIGINT or SIGINT_END in other_text  # fio says so on its stdout
    if interrupted or process.pid in _stopped or ended_by_sigint:
        raise FioInterrupted(outcome)
    return outcome


class _Watchdog:
    """Stops a hung fio. fio prints a status document every second (its client only at the end), so fio is hung
    when, past the expected end of its jobs, no document came for hang_silence_s(). Without a known end, a local fio
    silent that long is hung too; a client's silence then proves nothing, so it is not watched. Stopping kills fio
    and its job processes (each in a session of its own), so nothing waits forever and no fio is left running."""

    def __init__(self, job_path: Path, expected_s: float | None, streams_status: bool,
                 released: threading.Event | None = None) -> None:
        self.job_path = job_path
        self.released = released
        self.expected_s = expected_s
        self.enabled = streams_status or expected_s is not None
        self.silence_s = hang_silence_s()
        self.started = self.last_heard = time.monotonic()
        self.hung_s: float | None = None
        self.done = threading.Event()

    def heard(self) -> None:
        self.last_heard = time.monotonic()

    def watch(self, process: "subprocess.Popen[str]") -> None:
        if self.enabled:
            threading.Thread(target=self._run, args=(process,), daemon=True).start()

    def _run(self, process: "subprocess.Popen[str]") -> None:
        if self.released is not None:  # waiting at its gate is not hanging
            while not self.released.wait(1.0):
                if self.done.is_set():
                    return
            self.started = self.last_heard = time.monotonic()
        end = self.started + (self.expected_s or 0.0)
        while not self.done.wait(1.0):
            now = time.monotonic()
            silent_s = now - max(self.last_heard, end)
            if silent_s >= self.silence_s and process.poll() is None:
                self.hung_s = now - self.last_heard
                process.kill()
                kill_fio_processes(self.job_path)
                return

    def close(self) -> None:
        self.done.set()


class FioInterrupted(KeyboardInterrupt):
    """Ctrl-C while fio ran: fio was stopped; `outcome` holds what it measured until then (its final document)."""

    def __init__(self, outcome: FioOutcome) -> None:
        super().__init__("interrupted")
        self.outcome = outcome


def _whole_document(text: str) -> dict[str, Any] | None:
    """The final document with its latency bins (read without them so far); None, as no result, where they are not
    JSON."""
    try:
        return load_fio_json(text)
    except json.JSONDecodeError:
        return None


def _final_document(process: "subprocess.Popen[str]", on_document: Callable[[str, dict[str, Any]], None],
                    without_bins: bool) -> str:
    """After a Ctrl-C: ask fio to stop and read the final document it prints (killed if it takes too long, or on a
    second Ctrl-C)."""
    assert process.stdout is not None
    read = threading.Event()

    def stop() -> None:
        while not read.is_set() and process.poll() is None:
            _ask_to_stop(process)
            read.wait(0.2)

    stopper = threading.Thread(target=stop, daemon=True)
    stopper.start()
    try:
        return read_documents(process.stdout, on_document, without_bins)
    except KeyboardInterrupt:
        process.kill()
        return ""
    finally:
        read.set()
        stopper.join()


def _stop_jobs_of_killed_fio(process: "subprocess.Popen[str]", job_path: Path) -> None:
    """When fio itself is killed (the OOM killer, kill -9), its job processes (each in a session of its own) run on
    to the end of their runtime, or hang, and keep its output open, so the run would wait for them: kill them as soon
    as fio is gone."""
    if process.wait() < 0:
        kill_fio_processes(job_path)


def stop_all() -> None:
    """Ask every fio this program started to stop (SIGINT); each run_fio then raises FioInterrupted. Callers call it
    again while fio runs (see _ask_to_stop)."""
    for process in list(_running):
        _ask_to_stop(process)


def _ask_to_stop(process: "subprocess.Popen[str]") -> None:
    """SIGINT to a running fio; again if it still runs RESEND_S after the last (one that reached the child between
    its fork and its exec was caught by Python's handler and lost, and fio would run to the end of its runtime); a
    kill once it still runs STOP_TIMEOUT_S after the first (its job processes go with it: _stop_jobs_of_killed_fio)."""
    if process.poll() is not None:
        return
    now = time.monotonic()
    first, last = _stopped.get(process.pid, (now, -math.inf))
    if now - first >= STOP_TIMEOUT_S:
        process.kill()
    elif now - last >= RESEND_S:
        _stopped[process.pid] = (first, now)
        process.send_signal(signal.SIGINT)


def _stop(process: subprocess.Popen[str]) -> None:
    """Ask fio to stop (SIGINT makes it finish cleanly), then kill it if it does not."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@cache
def probe_engine(path: str) -> tuple[str, str]:
    """The best async engine that works on `path` (file, folder or block device): io_uring, libaio, then psync."""
    target_options(path)  # a path fio would read as another is refused by its own name, not the probe file's
    if os.path.exists(path) and stat.S_ISBLK(os.stat(path).st_mode):
        return _probe(path, ["--rw=read", "--readonly"])
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    with tempfile.TemporaryDirectory(dir=directory if os.path.isdir(directory) else None) as scratch:
        return _probe(os.path.join(scratch, "probe.dat"), ["--rw=write"])


def _probe(path: str, io_args: list[str]) -> tuple[str, str]:
    tried: list[str] = []
    filename = target_options(path)["filename"]  # as one file: fio splits an unescaped ':' into two and writes both
    for engine in ("io_uring", "libaio"):
        argv = [fio_binary(), "--name=probe", f"--ioengine={engine}", f"--filename={filename}", "--size=64k",
                "--bs=4k", "--direct=1", "--output-format=json", *io_args]
        done = run_bound(argv, capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            return engine, f"ioengine {engine}" + (f" ({'; '.join(tried)})" if tried else "")
        tried.append(f"{engine} unavailable")
    return "psync", "ioengine psync (" + "; ".join(tried) + ")"


def probe_passthrough(char_device: str) -> str | None:
    """Why fio's io_uring_cmd engine cannot read the NVMe generic device `char_device` (a read of 64 KiB, read-only:
    the kernel needs NVMe passthrough on io_uring, 5.19 or newer); None when it can."""
    argv = [fio_binary(), "--name=probe", "--ioengine=io_uring_cmd", "--cmd_type=nvme", f"--filename={char_device}",
            "--size=64k", "--bs=4k", "--rw=read", "--readonly", "--allow_file_create=0", "--output-format=json"]
    try:
        done = run_bound(argv, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return f"fio did not finish reading {char_device}"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]  # stdout is fio's JSON
    return "; ".join(lines[-2:]) if lines else f"fio exited with status {done.returncode}"


def measure_read_rate(path: str, engine: str, seconds: float) -> tuple[float | None, str]:
    """(bytes per second, or None; what was measured or why not) of `seconds` of 1 MiB sequential reads of `path`,
    read-only: fio's --readonly refuses every write, and allow_file_create=0 keeps a missing path from being made."""
    if not os.path.exists(path):
        return None, f"{path} does not exist yet"
    filename = target_options(path)["filename"]  # as one file: fio splits an unescaped ':' into two
    argv = [fio_binary(), "--name=rate", f"--filename={filename}", "--readonly", "--allow_file_create=0", "--rw=read",
            "--bs=1M", "--iodepth=16", f"--ioengine={engine}", "--direct=1", f"--runtime={seconds:g}",
            "--time_based", "--output-format=json"]
    try:
        done = run_bound(argv, capture_output=True, text=True, timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        return None, f"fio did not finish reading {path}"
    try:
        document = done.stdout[done.stdout.find("{"):]  # after the notes fio prints first (a sync engine's iodepth)
        rate = sum(job["read"]["bw_bytes"] for job in json.loads(document)["jobs"])
    except (ValueError, KeyError, TypeError):
        rate = 0
    if done.returncode != 0 or not rate:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return None, f"fio could not read {path}: {lines[-1] if lines else f'exit status {done.returncode}'}"
    return float(rate), f"measured: {seconds:g} s of sequential 1 MiB reads of {path}, read-only"


def shell_line(argv: Sequence[str]) -> str:
    """A command line a person can paste into a shell."""
    return shlex.join(argv)
