"""Gates on real stored runs: limits that pass and fail, JUnit XML valid against the Jenkins schema, PTS verdicts,
a regression gate judged against the noise measured for the value, gates on a run command, bad gates refused
before any IO."""

import dataclasses
import json
import math
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
import xmlschema

from conftest import run_cli
from labruns import NULL_JOB, Lab
from ptsbench.catalog.gates import judge, parse_gate, run_facts
from ptsbench.catalog.values import run_values
from ptsbench.store import RunStore

# the run lab (a session fixture of 40 runs) is made once, on one worker, for the modules that read it
pytestmark = pytest.mark.xdist_group("run-lab")

SCHEMA = Path(__file__).parents[1] / "data" / "junit" / "junit-10.xsd"


def junit_cases(path: Path) -> dict[str, bool]:
    """Each test case of a JUnit file (validated against the schema first) -> passed."""
    xmlschema.XMLSchema(SCHEMA).validate(str(path))
    return {case.get("name", ""): case.find("failure") is None for case in ElementTree.parse(path).iter("testcase")}


def test_gates_pass_and_fail_on_a_real_run_with_valid_junit(run_lab: Lab, tmp_path: Path) -> None:
    junit = tmp_path / "gates.xml"
    done = run_cli("check", str(run_lab.fast), "--gate", "iops >= 100k", "--gate", "p99.99 <= 2ms", "--gate",
                   "read MB/s >= 1000 GB/s", "--gate", "compliant", "--junit", str(junit))
    assert done.returncode == 1 and "a gate failed" in done.stderr
    assert "Gates: 2 passed, 2 failed" in done.stdout
    iops = next(v for v in run_values(RunStore.open(run_lab.fast)) if v.name.endswith("read iops")).value
    assert f"{iops:,.1f} IOPS" in done.stdout  # the stored value, as stored
    cases = junit_cases(junit)
    assert cases == {"iops >= 100k [lab-null/null read iops]": True,
                     "p99.99 <= 2ms [lab-null/null read p99.99]": True,
                     "read MB/s >= 1000 GB/s [lab-null/null read MB/s]": False, "compliant [run]": False}
    passing = run_cli("check", str(run_lab.fast), "--gate", "iops >= 100k", "--junit", str(junit))
    assert passing.returncode == 0 and junit_cases(junit) == {"iops >= 100k [lab-null/null read iops]": True}


def test_pts_gates_judge_the_tracked_values_compliance_and_steady_state(run_lab: Lab) -> None:
    store = RunStore.open(run_lab.pts)
    tracked = next(v for v in run_values(store) if v.name == "IOPS: rnd 4k 0/100 iops")
    done = run_cli(
        "check", str(run_lab.pts), "--gate", f"IOPS: rnd 4k 0/100 iops >= {int(tracked.value * 0.9)}",
        "--gate", f"IOPS: rnd 4k 0/100 iops >= {int(tracked.value * 1.1)}", "--gate", "steady state reached",
        "--gate", "compliant")
    assert done.returncode == 1
    facts = run_facts(store)
    reached = sum(steady for _what, steady in facts.steady)
    lines = done.stdout.splitlines()
    assert sum("steady state reached" in line and " pass " in f"{line} " for line in lines) == reached
    assert any("compliant" in line and "NOT compliant" in line for line in lines)  # the demo never is
    verdicts = judge([parse_gate("IOPS: rnd 4k 0/100 iops >= 1")], run_values(store), facts)
    assert [(v.subject, v.passed) for v in verdicts] == [("IOPS: rnd 4k 0/100 iops", True)]


