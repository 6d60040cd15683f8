"""`ptsbench pts` command line: --dry-run prints the plan and every job file; bad input is one clear line."""

from pathlib import Path

import pytest

from conftest import run_cli


def test_dry_run_prints_plan_and_job_files_and_runs_nothing(tmp_path: Path) -> None:
    target = tmp_path / "t.dat"
    run_dir = tmp_path / "run"
    done = run_cli("pts", str(target), "--size", "1G", "--out", str(run_dir), "--dry-run", "--verbose")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("# PTS 2.0 enterprise profile on ")
    assert out.count("[global]") == 6 + 4  # a round per phase (the latency histogram's too), preconditioning for
    # all but write saturation and the histogram
    assert out.count("[wipc-128k]") == 3 and out.count("[wipc-1m]") == 1  # IOPS, TP 128k, LAT; TP 1m
    assert "tracked: rnd 4k 0/100 iops, rnd 64k 65/35 iops, rnd 1m 100/0 iops" in out
    assert "[c55-rnd-512-0-100]" in out and "# Write saturation: round 1 job file" in out
    assert "Not PTS-compliant" not in out  # the enterprise profile as the spec says it
    # but a file cannot be purged: the dry run says what the run will then record
    assert "# Purge at run time: none (not a PTS purge: the run will not be PTS-compliant)" in out
    assert not run_dir.exists() and not target.exists()


