"""The PTS engine end to end with real fio: the demo profile on a file, steady-state stop, stored numbers equal fio's,
tables, sequential carry-over, loop devices (root only), and the destructive guard."""

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import attached_loop, run_cli
from ptsbench.device.target import Target
from ptsbench.errors import StoreError
from ptsbench.fio.output import parse_jobs
from ptsbench.pts.engine import QuietReporter, run
from ptsbench.pts.plan import make_plan
from ptsbench.pts.records import determination, stop_reason
from ptsbench.pts.settings import make_settings, parse_overrides
from ptsbench.pts.start import RunStart, create_run, target_info
from ptsbench.pts.steady import steady_state
from ptsbench.report.core.model import Table
from ptsbench.report.pts.terminal import pts_sections, terminal_blocks

MIB = 1024**2


def rounds_of(run_dir: Path, phase: str) -> list[dict[str, Any]]:
    folder = run_dir / "pts" / phase / "rounds"
    return [json.loads((d / "round.json").read_text()) for d in sorted(folder.iterdir()) if (d / "round.json").exists()]


def fio_doc(run_dir: Path, phase: str, number: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "pts" / phase / "rounds" / f"{number:03d}" / "fio.json").read_text())
    return data


def test_demo_profile_runs_all_four_tests_on_a_scratch_file(tmp_path: Path) -> None:
    run_dir = tmp_path / "demo"
    done = run_cli("pts", "--profile", "demo", "--out", str(run_dir), "--size", "16M", "--round-time", "0.1",
                   "--max-rounds", "1", "--wsat-capacity", "2")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["kind"] == "pts" and manifest["status"] == "done"
    assert [p.name for p in sorted((run_dir / "pts").iterdir())] == ["iops", "lat", "lat-histogram", "tp-128k",
                                                                     "tp-1m", "wsat"]
    (capture,) = rounds_of(run_dir, "lat-histogram")
    histogram = capture["cells"]["rnd 4k 0/100"]["histogram"]  # PTS 2.0's latency histogram, after steady state
    assert histogram["n"] == sum(histogram["counts"]) == capture["cells"]["rnd 4k 0/100"]["total"]["lat_n"] > 0
    reasons = "\n".join(manifest["compliance"]["reasons"])
    assert manifest["compliance"]["compliant"] is False
    assert "purge: none" in reasons and "write cache not disabled" in reasons and "0.1 s per cell" in reasons
    assert "stops at 2 x capacity (PTS: 4 x)" in reasons
    plan = json.loads((run_dir / "plan.json").read_text())
    for phase in plan["phases"]:
        summary = json.loads((run_dir / "pts" / phase["key"] / "phase.json").read_text())
        assert summary["stop_reason"]
        (record,) = rounds_of(run_dir, phase["key"]) if phase["test"] != "wsat" else rounds_of(run_dir, "wsat")[:1]
        assert list(record["cells"]) == [cell["name"] for cell in phase["cells"]]
        assert all(cell["iops"] > 0 and cell["error"] == 0 for cell in record["cells"].values())
        job_text = (run_dir / "pts" / phase["key"] / "rounds" / "001" / "job.fio").read_text()
        job_count = sum(len(c["jobs"]) for c in record["cells"].values())
        # chained: each job its own fio process, gated by the previous one's end (no stonewall)
        assert "stonewall" not in job_text and job_text.count("exec_postrun=") == job_count
        assert job_text.count("exec_prerun=") == job_count - 1 and record["handoff"]["way"] == "chained"
        gaps = record["handoff"]["gaps_ms"]
        assert len(gaps) == job_count - 1 and all(gap >= 0 for gap in gaps), gaps  # how short: bench/bench_pts.py
        startups = record["handoff"]["startups_s"]  # each released job's fio start-up, which sets the lead
        assert len(startups) == job_count - 1 and all(startup > 0 for startup in startups), startups
        if phase["precondition"]:
            pre = json.loads((run_dir / "pts" / phase["key"] / "precondition" / "result.json").read_text())
            assert pre["written_bytes"] == pre["planned_bytes"] == 2 * plan["active_range_bytes"]
    wsat = rounds_of(run_dir, "wsat")
    assert wsat[-1]["wsat"]["written_bytes"] >= 2 * 16 * MIB or wsat[-1]["wsat"]["io_time_s"] >= 20
    assert not (run_dir / "scratch.dat").exists()
    assert "NOT PTS-compliant" in done.stdout and "IOPS: block size x read/write mix" in done.stdout
    shown = run_cli("show", str(run_dir))
    assert shown.returncode == 0 and "Throughput: sequential MB/s per block size" in shown.stdout
    assert "Write saturation: every round" in shown.stdout and "Steady-state determination" in shown.stdout
    assert "Gaps between cells" in shown.stdout and "Rounds per phase" in shown.stdout
    from ptsbench.pts.phases import load_views
    from ptsbench.pts.store import PtsStore
    from ptsbench.report.core.model import Text
    from ptsbench.report.pts.handoffs import handoff_blocks
    from ptsbench.store import RunStore

    views = [view for view in load_views(PtsStore(RunStore.open(run_dir))) if view.key == "iops"]
    blocks = handoff_blocks("iops", views)  # the report says how cells handed off, and the gaps of each round
    assert isinstance(blocks[0], Text) and "IOPS: cells chained" in blocks[0].text
    (table,) = [block for block in blocks if isinstance(block, Table)]
    iops_gaps = rounds_of(run_dir, "iops")[0]["handoff"]["gaps_ms"]
    assert table.rows == (("IOPS", 1, len(iops_gaps), statistics.median(iops_gaps), max(iops_gaps)),)


