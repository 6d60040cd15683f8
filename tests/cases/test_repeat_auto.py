"""`--repeat auto` with real fio: each case repeated until the 95 % confidence interval of its IOPS is within the
target, or a cap stops it. The decision is checked against the interval recomputed here from the stored cells."""

import json
import statistics
from pathlib import Path

import pytest

from conftest import run_cli
from ptsbench.confidence import t975
from ptsbench.report.build import load_report

# Student's t 0.975 quantiles from the printed tables (degrees of freedom -> t), independent of ptsbench's table
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 29: 2.045, 40: 2.021,
        60: 2.000, 120: 1.980}  # every count the rule may stop at up to its cap of 10 (a loaded host needs more)

# 1 s (was 0.5): a busy host's stall of 50 ms costs a repeat 5 %, not 10 %
RATED = """[global]
ioengine=null
size=64m
time_based
runtime=1
rate_iops=4000

[randread]
rw=randread
bs=4k
"""

FILE_JOB = """[global]
ioengine=psync
time_based
runtime=0.3
# IOs at random moments (fresh seeds each run): about 300 per job, so a repeat's IOPS vary by some 6 %, and 0.1 %
# cannot be reached in 4 repeats, whatever the machine's load
rate_iops=1000
rate_process=poisson
randrepeat=0

[randread]
rw=randread
bs=4k

[seqwrite]
stonewall
rw=write
bs=64k
"""


def stored(run: Path) -> tuple[list[dict[str, float]], dict]:  # type: ignore[type-arg]
    """Each stored repetition's IOPS per job and direction, and the manifest."""
    repetitions = []
    for path in sorted(run.glob("cases/*/result.json")):
        result = json.loads(path.read_text())
        repetitions.append({f"{job['name']} {one['direction']}": one["iops"] for job in result["jobs"]
                            for one in job["directions"] if one["iops"]})
    return repetitions, json.loads((run / "manifest.json").read_text())


def relative_ci_pct(values: list[float]) -> float:
    half = T975[len(values) - 1] * statistics.stdev(values) / len(values) ** 0.5
    return 100 * half / statistics.mean(values)


def widest_pct(repetitions: list[dict[str, float]]) -> float:
    return max(relative_ci_pct([values[name] for values in repetitions]) for name in repetitions[0])


def expected_count(repetitions: list[dict[str, float]], ci_pct: float, cap: int) -> tuple[int, str]:
    """The rule replayed on the stored values: at least 3, stop once every value's interval is within the target,
    at most `cap`."""
    for count in range(1, len(repetitions) + 1):
        if count >= 3 and widest_pct(repetitions[:count]) <= ci_pct:
            return count, f"within ±{ci_pct:g} %"
        if count >= cap:
            return count, f"cap of {cap} repeats reached before ±{ci_pct:g} %"
    raise AssertionError("the run stopped before its rule said so")


def test_t_quantiles() -> None:
    for degrees, value in T975.items():
        assert t975(degrees) == pytest.approx(value, abs=0.0015)


