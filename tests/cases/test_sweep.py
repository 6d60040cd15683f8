"""`ptsbench sweep`: a matrix of real fio runs (null engine), killed with kill -9 mid-way and resumed, every cell's
stored numbers and report rows equal to its own fio JSON; dry run, bad input, the guard, and the pieces of the plan."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from ptsbench.cli.sweep import _numbers
from ptsbench.errors import PtsbenchError
from ptsbench.fio.output import percentile_key
from ptsbench.hosts.hostlist import parse_hosts
from ptsbench.sweep import SweepSpec, cell_job_text, cells, check_spec, plan_entries
from sshd import Sshd
from sshd import sshd as sshd  # noqa: PLC0414 - the fixture
from test_report_browser import Browser, assert_clean_report_page, pdf_text
from test_report_browser import browser as browser  # noqa: PLC0414 - the fixture
from test_report_pts import sheet_rows

MATRIX = ("--rw", "randread,randwrite", "--iodepth", "1,2,4", "--numjobs", "1,2")


def sweep_argv(run_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ptsbench", "sweep", str(run_dir.parent / "null.dat"), "--ioengine", "null",
            "--size", "64M", "--runtime", "0.4", *MATRIX, "--out", str(run_dir), *extra]


def test_sweep_killed_mid_way_resumes_the_unfinished_cells_and_every_number_is_fio_s(tmp_path: Path,
                                                                                     browser: Browser) -> None:
    run_dir = tmp_path / "sweep"
    cases = run_dir / "cases"
    started = sweep_argv(run_dir, "--ss", "iops:20%", "--ss-dur", "2", "--report", "--images", "svg")
    process = subprocess.Popen(started, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (cases / "005-randread-4k-qd2-nj2" / "job.fio").exists():  # cell 5 has started
        assert process.poll() is None and time.monotonic() < deadline, "the sweep ended before it could be killed"
        time.sleep(0.02)
    time.sleep(0.15)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = time.time()
    done_before = {path.parent.name for path in cases.glob("*/result.json")}
    assert 4 <= len(done_before) < 12, done_before
    assert "005-randread-4k-qd2-nj2" not in done_before  # killed inside cell 5
    from ptsbench.report.build import load_report

    assert f"sweep status interrupted: `ptsbench resume {run_dir}` runs its unfinished cells" in \
        load_report(run_dir).warnings

    resumed = run_cli("resume", str(run_dir), timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert "ptsbench: resuming" in resumed.stderr and "12 of 12 cells done" in resumed.stderr
    assert f"ptsbench: report {run_dir / 'report' / 'index.html'}" in resumed.stderr  # --report, as it was started
    # only the unfinished cells ran again: the finished ones kept their results from before the kill
    assert f"cell 1 {sorted(done_before)[0][4:]}" not in resumed.stderr
    assert "cell 5 randread-4k-qd2-nj2" in resumed.stderr
    assert all(f"randwrite-4k-qd{qd}-nj2" in resumed.stdout for qd in (1, 2, 4))  # every cell's row at the end
    folders = sorted(path.name for path in cases.iterdir())
    assert len(folders) == 12 and folders[-1] == "012-randwrite-4k-qd4-nj2"
    for folder in folders:
        case_dir = cases / folder
        result = json.loads((case_dir / "result.json").read_text())
        doc = json.loads((case_dir / "fio.json").read_text())
        assert result["status"] == "ok" and len(doc["jobs"]) == 1  # numjobs merged by fio (group_reporting)
        if folder not in done_before:
            assert (case_dir / "result.json").stat().st_mtime > killed_at
        else:
            assert (case_dir / "result.json").stat().st_mtime < killed_at
        rw, _bs, qd, nj = folder[4:].split("-")
        job, entry = result["jobs"][0], doc["jobs"][0]
        assert (job["rw"], job["iodepth"], job["numjobs"]) == (rw, int(qd[2:]), int(nj[2:]))
        direction = "read" if rw == "randread" else "write"
        stored = next(d for d in job["directions"] if d["direction"] == direction)
        raw = entry[direction]
        assert stored["iops"] == raw["iops"] and stored["bw_bytes"] == raw["bw_bytes"]
        assert stored["total_ios"] == raw["total_ios"] > 0
        assert stored["lat"]["mean_ns"] == raw["lat_ns"]["mean"]
        assert stored["lat"]["percentiles_ns"] == {percentile_key(k): v for k, v in raw["lat_ns"]["percentile"].items()}

    # the report: one row per cell, every number the cell's fio JSON; the headline names the best cell
    report = load_report(run_dir)
    facts = dict(report.facts)
    assert facts["direct I/O"] == "yes" and facts["size"] == "64.0 MiB" and facts["runtime per cell"] == "0.4 s"
    table = next(table for table in report.tables() if table.key == "sweep")
    names = [column.name for column in table.columns]
    assert len(table.rows) == 12
    for row in table.rows:
        doc = json.loads(next(cases.glob(f"*-{row[0]}/fio.json")).read_text())
        raw = doc["jobs"][0][row[names.index("dir")]]
        assert row[names.index("IOPS")] == raw["iops"]
        assert row[names.index("lat p99 (µs)")] == raw["lat_ns"]["percentile"]["99.000000"] / 1000
        attained = doc["jobs"][0]["steadystate"]["attained"]  # fio's own verdict, shown as it gave it
        assert row[names.index("fio steady state")].startswith(("attained: " if attained else "NOT attained: ")
                                                                + "iops:20")
    best = max(table.rows[:6], key=lambda row: row[names.index("IOPS")])
    text = " ".join(block.text for block in report.sections[0].blocks if hasattr(block, "text"))
    assert f"at queue depth {best[names.index('QD')]}, numjobs {best[names.index('numjobs')]}" in text
    figures = [figure.key for figure in report.figures()]
    assert "sweep-randread-4k-read-by-qd-nj2-iops" in figures and "sweep-randwrite-4k-write-3d" in figures
    assert "stays within 1,000 µs up to the highest queue depth run, 4" in text  # the null engine: always
    pdf = " ".join(pdf_text(run_dir / "report" / "report.pdf").split())
    assert "Queue depth at which p99 latency exceeds 1,000 µs" in pdf and "randwrite 4k, write: best" in pdf
    # --images svg, as the sweep was started: the resumed sweep's report wrote every figure as SVG, and only that
    assert (run_dir / "report" / "figures" / "sweep-randwrite-4k-write-heat-iops.svg").is_file()
    assert {path.suffix for path in (run_dir / "report" / "figures").iterdir()} == {".svg"}
    workbook = sheet_rows(run_dir / "results.xlsx", "sweep")
    assert list(workbook[0]) == names and [row[names.index("IOPS")] for row in workbook[1:]] == \
        [row[names.index("IOPS")] for row in table.rows]
    import openpyxl

    charted = openpyxl.load_workbook(run_dir / "results.xlsx")  # each line figure: its data and a native chart
    data = [charted[name] for name in charted.sheetnames if name.startswith("data sweep-")]
    assert len(data) >= 2 and all(len(sheet._charts) == 1 for sheet in data)
    assert_clean_report_page(browser.open_page(run_dir / "report" / "index.html"), len(figures))


def test_dry_run_prints_the_cells_and_the_duration_and_writes_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "sweep"
    done = subprocess.run(sweep_argv(run_dir, "--dry-run", "--ss", "iops:0.3%", "--ss-dur", "10"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# sweep: 12 fio runs, 0:05 of fio runtime in all")  # 12 x 0.4 s, first
    assert done.stdout.splitlines()[1] == "# 12 case(s), expected duration 0:05"
    assert done.stdout.count("# fio command: ") == 12 and "ss=iops:0.3%" in done.stdout
    assert "runtime=400ms" in done.stdout and "ss_dur=10" in done.stdout
    assert not run_dir.exists()


@pytest.mark.parametrize(("extra", "words"), [
    (("--rw", "randrw"), "needs --rwmixread"),
    (("--rw", "randwr"), "is not a fio rw value"),
    (("--iodepth", "1,x"), "'x' is not a whole number"),
    (("--ss", "iops:1%"), "--ss needs --ss-dur"),
    (("--set", "iodepth=8"), "would change what the sweep sets"),
    (("--lat-bound", "7"), "not a duration with a unit"),
    (("--size", "0"), "--size 0: a size of nothing"),
    (("--runtime", "nan"), "--runtime"),
    (("--ss-dur", "inf", "--ss", "iops:1%"), "--ss-dur"),
    (("--bs", "4q", "--dry-run"), "--bs '4q' is not a block size"),
    (("--bs", "4k,0"), "--bs '0' is not a block size"),
    (("--bs", "1.5k", "--dry-run"), "--bs '1.5k' is not a block size"),
    (("--precondition", "/no/such/job.fio", "--dry-run"), "does not exist"),
])
def test_bad_input_is_one_error_line(tmp_path: Path, extra: tuple[str, ...], words: str) -> None:
    done = subprocess.run(sweep_argv(tmp_path / "sweep", *extra), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and words in done.stderr, done.stderr
    assert done.stderr.startswith("ptsbench: error: ") and not (tmp_path / "sweep").exists()


def test_a_new_file_target_needs_a_size(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "ptsbench", "sweep", str(tmp_path / "new.dat"), "--rw", "randread", "--iodepth",
            "1", "--out", str(tmp_path / "sweep")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr == (f"ptsbench: error: {tmp_path / 'new.dat'} does not exist yet (or "
                                                    "is empty): fio needs a size to make it: give --size, e.g. "
                                                    "--size 4G\n")
    assert not (tmp_path / "sweep").exists()


def test_a_writing_sweep_on_a_block_device_needs_destructive(tmp_path: Path, loop_device: str) -> None:
    argv = [sys.executable, "-m", "ptsbench", "sweep", loop_device, "--rw", "randwrite", "--iodepth", "1",
            "--runtime", "1", "--out", str(tmp_path / "sweep")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "--destructive" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "sweep").exists()


def test_series_and_matrix() -> None:
    assert _numbers("1,2,4,...,64", "--iodepth", 64, "") == (1, 2, 4, 8, 16, 32, 64)
    assert _numbers("2,3,...,6", "--numjobs", 100, "") == (2, 3, 4, 5, 6)
    assert _numbers("1,2,4,...,48", "--iodepth", 100, "") == (1, 2, 4, 8, 16, 32, 48)
    with pytest.raises(PtsbenchError, match="--iodepth 65 is over 64: most"):  # before the series is filled in
        _numbers("1,2,...,65", "--iodepth", 64, "most")
    spec = SweepSpec(rw=("randread", "randrw"), bs=("4k",), iodepth=(1, 8), numjobs=(1,), rwmixread=(70, 50),
                     runtime_s=1.5, loops=2)
    check_spec(spec)
    names = [cell.name for cell in cells(spec)]
    assert names[:2] == ["randread-4k-qd1-nj1", "randread-4k-qd1-nj1-loop2"] and len(names) == 4 + 8
    assert "randrw-4k-mix50-qd8-nj1-loop2" in names
    text = cell_job_text(spec, cells(spec)[-1])
    assert "runtime=1500ms" in text and "rwmixread=50" in text and "group_reporting" in text
    entries = plan_entries(spec, 2)
    assert len(entries) == 24 and entries[12]["name"] == "randread-4k-qd1-nj1@t2" and entries[12]["target"] == 1
    with pytest.raises(PtsbenchError, match="given twice"):
        check_spec(SweepSpec(rw=("read",), bs=("4k",), iodepth=(1, 1), numjobs=(1,)))


def test_a_sweep_on_two_hosts_draws_each_host(tmp_path: Path, sshd: Sshd) -> None:
    hosts = parse_hosts(sshd.spec())  # through SSH: the stored host list is read back for the report and resume
    run_dir = tmp_path / "sweep"
    argv = [sys.executable, "-m", "ptsbench", "sweep", str(tmp_path / "null.dat"), "--hosts", sshd.spec(),
            "--ioengine", "null", "--size", "64M", "--rw", "randread", "--iodepth", "1,2", "--runtime", "0.4",
            "--out", str(run_dir), "--format", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert {(row["case"], row["host"]) for row in printed} == {
        (f"randread-4k-qd{qd}-nj1", host) for qd in (1, 2) for host in (*(h.name for h in hosts), "all hosts")}
    from ptsbench.report.build import load_report

    table = next(table for table in load_report(run_dir).tables() if table.key == "sweep")
    assert sorted((row[1], row[5]) for row in table.rows) == sorted(
        (f"{tmp_path / 'null.dat'} on {host.name}", qd) for host in hosts for qd in (1, 2))
    doc = json.loads((run_dir / "cases" / "002-randread-4k-qd2-nj1" / "fio.json").read_text())
    for row in table.rows:
        if row[5] == 2:
            entry = next(e for e in doc["client_stats"] if e.get("hostname") == row[1].split(" on ")[1])
            assert row[8] == entry["read"]["iops"]


def test_precondition_runs_before_each_target_s_cells(tmp_path: Path) -> None:
    job = tmp_path / "fill.fio"
    job.write_text("[fill]\nrw=write\nbs=128k\nioengine=null\nsize=64M\n")
    done = subprocess.run(sweep_argv(tmp_path / "sweep", "--dry-run", "--precondition", str(job), "--rw", "randread",
                                     "--iodepth", "1", "--numjobs", "1,2"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    cases = re.findall(r"^# case \d+: (\S+)", done.stdout, re.MULTILINE)
    assert cases == ["precondition", "randread-4k-qd1-nj1", "randread-4k-qd1-nj2"]
    repeated = subprocess.run(sweep_argv(tmp_path / "sweep", "--dry-run", "--precondition", str(job),
                                         "--precondition-repeat", "--rw", "randread", "--iodepth", "1",
                                         "--numjobs", "1,2"), capture_output=True, text=True, timeout=60)
    assert re.findall(r"^# case \d+: (\S+)", repeated.stdout, re.MULTILINE) == [
        "precondition-randread-4k-qd1-nj1", "randread-4k-qd1-nj1", "precondition-randread-4k-qd1-nj2",
        "randread-4k-qd1-nj2"]


def test_the_job_files_written_are_the_ones_planned(tmp_path: Path) -> None:
    from ptsbench.sweep import PRECONDITION_JOB, SWEEP_DIR, job_texts, write_job_files

    job = tmp_path / "fill.fio"
    job.write_text("[fill]\nrw=write\nbs=128k\nioengine=null\nsize=64M\n")
    spec = SweepSpec(rw=("randread", "randrw"), bs=("4k",), iodepth=(1, 8), numjobs=(1,), rwmixread=(70,),
                     precondition=str(job))
    write_job_files(tmp_path / "run", job_texts(spec))
    written = {path.name: path.read_text() for path in (tmp_path / "run" / SWEEP_DIR).iterdir()}
    assert written == {**{f"{cell.name}.fio": cell_job_text(spec, cell) for cell in cells(spec)},
                       PRECONDITION_JOB: job.read_text()}


def test_progress_eta_counts_the_plan_and_the_start_up_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ptsbench.cases.records import CaseRecord
    from ptsbench.fio.runner import FioStatus
    from ptsbench.report.core.progress import SweepProgress
    from ptsbench.sweep import job_texts
    from ptsbench.sweep import plan_cases as plan_sweep_cases

    spec = SweepSpec(rw=("randread",), bs=("4k",), iodepth=(1, 2, 4), numjobs=(1,), runtime_s=10)
    planned = plan_sweep_cases(plan_entries(spec, 1), job_texts(spec), [], tmp_path, 1000, False)
    clock = [100.0]
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    with SweepProgress(planned, 0) as progress:
        overall = progress.progress.tasks[progress.overall]
        on_status = progress.start(planned[0])
        cell = progress.progress.tasks[progress.tasks[planned[0].index]]
        on_status(FioStatus(elapsed_s=1.0, eta_s=40.0, iops=0.0, bw_bytes=0.0, running_job=None))
        assert "no IO yet: fio lays out its files" in cell.fields["rate"]  # not "0 IOPS"
        assert cell.fields["eta"] == "0:09"  # the plan's time left, not fio's jumping ETA
        on_status(FioStatus(elapsed_s=4.0, eta_s=6.0, iops=1.0, bw_bytes=4096.0, running_job=None))
        assert overall.fields["eta"] == "0:26" and overall.completed == 4.0  # 6 s of this cell, 2 x 10 s to come
        assert cell.fields["rate"] == "1 IOPS 0.0 MB/s"
        clock[0] += 12.0  # the first cell took 2 s beyond its 10 s (fio's start-up)
        progress.finish(planned[0], CaseRecord(1, planned[0].name, "", None, "ok", "", "", "", []))
        assert overall.fields["eta"] == "0:24" and overall.description == "sweep: 1 of 3 cells done"


def test_progress_off_a_terminal_lays_out_nothing_until_its_end(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from ptsbench.cases.records import CaseRecord
    from ptsbench.fio.runner import FioStatus
    from ptsbench.report.core.progress import SweepProgress
    from ptsbench.sweep import job_texts
    from ptsbench.sweep import plan_cases as plan_sweep_cases

    spec = SweepSpec(rw=("randread",), bs=("4k",), iodepth=(1,), numjobs=(1,), runtime_s=1)
    planned = plan_sweep_cases(plan_entries(spec, 1), job_texts(spec), [], tmp_path, 1000, False)
    with SweepProgress(planned, 0) as progress:
        # no thread laying the bars out ten times a second for a log that shows only the last state
        assert progress.progress.live._refresh_thread is None
        progress.start(planned[0])(FioStatus(elapsed_s=1.0, eta_s=0.0, iops=5.0, bw_bytes=2e4, running_job=None))
        progress.finish(planned[0], CaseRecord(1, planned[0].name, "", None, "ok", "", "", "", []))
    said = capsys.readouterr().err
    assert f"cell 1 {planned[0].name}: 0 IOPS" in said and "sweep: 1 of 1 cells done" in said


def test_fractions_of_seconds_reach_fio_in_milliseconds() -> None:
    from ptsbench.cases.plan import Overrides

    assert Overrides(runtime_s=0.5).as_options()["runtime"] == "500ms"  # `run --runtime 0.5` was runtime=0.5 (0)
    assert Overrides(runtime_s=30).as_options()["runtime"] == "30"
    from ptsbench.quick import quick_job_text

    assert "runtime=300ms" in quick_job_text(0.3, "8M", "libaio")  # `quick --runtime 0.3` ran to the end of size


def test_block_sizes_reach_fio_as_ptsbench_reads_them(tmp_path: Path) -> None:
    """fio reads --bs 4KiB as 4000 bytes by default: the sweep's cell runs the 4096 bytes its label says."""
    argv = [sys.executable, "-m", "ptsbench", "sweep", str(tmp_path / "null.dat"), "--ioengine", "null", "--size",
            "1.5M", "--runtime", "0.2", "--rw", "randread", "--bs", "4KiB", "--iodepth", "1", "--out",
            str(tmp_path / "sweep"), "--format", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (case,) = (tmp_path / "sweep" / "cases").iterdir()
    assert case.name == "001-randread-4k-qd1-nj1"
    doc = json.loads((case / "fio.json").read_text())
    job = doc["jobs"][0]
    assert job["job options"]["bs"] == "4k" and doc["global options"]["size"] == str(1536 * 1024)
    assert job["read"]["io_bytes"] == 4096 * job["read"]["total_ios"] > 0
    refused = subprocess.run([*argv[:-4], "--set", "kb_base=1000", "--dry-run"], capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 2 and "--set kb_base=... would change" in refused.stderr
