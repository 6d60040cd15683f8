"""Shared fixtures: run the real CLI as a user would, write job files, find fio."""

import compileall
import contextlib
import ctypes
import fcntl
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

import forked_cli
import programs
from device_lab_ftl import CI_CHECKS as FTL_CI_CHECKS
from device_lab_ftl import FULL_CHECKS as FTL_FULL_CHECKS
from exec_audit import exec_record
from labruns import postgres_url, run_lab  # noqa: F401 (fixtures: a lab of real runs, a throwaway PostgreSQL)

if shutil.which("fio") is None:
    pytest.exit("fio is not installed: run `bash scripts/test.sh`, which installs it", returncode=3)

ROOT = Path(__file__).resolve().parent.parent

# Every program the tests start, here and in the Python processes they start (exec_audit/sitecustomize.py), is
# recorded; at the end the run fails if one is not a program scripts/install.sh installs (programs.py).
# A pytest-xdist worker appends to its controller's log (small appends: whole lines), which judges it at the end.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if XDIST_WORKER and os.environ.get("PTSBENCH_EXEC_LOG"):
    EXEC_LOG = Path(os.environ["PTSBENCH_EXEC_LOG"])
else:
    EXEC_LOG = Path(tempfile.mkdtemp(prefix="ptsbench-exec-")) / "started.jsonl"
os.environ["PTSBENCH_EXEC_LOG"] = str(EXEC_LOG)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "tests" / "exec_audit"),
                                                         os.environ.get("PYTHONPATH"))))
exec_record.record_starts(str(EXEC_LOG))

# Every process of this run carries its mark in the environment (a child pytest gets a mark of its own; an xdist
# worker keeps its controller's)
RUN_MARK = os.environ["PTSBENCH_TEST_RUN"] if XDIST_WORKER else f"{os.getpid()}-{secrets.token_hex(4)}"
os.environ["PTSBENCH_TEST_RUN"] = RUN_MARK
PR_SET_PDEATHSIG = 1
# A suite started in the background by a script (`pytest ... &` without job control) inherits SIGINT ignored, and so
# would every ptsbench and fio it starts: the tests that press Ctrl-C would find them deaf and wait for minutes. The
# suite runs as it does from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def die_with_parent(user: str | None = None, sig: int = signal.SIGKILL) -> Callable[[], None]:
    """A preexec_fn for a server a test starts: become `user` (when given, as root), then get `sig` when the parent
    dies, however it dies (kill -9 included). Set after the user change, which clears it."""
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        if user is not None:
            import pwd

            entry = pwd.getpwnam(user)
            os.setgroups([])
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
        libc.prctl(PR_SET_PDEATHSIG, sig)

    return preexec


def made_once(base: Path, name: str, make: Callable[[Path], None]) -> Path:
    """The folder `name` that `make(folder)` fills once per test run, however many pytest-xdist workers ask for it:
    in the run's own temporary folder (the parent of a worker's `base`), made by the first under a lock while the
    others wait, then read by all (copy it before changing anything). Without xdist: in `base`."""
    shared = base.parent if XDIST_WORKER else base
    folder, done = shared / name, shared / f"{name}.done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, also when `make` fails
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a failed attempt's
            make(folder)
            done.touch()
    return folder


FIO_ATTEMPTS = 3
Found = TypeVar("Found")


def until_enough(run: Callable[[], Found], enough: Callable[[Found], bool]) -> Found:
    """`run()` (a short fio run, checked in full by itself) again until `enough` of what it found, at most
    FIO_ATTEMPTS times in all: a busy host's fio may write too few status documents or log windows to test with.
    The last run's findings either way."""
    for _attempt in range(FIO_ATTEMPTS - 1):
        found = run()
        if enough(found):
            return found
    return run()


