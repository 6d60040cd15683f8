"""Resume after kill -9 at several moments: during preconditioning, mid-round, right after a round was stored, and
between tests. Nothing stored is lost, only the interrupted round runs again, and the resumed run completes."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import kill_when, run_cli, start_pts
from ptsbench.errors import StoreError
from ptsbench.fio.lifetime import fio_pids
from ptsbench.pts.start import stop_orphan_fio
from ptsbench.report.build import load_report

SMALL = ["--profile", "demo", "--spec", "1.1", "--size", "16M", "--round-time", "0.2", "--max-rounds", "3",
         "--block-sizes", "iops=4k", "--mixes", "iops=0,100", "--block-sizes", "tp=128k"]


def stored(run_dir: Path) -> dict[str, bytes]:
    """Every finished-result file of the run: they must survive a resume unchanged."""
    names = ("round.json", "phase.json", "result.json")
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in (run_dir / "pts").rglob("*.json") if p.name in names}


def resume_and_check(run_dir: Path, before: dict[str, bytes]) -> dict[str, object]:
    done = run_cli("resume", str(run_dir))
    assert done.returncode == 0, done.stderr
    after = stored(run_dir)
    for name, content in before.items():
        assert after.get(name) == content, f"{name} changed or vanished"
    manifest: dict[str, object] = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "done"
    plan = json.loads((run_dir / "plan.json").read_text())
    for phase in plan["phases"]:
        folder = run_dir / "pts" / phase["key"]
        summary = json.loads((folder / "phase.json").read_text())
        numbers = sorted(int(p.name) for p in (folder / "rounds").iterdir() if p.name.isdigit())
        assert numbers == list(range(1, summary["rounds"] + 1))
        assert all((folder / "rounds" / f"{n:03d}" / "round.json").exists() for n in numbers)
    assert fio_pids(run_dir) == []
    assert not [path for path in run_dir.rglob("*") if path.is_fifo()]  # a killed chain's gates are gone
    return manifest


def test_kill_during_preconditioning(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [*SMALL, "--tests", "iops", "--size", "256M", "--max-rounds", "1"]
    folder = run_dir / "pts" / "iops" / "precondition"
    kill_when(start_pts(run_dir, *args), lambda: (folder / "job.fio").exists(), delay_s=0.1)
    assert not (folder / "result.json").exists()
    assert not (run_dir / "pts" / "iops" / "rounds").exists()
    resume_and_check(run_dir, stored(run_dir))
    attempts = json.loads((run_dir / "pts" / "iops" / "purge.json").read_text())
    assert len(attempts) == 2  # an interrupted preconditioning starts again from the purge
    result = json.loads((folder / "result.json").read_text())
    assert result["written_bytes"] == result["planned_bytes"]


def test_kill_right_after_a_round_is_stored_then_mid_round(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    rounds = run_dir / "pts" / "iops" / "rounds"
    kill_when(start_pts(run_dir, *SMALL, "--tests", "iops"), lambda: (rounds / "001" / "round.json").exists())
    first = stored(run_dir)
    assert "pts/iops/rounds/001/round.json" in first
    killed = load_report(run_dir)  # the manifest still says running; nothing holds the run: it was interrupted
    assert killed.in_progress is None and f"The run interrupted: `ptsbench resume {run_dir}` continues it." in \
        killed.warnings and ("status", "interrupted") in killed.facts
    # resumed, then killed again part-way through round 3 (only the resumed process can have started it)
    kill_when(start_pts(run_dir), lambda: (rounds / "003" / "job.fio").exists(), delay_s=0.3)
    assert (rounds / "002" / "round.json").exists() and not (rounds / "003" / "round.json").exists()
    interrupted_job = (rounds / "003" / "job.fio").read_text()
    shown = run_cli("show", str(run_dir))  # the manifest still says running: nothing holds the run any more
    assert shown.returncode == 0 and "status interrupted (killed" in " ".join(shown.stdout.split()), shown.stdout
    second = stored(run_dir)
    assert first.items() <= second.items()
    resume_and_check(run_dir, second)
    assert (rounds / "003.interrupted-1" / "job.fio").read_text() == interrupted_job
    assert (rounds / "003" / "job.fio").read_text() == interrupted_job  # same seed: the same round again
    assert len(json.loads((run_dir / "pts" / "iops" / "purge.json").read_text())) == 1
    assert json.loads((run_dir / "pts" / "iops" / "phase.json").read_text())["rounds"] == 3


def test_kill_between_tests_then_in_a_sequential_round(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    tp_rounds = run_dir / "pts" / "tp-128k" / "rounds"
    iops_done = (run_dir / "pts" / "iops" / "phase.json").exists
    kill_when(start_pts(run_dir, *SMALL, "--max-rounds", "iops=1", "--tests", "iops,tp"), iops_done)
    first = stored(run_dir)
    assert "pts/iops/phase.json" in first
    kill_when(start_pts(run_dir), (tp_rounds / "002" / "job.fio").exists, delay_s=0.3)
    second = stored(run_dir)
    assert first.items() <= second.items() and "pts/tp-128k/rounds/001/round.json" in second
    resume_and_check(run_dir, second)
    rounds = [json.loads((tp_rounds / f"{n:03d}" / "round.json").read_text()) for n in (1, 2, 3)]
    for previous, current in zip(rounds, rounds[1:], strict=False):
        for cell in ("seq 128k 100/0", "seq 128k 0/100"):
            assert current["cells"][cell]["seq_start_bytes"] == previous["cells"][cell]["seq_end_bytes"]


def test_a_run_is_running_only_while_a_process_holds_it(tmp_path: Path) -> None:
    from ptsbench.pts.store import PtsStore
    from ptsbench.store import RunStore

    pts = PtsStore(RunStore.create(tmp_path / "run", {"kind": "pts", "status": "running"}))
    assert pts.run_status() == "interrupted"
    with pts.lock():
        assert pts.run_status() == "running"
    pts.store.update_manifest(status="done")
    assert pts.run_status() == "done"


def test_a_reader_never_finds_the_phase_ahead_of_its_rounds(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A run stores its last round's round.json, then the phase's record (its count of rounds). A reader (a live
    report) reads the phase's record before it looks for rounds, so a count it reads is never ahead of the rounds it
    finds (CI: a live rewrite that read the rounds first failed on 'round.json is missing but iops/phase.json says 5
    rounds ran'); a round really missing is still refused."""
    from ptsbench.pts import store as store_module
    from ptsbench.pts.store import ROUND_FILE, PtsStore
    from ptsbench.store import RunStore

    pts = PtsStore(RunStore.create(tmp_path / "run", {"kind": "pts", "status": "running"}))
    for number in range(1, 6):
        folder = pts.round_dir("iops", number)
        folder.mkdir(parents=True)
        (folder / ROUND_FILE).write_text(json.dumps({"round": number, "cells": {}, "steady": {}}))
    pts.write_phase_result("iops", {"rounds": 5})
    read: list[object] = []
    phase_result, round_record = PtsStore.phase_result, store_module._round_record
    monkeypatch.setattr(PtsStore, "phase_result", lambda self, key: read.append("phase") or phase_result(self, key))
    monkeypatch.setattr(store_module, "_round_record", lambda path, number: read.append(number) or
                        round_record(path, number))
    assert [record["round"] for record in pts.finished_rounds("iops")] == [1, 2, 3, 4, 5]
    assert read == ["phase", 1, 2, 3, 4, 5]
    (pts.round_dir("iops", 5) / ROUND_FILE).unlink()
    with pytest.raises(StoreError, match="round.json is missing but iops/phase.json says 5 rounds ran"):
        pts.finished_rounds("iops")