def test_dry_run_client(tmp_path: Path) -> None:
    done = run_cli("pts", str(tmp_path / "t.dat"), "--size", "4G", "--profile", "client", "--tests", "iops,tp",
                   "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "(TC2/QD16)" in done.stdout and "(TC1/QD32)" in done.stdout
    assert "Throughput 128k" not in done.stdout and "Throughput 1m" in done.stdout


def test_dry_run_of_advanced_tests(tmp_path: Path) -> None:
    done = run_cli("pts", str(tmp_path / "t.dat"), "--size", "1G", "--spec", "1.1", "--tests", "ecw,hir", "--dry-run",
                   "--verbose")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Not PTS-compliant" not in out  # the spec's durations
    assert "#   Enterprise composite workload: then MaxIOPS, MidIOPS and MinIOPS, chosen after steady state" in out
    assert "bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4096/67:8192/10:16384/7:32768/3:65536/3" in out
    assert "random_distribution=zoned:50/5:30/15:20/80" in out
    assert out.count("startdelay=") == 5 * 360  # 359 bursts and the recovery per wait state have a start time
    assert "startdelay=19800000ms" in out  # the 50 s wait state's recovery: 360 x (5 + 50) s after its start
    assert "# Enterprise composite workload: the operating points' job files are made once" in out


def test_help_lists_the_commands() -> None:
    done = run_cli("--help")
    assert " pts " in done.stdout and " resume " in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tests", "iops,foo"], "unknown test(s): foo"),
        (["--block-sizes", "iops=3x"], "not a size"),
        (["--mixes", "150"], "read percentages must be 0..100"),
        (["--mixes", "iops=100/0,65/30"], "not a read/write mix: '65/30'"),  # its write share was ignored
        (["--block-sizes", "iops=8k,64k,1m"], "tracked variable 'rnd 4k 0/100' is not in the round"),
        (["--numjobs", "lat=0"], "not a positive whole number"),
        (["--size", "512K"], "too small"),
        (["--round-time", "soon"], "not a duration"),
        (["--round-time", "0.0004"], "under fio's 1 ms resolution"),  # would be fio's runtime=0: no time limit
        (["--tests", "hir", "--hir-burst-time", "0.0002"], "under fio's 1 ms resolution"),
        (["--tests", "cbw", "--spec", "1.1"], "cbw is not part of PTS 1.1: use ecw with --spec 1.1"),
        (["--tests", "hir", "--zones", "4"], "--zones applies to none of the selected tests (hir)"),
        (["--tests", "dirth", "--dirth-workload", "8k:165"], "read share 0..100"),
        (["--tests", "cbw", "--demand-tcs", "32,16"], "must include TC1/QD1"),
        (["--tests", "tp,wsat", "--precondition", "sprandom"], "neither is selected"),
        (["--tests", "iops", "--sprandom-op", "0.1"], "--sprandom-op applies to --precondition sprandom"),
        (["--tests", "iops", "--precondition", "sprandom", "--precondition-multiple", "1"],
         "drop --precondition-multiple"),
        (["--tests", "iops", "--precondition", "sprandom", "--sprandom-op", "1"], "--sprandom-op"),
        (["--tests", "iops", "--precondition", "fast"], "--precondition"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = run_cli("pts", "--profile", "demo", "--out", str(tmp_path / "run"), "--dry-run", *args)
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_new_file_without_size_is_refused(tmp_path: Path) -> None:
    done = run_cli("pts", str(tmp_path / "new.dat"), "--dry-run")
    assert done.returncode != 0 and done.stderr.count("\n") == 1 and "--size" in done.stderr


def test_resume_of_a_finished_case_runner_directory_is_refused(tmp_path: Path) -> None:
    """A run whose every case is done has nothing to resume: one line saying so, and where its results are."""
    job = tmp_path / "j.fio"
    job.write_text("[j]\nioengine=null\nsize=1m\nrw=read\n")
    run_dir = tmp_path / "run"
    assert run_cli("run", str(job), "--out", str(run_dir)).returncode == 0
    done = run_cli("resume", str(run_dir))
    assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    assert "every case of this run" in done.stderr and f"ptsbench show {run_dir}" in done.stderr, done.stderr


def test_live_report_during_and_after_a_real_run(tmp_path: Path) -> None:
    """`ptsbench pts` rewrites its report after every round (marked in progress) and writes the final one."""
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "pts", "--profile", "demo", "--tests", "lat",
                                "--out", str(out), "--size", "32M", "--max-rounds", "5"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    index = out / "report" / "index.html"
    seen_live = ""
    deadline = time.monotonic() + 240
    while process.poll() is None and time.monotonic() < deadline:
        if index.exists() and not seen_live:
            seen_live = index.read_text()
        time.sleep(0.2)
    stdout, stderr = process.communicate(timeout=240)
    assert process.returncode == 0, stderr
    assert 'id="in-progress"' in seen_live and "Latency round" in seen_live  # opened mid-run
    final = index.read_text()
    assert 'id="in-progress"' not in final and (out / "report" / "report.pdf").exists()
    assert f"report {index}" in stderr
    # the plan shown before the run, and kept, estimates the purges and preconditioning too
    estimate = "Purges: none (the purge method at run time is none)"
    assert estimate in stderr.splitlines() and estimate in (out / "plan.txt").read_text().splitlines()
    # piped to a log, each progress line is whole (not wrapped at 80 columns), so it can be grepped
    target = out / "scratch.dat"
    assert f"Latency: no purge of {target}: a file cannot be purged" in stderr.splitlines(), stderr
    deviation = f"purge: none (no purge of {target}: a file cannot be purged)"  # a row of the deviations table
    assert deviation in [line.rstrip() for line in stdout.splitlines()], stdout


def test_the_live_report_takes_as_much_cpu_per_round_at_round_1440_as_at_round_1() -> None:
    """A rewrite draws every round so far (write saturation: up to 1,440), so it grows dearer; the rewrites are
    spaced out so that the CPU they take per round stays what the cheapest one took, and a test whose rewrites cost
    the same every time rewrites after every round."""
    from ptsbench.report.pts.live import RewriteBudget

    steady, growing = RewriteBudget(), RewriteBudget()
    spent_s: list[float] = []
    for number in range(1, 1441):
        assert steady.round_finished()
        steady.rewritten(0.2)
        cost_s = 0.1 + 0.0005 * number if growing.round_finished() else 0.0
        if cost_s:
            growing.rewritten(cost_s)
        spent_s.append(cost_s)
    first, last = sum(spent_s[:100]), sum(spent_s[-100:])
    assert spent_s[0] > 0 and 0 in spent_s[-100:]  # the first round rewrites; late rounds not all
    assert abs(last - first) <= max(spent_s)  # at most one rewrite's difference between round 1-100 and 1341-1440
    assert sum(spent_s) <= 1440 * spent_s[0] + max(spent_s)  # what the rounds earned, at most


@pytest.mark.parametrize(("purge", "message"), [("blkdiscard", "purge method blkdiscard cannot be used"),
                                                ("shred", "unknown purge method: 'shred'")])
def test_unusable_purge_method_is_refused_before_the_run_exists(tmp_path: Path, purge: str, message: str) -> None:
    """A --purge the target cannot take is refused up front (resume keeps the stored method, so a run directory
    made with it could never finish)."""
    run_dir = tmp_path / "run"
    done = run_cli("pts", "--profile", "demo", "--size", "16M", "--tests", "lat", "--purge", purge, "--out",
                   str(run_dir))
    assert done.returncode != 0 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert not run_dir.exists()


def test_size_on_a_block_device_is_refused_not_ignored(loop_device: str) -> None:
    """--size makes a new file; a device is tested whole (its capacity is the spec's), so a smaller --size would
    silently not apply."""
    done = run_cli("pts", loop_device, "--size", "16M", "--tests", "iops", "--dry-run")
    assert done.returncode != 0 and done.stderr.count("\n") == 1 and "--active-range" in done.stderr, done.stderr
    whole = run_cli("pts", loop_device, "--tests", "iops", "--dry-run", "--destructive")  # takes only a discard
    assert whole.returncode == 0, whole.stderr
    assert "# Purge at run time: blkdiscard (not a PTS purge: the run will not be PTS-compliant)" in whole.stdout


def test_dry_run_estimates_purge_and_preconditioning_at_a_measured_rate(loop_device: str, tmp_path: Path) -> None:
    """--measure-rate reads the device for a few seconds (real fio, read-only: the data is untouched) and estimates
    each test's preconditioning at that rate, each purge as its method's own estimate; without it the rate is assumed
    and the output says so."""
    import hashlib
    import re

    with open(loop_device, "r+b") as device:  # a pattern the measuring read must leave as it is
        device.write(b"nvme25" * 1_000_000)
    before = hashlib.sha256(Path(loop_device).read_bytes()).hexdigest()
    done = run_cli("pts", loop_device, "--tests", "iops,lat", "--max-rounds", "1", "--dry-run", "--destructive",
                   "--measure-rate")
    assert done.returncode == 0, done.stderr
    assert hashlib.sha256(Path(loop_device).read_bytes()).hexdigest() == before
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"# Worst case: .* in all \(.*, about (.*) of purges and preconditioning; start-ups "
                        r"counted as on an idle machine, .*\)", lines[2])
    assert lines[3].startswith("# Purges: 2 x blkdiscard, about 1 min each (assumed: an SSD erases")  # IOPS, LAT
    measured = re.fullmatch(r"# Preconditioning: 256.0 MiB of sequential writes, about .* at ([\d,]+) MB/s, "
                            rf"measured: 3 s of sequential 1 MiB reads of {loop_device}, read-only \(writes are "
                            r"often slower than reads\)", lines[4])
    assert measured and int(measured[1].replace(",", "")) > 0, lines[4]
    assert "#   IOPS: purge (blkdiscard, about 1 min), WIPC 128.0 MiB of 128k seq writes" in done.stdout
    missing = run_cli("pts", str(tmp_path / "new.dat"), "--size", "16M", "--tests", "iops", "--dry-run",
                      "--measure-rate")
    assert missing.returncode == 0, missing.stderr
    assert (f"at 500 MB/s, assumed: --measure-rate could not measure ({tmp_path / 'new.dat'} does not exist "
            "yet)") in missing.stdout


def test_resume_of_a_run_in_use_leaves_its_report_alone(tmp_path: Path) -> None:
    """A second `resume` while the run is held by another process is refused in one line and does not write the
    run's report (the running process owns it)."""
    from ptsbench.device.target import Target
    from ptsbench.pts.settings import make_settings
    from ptsbench.pts.start import RunStart, create_run, target_info

    path = tmp_path / "target.dat"
    path.write_bytes(b"\0" * 4096)
    target = Target(str(path), "file", 16 * 1024**2, str(path))
    store, _ = create_run(tmp_path / "run", make_settings("demo", "1.1", ("lat",)),
                          target_info(target, {}, "null", 16 * 1024**2), {}, RunStart(ioengine_note="null"))
    with store.lock():
        done = run_cli("resume", str(store.root))
    assert done.returncode != 0 and "Traceback" not in done.stderr and "report" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1].endswith("is in use by another ptsbench process: wait for it or stop it")
    assert not (store.root / "report").exists()