def fio_status_documents(job: Path) -> list[dict[str, Any]]:
    """Every document a fio run of `job` printed (ptsbench's command: json+ status every second), the final one
    last; the run must succeed."""
    from ptsbench.fio.documents import read_documents
    from ptsbench.fio.runner import fio_command

    process = subprocess.Popen(fio_command(job), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    docs: list[dict[str, Any]] = []
    assert process.stdout is not None
    read_documents(process.stdout, lambda _text, doc: docs.append(doc))
    assert process.wait(timeout=300) == 0, process.stderr.read() if process.stderr else ""
    return docs


def map_in_threads(function: Callable[[Any], Any], items: Iterable[Any], workers: int) -> list[Any]:
    """`function` over `items` in `workers` threads, in order. Ctrl-C stops it at once: the items not started are
    dropped (a `with ThreadPoolExecutor` block would run every queued one before letting the interrupt through)."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(workers)
    try:
        return list(pool.map(function, items))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def cgroup2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1), if it is."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[fields.index("-") + 1] == "cgroup2":
            return Path(fields[4])
    return None


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """As root: start tests/runwatch.py, then move this pytest into a cgroup of its own, so that whatever the run
    starts (in any session, as any user, in a chroot) is in it. However pytest ends (Ctrl-C, SIGTERM to its group,
    kill -9), the watcher then kills what is left in the cgroup and removes the run's mounts, loop devices and
    cgroups. PTSBENCH_TEST_RUN_FACTS=FILE: write the run's mark, cgroup and temporary folder there (JSON)."""
    mount = cgroup2_mount()
    if os.geteuid() != 0 or mount is None or config.option.collectonly or XDIST_WORKER:
        return  # an xdist worker is its controller's child: in its cgroup already, watched by its watcher
    own = next(line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines() if line.startswith("0::"))
    cgroup = mount / own.strip("/") / f"ptsbench-tests-{os.getpid()}"
    basetemp = str(config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]  # the run's own folder
    try:
        cgroup.mkdir()
    except OSError as error:
        print(f"conftest: no cgroup for this run ({error}): a killed run may leave processes", file=sys.stderr)
        return
    env = {key: value for key, value in os.environ.items() if key not in ("PTSBENCH_EXEC_LOG", "PYTHONPATH")}
    with open(Path(basetemp) / "runwatch.log", "ab") as log:  # not pytest's stderr: a pipe of it would stay open
        subprocess.Popen([sys.executable, str(Path(__file__).with_name("runwatch.py")), str(os.getpid()),
                          str(cgroup), basetemp], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True, env=env)
    (cgroup / "cgroup.procs").write_text(str(os.getpid()))
    facts = os.environ.get("PTSBENCH_TEST_RUN_FACTS")
    if facts:
        Path(facts).write_text(json.dumps({"mark": RUN_MARK, "pid": os.getpid(), "cgroup": str(cgroup),
                                           "basetemp": basetemp}))


class DeviceLab:
    """scripts/device-lab.sh (a variant of it) running in the background: its process, its results file and its
    console."""

    KEY = pytest.StashKey[dict[str, "DeviceLab"]]()  # variant -> its lab
    # variant -> the script's options; the FTL variant's two sizes run the same guest with their own checks
    OPTIONS = {"debian12": (), "debian13": ("--debian13",), "ftl": ("--ftl", "--checks", ",".join(FTL_FULL_CHECKS)),
               "ftl-ci": ("--ftl", "--checks", ",".join(FTL_CI_CHECKS))}
    # variant -> the environment variable that must be 1 for its tests to run (its lab to start); unset: skipped.
    # The full FTL variant (12-18 minutes of its own at load averages of 7-26, docs/device-lab.md) stays opt-in; its
    # CI size (ftl-ci: the same shapes on a smaller drive in shorter rounds) runs by default, in CI too
    OPT_IN = {"ftl": "PTSBENCH_LAB_FTL"}

    def __init__(self, folder: Path, variant: str) -> None:
        self.folder = folder
        self.results = folder / "results.jsonl"
        self.console = folder / "console.txt"
        # its work folder (disk images, the initramfs) in this one (TMPDIR), in the run's temporary folder: a stopped
        # run whose watcher killed the script before its exit trap leaves it where pytest removes old runs' folders
        with self.console.open("wb") as console:
            self.process = subprocess.Popen(["bash", str(ROOT / "scripts" / "device-lab.sh"),
                                             *self.OPTIONS[variant], "--results", str(self.results)],
                                            stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                                            start_new_session=True, env={**os.environ, "TMPDIR": str(folder)})

    def stop(self) -> None:
        """Stop the lab (QEMU and the script, whose exit trap removes its images) if it still runs."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def device_lab(config: pytest.Config, variant: str) -> DeviceLab:
    """The device lab variant's run: started at collection (below), or now."""
    labs = config.stash.setdefault(DeviceLab.KEY, {})
    if variant not in labs:
        basetemp = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]  # the run's own folder
        labs[variant] = DeviceLab(Path(tempfile.mkdtemp(prefix=f"lab-{variant}-", dir=basetemp)), variant)
    return labs[variant]