def test_resume_of_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    done = run_cli("resume", str(tmp_path / "nothing-here"))
    assert done.returncode != 0 and done.stderr.count("\n") == 1 and "no such run directory" in done.stderr


def kill_after_the_first_cell(run_dir: Path) -> Path:
    """A one-round IOPS run killed while its second cell runs (the first cell's numbers just stored); its round
    folder."""
    args = ["--profile", "demo", "--spec", "1.1", "--size", "16M", "--round-time", "2", "--max-rounds", "1",
            "--block-sizes", "iops=4k", "--mixes", "iops=0,100", "--tests", "iops"]
    folder = run_dir / "pts" / "iops" / "rounds" / "001"
    # status documents come every second and the second cell runs 2 s: the kill lands inside it
    kill_when(start_pts(run_dir, *args), lambda: (folder / "fio-00.json").exists())
    assert not (folder / "round.json").exists()
    return folder


def kept_jobs(folder: Path) -> list[dict[str, Any]]:
    """fio's entries of the cells a killed round kept, in job order (one fio-NN.json per finished job)."""
    return [entry for path in sorted(folder.glob("fio-[0-9][0-9].json"))
            for entry in json.loads(path.read_text())["jobs"]]


def test_cells_finished_before_a_kill_are_kept(tmp_path: Path) -> None:
    """Each finished cell's numbers are stored once, in a file of its own, as the next one starts."""
    run_dir = tmp_path / "run"
    folder = kill_after_the_first_cell(run_dir)
    job_text = (folder / "job.fio").read_text()
    partial = kept_jobs(folder)
    job_names = [line[1:-1] for line in job_text.splitlines() if line.startswith("[") and line != "[global]"]
    kept = list(dict.fromkeys(entry["jobname"] for entry in partial))  # one entry per thread
    assert kept == job_names[:1]  # the first cell, finished; the second was running
    assert all(entry["read"]["total_ios"] + entry["write"]["total_ios"] > 0 for entry in partial)
    resume_and_check(run_dir, stored(run_dir))
    assert kept_jobs(folder.parent / "001.interrupted-1") == partial
    assert kept_jobs(folder) == []  # a finished round keeps fio.json only