def test_stops_once_the_interval_is_within_the_target(tmp_path: Path) -> None:
    (tmp_path / "rated.fio").write_text(RATED)
    done = run_cli("run", str(tmp_path / "rated.fio"), "--out", str(tmp_path / "run"), "--repeat", "auto",
                   "--repeat-ci", "10")
    assert done.returncode == 0, done.stderr
    repetitions, manifest = stored(tmp_path / "run")
    count, reason = expected_count(repetitions, 10.0, 10)
    assert reason == "within ±10 %"  # the premise: fio held 4,000 IOPS (within 10 %: 2 % failed on a busy host)
    assert len(repetitions) == count == 3
    assert manifest["repeat_stops"] == {"rated": reason}
    assert manifest["cases"] == [f"00{n}-rated-r{n}" for n in (1, 2, 3)]
    values = [one["randread read"] for one in repetitions]
    mean = statistics.mean(values)
    half = T975[2] * statistics.stdev(values) / 3 ** 0.5
    assert f"rated: randread read {mean:,.1f} ± {half:,.1f} IOPS (±{100 * half / mean:.1f} %, 95 % CI, n=3): " \
           f"{reason}" in done.stderr
    table = next(t for t in load_report(tmp_path / "run").tables() if t.key == "repeat-auto")
    ((case, count_shown, name, mean_shown, half_shown, pct_shown, stopped),) = table.rows
    assert (case, count_shown, name, stopped) == ("rated", 3, "randread read", reason)
    assert [mean_shown, half_shown, pct_shown] == pytest.approx([mean, half, 100 * half / mean], rel=1e-3)
    assert "within ±10 %" in done.stdout  # the terminal's table, and show's
    assert done.stderr.count("no drive log was read for any case") == 1  # three cases, no drive: said once
    shown = run_cli("show", str(tmp_path / "run")).stdout
    assert next(line for line in shown.splitlines() if line.endswith("within ±10 %")).split() == [
        "rated", "3", f"{mean:,.1f}", f"{half:,.1f}", f"{100 * half / mean:.1f}", "randread", "read", "within", "±10",
        "%"]  # the table layout's order: the row's name, its values, then its words