def test_stored_cell_numbers_are_fio_numbers(tmp_path: Path) -> None:
    """Cells keep fio's own IOPS and bandwidth; mixed cells sum read and write."""
    store, _ = _small_run(tmp_path, "iops", {"block_sizes": (4096,), "mixes": (65, 0), "max_rounds": 1}, spec="1.1")
    (record,) = rounds_of(store.root, "iops")
    jobs = {job.name: job for job in parse_jobs(fio_doc(store.root, "iops", 1))}
    mixed = record["cells"]["rnd 4k 65/35"]
    (job,) = [jobs[name] for name in mixed["jobs"]]
    read, write = job.get("read"), job.get("write")
    assert read is not None and write is not None
    assert mixed["read"]["iops"] == read.iops and mixed["write"]["iops"] == write.iops
    assert mixed["iops"] == pytest.approx(read.iops + write.iops)
    assert mixed["total"]["lat_percentiles_ns"]["99.999"] > 0
    # the round's per-second data (for drops) ends at fio's own totals, each job labelled with its cell
    seconds = json.loads((store.root / "pts" / "iops" / "rounds" / "001" / "seconds.json").read_text())
    assert seconds["labels"][mixed["jobs"][0]] == "rnd 4k 65/35"
    assert seconds["jobs"][mixed["jobs"][0]]["read_ios"][-1] == read.total_ios


def _small_run(tmp_path: Path, test: str, params: dict[str, object], spec: str = "2.0",
               ioengine: str | None = None, size: int = 16 * MIB) -> tuple[Any, Any]:
    from ptsbench.fio.runner import probe_engine

    settings = make_settings("demo", spec, (test,), {test: {"round_time_s": 0.1, **params}})
    path = str(tmp_path / "target.dat")
    target = Target(path, "file", size, path)
    engine = ioengine or probe_engine(str(tmp_path))[0]
    info = target_info(target, {"logical_sector_bytes": 512}, engine, size)
    store, _plan = create_run(tmp_path / "run", settings, info, {}, RunStart(ioengine_note=engine))
    run(store, target, destructive=False, reporter=QuietReporter())
    return store, settings


def test_rounds_stop_at_steady_state_or_the_maximum(tmp_path: Path) -> None:
    store, _ = _small_run(tmp_path, "iops", {"block_sizes": (4096,), "mixes": (0,), "max_rounds": 7}, spec="1.1",
                          ioengine="null")
    rounds = rounds_of(store.root, "iops")
    summary = json.loads((store.root / "pts" / "iops" / "phase.json").read_text())
    assert 5 <= len(rounds) <= 7 and summary["rounds"] == len(rounds)
    for index, record in enumerate(rounds, start=1):
        if index < 5:
            assert record["steady"]["steady"] is False and record["steady"]["rounds_needed"] == 5 - index
            continue
        window = rounds[index - 5:index]
        expected = steady_state([r["cells"]["rnd 4k 0/100"]["iops"] for r in window], list(range(index - 4, index + 1)))
        stored = record["steady"]["variables"]["rnd 4k 0/100 iops"]
        assert stored["steady"] == expected.steady and stored["slope"] == pytest.approx(expected.slope)
        assert record["steady"]["steady"] == (index == len(rounds) and expected.steady)
    assert summary["steady"] == rounds[-1]["steady"]["steady"]
    assert ("steady state reached" in summary["stop_reason"]) == summary["steady"]
    assert summary["window_rounds"] == list(range(len(rounds) - 4, len(rounds) + 1))
    window_iops = [r["cells"]["rnd 4k 0/100"]["iops"] for r in rounds[-5:]]
    assert summary["window"]["rnd 4k 0/100"]["iops"] == pytest.approx(sum(window_iops) / 5)
    tables = {block.key: block for section in pts_sections(store.store) for block in terminal_blocks(section)
              if isinstance(block, Table)}  # what `show` prints: the report's tables
    assert tables["iops"].rows == (("4k", pytest.approx(sum(window_iops) / 5)),)
    assert tables["iops-steady-state"].rows[0][2] == f"{len(rounds) - 4}-{len(rounds)}"
    assert tables["iops-steady-state"].rows[0][-1] == "none"  # no window round held a drop in the tracked cell
    assert tables["iops-telemetry"].rows[0][:2] == ("IOPS", len(rounds))
    assert tables["summary"].rows[0][1:3] == (str(len(rounds)), "7")


