"""Nothing already there is lost, a case is ok only when fio ran it, hangs are stopped, servers are stopped.

Real fio throughout (null engine, files, a mounted loop device as root, a loopback fio server); a stand-in fio only
for a hang fio cannot produce on demand.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import attached_loop, run_cli, stand_in_fio
from labruns import Lab
from ptsbench.fio.lifetime import fio_pids
from ptsbench.hosts.server import Listen, wait_listening
from ptsbench.outfolder import LEDGER
from test_hosts import Servers, servers  # noqa: F401 (a fixture)
from test_run_cli import assert_one_line_error

NULL_JOB = "[null]\nioengine=null\nsize=16m\nbs=4k\nrw=randread\n"
WRITE_JOB = "[w]\nrw=randwrite\nbs=4k\nsize=4m\n"


def tree_digest(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def result_of(run_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(next((run_dir / "cases").glob("*/result.json")).read_text())


# ---- nothing already there is lost ---------------------------------------------------------------------------


def test_out_into_a_users_folder_or_a_run_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.xlsx").write_text("my own workbook")
    (mine / "report").mkdir()
    (mine / "report" / "index.html").write_text("my page")
    before = tree_digest(mine)
    for command in (("run", str(job), "--runtime", "0.2"), ("quick", "--runtime", "0.2", "--size", "4M")):
        assert_one_line_error(run_cli(*command, "--out", str(mine)), "is not empty", "results.xlsx")
    assert tree_digest(mine) == before
    run_a = tmp_path / "a"
    assert run_cli("run", str(job), "--runtime", "0.2", "--out", str(run_a)).returncode == 0
    run_b = tmp_path / "b"
    assert run_cli("run", str(job), "--runtime", "0.2", "--out", str(run_b)).returncode == 0
    finished = tree_digest(run_a)
    assert_one_line_error(run_cli("run", str(job), "--out", str(run_a)), "already holds a run")
    # compare never writes into a run (nor its report folder), nor over a user's folder, nor compares a run with itself
    assert_one_line_error(run_cli("compare", str(run_a), str(run_b), "--out", str(run_a)), "inside the run directory")
    assert_one_line_error(run_cli("compare", str(run_a), str(run_b), "--out", str(run_a / "report")),
                          "inside the run directory")
    assert_one_line_error(run_cli("compare", str(run_a), str(run_b), "--out", str(mine)), "not empty")
    assert_one_line_error(run_cli("compare", str(run_a), f"{run_a}/", "--out", str(tmp_path / "c")), "same run")
    assert tree_digest(run_a) == finished and tree_digest(mine) == before
    # an earlier comparison may be replaced by a new one
    for _ in range(2):
        done = run_cli("compare", str(run_a), str(run_b), "--out", str(tmp_path / "c"), "--no-static")
        assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "c" / "compared.json").read_text())["runs"] == [str(run_a), str(run_b)]


def test_size_over_the_free_space_is_refused_with_both_numbers(tmp_path: Path) -> None:
    job = tmp_path / "w.fio"
    job.write_text("[w]\nrw=write\nbs=1m\n")
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    result = run_cli("run", str(job), "--target", str(tmp_path / "t.dat"), "--size", "900T",
                     "--out", str(tmp_path / "r"))
    assert_one_line_error(result, "need 900.0 TiB", f"({900 * 1024**4} bytes)", "are free there")
    stated_free = int(result.stderr.split("only ")[1].split("(")[1].split(" bytes")[0])
    assert abs(stated_free - free) < 64 * 1024**2  # the free space of that filesystem, as statvfs says
    assert not (tmp_path / "t.dat").exists() and not (tmp_path / "r").exists()  # refused before any IO
    assert_one_line_error(run_cli("quick", str(tmp_path), "--size", "900T", "--out", str(tmp_path / "q")), "free")
    assert_one_line_error(run_cli("pts", str(tmp_path / "p.dat"), "--profile", "demo", "--size", "900T",
                                  "--out", str(tmp_path / "p")), "are free there")


@contextlib.contextmanager
def tmpfs(mount: Path, size: str) -> Iterator[Path]:
    """A small tmpfs (root only)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.fixture