def test_a_stonewalled_round_stores_each_finished_cell_once(tmp_path: Path) -> None:
    """Rounds fio's scheduler hands off (HIR, hosts) keep each finished cell from fio's status documents: one file
    per job, written when the next job starts and never again, and gone once fio.json holds the round."""
    from ptsbench.fio.jobs import render_job_file
    from ptsbench.fio.runner import run_fio
    from ptsbench.pts.engine import FinishedCells

    job = tmp_path / "job.fio"
    # held to 100 IOPS (an IO every 10 ms, which fio sleeps through): an unlimited null job spins a CPU
    job.write_text(render_job_file({"ioengine": "null", "size": "1g", "time_based": None, "runtime": "1500ms",
                                    "rate_iops": "100"},
                                   [(f"c{index}", {"rw": "randread", "numjobs": "2", "stonewall": None})
                                    for index in range(3)]))
    finished = FinishedCells(tmp_path)
    versions: dict[str, set[tuple[int, int]]] = {}

    def on_document(doc: dict[str, Any]) -> None:
        finished(doc)
        for path in tmp_path.glob("fio-*.json"):
            versions.setdefault(path.name, set()).add((path.stat().st_ino, path.stat().st_mtime_ns))

    outcome = run_fio(job, json_path=tmp_path / "fio.json", stderr_path=tmp_path / "fio.stderr",
                      on_document=on_document)
    assert outcome.ok and outcome.doc is not None
    # c2 ends with fio (fio.json holds it); c0 and c1 were each stored as the next one started, once
    assert sorted(versions) == ["fio-00.json", "fio-01.json"] and all(len(v) == 1 for v in versions.values())
    final = {entry["jobname"]: entry for entry in outcome.doc["jobs"]}
    for index, name in enumerate(sorted(versions)):
        kept = json.loads((tmp_path / name).read_text())["jobs"]
        assert [entry["jobname"] for entry in kept] == [f"c{index}"] * 2  # both threads of that job only
        assert sum(entry["read"]["total_ios"] for entry in kept) > 0
        assert kept[-1]["read"]["total_ios"] == final[f"c{index}"]["read"]["total_ios"]  # its final numbers
    finished.discard()
    assert not list(tmp_path.glob("fio-*.json"))