def test_stop_rule_is_decided_from_stored_rounds() -> None:
    settings = make_settings("enterprise", "1.1", ("iops",), parse_overrides({"max_rounds": ["6"]}, ("iops",)))
    from ptsbench.pts.plan import TargetInfo

    plan = make_plan(settings, TargetInfo("/dev/x", "block", 10**11, 512, 512, "io_uring"))
    phase = plan.phase("iops")
    values = [100.0, 300.0, 100.0, 300.0, 100.0, 300.0]
    rounds: list[dict[str, Any]] = []
    for number, value in enumerate(values, start=1):
        record: dict[str, Any] = {"round": number, "cells": {"rnd 4k 0/100": {"iops": value}}}
        rounds.append(record)
        record["steady"] = determination(phase.phase, rounds)
    assert stop_reason(plan, phase, rounds[:5]) is None
    assert stop_reason(plan, phase, rounds) == "maximum of 6 rounds reached; steady state NOT reached"
    flat = [{"round": n, "cells": {"rnd 4k 0/100": {"iops": 1000.0}}} for n in range(1, 6)]
    for index in range(5):
        flat[index]["steady"] = determination(phase.phase, flat[: index + 1])
    assert stop_reason(plan, phase, flat) == "steady state reached in rounds 1-5"


def test_throughput_sequential_streams_continue_across_rounds(tmp_path: Path) -> None:
    store, _ = _small_run(tmp_path, "tp", {"block_sizes": (128 * 1024,), "max_rounds": 3, "round_time_s": 0.2},
                          size=128 * MIB)
    rounds = rounds_of(store.root, "tp-128k")
    assert len(rounds) >= 2
    region = 128 * MIB
    for previous, current in zip(rounds, rounds[1:], strict=False):
        for name in ("seq 128k 100/0", "seq 128k 0/100"):
            before, after = previous["cells"][name], current["cells"][name]
            assert after["seq_start_bytes"] == before["seq_end_bytes"]
            moved = before["total"]["io_bytes"] // (128 * 1024) * (128 * 1024)
            assert before["seq_end_bytes"] == (before["seq_start_bytes"] + moved) % region
    assert any(r["cells"]["seq 128k 0/100"]["seq_start_bytes"] for r in rounds[1:])  # not back at 0 every round
    second = (store.root / "pts" / "tp-128k" / "rounds" / "002" / "job.fio").read_text()
    assert f"offset={rounds[1]['cells']['seq 128k 0/100']['seq_start_bytes']}" in second


def test_block_device_needs_destructive(tmp_path: Path) -> None:
    with attached_loop(str(tmp_path)) as device:
        done = run_cli("pts", device, "--profile", "demo", "--out", str(tmp_path / "run"))
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and "--destructive" in done.stderr
    assert not (tmp_path / "run").exists()