def small_filesystem(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "small", "4M") as mount:
        yield mount


def test_a_full_disk_leaves_no_partial_figure_or_workbook(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB)
    run = tmp_path / "run"
    # logged every 50 ms for 1.5 s, so that the plot has charts to draw (a log of one or two windows is said, not
    # drawn): 0.5 s in 100 ms windows gave a busy host's fio one or two
    assert run_cli("run", str(job), "--runtime", "1.5", "--log-interval", "50", "--out", str(run)).returncode == 0
    with tmpfs(tmp_path / "full", "40k") as full:
        plotted = run_cli("plot", str(run), "--out", str(full / "p"), "--format", "png", "--format", "svg")
        assert_one_line_error(plotted, "disk is full")
        shutil.copytree(run, tmp_path / "run2")
        compared = run_cli("compare", str(run), str(tmp_path / "run2"), "--out", str(full / "c"), "--no-static")
        assert_one_line_error(compared, "disk is full")
        written = [path for path in full.rglob("*") if path.is_file()]
        assert written and all(path.stat().st_size > 0 and (not path.name.startswith(".") or path.name == LEDGER)
                               for path in written)  # the ledger of what was written is whole, not a temporary


def test_a_run_whose_report_cannot_be_written_on_a_full_disk_fails(tmp_path: Path) -> None:
    """The results fit, the report does not: one error line saying how to write it later, a non-zero exit, and the
    results kept."""
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB)
    with tmpfs(tmp_path / "full", "400k") as full:
        done = run_cli("run", str(job), "--runtime", "0.2", "--out", str(full / "run"), "--report")
        assert_one_line_error(done, "disk is full")
        assert f"ptsbench report {full / 'run'}" in done.stderr and "ptsbench: warning" not in done.stderr
        assert result_of(full / "run")["status"] == "ok"
        shown = run_cli("show", str(full / "run"))
        assert shown.returncode == 0 and "null" in shown.stdout


