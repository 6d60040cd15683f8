"""A lab's worth of real runs for the catalog and gate tests, made once per session, and a throwaway PostgreSQL
(fixtures shared through conftest.py).

The runs are cheap: the null engine (or a 4 MiB file for quick), 0.2 s per job, four at a time; plus, beside them, the
suite's one tiny PTS run (tests/report/test_report_pts.py), so a run of the whole suite pays for it once. A few runs are
tagged with a model and firmware, as a lab does for drives that report none (files and virtual disks)."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

NULL_JOB = "[null]\nioengine=null\nsize=64m\nrw=randread\nbs=4k\n"
CAPPED = ("--set", "rate_iops=20000")  # the null engine capped: a run far slower than the others


@dataclass(frozen=True)
class Lab:
    folder: Path  # every run directory is under it
    pts: Path  # the real PTS run (copied in)
    fast: Path  # a null-engine run tagged model=LAB-A firmware=1.0
    capped: Path  # the same job at 20000 IOPS, tagged model=LAB-A firmware=2.0
    count: int


def _ptsbench(*args: str) -> None:
    from conftest import run_cli  # here: conftest imports this module

    done = run_cli(*args, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="session")
def run_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    folder = tmp_path_factory.mktemp("lab")
    job = folder.parent / "lab-null.fio"
    job.write_text(NULL_JOB)
    runs = folder / "runs"
    commands: list[tuple[str, ...]] = []
    for index in range(40):  # 40 case runs: two models, three firmware versions on model LAB-A
        model, firmware = ("LAB-A", ("1.0", "1.1", "2.0")[index % 3]) if index % 4 else ("LAB-B", "7.0")
        # held to 100 IOPS (an IO every 10 ms, which fio sleeps through): unlimited, each spins a CPU for its 0.2 s
        commands.append(("run", str(job), "--out", str(runs / f"run-{index:02}"), "--runtime", "200ms", "--set",
                         "rate_iops=100",
                         "--tag", f"model={model}", "--tag", f"firmware={firmware}",
                         *(("--tag", "nightly") if index % 2 else ())))
    for index in range(6):
        commands.append(("sweep", str(folder / "sweep.dat"), "--ioengine", "null", "--size", "64M", "--rw",
                         "randread", "--iodepth", "1,2", "--runtime", "200ms", "--out",
                         str(runs / f"sweep-{index}"), "--tag", "model=LAB-B", "--tag", "firmware=7.1"))
    for index in range(4):
        commands.append(("quick", str(folder / f"quick-{index}.dat"), "--size", "4M", "--runtime", "200ms",
                         "--out", str(runs / f"quick-{index}"), "--tag", "model=LAB-C"))
    from conftest import map_in_threads
    from test_report_pts import tiny_pts_run  # here: conftest imports this module, and test_report_pts conftest

    # the PTS run (the longest, mostly waiting for fio) first, beside four others at a time
    made = map_in_threads(lambda task: task(), [lambda: tiny_pts_run(tmp_path_factory.getbasetemp()),
                                                *(lambda args=args: _ptsbench(*args) for args in commands)], 5)[0]
    # then the gate runs, one after the other: the catalog's latest run of model LAB-A before the capped one is the
    # fast one (a run of the batch made beside them could start later on a busy host: it is held to 100 IOPS)
    fast, capped = runs / "gate-fast", runs / "gate-capped"
    _ptsbench("run", str(job), "--out", str(fast), "--runtime", "1", "--tag", "model=LAB-A", "--tag", "firmware=1.0")
    _ptsbench("run", str(job), "--out", str(capped), "--runtime", "1", "--tag", "model=LAB-A", "--tag",
              "firmware=2.0", *CAPPED)
    pts = runs / "pts"
    shutil.copytree(made, pts, ignore=shutil.ignore_patterns("report"))
    for scratch in folder.glob("*.dat"):
        scratch.unlink()
    return Lab(runs, pts, fast, capped, len(commands) + 3)


def _pg_bin(name: str) -> str:
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    assert found or shutil.which(name), f"{name} is missing: run `bash scripts/install.sh --test` (postgresql)"
    return str(found[-1]) if found else str(shutil.which(name))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a unix socket in a temporary folder (no TCP), stopped and removed after.
    The server runs in the foreground as this process's child (as the postgres user when root, which may not run
    one) and gets SIGQUIT, PostgreSQL's immediate shutdown, when this process dies, however it dies."""
    from conftest import die_with_parent

    folder = Path(tempfile.mkdtemp(prefix="ptsbench-catalog-pg-"))
    data, sockets = folder / "data", folder / "sockets"
    sockets.mkdir()
    user = "postgres" if os.geteuid() == 0 else None
    if user is not None:
        shutil.chown(folder, user)
        shutil.chown(sockets, user)
        folder.chmod(0o755)
    server = None
    try:
        subprocess.run([_pg_bin("initdb"), "-D", str(data), "-U", "catalog", "--auth", "trust"], check=True,
                       capture_output=True, timeout=120, preexec_fn=die_with_parent(user))
        log_path = folder / "server.log"
        with open(log_path, "wb") as log:
            server = subprocess.Popen([_pg_bin("postgres"), "-D", str(data), "-k", str(sockets), "-c",
                                       "listen_addresses="], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                      preexec_fn=die_with_parent(user, signal.SIGQUIT))
        deadline = time.monotonic() + 180
        while b"ready to accept connections" not in log_path.read_bytes():
            assert server.poll() is None, f"PostgreSQL did not start: {log_path.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"PostgreSQL never got ready: {log_path.read_text()[-2000:]}"
            time.sleep(0.05)
        yield f"postgresql+psycopg://catalog@/postgres?host={sockets}"
    finally:
        if server is not None:
            server.send_signal(signal.SIGINT)  # fast shutdown: ends its sessions, then exits
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(folder, ignore_errors=True)