def test_the_caps_stop_it_and_say_so(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"  # made by ptsbench, kept for the second run
    (tmp_path / "job.fio").write_text(FILE_JOB)
    done = run_cli("run", str(tmp_path / "job.fio"), "--target", str(target), "--out", str(tmp_path / "cap"),
                   "--size", "8M", "--keep-files", "--repeat", "auto", "--repeat-ci", "0.1", "--repeat-max", "4")
    assert done.returncode == 0, done.stderr
    repetitions, manifest = stored(tmp_path / "cap")
    count, reason = expected_count(repetitions, 0.1, 4)
    assert len(repetitions) == count and manifest["repeat_stops"] == {"job": reason}
    assert reason.startswith("cap of 4 repeats"), "the premise: Poisson-timed IOs' IOPS vary more than 0.1 %"
    assert f": {reason}" in done.stderr and "cap of 4 repeats" in done.stdout
    # the widest of the two jobs' intervals is the one shown
    widest = max(repetitions[0], key=lambda name: relative_ci_pct([one[name] for one in repetitions]))
    assert f"job: {widest} " in done.stderr
    timed = run_cli("run", str(tmp_path / "job.fio"), "--target", str(target), "--out", str(tmp_path / "time"),
                    "--size", "8M", "--repeat", "auto", "--repeat-max-time", "1ms")
    assert timed.returncode == 0, timed.stderr
    repetitions, manifest = stored(tmp_path / "time")
    assert len(repetitions) == 1 and manifest["repeat_stops"] == {"job": "time cap of 0.001 s reached before ±5 %"}
    assert "job: 1 repetition(s): time cap of 0.001 s" in timed.stderr


def test_the_time_cap_holds_by_predicting_the_next_repeat(tmp_path: Path) -> None:
    """No repeat starts that would end past the time cap if it took as long as the longest so far: the repeats'
    times come from the rule's clock, here a list of moments (no wall clock, no race)."""
    from types import SimpleNamespace

    from ptsbench.confidence import AutoRepeat, RepeatRule
    from ptsbench.store import RunStore

    def record(iops: float) -> SimpleNamespace:
        return SimpleNamespace(status="ok", jobs=[{"name": "job", "directions": [{"direction": "read",
                                                                                    "iops": iops}]}])

    store = RunStore.create(tmp_path / "run", {"kind": "run", "name": "job", "cases": []})
    said: list[str] = []
    moments = iter([0.0, 10.0, 25.0, 30.0])  # started; three repeats of 10, 15 and 5 s
    rule = RepeatRule(ci_pct=0.1, max_repeats=10, max_s=44.0)
    auto = AutoRepeat(rule, store, said.append, clock=lambda: next(moments))
    values = iter([1000.0, 1100.0, 900.0])
    count = 0
    while auto.wants("job"):
        count += 1
        auto.finished("job", record(next(values)), last=False)
    # after two: 25 s + the longest (15 s) = 40 s <= 44 s, another; after three: 30 + 15 = 45 s > 44 s, stop
    assert count == 3
    reason = store.manifest["repeat_stops"]["job"]
    assert reason == "time cap of 44 s: another repeat (as long as the longest, 15 s) would end past it, at 45 s, " \
                     "before ±0.1 %"
    assert said and said[-1].endswith(reason)


def test_quick_repeats_to_a_confidence_and_bad_counts_are_refused(tmp_path: Path) -> None:
    done = run_cli("quick", str(tmp_path / "q.bin"), "--size", "8M", "--runtime", "0.2", "--out", str(tmp_path / "q"),
                   "--repeat", "auto", "--repeat-max", "3", "--repeat-ci", "50")
    assert done.returncode == 0, done.stderr
    repetitions, manifest = stored(tmp_path / "q")
    count, reason = expected_count(repetitions, 50.0, 3)
    assert len(repetitions) == count == 3 and manifest["repeat_stops"] == {"quick": reason}
    assert len(repetitions[0]) == 8  # every test of quick is judged, not their sum
    for bad in ("0", "autoo", "1001"):
        refused = run_cli("run", str(tmp_path / "x.fio"), "--repeat", bad)
        assert refused.returncode == 2 and "neither a count from 1 to 1000 nor auto" in refused.stderr
        assert "Traceback" not in refused.stderr


def test_sweep_repeats_each_cell_to_a_confidence_and_resumes_from_the_stored_loops(tmp_path: Path) -> None:
    run = tmp_path / "sweep"
    done = run_cli("sweep", str(tmp_path / "data.bin"), "--size", "8M", "--rw", "randread", "--bs", "4k",
                   "--iodepth", "1,2", "--numjobs", "1", "--runtime", "0.5", "--ioengine", "null", "--set",
                   "rate_iops=4000", "--out", str(run), "--repeat", "auto", "--repeat-ci", "10")
    assert done.returncode == 0, done.stderr
    cells = ("randread-4k-qd1-nj1", "randread-4k-qd2-nj1")

    def check_loops() -> list[str]:
        """Each cell's stored loops are the first ones planned (10 a cell: 001-010, 011-020), as many as the rule
        replayed on their stored values asks; the manifest names the same reason."""
        names = sorted(path.name for path in (run / "cases").iterdir())
        repetitions, manifest = stored(run)
        for start, cell in zip((1, 11), cells, strict=True):
            mine = [name for name in names if name[4:].split("-loop")[0] == cell]
            values = [{"read": one[next(iter(one))]} for one, name in zip(repetitions, names, strict=True)
                      if name in mine]
            count, reason = expected_count(values, 10.0, 10)
            assert mine == [f"{start + n:03d}-{cell}{f'-loop{n + 1}' if n else ''}" for n in range(count)]
            assert manifest["repeat_stops"][cell] == reason
        return names

    names = check_loops()
    assert len(names) < 20  # the premise: fio's rate held the IOPS within 10 % before the cap
    # a run killed before its last loop of the second cell was stored: resume decides again from the stored loops
    import shutil

    shutil.rmtree(run / "cases" / names[-1])
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["repeat_stops"].pop(cells[1])
    (run / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    resumed = run_cli("resume", str(run))
    assert resumed.returncode == 0, resumed.stderr
    assert check_loops()[: len(names) - 1] == names[:-1]
    refused = run_cli("sweep", str(tmp_path / "data.bin"), "--rw", "randread", "--bs", "4k", "--iodepth", "1",
                      "--numjobs", "1", "--loops", "2", "--repeat", "auto", "--dry-run")
    assert refused.returncode == 2 and "--repeat auto chooses how often each cell runs" in refused.stderr