def lab_variant(item: pytest.Item) -> str | None:
    """The device lab variant a test waits for: @pytest.mark.device_lab (debian12) or
    @pytest.mark.device_lab(variant="debian13", "ftl" or "ftl-ci"); None for other tests."""
    marker = item.get_closest_marker("device_lab")
    return None if marker is None else str(marker.kwargs.get("variant", "debian12"))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile ptsbench's modules to bytecode before the tests start `python -m ptsbench` (over a thousand times):
    where PYTHONDONTWRITEBYTECODE is set, as in CI's container, no run writes it, and each would otherwise compile
    every module it imports again (about 0.4 s of CPU per start). A module edited later is compiled afresh, as
    Python checks each .pyc against its source."""
    compileall.compile_dir(ROOT / "src" / "ptsbench", quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The device lab's tests last: they wait for the lab, which runs meanwhile (below). A test of Debian 13's own fio
    (the debian13_fio fixture, which makes the 1.2 GB root) is marked debian13: scripts/test.sh runs those only with
    --all, as it does the device labs."""
    for item in items:
        if "debian13_fio" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.debian13)
    items.sort(key=lambda item: lab_variant(item) is not None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start each device lab variant as soon as its tests are collected: it runs for minutes, mostly in QEMU, and the
    rest of the suite runs meanwhile instead of before it."""
    if not session.config.option.collectonly:
        if XDIST_WORKER and any(map(lab_variant, session.items)):
            pytest.exit("the device lab's tests run in a pytest of their own, without -n (each xdist worker would "
                        "boot its own guest): add -m 'not device_lab' or leave out -n", returncode=4)
        for variant in dict.fromkeys(filter(None, map(lab_variant, session.items))):
            if lab_opted_in(variant) is None:
                device_lab(session.config, variant)


def lab_opted_in(variant: str) -> str | None:
    """None when the variant's lab may run; else why not (it runs only when its environment variable is 1)."""
    name = DeviceLab.OPT_IN.get(variant)
    if name is None or os.environ.get(name) == "1":
        return None
    return f"the {variant} device lab runs only with {name}=1 (docs/device-lab.md)"


@pytest.hookimpl(trylast=True)  # after pytest's own, which tears down the session's fixtures after a Ctrl-C: they
def pytest_sessionfinish(session: pytest.Session) -> None:  # still start programs (umount), recorded in EXEC_LOG
    """Never leave a lab running after the tests (a -x stop, Ctrl-C, a test selection that skipped its tests)."""
    for lab in session.config.stash.get(DeviceLab.KEY, {}).values():
        lab.stop()
        shutil.rmtree(lab.folder, ignore_errors=True)
    if XDIST_WORKER:
        return  # the controller judges the log the workers share, after they are done
    failed = programs.verdict(EXEC_LOG)
    shutil.rmtree(EXEC_LOG.parent, ignore_errors=True)
    if failed:
        session.config.stash[UNLISTED] = failed
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


UNLISTED = pytest.StashKey[str]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say which programs the tests started that a fresh machine would lack."""
    if UNLISTED in config.stash:
        terminalreporter.write_line(f"FAILED: {config.stash[UNLISTED]}", red=True)
    elif shutil.which("dpkg-query") is None:
        terminalreporter.write_line("note: no dpkg-query here, so the programs the tests started were not checked "
                                    "against scripts/programs.txt")


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -m ptsbench ARGS` in a process of its own, as a user runs it: forked from a server that has made
    Python's start and ptsbench's first imports once (forked_cli.py: about 0.05 CPU-s less a call; the suite makes
    thousands), or a fresh interpreter where PTSBENCH_TEST_FORKED=0."""
    full_env = {**os.environ, **(env or {})}
    if os.environ.get("PTSBENCH_TEST_FORKED") == "0":
        return subprocess.run([sys.executable, "-m", "ptsbench", *args], capture_output=True, text=True, cwd=cwd,
                              env=full_env, timeout=timeout)
    return forked_cli.run(list(args), cwd, full_env, timeout)


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


@pytest.fixture
def write_job(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a job file into the test's folder and return its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return write


def stand_in_fio(tmp_path: Path, script: str) -> Path:
    """A shell script at tmp_path/bin/fio that stands in for fio, to inject a fault real fio cannot produce on
    demand (it hands everything else to the real fio); point PTSBENCH_FIO at it."""
    stand_in = tmp_path / "bin" / "fio"
    stand_in.parent.mkdir()
    stand_in.write_text(script)
    stand_in.chmod(0o755)
    return stand_in


def start_cli(*args: str) -> subprocess.Popen[bytes]:
    """`python -m ptsbench ARGS` in the background, in a session of its own (output discarded)."""
    return subprocess.Popen([sys.executable, "-m", "ptsbench", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def start_pts(run_dir: Path, *args: str) -> subprocess.Popen[bytes]:
    """`ptsbench pts --out RUN_DIR ARGS` (or `ptsbench resume RUN_DIR` without ARGS) in the background."""
    return start_cli(*(["pts", "--out", str(run_dir), *args] if args else ["resume", str(run_dir)]))


def kill_when(process: subprocess.Popen[bytes], ready: Callable[[], bool], delay_s: float = 0.0,
              group: bool = False) -> None:
    """kill -9 the run as soon as `ready()` holds (plus `delay_s`); `group`: its fio too, at the same moment (else
    fio gets its parent-death signal and stops its IO itself, see fio/lifetime.py)."""
    deadline = time.monotonic() + 60
    while not ready():
        assert process.poll() is None, "the run ended before the moment to kill it"
        assert time.monotonic() < deadline, "the moment to kill never came"
        time.sleep(0.01)
    time.sleep(delay_s)
    if group:
        os.killpg(process.pid, signal.SIGKILL)
    else:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()


def fio_json(case_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((case_dir / "fio.json").read_text())


LOOP_SIZE_BYTES = 64 * 1024 * 1024


@contextlib.contextmanager
def attached_loop(
    directory: str, size_bytes: int = LOOP_SIZE_BYTES, sector_bytes: int = 512
) -> Iterator[str]:
    """A loop device over a sparse file in `directory`; skips the test when that is not possible."""
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        pytest.skip("needs root and losetup")
    image = os.path.join(directory, "loop.img")
    with open(image, "wb") as handle:
        handle.truncate(size_bytes)
    argv = ["losetup", "--find", "--show", "--sector-size", str(sector_bytes), image]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"losetup failed: {done.stderr.strip()}")
    device = done.stdout.strip()
    try:
        yield device
    finally:  # drop partitions first: the kernel keeps partx-added ones after detaching
        subprocess.run(["partx", "-d", device], capture_output=True, check=False)
        subprocess.run(["losetup", "-d", device], capture_output=True, check=False)


@pytest.fixture
def loop_device(tmp_path: object) -> Iterator[str]:
    with attached_loop(str(tmp_path)) as device:
        yield device



FAKEBIN = Path(__file__).parent / "fakebin"


@pytest.fixture
def fakebin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[list[str]]]:
    """The stand-in tools of tests/fakebin first on PATH (they record their argv and fail on demand with
    FAKEBIN_FAIL); returns a function giving the command lines they received."""
    log = tmp_path / "fakebin.log"
    monkeypatch.setenv("PATH", f"{FAKEBIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKEBIN_LOG", str(log))
    monkeypatch.setenv("FAKEBIN_PYTHON", sys.executable)
    monkeypatch.delenv("FAKEBIN_FAIL", raising=False)

    def calls() -> list[list[str]]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return calls


DEBIAN13_ROOT = os.environ.get("PTSBENCH_DEBIAN13_ROOT", "/var/cache/ptsbench/debian13")
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="session")
def sprandom_fio() -> str:
    """A fio with sprandom (3.41 or later: the newest Debian's unstable carries), newer than the system's: built once
    by scripts/build-fio.sh and kept in /var/cache/ptsbench/fio (the device lab's FTL variant uses the same)."""
    done = subprocess.run(["bash", str(SCRIPTS / "build-fio.sh")], capture_output=True, text=True,
                          timeout=1800)
    if done.returncode == 77:
        pytest.skip(done.stderr.strip())
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="session")
def debian13_fio(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A command that runs Debian 13's own fio in its root (made by scripts/debian13-root.sh when missing, as CI's
    second platform does; reused when there)."""
    if os.geteuid() != 0:
        pytest.skip("the Debian 13 root is made and entered as root (debootstrap, chroot)")
    subprocess.run(["bash", str(SCRIPTS / "debian13-root.sh"), DEBIAN13_ROOT], check=True, timeout=1800)
    command = tmp_path_factory.mktemp("debian13") / "fio"
    command.write_text(f'#!/bin/sh\nexec bash {SCRIPTS / "in-root.sh"} {DEBIAN13_ROOT} fio "$@"\n')
    command.chmod(0o755)
    return str(command)