@pytest.mark.xdist_group("run-lab")  # on the worker that makes the run lab for the catalog's tests
def test_a_pdf_that_cannot_be_written_names_the_full_disk_not_zlib(tmp_path: Path, run_lab: Lab) -> None:
    """matplotlib's PDF writer, when a write fails with ENOSPC, flushes its zlib stream again on the way out and
    raises zlib's "Error -2 while flushing: inconsistent stream state": the report's error names the full disk."""
    from ptsbench.report.build import load_report, report_error
    from ptsbench.report.core import pdf

    report = load_report(run_lab.pts, None)
    pdf.write_pdf(report, tmp_path / "whole.pdf")  # its size: the disk below holds half of it, whatever the run
    half_kib = max(8, (tmp_path / "whole.pdf").stat().st_size // 2 // 4096 * 4)
    with tmpfs(tmp_path / "full", f"{half_kib}k") as full, pytest.raises(Exception) as raised:
        pdf.write_pdf(report, full / "report.pdf")
    said = str(report_error(run_lab.pts, raised.value))
    assert "the disk is full" in said and "No space left on device (ENOSPC)" in said, (said, repr(raised.value))
    assert "stream state" not in said and "\n" not in said


def test_a_file_made_for_a_case_that_failed_at_layout_is_removed(tmp_path: Path, small_filesystem: Path) -> None:
    job = tmp_path / "r.fio"
    job.write_text("[r]\nrw=randread\nbs=64k\nsize=64m\n")  # the job's own size: no --size to check up front
    kept = small_filesystem / "kept.dat"
    kept.write_bytes(b"x" * 4096)
    out = tmp_path / "r"
    result = run_cli("run", str(job), "--target", str(small_filesystem / "new.dat"), "--out", str(out))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    record = result_of(out)
    assert record["status"] == "failed" and "No space left" in record["message"] and "removed" in record["message"]
    assert sorted(path.name for path in small_filesystem.iterdir()) == ["kept.dat"]
    assert kept.read_bytes() == b"x" * 4096


# ---- a case is ok only when fio ran it ------------------------------------------------------------------------


@pytest.fixture
def mounted_loop(tmp_path: Path) -> Iterator[str]:
    with attached_loop(str(tmp_path)) as device:
        subprocess.run(["mkfs.ext4", "-q", device], check=True)
        mount = tmp_path / "mnt"
        mount.mkdir()
        subprocess.run(["mount", device, str(mount)], check=True)
        try:
            yield device
        finally:
            subprocess.run(["umount", str(mount)], check=False)


def test_fio_aborting_with_exit_code_0_is_a_failed_case(tmp_path: Path, mounted_loop: str,
                                                        servers: Servers) -> None:  # noqa: F811
    job = tmp_path / "w.fio"
    job.write_text(WRITE_JOB)
    out = tmp_path / "local"
    result = run_cli("run", str(job), "--target", mounted_loop, "--destructive", "--allow-mounted", "--out", str(out),
                     "--format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    rows = json.loads(result.stdout)
    assert [row["status"] for row in rows] == ["failed"] and rows[0]["iops"] is None
    assert "did not run" in rows[0]["message"] and "allow_mounted_write" in rows[0]["message"]
    assert result_of(out)["status"] == "failed"
    (host,) = servers(1)
    out = tmp_path / "hosts"
    result = run_cli("run", str(job), "--target", mounted_loop, "--destructive", "--allow-mounted", "--out", str(out),
                     "--hosts", host.label, "--format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result_of(out)["status"] == "failed"
    assert "allow_mounted_write" in result_of(out)["message"]


def test_the_table_shows_the_queue_depth_fio_used_not_the_typed_one(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB)
    # fio reads iodepth=-3 as 3 with a range mark and once ran it at its default: ptsbench now refuses it first
    refused = run_cli("run", str(job), "--runtime", "0.2", "--set", "iodepth=-3", "--out", str(tmp_path / "neg"))
    assert refused.returncode == 2 and "iodepth=-3" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "neg").exists()
    result = run_cli("run", str(job), "--runtime", "0.2", "--set", "iodepth=4", "--format", "json",
                     "--out", str(tmp_path / "four"))
    assert result.returncode == 0, result.stderr
    fio_said = json.loads(next((tmp_path / "four" / "cases").glob("*/fio.json")).read_text())["jobs"][0]
    assert json.loads(result.stdout)[0]["iodepth"] == fio_said["latency_depth"] == 4


# ---- hangs ----------------------------------------------------------------------------------------------------

HANGING_FIO = """#!/bin/sh
# stands in for a fio that hangs running jobs (it prints nothing and never ends); the real fio answers --version and
# parses the job file
case "$*" in
    *--output-format*) exec python3 -c "import time; time.sleep(3600)" "$@" ;;
esac
exec fio "$@"
"""


def test_a_hung_fio_is_stopped_and_recorded_as_hung(tmp_path: Path) -> None:
    stand_in = stand_in_fio(tmp_path, HANGING_FIO)
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB + "runtime=1\ntime_based\n")
    out = tmp_path / "stand-in"
    # the stand-in never ends: ptsbench returning at all (within run_cli's bound, far below its hour) is the point
    result = run_cli("run", str(job), "--out", str(out), "--format", "json", timeout=600,
                     env={"PTSBENCH_FIO": str(stand_in), "PTSBENCH_HANG_S": "2"})
    assert result.returncode == 1
    assert json.loads(result.stdout)[0]["status"] == "hung" and result_of(out)["status"] == "hung"
    assert "fio hung" in result_of(out)["message"]
    assert not subprocess.run(["pgrep", "-f", f"time.sleep.*{tmp_path}"], capture_output=True).stdout


def test_real_fio_stopped_with_sigstop_is_killed_with_its_jobs(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    # 10 s to be stopped in (2 s could pass unseen under load); 100 IOPS, an IO every 10 ms fio sleeps through
    job.write_text(NULL_JOB + "runtime=10\ntime_based\nrate_iops=100\n")
    out = tmp_path / "stopped"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(job), "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PTSBENCH_HANG_S": "3"})
    deadline = time.monotonic() + 30
    while not fio_pids(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = fio_pids(out)
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 1 and "Traceback" not in stderr
    assert result_of(out)["status"] == "hung"
    assert fio_pids(out) == []  # fio and its job processes are gone


STOPPING_IN_ROUND_1 = """#!/bin/sh
# stands in for an fio that stops (SIGSTOP) as round 1 starts: a hang at a moment real fio cannot be made to choose
# (stopping the real one from outside raced a 2 s round on a loaded host); the real fio does everything else
case "$*" in
    *--output-format*rounds/001/*) kill -STOP $$ ;;
esac
exec fio "$@"
"""


def test_a_pts_round_whose_fio_hangs_fails_naming_the_hang_and_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "pts"
    rounds = run_dir / "pts" / "iops" / "rounds"
    stand_in = stand_in_fio(tmp_path, STOPPING_IN_ROUND_1)
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "pts", "--out", str(run_dir), "--profile", "demo",
                                "--tests", "iops", "--size", "16M", "--round-time", "0.2", "--max-rounds", "2",
                                "--block-sizes", "4k,64k,1m", "--mixes", "0,65,100"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PTSBENCH_HANG_S": "15", "PTSBENCH_FIO": str(stand_in)})
    _stdout, stderr = process.communicate(timeout=300)  # 15 s: a loaded host delayed preconditioning's fio 3 s
    errors = [line for line in stderr.splitlines() if line.startswith("ptsbench: error:")]
    assert process.returncode != 0 and len(errors) == 1 and "fio hung" in errors[0], stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "round 1" in manifest["failure"] and "fio hung" in manifest["failure"]
    assert fio_pids(run_dir) == [] and not (rounds / "001" / "round.json").exists()
    resumed = run_cli("resume", str(run_dir))  # the round runs again
    assert resumed.returncode == 0, resumed.stderr
    assert (rounds / "001" / "round.json").exists() and "failure" not in {
        key for key, value in json.loads((run_dir / "manifest.json").read_text()).items() if value}


# ---- interruptions (Ctrl-C: test_run_cli.py) ---------------------------------------------------------------


def test_stale_temporaries_of_a_killed_report_are_removed_by_the_next(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB)
    out = tmp_path / "r"
    assert run_cli("run", str(job), "--runtime", "0.2", "--out", str(out)).returncode == 0
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs: the writer was killed
    stale = [out / "report" / f".index.html.{dead.pid}.abc123.tmp", out / "report" / "figures" /
             f".null-iops.png.{dead.pid}-1401.tmp", out / f".results.xlsx.{dead.pid}.x_y.tmp"]
    live = out / "report" / f".report.pdf.{os.getpid()}.keep.tmp"  # a writer that still runs (this test)
    for path in [*stale, live]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    (out / "report" / "figures" / f".claims-{dead.pid}-zz").mkdir()
    result = run_cli("report", str(out))
    assert result.returncode == 0, result.stderr
    assert not any(path.exists() for path in stale) and live.exists()
    assert not list((out / "report" / "figures").glob(".claims-*"))
    assert not [path for path in (out / "report").rglob("*") if path.is_file() and path.stat().st_size == 0
                and path != live]


# ---- ptsbench server ------------------------------------------------------------------------------------------


def test_server_lifecycle_pid_file_sigterm_and_a_reused_pid(tmp_path: Path) -> None:
    listen = Listen(socket=tmp_path / "server" / "fio.sock")
    unwritable = tmp_path / "missing-folder" / "fio.pid"
    result = run_cli("server", "--socket", str(listen.socket), "--daemon", "--pidfile", str(unwritable))
    assert_one_line_error(result, "pid file", "does not exist")
    assert not wait_listening(listen, 1.0)  # no server left listening without a way to stop it
    # a foreground server stops its fio on SIGTERM
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "server", "--socket", str(listen.socket)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_listening(listen, 15.0)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM
    assert not wait_listening(listen, 1.0) and not os.path.lexists(listen.socket)  # socket removed with the server
    # a pid file naming a live process that is not a fio server: left alone, and said so
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        pidfile = tmp_path / "stale.pid"
        pidfile.write_text(f"{bystander.pid}\n")
        result = run_cli("server", "--stop", "--pidfile", str(pidfile))
        assert_one_line_error(result, "not a fio server", "left alone")
        assert "stopped already" not in result.stderr
        assert bystander.poll() is None and pidfile.exists()
    finally:
        bystander.kill()
        bystander.wait()