def test_a_regression_gate_fires_only_outside_the_measured_noise(run_lab: Lab) -> None:
    """The baseline is the real run's own values moved by a fraction of the noise measured for them (the steady-state
    window's excursion): worse by more than 5 % but within the noise passes; beyond the noise fails."""
    store = RunStore.open(run_lab.pts)
    values = run_values(store)
    gate = parse_gate("IOPS: rnd 4k 0/100 iops not worse than baseline by more than 5 %")
    (value,) = [v for v in values if v.name == "IOPS: rnd 4k 0/100 iops"]
    assert value.noise is not None and "excursion" in value.noise_source
    assert value.noise / 2 > 0.05 * value.value, "0.1 s rounds on a file always vary by more than 10 %"
    for worse_by, passes in ((value.noise / 2, True), (value.noise * 1.5, False)):
        baseline = {value.name: dataclasses.replace(value, value=value.value + worse_by, noise=None)}
        (verdict,) = judge([gate], values, run_facts(store), baseline)
        assert verdict.passed is passes and ("within noise" in verdict.note) is passes, verdict


def test_a_regression_gate_between_two_real_runs(run_lab: Lab) -> None:
    """Capped at 20000 IOPS, the null engine is far slower than uncapped: a case run's noise is unknown (one
    measurement per case), so the percentage alone decides, and the table says so."""
    gate = ["--gate", "iops not worse than baseline by more than 5 %"]
    same = run_cli("check", str(run_lab.fast), *gate, "--baseline", str(run_lab.fast))
    assert same.returncode == 0 and "0.0 % " in same.stdout
    slower = run_cli("check", str(run_lab.capped), *gate, "--baseline", str(run_lab.fast))
    assert slower.returncode == 1 and "noise unknown" in slower.stdout and "% worse" in slower.stdout
    faster = run_cli("check", str(run_lab.fast), *gate, "--baseline", str(run_lab.capped))
    assert faster.returncode == 0 and "% better" in faster.stdout


def test_baseline_last_is_the_catalog_s_latest_earlier_run_of_the_model(run_lab: Lab, tmp_path: Path) -> None:
    db = tmp_path / "lab.sqlite"
    assert run_cli("catalog", "update", str(run_lab.folder), "--db", str(db)).returncode == 0
    done = run_cli("check", str(run_lab.capped), "--gate", "iops not worse than baseline by more than 5 %",
                   "--baseline", "last", "--catalog", str(db))
    assert done.returncode == 1 and "% worse" in done.stdout
    baseline = run_lab.folder / re.search(r" baseline (\S+) [\d,.]+ IOPS", done.stdout).group(1)  # type: ignore[union-attr]
    tags = json.loads((baseline / "manifest.json").read_text())["tags"]
    assert baseline != run_lab.capped and "model=LAB-A" in tags  # an earlier run of the same model


def test_gates_on_a_run_command_are_judged_after_the_run_is_stored(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB)
    gates = tmp_path / "gates.toml"
    gates.write_text('gates = ["iops >= 1k", "p99 <= 1 s", "iops >= 1G"]\n')
    junit = tmp_path / "out.xml"
    done = run_cli("run", str(job), "--runtime", "200ms", "--out", str(tmp_path / "run"), "--gates", str(gates),
                   "--junit", str(junit), "--tag", "ci", "--format", "json")
    assert done.returncode == 1 and "Gates: 2 passed, 1 failed" in done.stderr  # stdout: the results as json
    assert json.loads(done.stdout)[0]["iops"] > 0
    assert (tmp_path / "run" / "cases" / "001-null" / "result.json").is_file()  # stored before judged
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["tags"] == ["ci"]
    assert list(junit_cases(junit).values()) == [True, True, False]


@pytest.mark.parametrize(("gate", "words"), [
    ("iops >= 400ms", "ms does not fit its metric"),
    ("p99.99 <= 2", "no unit does not fit its metric"),
    ("latency <= 2ms", "'latency' is not a metric"),
    ("iops at least 5", "is not understood"),
    ("iops not worse than baseline by more than five %", "is not understood"),
])
def test_a_bad_gate_is_one_error_line_before_any_io(tmp_path: Path, gate: str, words: str) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB)
    done = run_cli("run", str(job), "--out", str(tmp_path / "run"), "--gate", gate)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and words in done.stderr, done.stderr
    assert not (tmp_path / "run").exists()


