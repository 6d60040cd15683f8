"""A `ptsbench run` and a `quick` killed with kill -9 mid-way and resumed: the cases finished before the kill are kept
as they were, the case the kill cut is run again from a clean folder, the rest run, and the run ends as a run does
(results, its manifest done, quick's scratch file removed)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import run_cli
from ptsbench.report.build import load_report

# IOs at random moments (fresh seeds each run): about 500 a repeat, whose IOPS vary by some 5 %, so 0.1 % cannot be
# reached in 3 repeats, whatever the machine's load
JOB = ("[null]\nioengine=null\nsize=64m\nrw=randread\nbs=4k\ntime_based\nruntime=500ms\nrate_iops=1000\n"
       "rate_process=poisson\nrandrepeat=0\n")


def _kill_during(argv: list[str], run_dir: Path, second_case: str) -> tuple[set[str], float]:
    """Start the run, kill -9 it once its second case has started; the cases finished by then and the moment."""
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", *argv], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (run_dir / "cases" / second_case).is_dir():
        assert process.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = time.time()
    return {path.parent.name for path in (run_dir / "cases").glob("*/result.json")}, killed_at


def _resumed(run_dir: Path, planned: list[str], done_before: set[str], killed_at: float) -> str:
    assert done_before and len(done_before) < len(planned), done_before  # the premise: killed mid-way
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "running"  # kill -9: no word from the run; the report knows it was killed
    # said once nothing holds the run's lock: a child ptsbench forked just before the kill holds a copy of it until
    # its exec (moments, more on a busy host, where the report said "running" at first)
    interrupted = f"run status interrupted: `ptsbench resume {run_dir}` runs its unfinished cases"
    deadline = time.monotonic() + 30
    while interrupted not in (warnings := load_report(run_dir).warnings):
        assert time.monotonic() < deadline, warnings
        time.sleep(0.2)
    kept = {name: (run_dir / "cases" / name / "result.json").read_bytes() for name in done_before}
    resumed = run_cli("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(done_before)} of {len(planned)} case(s) finished and kept" in resumed.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["cases"] == planned
    assert sorted(path.name for path in (run_dir / "cases").iterdir()) == planned
    for name in planned:
        result = run_dir / "cases" / name / "result.json"
        assert json.loads(result.read_text())["status"] == "ok"
        if name in done_before:
            assert result.read_bytes() == kept[name] and result.stat().st_mtime < killed_at  # kept as it was
        else:
            assert result.stat().st_mtime > killed_at  # run (again) by the resume, one attempt in its folder
            assert len(json.loads((run_dir / "cases" / name / "fio.json").read_text())["jobs"]) >= 1
    assert not load_report(run_dir).warnings
    return resumed.stdout


def test_a_killed_run_resumes_its_unfinished_cases(tmp_path: Path) -> None:
    (tmp_path / "null.fio").write_text(JOB)
    run_dir = tmp_path / "run"
    done_before, killed_at = _kill_during(["run", str(tmp_path / "null.fio"), "--out", str(run_dir), "--repeat",
                                           "auto", "--repeat-ci", "0.1", "--repeat-max", "3"], run_dir, "002-null-r2")
    stdout = _resumed(run_dir, ["001-null-r1", "002-null-r2", "003-null-r3"], done_before, killed_at)
    assert all(f"null-r{n}" in stdout for n in (1, 2, 3))  # every case's row at the end, the kept one too
    # --repeat auto decided again from the kept repetition and the new ones (the repeat cap, as JOB's IOPS vary)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["repeat_stops"] == {"null": "cap of 3 repeats reached before ±0.1 %"}


def test_a_killed_quick_resumes_and_removes_its_scratch_file(tmp_path: Path) -> None:
    run_dir = tmp_path / "quick"
    done_before, killed_at = _kill_during(["quick", "--out", str(run_dir), "--repeat", "2", "--runtime", "100ms",
                                           "--size", "4M"], run_dir, "002-quick-r2")
    assert (run_dir / "scratch.dat").is_file()  # left by the kill
    stdout = _resumed(run_dir, ["001-quick-r1", "002-quick-r2"], done_before, killed_at)
    assert "RND4K-Q1T1-write" in stdout and not (run_dir / "scratch.dat").exists()
    # a run directory without a stored plan (made by an older ptsbench) is refused in one line
    manifest = json.loads((run_dir / "manifest.json").read_text())
    del manifest["resume_plan"]
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    refused = run_cli("resume", str(run_dir))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].startswith(f"ptsbench: error: {run_dir} holds no plan to resume")