def test_a_value_click_refuses_is_one_line(tmp_path: Path) -> None:
    done = run_cli("pts", str(tmp_path / "t.dat"), "--active-range", "0", "--dry-run")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("ptsbench: error: Invalid value for '--active-range'")
    assert done.stderr.rstrip().endswith("ptsbench pts --help`")  # `python -m ptsbench pts` here
    unknown = run_cli("run", "--bogus")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "No such option" in unknown.stderr


def test_measure_rate_reads_the_target_alone_when_its_path_holds_a_colon(tmp_path: Path) -> None:
    """fio splits an unescaped ':' in a filename into two files: --measure-rate on `DIR/a:/t.dat` must read that file,
    not the file `DIR/a` (which could as well be a device) and a relative `/t.dat`."""
    (tmp_path / "a").touch()  # the decoy: empty, so a read of it fails the measurement
    (tmp_path / "a:").mkdir()
    target = tmp_path / "a:" / "t.dat"
    with open(target, "wb") as made:
        made.truncate(16 << 20)
    done = run_cli("pts", str(target), "--tests", "iops", "--dry-run", "--measure-rate", "--destructive")
    assert done.returncode == 0, done.stderr
    assert f"measured: 3 s of sequential 1 MiB reads of {target}, read-only" in done.stdout, done.stdout