def test_a_round_killed_under_the_previous_layout_resumes_and_reports(tmp_path: Path) -> None:
    """Runs stored before each cell had a file of its own kept every finished cell in cells.partial.json (rewritten
    per cell, beside the chained processes' fio-NN.json): such a round is set aside and run again like any other."""
    run_dir = tmp_path / "run"
    folder = kill_after_the_first_cell(run_dir)
    old = {"fio version": "fio-3.33", "jobs": kept_jobs(folder)}
    (folder / "cells.partial.json").write_text(json.dumps(old, indent=1) + "\n")
    resume_and_check(run_dir, stored(run_dir))
    aside = folder.parent / "001.interrupted-1"
    assert json.loads((aside / "cells.partial.json").read_text()) == old  # kept for the record, untouched
    report = load_report(run_dir)
    assert report.in_progress is None and ("status", "done") in report.facts
    shown = run_cli("show", str(run_dir))
    assert shown.returncode == 0 and "status done" in shown.stdout, shown.stdout


def test_an_orphan_fio_deaf_to_sigterm_is_killed_before_a_resume(tmp_path: Path) -> None:
    """A stand-in for an fio a killed run left behind that does not end on SIGTERM (real fio cannot be made to
    hang on demand): named fio, running a job file of the run, with SIGTERM ignored."""
    job = tmp_path / "pts" / "iops" / "rounds" / "003" / "job.fio"
    job.parent.mkdir(parents=True)
    job.write_text("[cell]\n")
    deaf = subprocess.Popen(["bash", "-c", f"trap '' TERM; exec -a fio tail -f {job}"])
    deadline = time.monotonic() + 10
    while fio_pids(tmp_path) != [deaf.pid]:
        assert time.monotonic() < deadline, "the stand-in fio never showed up"
        time.sleep(0.02)
    stop_orphan_fio(tmp_path, term_timeout_s=0.3, kill_timeout_s=10)
    assert deaf.wait(timeout=5) == -signal.SIGKILL and fio_pids(tmp_path) == []


def test_resume_refuses_a_file_target_that_shrank_or_vanished(tmp_path: Path) -> None:
    """The stored rounds ran on a preconditioned file; a file now shorter than the run's size (or gone) lost that
    state, and fio would silently lay out a fresh one: resume says so instead of going on. An fio the killed run
    left behind is stopped before the check (it could lay the file out again meanwhile), even when resume refuses."""
    run_dir, target = tmp_path / "run", tmp_path / "t.dat"
    rounds = run_dir / "pts" / "iops" / "rounds"
    kill_when(start_pts(run_dir, str(target), *SMALL, "--size", "16M", "--tests", "iops"),
              lambda: (rounds / "001" / "round.json").exists(), group=True)  # its fio too: the file stays as cut
    os.truncate(target, 4096)
    orphan_job = rounds / "002" / "job.fio"  # an fio left running on a job file of the run (null engine: harmless)
    orphan_job.parent.mkdir(parents=True, exist_ok=True)
    orphan_job.write_text("[cell]\nioengine=null\nsize=1g\ntime_based=1\nruntime=60\nrate_iops=100\n")
    orphan = subprocess.Popen(["fio", str(orphan_job)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while orphan.pid not in fio_pids(run_dir):
        assert time.monotonic() < deadline, "the orphan fio never showed up"
        time.sleep(0.02)
    done = run_cli("resume", str(run_dir))
    assert fio_pids(run_dir) == [], "resume left the orphan fio running"
    # its last moments (its memory already gone, so no fio of the run in /proc) may outlast resume on a busy host;
    # left running it would go on for 60 s
    assert orphan.wait(timeout=30) is not None
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"ptsbench: error: {target} is 4,096 bytes, the run started on "
                                                   "16,777,216"), done.stderr
    target.unlink()
    done = run_cli("resume", str(run_dir))
    assert done.returncode != 0 and f"target file {target} is gone" in done.stderr
    assert not (rounds / "002" / "round.json").exists() and not list(rounds.glob("*.interrupted-*"))  # nothing ran