def test_a_failing_gate_shows_why_its_value_and_limit_differ(run_lab: Lab, tmp_path: Path) -> None:
    """A limit a hundredth of an IOPS above the stored value fails, and the table and the JUnit message show the
    two with the digits it takes to read them apart (not '141,517.4 IOPS >= 141,517.4 IOPS')."""
    iops = next(v for v in run_values(RunStore.open(run_lab.fast)) if v.name.endswith("read iops")).value
    limit = math.floor(iops * 100) / 100 + 0.01
    gate = f"iops >= {limit:.2f}"
    junit = tmp_path / "gates.xml"
    done = run_cli("check", str(run_lab.fast), "--gate", gate, "--junit", str(junit))
    assert done.returncode == 1 and "a gate failed" in done.stderr
    (verdict,) = judge([parse_gate(gate)], run_values(RunStore.open(run_lab.fast)), run_facts(RunStore.open(
        run_lab.fast)))
    shown, limit_shown = verdict.value, verdict.limit.removeprefix(">= ")
    assert not verdict.passed and shown != limit_shown, (shown, limit_shown)
    assert float(shown[:-5].replace(",", "")) < float(limit_shown[:-5].replace(",", ""))  # less " IOPS"
    assert shown in done.stdout and limit_shown in done.stdout
    (failure,) = ElementTree.parse(junit).iter("failure")
    assert failure.get("message") == f"value {shown}, limit >= {limit_shown}"


def test_gate_values_are_exact() -> None:
    assert parse_gate("p99.99 <= 2ms").limit == 2_000_000
    assert parse_gate("iops >= 400k").limit == 400_000
    assert parse_gate("iops >= 1.5M").limit == 1_500_000
    assert parse_gate("MB/s > 0.1 GiB/s").limit == 0.1 * 2**30
    assert parse_gate("rnd 4k 0/100   MB/s >= 700").limit == 700_000_000
    assert parse_gate("mean < 250 µs").limit == 250_000


def test_the_spread_of_repeat_is_a_case_run_s_noise(tmp_path: Path) -> None:
    """Two real runs of three repetitions each, capped at 1000 and at 100 IOPS (fio holds such rates even on a loaded
    machine): each value is the mean of its repetitions with their spread as its noise, and a tenfold drop is beyond
    it."""
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB)
    runs = {}
    for rate in (1000, 100):
        runs[rate] = tmp_path / f"at-{rate}"
        done = run_cli("run", str(job), "--runtime", "1", "--repeat", "3", "--set", f"rate_iops={rate}",
                       "--out", str(runs[rate]))
        assert done.returncode == 0, done.stderr
    (value,) = [v for v in run_values(RunStore.open(runs[100])) if v.name == "null/null read iops"]
    stored = [json.loads(path.read_text())["jobs"][0]["directions"][0]["iops"]
              for path in sorted((runs[100] / "cases").glob("*/result.json"))]
    assert len(stored) == 3 and value.value == sum(stored) / 3 and value.noise == max(stored) - min(stored)
    gate = ["--gate", "read iops not worse than baseline by more than 5 %"]
    slower = run_cli("check", str(runs[100]), *gate, "--baseline", str(runs[1000]))
    assert slower.returncode == 1 and "spread of 3 repetitions" in slower.stdout, slower.stdout
    faster = run_cli("check", str(runs[1000]), *gate, "--baseline", str(runs[100]))
    assert faster.returncode == 0 and "% better" in faster.stdout, faster.stdout


def test_junit_replaces_only_an_earlier_junit_file(run_lab: Lab, tmp_path: Path) -> None:
    """--junit over a user's file or a device node is refused before anything is judged and leaves it as it was (the
    verdicts replaced it: --junit /dev/sdb would have hidden the drive's node)."""
    import os
    import stat

    mine, node = tmp_path / "notes.xml", tmp_path / "node"
    mine.write_text("<mine/>")
    os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(7, 251))
    for out in (mine, node):
        done = run_cli("check", str(run_lab.fast), "--gate", "iops >= 1", "--junit", str(out))
        assert done.returncode == 2 and "not a file ptsbench wrote" in done.stderr, done.stderr
    assert mine.read_text() == "<mine/>" and stat.S_ISBLK(node.lstat().st_mode)
