"""`ptsbench run`, `show` and `quick` end to end with real fio, as a user runs them."""

import csv
import io
import json
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import fio_json, run_cli
from ptsbench.fio import jobs
from ptsbench.fio.lifetime import fio_pids

NULL_JOB = """[global]
ioengine=null
size=64m
time_based
runtime=1

[mixed]
rw=randrw
rwmixread=60
bs=4k
iodepth=2

[seq]
stonewall
rw=write
bs=128k
"""


def rows_of(result: subprocess.CompletedProcess[str]) -> list[dict]:  # type: ignore[type-arg]
    assert result.returncode == 0, result.stderr
    rows: list[dict] = json.loads(result.stdout)  # type: ignore[type-arg]
    return rows


def test_run_table_values_equal_fio_json_and_show_reprints_them(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("null.fio", NULL_JOB)
    out = tmp_path / "run"
    rows = rows_of(run_cli("run", str(job), "--out", str(out), "--format", "json"))
    doc = fio_json(out / "cases" / "001-null")
    mixed, seq = doc["jobs"]
    assert [(r["job"], r["direction"]) for r in rows] == [("mixed", "read"), ("mixed", "write"), ("mixed", "total"),
                                                          ("seq", "write")]
    assert rows[0]["iops"] == mixed["read"]["iops"] and rows[1]["iops"] == mixed["write"]["iops"]
    # the total as fio's group arithmetic (unified_rw_reporting) has it: all IOs over the longest runtime
    assert rows[2]["iops"] == 1000 * (mixed["read"]["total_ios"] + mixed["write"]["total_ios"]) / max(
        mixed["read"]["runtime"], mixed["write"]["runtime"])
    assert rows[3]["bw_bytes"] == seq["write"]["bw_bytes"]
    assert rows[3]["lat_p99.9_ns"] == seq["write"]["lat_ns"]["percentile"]["99.900000"]
    assert rows[3]["lat_p50_ns"] == seq["write"]["lat_ns"]["percentile"]["50.000000"]
    assert rows[0]["lat_mean_ns"] == mixed["read"]["lat_ns"]["mean"]
    assert (rows[0]["rw"], rows[0]["bs"], rows[0]["iodepth"], rows[0]["numjobs"]) == ("randrw", "4k", 2, 1)
    # the store alone reproduces the same numbers, in every format
    assert rows_of(run_cli("show", str(out), "--format", "json")) == rows
    shown_csv = run_cli("show", str(out), "--format", "csv").stdout
    assert [float(r["iops"]) for r in csv.DictReader(io.StringIO(shown_csv))] == [r["iops"] for r in rows]
    table = run_cli("show", str(out)).stdout
    assert "mixed" in table and "total" in table and f"{rows[3]['iops']:,.0f}" in table


def test_run_directory_holds_everything(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("null.fio", NULL_JOB)
    out = tmp_path / "run"
    done = run_cli("run", str(job), "--out", str(out), "--log-interval", "250", "--report", "--images", "png")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schema_version"] == 1 and manifest["fio_version"].startswith("fio-3")
    assert manifest["host"]["cpu_count"] == os.cpu_count() and manifest["command_line"][1] == "run"
    case = out / "cases" / "001-null"
    job_text = (case / "job.fio").read_text()
    assert job_text.startswith(NULL_JOB.split("[mixed]")[0]) and "log_avg_msec=250" in job_text
    assert (case / "command.txt").read_text().split()[-1] == str(case / "job.fio")
    assert "bins" in fio_json(case)["jobs"][0]["read"]["lat_ns"]  # json+ kept for exact re-aggregation
    result = json.loads((case / "result.json").read_text())
    assert result["status"] == "ok" and [j["name"] for j in result["jobs"]] == ["mixed", "seq"]
    logs = sorted(p.name for p in (case / "logs").iterdir())
    assert "mixed_bw.1.log" in logs and "mixed_iops.1.log" in logs and "seq_bw.2.log" in logs
    assert "seq_lat.log" in logs and not any(".log" in name and "_lat." in name and name != "seq_lat.log"
                                             and name != "mixed_lat.log" for name in logs)
    lines = [line.split(",") for line in (case / "logs" / "mixed_iops.1.log").read_text().splitlines()]
    read_times = [int(fields[0]) for fields in lines if fields[2].strip() == "0"]
    gaps = sorted(b - a for a, b in zip(read_times, read_times[1:], strict=False))
    # fio read the interval (its default is 500 ms), and logged 1 s in 250 ms windows: 3-4 of them, never closer
    # than the interval (fio starts the next window at the sample it logged); a busy host's fio skips windows (CI:
    # 2 entries, 582 ms apart), so how far apart they are says nothing more
    assert fio_json(case)["jobs"][0]["job options"]["log_avg_msec"] == "250"
    assert 1 <= len(read_times) <= 5 and all(gap >= 150 for gap in gaps), read_times
    report = out / "report"  # written at the end of the run (--report), from the store
    assert (report / "index.html").stat().st_size > 100_000 and (report / "report.pdf").exists()
    images = [path.suffix for path in (report / "figures").iterdir()]  # --images png
    assert images and set(images) == {".png"}


def test_a_run_ends_with_its_results_and_the_command_that_writes_its_report(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    """Without --report, `run` stores and prints the results and returns; the report is one command away."""
    job = write_job("null.fio", NULL_JOB)
    out = tmp_path / "my run"
    done = run_cli("run", str(job), "--out", str(out), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert rows_of(done) and (out / "cases" / "001-null" / "result.json").is_file() and (out / "results.xlsx").is_file()
    assert not (out / "report").exists()
    closing = done.stderr.splitlines()[-1]
    assert closing == f"ptsbench: report: ptsbench report '{out}'"  # quoted: pasted into a shell, it works
    written = run_cli(*shlex.split(closing.removeprefix("ptsbench: report: ptsbench ")))
    assert written.returncode == 0, written.stderr
    assert (out / "report" / "index.html").is_file() and (out / "report" / "report.pdf").is_file()


def test_results_xlsx_reads_back_equal_to_the_store(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    import openpyxl

    job = write_job("null.fio", NULL_JOB)
    out = tmp_path / "run"
    rows = rows_of(run_cli("run", str(job), "--out", str(out), "--format", "json"))
    sheet = openpyxl.load_workbook(out / "results.xlsx").active
    assert sheet is not None
    header = [cell.value for cell in sheet[1]]
    values = [dict(zip(header, [cell.value for cell in line], strict=True)) for line in sheet.iter_rows(min_row=2)]
    # Excel keeps 15 significant digits
    assert [v["IOPS"] for v in values] == pytest.approx([r["iops"] for r in rows], rel=1e-14)
    assert [v["lat p99 (µs)"] for v in values] == pytest.approx([r["lat_p99_ns"] / 1000 for r in rows], rel=1e-14)


def test_files_fio_makes_outside_the_run_directory_are_named_and_removed(tmp_path: Path) -> None:
    """No --target: fio makes its files in the current folder; the run names them and removes them (not a file that
    was there before the run, nor one a job names: the user's), and --keep-files keeps them."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "j.fio").write_text("[seqr]\nrw=read\nbs=64k\nsize=1m\nioengine=psync\n"
                                "[own]\nrw=read\nbs=64k\nsize=1m\nioengine=psync\nfilename=users.dat\n"
                                "[named]\nrw=write\nbs=64k\nsize=1m\nioengine=psync\nfilename=named.dat\n")
    (work / "users.dat").write_bytes(os.urandom(1 << 20))
    done = run_cli("run", "j.fio", "--out", "o1", cwd=work)
    assert done.returncode == 0, done.stderr
    made = str(work / "seqr.0.0")
    assert f"fio made 1 data file(s) for this run (1.0 MiB): {made}; removed" in done.stderr
    assert not os.path.exists(made) and (work / "users.dat").stat().st_size == 1 << 20
    assert (work / "named.dat").stat().st_size == 1 << 20  # a job's own filename: the user named it
    kept = run_cli("run", "j.fio", "--out", "o2", "--keep-files", cwd=work)
    assert kept.returncode == 0 and f"kept (--keep-files): {made}" in kept.stderr, kept.stderr
    assert os.path.getsize(made) == 1 << 20


def test_dry_run_prints_job_and_command_and_runs_nothing(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("null.fio", NULL_JOB)
    out = tmp_path / "run"
    result = run_cli("run", str(job), "--out", str(out), "--dry-run", "--runtime", "7", "--set", "iodepth=4")
    assert result.returncode == 0 and not out.exists()
    assert "--output-format=json+" in result.stdout and "[mixed]" in result.stdout
    assert "runtime=7" in result.stdout and "iodepth=4" in result.stdout
    assert "expected duration 0:14" in result.stdout  # two stonewalled 7 s jobs


def test_a_time_fio_reads_shorter_than_written_is_said(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    """fio reads a time option's number only up to its decimal point, and drops the unit after it: runtime=1.5m runs
    for 1 s, not 90. The run says so for each such option, with what to write, and fio's own runtime shows it;
    times fio reads as written (2.0, 1500ms) get no note. A sweep's cells that share the option get one note."""
    job = write_job("t.fio", "[global]\nioengine=null\nsize=1m\ntime_based\nrate_iops=100\n"
                             "[short]\nruntime=1.5m\nramp_time=0.5\n[whole]\nstonewall\nruntime=1500ms\n"
                             "startdelay=2.0\n")
    done = run_cli("run", str(job), "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("ptsbench: note: ") and "fio reads" in line]
    assert notes == [f"ptsbench: note: {job}: job short: fio reads runtime=1.5m as 1 s: it drops a time's decimal "
                     "fraction and any unit after it (write runtime=90s)",
                     f"ptsbench: note: {job}: job short: fio reads ramp_time=0.5 as 0 s: it drops a time's decimal "
                     "fraction and any unit after it (write ramp_time=500ms)"], done.stderr
    document = json.loads((tmp_path / "run" / "cases" / "001-t" / "fio.json").read_text())
    runtime_ms = {entry["jobname"]: entry["job_runtime"] for entry in document["jobs"]}
    assert runtime_ms["short"] < 30_000 <= 90_000  # fio ran it for a second, not the 90 the text says
    planned = run_cli("run", str(job), "--dry-run", "--out", str(tmp_path / "dry"))
    assert "# 1 case(s), expected duration 0:03\n" in planned.stdout, planned.stdout  # 1 + 1.5 s, not 92 s
    swept = run_cli("sweep", str(tmp_path / "x.dat"), "--size", "1m", "--rw", "randread,randwrite", "--bs", "4k",
                    "--iodepth", "1", "--runtime", "1", "--set", "startdelay=0.5", "--dry-run",
                    "--out", str(tmp_path / "sweep"))
    assert swept.returncode == 0, swept.stderr
    notes = [line for line in swept.stderr.splitlines() if "fio reads" in line]
    assert len(notes) == 1 and re.search(r": job randread-4k-qd1-nj1 and 1 more job\(s\): fio reads startdelay=0\.5 "
                                         r"as 0 s: .*\(write startdelay=500ms\)$", notes[0]), swept.stderr


def test_group_of_job_files_runs_in_name_order_with_overrides(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    write_job("group/b.fio", "[b]\nioengine=null\nsize=1m\nrw=read\n")
    write_job("group/a.ini", "[a]\nioengine=null\nsize=1m\nrw=write\n")
    out = tmp_path / "run"
    rows = rows_of(run_cli("run", str(tmp_path / "group"), "--out", str(out), "--runtime", "0.2", "--format", "json",
                           "--set", "bs=8k", "--ioengine", "null"))
    assert [(r["case"], r["bs"]) for r in rows] == [("a", "8k"), ("b", "8k")]
    assert sorted(p.name for p in (out / "cases").iterdir()) == ["001-a", "002-b"]
    assert "time_based" in (out / "cases" / "001-a" / "job.fio").read_text()


def test_env_variables_keywords_and_group_reporting_reach_fio(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("v.fio", "[global]\nioengine=null\nsize=${JOBSIZE}\ntime_based\nruntime=200ms\ngroup_reporting\n"
                             "[one]\nrw=randread\nnumjobs=$ncpus\n[two]\nrw=randwrite\nbsrange=4k-16k\n"
                             "[three]\nnew_group\nrw=read\nbssplit=4k/50:64k/50\n")
    out = tmp_path / "run"
    rows = rows_of(run_cli("run", str(job), "--out", str(out), "--format", "json", env={"JOBSIZE": "8m"}))
    doc = fio_json(out / "cases" / "001-v")
    # group_reporting merges 'one' and 'two' (same group) into one entry; 'three' starts a new group
    assert len(doc["jobs"]) == 2 and [r["job"] for r in rows] == ["one", "one", "one", "three"]
    assert rows[0]["numjobs"] == (os.cpu_count() or 1) + 1 and rows[0]["rw"] == "randread+randwrite"
    assert rows[0]["bs"] == "4k+4k-16k" and rows[3]["bs"] == "4k/50:64k/50"
    assert doc["global options"]["size"] == "8m"
    read, write = doc["jobs"][0]["read"], doc["jobs"][0]["write"]
    assert rows[2]["iops"] == 1000 * (read["total_ios"] + write["total_ios"]) / max(read["runtime"], write["runtime"])


def test_file_targets_buffered_direct_sequential_and_parallel(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("f.fio", "[global]\nioengine=psync\nsize=8m\nfilename=/nonexistent/ignored\n"
                             "[buffered]\nrw=randwrite\nbs=4k\n[direct]\nstonewall\nrw=randread\ndirect=1\n")
    first, second = tmp_path / "t1.dat", tmp_path / "folder"
    second.mkdir()
    out = tmp_path / "seq"
    rows = rows_of(run_cli("run", str(job), "--target", str(first), "--target", str(second), "--out", str(out),
                           "--runtime", "0.2", "--format", "json"))
    assert {r["target"] for r in rows} == {str(first), str(second / "ptsbench-testfile.dat")}
    assert {r["case"] for r in rows} == {"f@" + str(first).strip("/").replace("/", "_"),
                                         "f@" + str(second).strip("/").replace("/", "_")}
    assert first.stat().st_size > 0  # created by fio
    records = [json.loads(p.read_text()) for p in sorted((out / "cases").glob("*/result.json"))]
    assert records[0]["ended_utc"] <= records[1]["started_utc"]
    out_parallel = tmp_path / "par"
    rows_of(run_cli("run", str(job), "--target", str(first), "--target", str(second), "--out", str(out_parallel),
                    "--runtime", "2", "--parallel", "--format", "json"))
    records = [json.loads(p.read_text()) for p in sorted((out_parallel / "cases").glob("*/result.json"))]
    assert records[1]["started_utc"] < records[0]["ended_utc"]  # they overlapped


def test_parallel_runs_targets_at_once_and_each_targets_cases_in_turn(tmp_path: Path, write_job,  # type: ignore[no-untyped-def]
                                                                        loop_device: str) -> None:
    """Three targets (two files, a loop device), each also given by a second name (a hard link, a symlink): from the
    stored times, the cases of one target never overlap, and every two targets' cases do."""
    folder = tmp_path / "jobs"
    for name, rw in (("a-read", "randread"), ("b-write", "write")):
        write_job(f"jobs/{name}.fio", f"[{name}]\nioengine=psync\nrw={rw}\nbs=4k\nsize=4m\nrate_iops=100\n")
    first, second = tmp_path / "t1.dat", tmp_path / "t2.dat"
    first.write_bytes(b"\0" * (4 << 20))
    os.link(first, tmp_path / "t1-link.dat")
    os.symlink(loop_device, tmp_path / "loop-link")
    spellings = {str(first): "t1", str(tmp_path / "t1-link.dat"): "t1", str(second): "t2",
                 loop_device: "loop", str(tmp_path / "loop-link"): "loop"}
    out = tmp_path / "run"
    args = [a for path in spellings for a in ("--target", path)]
    rows = rows_of(run_cli("run", str(folder), *args, "--out", str(out), "--runtime", "2", "--size", "4m",
                           "--parallel", "--destructive", "--format", "json"))
    stored = {os.path.realpath(path): name for path, name in spellings.items()}  # a device by its own path
    assert {row["target"] for row in rows} == set(stored)  # the table names each case's target
    records = [json.loads(p.read_text()) for p in sorted((out / "cases").glob("*/result.json"))]
    assert len(records) == 10 and all(r["status"] == "ok" for r in records)
    by_target: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for record in records:
        by_target.setdefault(stored[record["target"]], []).append(record)
    for cases in by_target.values():  # in turn, in name order: each ends before the next starts
        order = sorted(cases, key=lambda r: r["started_utc"])
        assert [r["index"] for r in order] == sorted(r["index"] for r in cases)
        for before, after in zip(order, order[1:], strict=False):
            assert before["ended_utc"] <= after["started_utc"]
            assert before["fio_io_span_ms"][1] <= after["fio_io_span_ms"][0]

    def overlap(one: list[dict], other: list[dict]) -> bool:  # type: ignore[type-arg]
        return any(a["fio_io_span_ms"][0] < b["fio_io_span_ms"][1] and b["fio_io_span_ms"][0] < a["fio_io_span_ms"][1]
                   for a in one for b in other)

    assert overlap(by_target["t1"], by_target["t2"]) and overlap(by_target["t1"], by_target["loop"])
    assert overlap(by_target["t2"], by_target["loop"])


def test_parallel_refuses_a_loop_device_beside_its_backing_file(tmp_path: Path, write_job,  # type: ignore[no-untyped-def]
                                                               loop_device: str) -> None:
    """--parallel runs targets at once: a loop device and the file behind it are the same bytes under two names (two
    writers at once), refused before anything runs, the dry run too, and both stay byte-identical."""
    import hashlib

    job = write_job("w.fio", "[w]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\n")
    image = tmp_path / "loop.img"
    with open(loop_device, "r+b") as device:
        device.write(b"attack" * 1000)
    before = hashlib.sha256(image.read_bytes()).hexdigest()
    for extra in ([], ["--dry-run"]):
        done = run_cli("run", str(job), "--target", loop_device, "--target", str(image), "--parallel",
                       "--destructive", "--out", str(tmp_path / "run"), *extra)
        assert done.returncode != 0 and f"{loop_device} and {image} are the same device" in done.stderr, done.stderr
    assert not (tmp_path / "run").exists()
    assert hashlib.sha256(image.read_bytes()).hexdigest() == before


def test_ctrl_c_with_parallel_starts_no_targets_next_case(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    for name in ("a", "b"):
        write_job(f"g/{name}.fio", f"[{name}]\nioengine=null\nsize=1m\ntime_based\nruntime=60\nrw=read\n"
                                    "rate_iops=100\n")
    out = tmp_path / "r"
    targets = [a for name in ("t1", "t2") for a in ("--target", str(tmp_path / name))]
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(tmp_path / "g"), *targets, "--size", "1m",
                                "--parallel", "--out", str(out), "--format", "json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    # each target's first case has its fio running (a case whose fio had not started yet on a busy host stored no
    # result: it did not run)
    while sum(bool(fio_pids(case)) for case in (out / "cases").glob("*")) < 2:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(1)  # both fio past their start (a lost SIGINT is asked again since: tests/fio/test_stop.py)
    process.send_signal(signal.SIGINT)
    _stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    statuses = {p.parent.name: json.loads(p.read_text())["status"] for p in (out / "cases").glob("*/result.json")}
    assert sorted(statuses.values()) == ["interrupted", "interrupted"]  # each target's first case, and no other
    assert all(name.startswith(("001-a", "002-a")) for name in statuses), statuses


def test_quick_preset_on_a_scratch_file(tmp_path: Path) -> None:
    out = tmp_path / "quick"
    rows = rows_of(run_cli("quick", "--runtime", "0.2", "--size", "16M", "--out", str(out), "--format", "json"))
    assert [r["job"] for r in rows] == [f"{t}-{d}" for t in ("SEQ1M-Q8T1", "SEQ1M-Q1T1", "RND4K-Q32T1", "RND4K-Q1T1")
                                        for d in ("read", "write")]
    assert all(r["iops"] > 0 for r in rows) and rows[4]["iodepth"] == 32 and rows[4]["bs"] == "4k"
    assert not (out / "scratch.dat").exists()


def test_quick_on_a_folder_removes_the_test_file_it_made_and_says_so(tmp_path: Path) -> None:
    """`quick DIR` makes DIR/ptsbench-testfile.dat; like CrystalDiskMark it removes its file at the end, and says
    so; a test file an earlier run left there is used, stays, and the run says where it is."""
    folder = tmp_path / "data"
    folder.mkdir()
    testfile = folder / "ptsbench-testfile.dat"
    done = run_cli("quick", str(folder), "--runtime", "0.2", "--size", "8M", "--out", str(tmp_path / "q1"))
    assert done.returncode == 0, done.stderr
    assert not testfile.exists() and f"{testfile}; removed" in done.stderr, done.stderr
    testfile.write_bytes(b"\0" * (1 << 20))  # as an earlier ptsbench left it
    again = run_cli("quick", str(folder), "--runtime", "0.2", "--size", "8M", "--out", str(tmp_path / "q2"))
    assert again.returncode == 0, again.stderr
    assert testfile.exists() and f"{testfile} was left by an earlier run" in again.stderr, again.stderr


def test_a_refused_quick_leaves_its_out_folder_as_it_was(tmp_path: Path, loop_device: str) -> None:
    """quick writes its job file before the guard judges it: a refusal must take it back, or the same --out is
    refused next time as 'not empty' (the user's retry with --destructive)."""
    new_out, empty_out = tmp_path / "new", tmp_path / "empty"
    empty_out.mkdir()
    for out in (new_out, empty_out):
        refused = run_cli("quick", loop_device, "--runtime", "1", "--out", str(out))
        assert refused.returncode != 0 and "--destructive" in refused.stderr, refused.stderr
    assert not new_out.exists() and empty_out.is_dir() and not any(empty_out.iterdir())
    scratch_refused = run_cli("quick", "--runtime", "1", "--size", "900T", "--out", str(new_out))
    assert scratch_refused.returncode != 0 and not new_out.exists(), scratch_refused.stderr


# ---- bad input: one line, non-zero exit, no traceback, nothing measured lost ----

def assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ptsbench: error:")]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0]


def test_missing_fio_says_how_to_install(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("null.fio", NULL_JOB)
    result = run_cli("run", str(job), "--out", str(tmp_path / "r"), env={"PTSBENCH_FIO": "/nonexistent/fio"})
    assert_one_line_error(result, "fio not found", "apt-get install fio")


def test_missing_and_rejected_job_files(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    assert_one_line_error(run_cli("run", str(tmp_path / "nope.fio")), "no such job file")
    bad = write_job("bad.fio", "[bad]\nioengine=null\nsize=1m\nrw=sideways\n")
    good = write_job("good.fio", "[good]\nioengine=null\nsize=1m\nrw=read\n")
    out = tmp_path / "r"
    result = run_cli("run", str(bad), str(good), "--out", str(out), "--format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    rows = json.loads(result.stdout)
    assert rows[0]["status"] == "failed" and str(bad) in rows[0]["message"] and "sideways" in rows[0]["message"]
    assert rows[1]["status"] == "ok" and rows[1]["iops"] > 0  # the other case still ran
    assert json.loads((out / "manifest.json").read_text())["name"] == "bad.fio-and-1-more"  # not just the first


def test_text_before_json_is_tolerated(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    # real fio prints such warnings on some systems; a wrapper makes it happen on demand
    wrapper = tmp_path / "fio"
    wrapper.write_text("#!/bin/sh\necho 'fio: warning: something noisy'\nexec fio \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    job = write_job("null.fio", NULL_JOB)
    rows = rows_of(run_cli("run", str(job), "--out", str(tmp_path / "r"), "--format", "json",
                           env={"PTSBENCH_FIO": str(wrapper)}))
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)


def test_fio_killed_mid_case_is_recorded_and_the_rest_runs(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    write_job("g/1-long.fio", "[long]\nioengine=null\nsize=1m\ntime_based\nruntime=120\nrw=read\nrate_iops=100\n")
    write_job("g/2-short.fio", "[short]\nioengine=null\nsize=1m\ntime_based\nruntime=1\nrw=read\n")
    out = tmp_path / "r"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(tmp_path / "g"), "--out", str(out),
                                "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fio_pid = None
    deadline = time.monotonic() + 120  # ptsbench and fio start in about a second on an idle host
    while fio_pid is None and time.monotonic() < deadline:
        time.sleep(0.3)
        found = subprocess.run(["pgrep", "-f", f"{out}/cases/001-1-long/job.fio"], capture_output=True, text=True)
        pids = [int(p) for p in found.stdout.split()]
        fio_pid = pids[0] if pids else None
    assert fio_pid is not None
    time.sleep(1.5)
    os.kill(fio_pid, signal.SIGKILL)  # fio's main process: its job process, left alone, would run 120 s
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 1 and "Traceback" not in stderr
    rows = json.loads(stdout)
    assert rows[0]["status"] == "failed" and "SIGKILL" in rows[0]["message"]
    assert rows[1]["status"] == "ok" and rows[1]["iops"] > 0
    assert "failed cases: 1-long" in stderr


def test_unwritable_output_directory(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("null.fio", NULL_JOB)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert_one_line_error(run_cli("run", str(job), "--out", str(blocker / "run")), "cannot create run directory")


def test_full_output_disk_keeps_finished_cases(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs")
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(small)]).returncode:
        pytest.skip("cannot mount tmpfs here")
    try:
        write_job("g/1.fio", "[one]\nioengine=null\nsize=1m\nrw=read\n")
        write_job("g/2.fio", "[two]\nioengine=null\nsize=1m\ntime_based\nruntime=1\nrw=randrw\nnumjobs=4\n")
        filler = small / "filler"
        out = small / "run"
        # leave room for the manifest and the first case, not for the second one's json+ output
        result = subprocess.run([sys.executable, "-m", "ptsbench", "run", str(tmp_path / "g"), "--out", str(out),
                                 "--log-interval", "1"], capture_output=True, text=True,
                                preexec_fn=lambda: filler.write_bytes(b"\0" * 485_000))
        assert_one_line_error(result, "disk is full")
        assert json.loads((out / "cases" / "001-1" / "result.json").read_text())["status"] == "ok"
    finally:
        subprocess.run(["umount", str(small)])


def test_block_device_writes_are_guarded(tmp_path: Path, write_job, loop_device: str) -> None:  # type: ignore[no-untyped-def]
    subprocess.run(["mkfs.ext4", "-q", "-F", loop_device], check=True, capture_output=True)
    writer = write_job("w.fio", "[w]\nioengine=psync\nrw=randwrite\nsize=4m\ndirect=1\ntime_based\nruntime=1\n")
    reader = write_job("r.fio", "[r]\nioengine=psync\nrw=randread\nsize=4m\ndirect=1\ntime_based\nruntime=1\n")
    refused = run_cli("run", str(writer), "--target", loop_device, "--out", str(tmp_path / "refused"))
    assert_one_line_error(refused, loop_device, "--destructive")
    assert not (tmp_path / "refused").exists()  # refused before anything ran
    assert rows_of(run_cli("run", str(reader), "--target", loop_device, "--out", str(tmp_path / "read"),
                           "--format", "json"))[0]["iops"] > 0  # reading is allowed
    rows = rows_of(run_cli("run", str(writer), "--target", loop_device, "--out", str(tmp_path / "ok"),
                           "--destructive", "--format", "json"))
    assert rows[0]["direction"] == "write" and rows[0]["iops"] > 0
    manifest = json.loads((tmp_path / "ok" / "manifest.json").read_text())
    assert manifest["targets"][0]["kind"] == "block" and manifest["targets"][0]["size_bytes"] == 64 * 1024 * 1024


def test_too_old_fio_is_refused(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    old = tmp_path / "fio"
    old.write_text("#!/bin/sh\necho fio-3.16\n")  # only a stand-in can be an old fio on demand
    old.chmod(0o755)
    job = write_job("null.fio", NULL_JOB)
    result = run_cli("run", str(job), "--out", str(tmp_path / "r"), env={"PTSBENCH_FIO": str(old)})
    assert_one_line_error(result, "fio-3.16 is too old", "3.19")
    assert not (tmp_path / "r").exists()


def test_a_program_that_is_not_fio_is_refused_in_one_line(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    """PTSBENCH_FIO names a program on PATH (docs/fio-versions.md): `true`, whose --version runs to many lines, is
    refused in one line quoting the first."""
    job = write_job("null.fio", NULL_JOB)
    result = run_cli("run", str(job), "--out", str(tmp_path / "r"), env={"PTSBENCH_FIO": "true"})
    assert_one_line_error(result, "does not look like fio (it says 'true ")
    assert len(result.stderr.splitlines()) == 1, result.stderr  # not the rest of what it said
    assert not (tmp_path / "r").exists()


def test_latency_over_time_is_derived_exactly_from_fio_status(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("r.fio", "[r]\nioengine=null\nsize=64m\ntime_based\nruntime=3\nrw=randrw\nrate_iops=100\n")
    out = tmp_path / "run"
    assert run_cli("run", str(job), "--out", str(out)).returncode == 0
    case = out / "cases" / "001-r"
    fio_read = fio_json(case)["jobs"][0]["read"]["lat_ns"]
    lines = [[int(v) for v in line.split(",")] for line in (case / "logs" / "r_lat.log").read_text().splitlines()]
    read = [fields for fields in lines if fields[2] == 0]
    # a line per status document with IO: at most one a second, on a busy host fewer
    assert 1 <= len(read) <= 4 and all(fields[3:] == [0, 0] for fields in lines)
    assert all(fio_read["min"] <= fields[1] <= fio_read["max"] for fields in read)
    assert [fields[0] for fields in read] == sorted(fields[0] for fields in read)
    with_fio_log = tmp_path / "fio-log"
    assert run_cli("run", str(job), "--out", str(with_fio_log), "--fio-lat-log").returncode == 0
    logs = {p.name for p in (with_fio_log / "cases" / "001-r" / "logs").iterdir()}
    assert "r_lat.1.log" in logs and "r_lat.log" not in logs


def test_ctrl_c_stops_fio_keeps_finished_cases_and_exits_130(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    # held to 100 IOPS (an IO every 10 ms, which fio sleeps through): an unlimited null job spins a CPU
    write_job("g/1.fio", "[first]\nioengine=null\nsize=1m\ntime_based\nruntime=1\nrw=read\nrate_iops=100\n")
    write_job("g/2.fio", "[done]\nioengine=null\nsize=1m\nrw=read\n"  # done within its first moment
                         "[second]\nstonewall\nioengine=null\nsize=1m\ntime_based\nruntime=60\nrw=read\nrate_iops=100\n")
    write_job("g/3.fio", "[third]\nioengine=null\nsize=1m\ntime_based\nruntime=1\nrw=read\nrate_iops=100\n")
    out = tmp_path / "r"
    # Ctrl-C as a terminal sends it, even when this suite runs in the background (where SIGINT is inherited ignored)
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(tmp_path / "g"), "--out", str(out),
                                "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    # case 2's fio has a job process: its first job's 1 MiB takes a moment, and 2.5 s later the second job runs
    # (a time-based first job of 1 s, on a busy host, was still running 2.5 s after the case's job file appeared)
    while len(fio_pids(out / "cases" / "002-2")) < 2:
        assert process.poll() is None and time.monotonic() < deadline, "case 2's fio never started"
        time.sleep(0.1)
    time.sleep(2.5)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in stderr and "ptsbench: error: interrupted" in stderr
    first = json.loads((out / "cases" / "001-1" / "result.json").read_text())
    second = json.loads((out / "cases" / "002-2" / "result.json").read_text())
    assert first["status"] == "ok" and second["status"] == "interrupted" and "interrupted" in second["message"]
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    # what fio measured before the Ctrl-C is kept: its final document, the finished job and the partial one
    done = fio_json(out / "cases" / "002-2")["jobs"][0]["read"]
    assert [job["name"] for job in second["jobs"]] == ["done", "second"]
    assert second["jobs"][0]["directions"][0]["total_ios"] == done["total_ios"] > 0
    rows = json.loads(stdout)  # and the table of what finished is printed
    assert [(row["case"], row["job"]) for row in rows] == [("1", "first"), ("2", "done"), ("2", "second")]
    assert [row["status"] for row in rows] == ["ok", "interrupted", "interrupted"]
    shown = run_cli("show", str(out), "--format", "json")
    assert [row["status"] for row in json.loads(shown.stdout)] == ["ok", "interrupted", "interrupted"]
    shown = run_cli("show", str(out))
    assert "interrupted" in shown.stdout  # the table says so too, and a line what is left and how to finish it
    assert f"the run did not end (interrupted): 1 of 3 case(s) ran to their end; `ptsbench resume {out}`" in (
        shown.stderr)
    assert not (out / "cases" / "003-3").exists()
    found = subprocess.run(["pgrep", "-f", f"{out}/cases/002-2/job.fio"], capture_output=True, text=True)
    assert found.stdout.strip() == ""  # fio was stopped, not left running


def test_a_sigint_fio_got_first_is_the_same_interruption(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    """A terminal's Ctrl-C reaches fio and ptsbench at once; on a busy host fio's end may be read before ptsbench's
    own KeyboardInterrupt is raised. Made certain here by sending SIGINT to fio alone: the case is interrupted (so a
    resume runs it again), never a failure, and the run ends as a Ctrl-C does (130)."""
    from ptsbench.fio.lifetime import fio_pids

    job = write_job("long.fio", "[long]\nioengine=null\nsize=1m\ntime_based\nruntime=120\nrw=read\nrate_iops=100\n")
    out = tmp_path / "r"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(job), "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(pids := fio_pids(out)) < 2:  # fio's main process and its job's (fio's signal handlers are set)
        assert process.poll() is None and time.monotonic() < deadline, "fio never started"
        time.sleep(0.05)
    os.kill(next(pid for pid in pids if os.getsid(pid) == process.pid), signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130 and "Traceback" not in stderr, stderr
    result = json.loads((out / "cases" / "001-long" / "result.json").read_text())
    assert result["status"] == "interrupted"
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"


def test_target_is_what_fio_writes_even_when_the_job_names_a_directory(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    job = write_job("d.fio", f"[global]\ndirectory={elsewhere}\n[w]\nioengine=psync\nrw=write\nbs=64k\nsize=1m\n")
    target = tmp_path / "target.dat"
    rows = rows_of(run_cli("run", str(job), "--target", str(target), "--out", str(tmp_path / "r"), "--format",
                           "json"))
    assert rows[0]["target"] == str(target)
    assert target.stat().st_size == 1024 * 1024  # fio would otherwise write ELSEWHERE/TARGET
    assert list(elsewhere.iterdir()) == []


def test_an_used_run_directory_is_refused_without_a_wrong_hint(tmp_path: Path) -> None:
    from ptsbench.errors import StoreError
    from ptsbench.store import RunStore

    RunStore.create(tmp_path / "r", {"kind": "run"})
    with pytest.raises(StoreError, match="already holds a run") as caught:
        RunStore.create(tmp_path / "r", {"kind": "run"})
    assert "resume" not in caught.value.hint  # only a PTS run can be resumed


def test_a_jobs_own_logs_are_written_where_it_asked_and_never_averaged(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("own.fio", "[global]\nioengine=null\nsize=1m\nbs=4k\n\n"
                               "[perio]\nrw=write\nwrite_bw_log=mine\nlog_avg_msec=0\n\n"
                               "[averaged]\nstonewall\nrw=read\nwrite_iops_log=theirs\nlog_avg_msec=500\n"
                               "runtime=1\ntime_based\n")
    out = tmp_path / "run"
    rows = rows_of(run_cli("run", str(job), "--out", str(out), "--format", "json", cwd=tmp_path))
    assert [row["job"] for row in rows] == ["perio", "averaged"]
    perio, averaged = jobs.parse_job_text((out / "cases" / "001-own" / "job.fio").read_text(), "job.fio")
    assert perio.get("write_bw_log") == "mine" and perio.get("log_avg_msec") == "0" and not perio.has("write_iops_log")
    assert averaged.get("write_iops_log") == "theirs" and averaged.get("log_avg_msec") == "500"
    assert str(averaged.get("write_bw_log")).endswith("/logs/averaged")  # ptsbench's own, alongside
    # the per-IO log the job asked for: one line per 4 KiB IO of its 1 MiB, where fio's working directory is
    assert len((tmp_path / "mine_bw.1.log").read_text().splitlines()) == 256
    theirs = [line.split(",")[0] for line in (tmp_path / "theirs_iops.2.log").read_text().splitlines()]
    assert 1 <= len(theirs) <= 4  # averaged over the job's own 500 ms in its 1 s (per IO: millions of lines)
    assert list((out / "cases" / "001-own" / "logs").glob("averaged_bw.*.log"))


def test_sizes_reach_fio_as_ptsbench_reads_them(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    """fio itself reads 1.5M as 1 byte and (by default) 4KiB as 4000 bytes: ptsbench hands it the byte count."""
    job = write_job("fill.fio", "[fill]\nrw=write\nbs=64k\nioengine=psync\n")
    target, out = tmp_path / "new.dat", tmp_path / "run"
    rows = rows_of(run_cli("run", str(job), "--target", str(target), "--size", "1.5M", "--out", str(out),
                           "--format", "json"))
    job_doc = fio_json(out / "cases" / "001-fill")["jobs"][0]
    assert target.stat().st_size == 1536 * 1024 == job_doc["write"]["io_bytes"] and rows[0]["job"] == "fill"
    assert job_doc["job options"]["size"] == str(1536 * 1024)
    quick = run_cli("quick", "--size", "3KiB", "--runtime", "0.1", "--out", str(tmp_path / "q"), "--dry-run")
    assert "size=3072\n" in quick.stdout, quick.stdout
    refused = run_cli("run", str(job), "--target", str(target), "--size", "1.3k")
    assert refused.returncode != 0 and "not a whole number of bytes" in refused.stderr


def test_two_null_engine_runs_from_one_folder_at_once_are_both_run(tmp_path: Path) -> None:
    """The null engine opens no file, so the name fio makes up for it (the job's name in the working folder) is no
    target two runs share: the second run is not refused while the first one's fio runs."""
    (tmp_path / "null.fio").write_text("[mixed]\nioengine=null\nsize=1m\ntime_based\nruntime=1\nrw=randrw\n")
    first = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", "null.fio", "--out", "r1", "--runtime", "60"],
                             cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not subprocess.run(["pgrep", "-f", f"{tmp_path}/r1/cases/"], capture_output=True).stdout:
            assert first.poll() is None and time.monotonic() < deadline, "the first run's fio never started"
            time.sleep(0.2)
        second = run_cli("run", "null.fio", "--out", "r2", "--runtime", "1", cwd=tmp_path)
        assert second.returncode == 0, second.stderr
        assert "another ptsbench run" not in second.stderr
    finally:
        os.killpg(first.pid, signal.SIGTERM)
        first.wait(timeout=120)