def test_demo_on_a_loop_device_with_purge(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with attached_loop(str(tmp_path), size_bytes=16 * MIB) as device:
        done = run_cli("pts", device, "--profile", "demo", "--tests", "iops,wsat", "--destructive", "--out",
                       str(run_dir), "--round-time", "0.1", "--max-rounds", "1", "--wsat-capacity", "1")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["target_info"]["kind"] == "block"
    for phase in ("iops", "wsat"):  # a loop device supports discard: auto falls back to blkdiscard, a deviation
        (attempt,) = json.loads((run_dir / "pts" / phase / "purge.json").read_text())
        # --force skips only blkdiscard's own O_EXCL open: the run's claim already holds the device exclusively
        assert (attempt["method"], attempt["ok"]) == ("blkdiscard", True)
        assert attempt["commands"] == [f"blkdiscard --force {device}"]
    assert any(reason.startswith("purge: blkdiscard") for reason in manifest["compliance"]["reasons"])
    wsat = rounds_of(run_dir, "wsat")
    assert wsat[-1]["wsat"]["written_bytes"] >= 16 * MIB  # 1 x capacity: stops at the first round past it
    assert all(record["wsat"]["written_bytes"] < 16 * MIB for record in wsat[:-1])


def test_four_k_native_loop_device_skips_half_k_cells(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with attached_loop(str(tmp_path), size_bytes=16 * MIB, sector_bytes=4096) as device:
        done = run_cli("pts", device, "--profile", "demo", "--tests", "lat", "--destructive", "--out", str(run_dir),
                       "--round-time", "0.1", "--max-rounds", "1", "--mixes", "0")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert any("skipped: rnd 512 0/100" in note for note in manifest["notes"])
    (record,) = rounds_of(run_dir, "lat")
    assert list(record["cells"]) == ["rnd 8k 0/100", "rnd 4k 0/100"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_is_one_line(tmp_path: Path) -> None:
    done = run_cli("pts", "--profile", "demo", "--out", "/proc/ptsbench-run")
    assert done.returncode != 0 and done.stderr.count("\n") == 1


def test_failed_purge_stops_the_run_and_resume_purges_again(tmp_path: Path) -> None:
    """A stand-in blkdiscard (first on PATH) fails on demand: the attempt is stored, the run stops with one line."""
    fakebin = Path(__file__).parents[1] / "fakebin"
    env = {"PATH": f"{fakebin}{os.pathsep}{os.environ['PATH']}", "FAKEBIN_LOG": str(tmp_path / "fake.log"),
           "FAKEBIN_PYTHON": sys.executable}
    run_dir = tmp_path / "run"
    with attached_loop(str(tmp_path), size_bytes=16 * MIB) as device:
        failed = run_cli("pts", device, "--profile", "demo", "--tests", "wsat", "--destructive", "--out", str(run_dir),
                         "--round-time", "0.1", "--wsat-capacity", "0.5", env={**env, "FAKEBIN_FAIL": "blkdiscard"})
        errors = [line for line in failed.stderr.splitlines() if line.startswith("ptsbench: error:")]
        assert failed.returncode != 0 and len(errors) == 1 and "Traceback" not in failed.stderr
        assert "purge failed (blkdiscard)" in errors[0] and "injected failure" in errors[0]
        (attempt,) = json.loads((run_dir / "pts" / "wsat" / "purge.json").read_text())
        assert (attempt["ok"], attempt["commands"]) == (False, [f"blkdiscard --force {device}"])
        assert json.loads((run_dir / "manifest.json").read_text())["status"] == "failed"
        assert not (run_dir / "pts" / "wsat" / "rounds").exists()
        resumed = run_cli("resume", str(run_dir), "--destructive", env=env)
    assert resumed.returncode == 0, resumed.stderr
    attempts = json.loads((run_dir / "pts" / "wsat" / "purge.json").read_text())
    assert [a["ok"] for a in attempts] == [False, True]
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "done"


class Recorder:
    """A reporter that keeps what the engine told it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def event(self, text: str) -> None:
        self.calls.append(("event", text))

    def round_started(self, progress: Any) -> None:
        self.calls.append(("round", (progress.phase.key, progress.round_number, progress.eta_to_max_s)))

    def fio_status(self, progress: Any, cell: str | None, status: Any) -> None:
        self.calls.append(("status", (progress.round_number, cell)))

    def round_finished(self, progress: Any, record: Any) -> None:
        self.calls.append(("finished", record["round"]))


def test_progress_names_preconditioning_rounds_and_cells(tmp_path: Path) -> None:
    from ptsbench.fio.runner import probe_engine

    settings = make_settings("demo", "1.1", ("iops",), {"iops": {"round_time_s": 1.2, "max_rounds": 1,
                                                                  "block_sizes": (4096,), "mixes": (100, 0)}})
    path = str(tmp_path / "t.dat")
    target = Target(path, "file", 64 * MIB, path)
    info = target_info(target, {}, probe_engine(str(tmp_path))[0], 64 * MIB)
    store, plan = create_run(tmp_path / "run", settings, info, {}, RunStart(ioengine_note=""))
    recorder = Recorder()
    run(store, target, destructive=False, reporter=recorder)
    rounds = [value for kind, value in recorder.calls if kind == "round"]
    assert [(key, number) for key, number, _ in rounds] == [("iops", 0), ("iops", 1)]
    assert rounds[0][2] == pytest.approx(plan.phase("iops").worst_case_s + plan.phase("iops").overhead_s)
    cells = {cell for kind, (number, cell) in ((k, v) for k, v in recorder.calls if k == "status") if number == 1}
    assert cells and cells <= {"rnd 4k 100/0", "rnd 4k 0/100", None}
    assert ("finished", 1) in recorder.calls
    events = [value for kind, value in recorder.calls if kind == "event"]
    assert events[0].startswith("write cache:") and any("preconditioning" in text for text in events)
    assert events[-1] == "IOPS: maximum of 1 rounds reached; steady state NOT reached"


def test_resume_refuses_a_plan_that_differs_from_the_stored_one(tmp_path: Path) -> None:
    """A resume re-plans from the stored settings; if that plan is not the one the stored rounds ran (the run was
    started by a ptsbench that planned differently), the run stops before anything runs rather than mixing the two."""
    settings = make_settings("demo", "1.1", ("iops", "lat"), {"iops": {"round_time_s": 0.1, "max_rounds": 1}})
    path = str(tmp_path / "target.dat")
    target = Target(path, "file", 16 * MIB, path)
    store, _plan = create_run(tmp_path / "run", settings, target_info(target, {}, "null", 16 * MIB), {},
                              RunStart(ioengine_note="null"))
    stored_plan = json.loads((store.root / "plan.json").read_text())
    stored_plan["phases"][0]["cells"][0]["runtime_s"] = 60.0  # as another planner made it
    stored_plan["phases"][1]["cells"][0]["runtime_s"] = 60.0  # no data yet: free to be planned again
    (store.root / "plan.json").write_text(json.dumps(stored_plan))
    store.add_purge_attempt("iops", {"method": "none", "ok": True})  # the iops phase has begun
    with pytest.raises(StoreError, match="IOPS was planned differently"):
        run(store, target, destructive=False, reporter=QuietReporter())
    assert not (store.root / "pts" / "iops" / "rounds").exists()
    assert json.loads((store.root / "plan.json").read_text()) == stored_plan


def test_write_cache_is_put_back_after_the_run(tmp_path: Path, fakebin: Any) -> None:
    """The device's write cache (a stand-in hdparm keeps it) is off while the rounds run and on again at the end,
    as it was; the manifest says so (the device lab checks the same on real NVMe and SCSI disks)."""
    from ptsbench.device.target import resolve_target
    from ptsbench.fio.runner import probe_engine

    settings = make_settings("demo", "1.1", ("iops",), {"iops": {"round_time_s": 0.2, "max_rounds": 1,
                                                                  "block_sizes": (4096,), "mixes": (0,)}})
    with attached_loop(str(tmp_path), size_bytes=16 * 1024**2) as device:
        target = resolve_target(device)
        facts = {"transport": "sata", "disk": device}  # hdparm is the stand-in: the loop device is never asked
        info = target_info(target, facts, probe_engine(str(tmp_path))[0], 16 * 1024**2)
        store, _ = create_run(tmp_path / "run", settings, info, facts, RunStart(ioengine_note="", purge_method="none"))
        run(store, target, destructive=True)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    (record,) = manifest["write_cache"]
    assert (record["before"], record["after"], record["set"]) == (True, False, True)
    assert manifest["write_cache_restored"]["to"] is True and manifest["write_cache_restored"]["done"] is True
    assert [argv for argv in fakebin() if argv[1].startswith("-W") and argv[1] != "-W"] == [
        ["hdparm", "-W0", device], ["hdparm", "-W1", device]]


def test_write_cache_is_put_back_when_the_run_fails(tmp_path: Path, fakebin: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from ptsbench.device.target import resolve_target
    from ptsbench.errors import PtsbenchError
    from ptsbench.fio.runner import probe_engine

    monkeypatch.setenv("FAKEBIN_FAIL", "blkdiscard")
    settings = make_settings("demo", "1.1", ("iops",), {"iops": {"round_time_s": 0.2, "max_rounds": 1}})
    with attached_loop(str(tmp_path), size_bytes=16 * 1024**2) as device:
        target = resolve_target(device)
        facts = {"transport": "sata", "disk": device}
        info = target_info(target, facts, probe_engine(str(tmp_path))[0], 16 * 1024**2)
        store, _ = create_run(tmp_path / "run", settings, info, facts,
                              RunStart(ioengine_note="", purge_method="blkdiscard"))
        with pytest.raises(PtsbenchError, match="purge failed"):
            run(store, target, destructive=True)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["write_cache_restored"]["done"] is True
    assert [argv[1] for argv in fakebin() if argv[0] == "hdparm" and argv[1] != "-W"] == ["-W0", "-W1"]