@pytest.mark.parametrize("kind", ["file", "loop"])
def test_sprandom_preconditioning_runs_on_a_fio_that_has_it(sprandom_fio: str, loop_device: str, tmp_path: Path,
                                                            kind: str) -> None:
    """--precondition sprandom with a fio that has it (3.41 or later): fio's sprandom job writes the range and its
    over-provisioning once (more than the range, 1 + spr_op times it in whole IOs), stored like WIPC; the plan, `show`
    and the report say how the device was preconditioned."""
    import json

    target = str(tmp_path / "t.dat") if kind == "file" else loop_device
    out = tmp_path / "run"
    where = ["--size", "32M"] if kind == "file" else ["--destructive"]
    done = run_cli("pts", target, *where, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--block-sizes",
                   "iops=4k", "--mixes", "iops=0", "--max-rounds", "1", "--precondition", "sprandom", "--sprandom-op",
                   "0.2", "--out", str(out),
                   env={"PTSBENCH_FIO": sprandom_fio})
    assert done.returncode == 0, done.stderr
    folder = out / "pts" / "iops" / "precondition"
    job = (folder / "job.fio").read_text()
    assert "sprandom=1" in job and "spr_op=0.2" in job and "random_generator=lfsr" in job, job
    size = Path(target).stat().st_size if kind == "file" else int(
        Path(f"/sys/class/block/{Path(loop_device).name}/size").read_text()) * 512
    written = json.loads((folder / "result.json").read_text())["written_bytes"]
    assert size < written <= 1.2 * size + 4096, (written, size)  # (1 + spr_op) x the range, in whole 4 KiB IOs
    assert "IOPS: preconditioning, fio's sprandom" in done.stderr
    shown = run_cli("show", str(out)).stdout
    assert "IOPS: preconditioned by fio's sprandom" in shown
    page = (out / "report" / "index.html").read_text()
    assert "fio&#39;s sprandom: random 4k writes of the active range and 0.2 over-provisioning once" in page


def test_sprandom_is_refused_in_one_line_where_fio_lacks_it(debian13_fio: str, tmp_path: Path) -> None:
    """Debian 13's fio (3.39) has no sprandom: --precondition sprandom is refused before anything runs, in one line
    naming the fio and what to do."""
    done = run_cli("pts", str(tmp_path / "t.dat"), "--size", "32M", "--tests", "iops", "--precondition", "sprandom",
                   "--out", str(tmp_path / "run"), env={"PTSBENCH_FIO": debian13_fio})
    assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    assert "--precondition sprandom: fio-3.39 has no sprandom option (fio 3.41 added it): install fio 3.41" in \
        done.stderr
    assert not (tmp_path / "run").exists() and not (tmp_path / "t.dat").exists()


def test_resume_of_a_sprandom_run_is_refused_where_fio_lacks_it(sprandom_fio: str, debian13_fio: str,
                                                               tmp_path: Path) -> None:
    """A run preconditioned by sprandom resumed with a fio without it (the fio changed since): one line, before
    anything runs, the stored run untouched."""
    out = tmp_path / "run"
    ran = run_cli("pts", str(tmp_path / "t.dat"), "--size", "16M", "--profile", "demo", "--spec", "1.1", "--tests",
                  "iops", "--block-sizes", "iops=4k", "--mixes", "iops=0", "--max-rounds", "1", "--precondition",
                  "sprandom", "--out", str(out), env={"PTSBENCH_FIO": sprandom_fio})
    assert ran.returncode == 0, ran.stderr
    before = sorted((path.name, path.stat().st_mtime_ns) for path in out.rglob("*"))
    done = run_cli("resume", str(out), env={"PTSBENCH_FIO": debian13_fio})
    assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    assert "--precondition sprandom: fio-3.39 has no sprandom option" in done.stderr
    assert sorted((path.name, path.stat().st_mtime_ns) for path in out.rglob("*")) == before
