"""Qualification on real fio runs: percentiles carry the IOs behind and beyond them (counted again here from fio's own
json+ bins), a percentile with a thin tail is NOT MEASURED in gates unless the gate asks, a p99.9999 the job asked
fio for is a metric, gate names match the job alone and a name that matches nothing lists the nearest, and profiles
judge targets (absolute and per TB of capacity) with a table, JUnit and OCPTV JSON valid against OCP's schema."""

import json
import re
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

import pytest

from conftest import run_cli
from labruns import Lab
from ocp_pages import c3h_page
from ptsbench.catalog.values import run_values
from ptsbench.fio.output import beyond_by_count
from ptsbench.store import RunStore
from test_case_waf import _counter_files, _run_on
from test_case_waf import loop_as_nvme as nvme_loop  # noqa: F401 (the fixture, under this module's name)
from test_gates import junit_cases

# the run lab (a session fixture of 40 runs) is made once, on one worker, for the modules that read it
pytestmark = pytest.mark.xdist_group("run-lab")

OCPTV_SCHEMA = Path(__file__).parents[1] / "data" / "ocptv"
SMALL_JOB = "[small]\nioengine=null\nsize=64m\nrw=randread\nbs=4k\nnumber_ios=2000\npercentile_list=99.9999\n"
# two jobs of a qualification run on a new file (the capacity comes from --size); psync: latencies spread over
# many of fio's bins, unlike the null engine's few nanoseconds
QUAL_JOB = ("[global]\nioengine=psync\nbs=4k\n[randread]\nrw=randread\nnumber_ios=16000\n"
            "[randwrite]\nrw=randwrite\nnumber_ios=16000\n")
CAPACITY_BYTES = 64 * 2**20


def _run(tmp_path: Path, name: str, job: str, *extra: str) -> Path:
    path = tmp_path / f"{name}.fio"
    path.write_text(job)
    out = tmp_path / f"run-{name}"
    done = run_cli("run", str(path), "--out", str(out), *extra)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("small"), "small", SMALL_JOB)


@pytest.fixture(scope="module")
def qual_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("qual")
    return _run(folder, "qual", QUAL_JOB, "--target", str(folder / "scratch.dat"), "--size", str(CAPACITY_BYTES))


def _fio_bins(run: Path) -> tuple[int, dict[int, int], dict[str, float]]:
    """The read direction's IO count, json+ bins and percentiles as fio wrote them (fio.json)."""
    (fio_json,) = run.glob("cases/*/fio.json")
    lat = json.loads(fio_json.read_text())["jobs"][0]["read"]["lat_ns"]
    percentiles = {f"{float(key):.6f}".rstrip("0").rstrip("."): value for key, value in lat["percentile"].items()}
    return lat["N"], {int(k): v for k, v in lat["bins"].items()}, percentiles


def test_every_percentile_carries_the_ios_behind_and_beyond_it(small_run: Path) -> None:
    total, bins, percentiles = _fio_bins(small_run)
    assert total == 2000 and "99.9999" in percentiles  # the job's own percentile_list is kept
    values = {v.name.split()[-1]: v for v in run_values(RunStore.open(small_run)) if v.percentile}
    assert set(values) == {f"p{key}" for key in percentiles}
    for key, value_ns in percentiles.items():
        value = values[f"p{key}"]
        assert value.value == value_ns and value.samples == 2000
        assert value.beyond == sum(count for at, count in bins.items() if at > value_ns)
    assert values["p99.99"].beyond == 0 and not values["p99.99"].measured()


def test_a_2000_io_p99_99_is_not_measured_and_does_not_pass(small_run: Path, tmp_path: Path) -> None:
    junit = tmp_path / "gates.xml"
    done = run_cli("check", str(small_run), "--gate", "p99.99 <= 10s", "--junit", str(junit))
    assert done.returncode == 4, done.stdout + done.stderr
    assert "NOT MEASURED" in done.stdout and "2,000 IOs, 0 beyond" in done.stdout
    assert "not measured" in done.stderr and "0 passed, 0 failed, 1 not measured" in done.stdout
    assert junit_cases(junit) == {"p99.99 <= 10s [small/small read p99.99]": False}
    (failure,) = ElementTree.parse(junit).iter("failure")
    assert failure.get("type") == "not measured" and "2,000 IOs, 0 beyond" in (failure.get("message") or "")
    asked = run_cli("check", str(small_run), "--gate", "p99.99 <= 10s even if not measured")
    assert asked.returncode == 0 and "judged as the gate asks" in asked.stdout, asked.stdout + asked.stderr
    missed = run_cli("check", str(small_run), "--gate", "p99.99 <= 1ns even if not measured")
    assert missed.returncode == 1 and " FAIL " in missed.stdout, missed.stdout  # judged as asked: it can fail
    strict = run_cli("check", str(small_run), "--gate", "p90 <= 10s", "--min-tail", "1000")
    assert strict.returncode == 4 and "fewer than 1000 IOs beyond it" in strict.stdout, strict.stdout


def test_tables_show_each_percentile_with_its_evidence(small_run: Path) -> None:
    """The results tables (terminal, and the report's results as read back from its xlsx) show the IOs behind the
    latency figures, and a percentile with fewer than 10 IOs slower than it as not measured, not as a number;
    `--format json` keeps fio's figures beside their evidence."""
    from openpyxl import load_workbook

    count, bins, percentiles = _fio_bins(small_run)
    beyond = {key: sum(n for at, n in bins.items() if at > value) for key, value in percentiles.items()}
    assert beyond["99.9"] < 10  # 2,000 IOs: at most 2 beyond p99.9, not measured
    shown = run_cli("show", str(small_run)).stdout
    lines = shown.splitlines()
    at = next(i for i, line in enumerate(lines) if line.rstrip().endswith("IOs"))  # the header
    p90, _p95, _p99, p999, ios = lines[at + 2].split()[-5:]  # the first row's p90 µs .. IOs, as shown
    assert ios == f"{count:,}" and p999 == "n/m"
    # p90 as a number where at least 10 IOs were slower (the null engine's latencies share few bins: a busy host's
    # run once had 8 beyond its p90)
    assert p90 == "n/m" if beyond["90"] < 10 else float(p90.replace(",", "")) * 1000 == pytest.approx(
        percentiles["90"], abs=1000)
    assert "n/m: not measured, fewer than 10 IOs were slower" in shown
    sheet = load_workbook(small_run / "results.xlsx", read_only=True)["results"]
    names, *rows = [list(values) for values in sheet.iter_rows(values_only=True) if any(values)]
    first = next(dict(zip(names, values, strict=False)) for values in rows if "lat p99 (µs)" in names)
    assert first["latency IOs"] == count and first["lat p99.9 (µs)"] in (None, "-", "")
    assert first["lat p90 (µs)"] in (None, "-", "") if beyond["90"] < 10 else \
        first["lat p90 (µs)"] == pytest.approx(percentiles["90"] / 1000)
    rows_json = json.loads(run_cli("show", str(small_run), "--format", "json").stdout)
    assert rows_json[0]["lat_p99.9_ns"] == percentiles["99.9"] and rows_json[0]["lat_beyond"]["99.9"] < 10


def test_a_gate_on_p99_9999_is_a_metric_when_the_job_asked_fio_for_it(small_run: Path) -> None:
    done = run_cli("check", str(small_run), "--gate", "p99.9999 <= 10s even if not measured")
    assert done.returncode == 0 and "small/small read p99.9999" in done.stdout, done.stdout + done.stderr
    absent = run_cli("check", str(small_run), "--gate", "p99.99999 <= 10s")
    assert absent.returncode == 1 and "no value of this run has that name" in absent.stdout


def test_merged_percentiles_count_their_tail_in_the_summed_bins(tmp_path: Path) -> None:
    """numjobs=2 reported apart: the row is merged from both entries' bins, and so is each percentile's evidence."""
    run = _run(tmp_path, "two", "[two]\nioengine=null\nsize=64m\nrw=randread\nbs=4k\nnumber_ios=3000\nnumjobs=2\n")
    (fio_json,) = run.glob("cases/*/fio.json")
    entries = [job["read"]["lat_ns"] for job in json.loads(fio_json.read_text())["jobs"]]
    assert len(entries) == 2
    bins: dict[int, int] = {}
    for entry in entries:
        for at, count in entry["bins"].items():
            bins[int(at)] = bins.get(int(at), 0) + count
    (p99,) = [v for v in run_values(RunStore.open(run)) if v.name.endswith("read p99")]
    assert p99.samples == 6000 and p99.beyond == sum(count for at, count in bins.items() if at > p99.value)


def test_beyond_by_count_follows_fio_s_rank() -> None:
    """Without bins (older runs): the IOs ranked past fio's percentile IO."""
    assert (beyond_by_count("99", 2000), beyond_by_count("99.9", 2000), beyond_by_count("99.99", 2000)) == (20, 2, 0)
    assert beyond_by_count("50", 1) == 0 and beyond_by_count("99.9999", 10_000_000) == 10


def test_gate_names_match_the_job_alone_and_name_the_nearest(qual_run: Path) -> None:
    names = {v.name for v in run_values(RunStore.open(qual_run))}
    assert "qual/randread read iops" in names
    done = run_cli("check", str(qual_run), "--gate", "randread read iops >= 1")
    assert done.returncode == 0 and "qual/randread read iops" in done.stdout, done.stdout
    typo = run_cli("check", str(qual_run), "--gate", "randreed read iops >= 1")
    assert typo.returncode == 1, typo.stdout
    assert re.search(r"no value of this run has that name; nearest: qual/randread read iops", typo.stdout)


def _profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "profile.toml"
    path.write_text(text)
    return path


def _ocptv_lines(path: Path) -> list[dict[str, object]]:
    """The stream, every line validated against OCP's published schema (root.json and what it refers to)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    documents = [json.loads(path.read_text()) for path in OCPTV_SCHEMA.glob("*.json")]
    registry = Registry().with_resources((doc["$id"], Resource.from_contents(doc)) for doc in documents)
    root = next(doc for doc in documents if doc["$id"].endswith("/output"))
    validator = Draft202012Validator(root, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        validator.validate(line)
    return lines


def test_a_profile_passes_and_fails_with_junit_and_ocptv(qual_run: Path, tmp_path: Path) -> None:
    values = {v.name: v for v in run_values(RunStore.open(qual_run))}
    iops = values["qual/randread read iops"].value
    claimable = [v for v in values.values() if v.name.startswith("qual/randwrite write p") and v.measured()]
    top = claimable[-1]  # the highest percentile with at least 10 IOs beyond it (values come in numeric order)
    metric = top.name.split()[-1]
    passing = _profile(tmp_path, f'name = "lab"\n[[workload]]\nvalues = "randread read"\niops = ">= {iops / 2:.0f}"\n'
                                 f'[[workload]]\nvalues = "randwrite write"\n"{metric}" = "<= {top.value * 2:.0f}ns"\n')
    junit, ocptv = tmp_path / "v.xml", tmp_path / "v.jsonl"
    done = run_cli("check", str(qual_run), "--profile", str(passing), "--junit", str(junit), "--ocptv", str(ocptv))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Profile lab: 2 passed, 0 failed" in done.stdout
    assert f"{top.samples:,} IOs, {top.beyond:,} beyond" in done.stdout
    assert all(junit_cases(junit).values()) and len(junit_cases(junit)) == 2
    lines = _ocptv_lines(ocptv)
    assert lines[-1]["testRunArtifact"] == {"testRunEnd": {"status": "COMPLETE", "result": "PASS"}}
    measured = [line["testStepArtifact"]["measurement"] for line in lines  # type: ignore[index]
                if "measurement" in line.get("testStepArtifact", {})]  # type: ignore[operator]
    assert [m["name"] for m in measured] == ["qual/randread read iops", top.name]
    assert measured[0]["value"] == iops and measured[0]["validators"][0]["type"] == "GREATER_THAN_OR_EQUAL"

    failing = _profile(tmp_path, f'[[workload]]\nvalues = "randread read"\niops = ">= {iops * 2:.0f}"\n'
                                 '"p99.9999" = "<= 1s"\n[[workload]]\nvalues = "seqread read"\n"MB/s" = ">= 1"\n')
    done = run_cli("check", str(qual_run), "--profile", str(failing), "--junit", str(junit), "--ocptv", str(ocptv))
    assert done.returncode == 1 and "1 passed, 1 failed, 2 not measured" not in done.stdout
    assert "0 passed, 1 failed, 2 not measured" in done.stdout, done.stdout
    diagnoses = [line["testStepArtifact"]["diagnosis"]["type"] for line in _ocptv_lines(ocptv)  # type: ignore[index]
                 if "diagnosis" in line.get("testStepArtifact", {})]  # type: ignore[operator]
    assert diagnoses == ["FAIL", "UNKNOWN", "UNKNOWN"]
    assert list(junit_cases(junit).values()) == [False, False, False]


def test_per_tb_targets_scale_with_the_run_s_capacity(qual_run: Path, tmp_path: Path) -> None:
    """64 MiB is 0.000067108864 TB: a target of N IOPS per TB asks N x that of this run."""
    iops = next(v.value for v in run_values(RunStore.open(qual_run)) if v.name == "qual/randread read iops")
    terabytes = CAPACITY_BYTES / 1e12
    per_tb_pass, per_tb_fail = iops / terabytes * 0.9, iops / terabytes * 1.1
    for per_tb, code in ((per_tb_pass, 0), (per_tb_fail, 1)):
        profile = _profile(tmp_path, f'[[workload]]\nvalues = "randread read"\niops = ">= {per_tb:.0f} per TB"\n')
        done = run_cli("check", str(qual_run), "--profile", str(profile))
        assert done.returncode == code, done.stdout + done.stderr
        assert f"x 6.71089e-05 TB ({CAPACITY_BYTES:,} bytes)" in done.stdout
        assert f">= {round(per_tb) * terabytes:,.1f} IOPS" in done.stdout, done.stdout


def test_per_tb_without_a_capacity_is_not_measured(small_run: Path, tmp_path: Path) -> None:
    profile = _profile(tmp_path, '[[workload]]\nvalues = "small read"\niops = ">= 1 per TB"\nmean = "<= 1s"\n')
    done = run_cli("check", str(small_run), "--profile", str(profile))
    assert done.returncode == 4 and "capacity unknown" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(("text", "words"), [
    ('[[workload]]\nvalues = "randread read"\nlatency = "<= 2ms"\n', "latency: not a metric"),
    ('[[workload]]\nvalues = "randread read"\np99 = "<= 2ms per TB"\n', "a latency is not per TB"),
    ('[[workload]]\nvalues = "randread read"\niops = 5\n', "5 is not a limit"),
    ('colour = "red"\n', "unknown key 'colour'"),
    ('waf_max = 0.5\n', "is not a write amplification"),
    ('name = "empty"\n', "no targets"),
])
def test_a_bad_profile_is_one_error_line(qual_run: Path, tmp_path: Path, text: str, words: str) -> None:
    done = run_cli("check", str(qual_run), "--profile", str(_profile(tmp_path, text)))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and words in done.stderr, done.stderr


def test_the_example_profile_reads(qual_run: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "qualify-datacenter-nvme.toml"
    done = run_cli("check", str(qual_run), "--profile", str(example))
    assert done.returncode in (1, 4) and "Profile example datacenter NVMe (illustrative numbers)" in done.stdout
    assert "qual/randread read p99.99" in done.stdout and "per TB x" in done.stdout


def test_the_drive_s_latency_monitor_is_read_around_each_case_and_judged(
        tmp_path: Path, fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest) -> None:
    """A loop device taken for an NVMe namespace (fio writes it for real); the drive's logs come from the nvme
    stand-in: its C3h bucket 3 counts two more reads and one more write over the case."""
    device = request.getfixturevalue("nvme_loop")
    smart, ocp = _counter_files(tmp_path, (1_000, 1_003), (5 * 10**9, 5 * 10**9 + 10**6))
    monitors = []
    for index, counts in enumerate(({"3": (5, 1, 0)}, {"3": (7, 2, 0)})):
        monitors.append(tmp_path / f"c3-{index}.bin")
        monitors[-1].write_bytes(c3h_page(counts))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart)
    monkeypatch.setenv("FAKE_NVME_OCP_LOG", ocp)
    monkeypatch.setenv("FAKE_NVME_LATENCY_LOG", ":".join(str(path) for path in monitors))
    store = _run_on(device, tmp_path / "with")
    monitor_argv = ["nvme", "get-log", "/dev/nvme0", "--log-id=0xc3", "--log-len=512", "--raw-binary"]
    assert fakebin().count(monitor_argv) == 2  # before and after the case
    [stored] = json.loads(next(store.root.glob("cases/*/result.json")).read_text())["telemetry"]
    assert stored["after"]["latency_monitor_thresholds_ms"] == [5, 10, 20, 50]
    assert stored["change"]["latency_monitor"]["3"] == {"read": 2, "write": 1, "trim": 0}
    profile = _profile(tmp_path, 'latency_monitor_max = {"2" = 0, "3" = 0}\n')
    done = run_cli("check", str(store.root), "--profile", str(profile))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if "OCP C3h" in line]
    assert "bucket 2 <= 0" in lines[0] and " 0 commands " in lines[0] and " pass " in lines[0]
    assert "bucket 3 <= 0" in lines[1] and " 3 commands " in lines[1] and " FAIL " in lines[1]
    assert "read 2, write 1, trim 0" in lines[1]
    # under which configuration (feature C5h's settings, as the C3h log reports them) the counts were taken
    under = ("under: monitor enabled (feature status 0x1), thresholds A-D 5, 10, 20, 50 ms, bucket timer threshold "
             "60 min")
    assert under in " ".join(" ".join(lines).split()), done.stdout
    assert stored["change"]["latency_monitor_config"] == {
        "feature_status": 1, "enabled": True, "bucket_timer_threshold_min": 60, "thresholds_ms": [5, 10, 20, 50],
        "latency_config": 0xFFF, "minimum_window_ms": 1000}
    # the host's own latencies of the case (fio's bins): the drive counted IOs at or above 50 ms the host did not
    from ptsbench.fio.output import parse_jobs

    fio_json = json.loads(next(store.root.glob("cases/*/fio.json")).read_text())
    slow = {one.direction: sum(n for value, n in one.lat.bins.items() if value >= 50e6)
            for job in parse_jobs(fio_json) for one in job.directions}
    assert slow.get("read", 0) < 2 and slow.get("write", 0) < 1, "the premise: no loop-device IO took 50 ms"
    said = " ".join(" ".join(lines[1:]).split())
    assert (f"the drive counted 2 read(s) at or above 50 ms (bucket 3 and up), the host {slow.get('read', 0)}: "
            "the drive saw latencies the host did not") in said, done.stdout
    # the case's section of the report says it too, at the longest latency where they differ
    from ptsbench.report.build import load_report

    [shown] = [text for section in load_report(store.root).sections for block in section.blocks
               if (text := getattr(block, "text", "")).startswith("The drive's latency monitor (OCP C3h)")]
    assert (f"and the host differ over the case: the drive counted 2 read(s) at or above 50 ms (bucket 3 and up), "
            f"the host {slow.get('read', 0)}: the drive saw latencies the host did not; the drive counted 1 write(s) "
            "at or above 50 ms") in shown, shown
    allowed = run_cli("check", str(store.root), "--profile",
                      str(_profile(tmp_path, 'latency_monitor_max = {"3" = 3}\n')))
    assert allowed.returncode == 0, allowed.stdout

    monkeypatch.delenv("FAKE_NVME_LATENCY_LOG")  # a drive without the log (QEMU's OCP controller has C0h only)
    store = _run_on(device, tmp_path / "without")
    done = run_cli("check", str(store.root), "--profile", str(profile))
    assert done.returncode == 4 and "NOT MEASURED" in done.stdout, done.stdout
    assert "no OCP C3h latency monitor log: `nvme get-log /dev/nvme0 --log-id=0xc3 --log-len=512 --raw-binary`: " \
        "nvme exited with status 1: NVMe status: Invalid Log Page" in " ".join(
        done.stdout.split())


def test_a_monitor_not_enabled_or_set_anew_gives_no_increase() -> None:
    """Feature status bit 0 clear (the Latency Monitor Feature Enable of C5h off): its counters count nothing, so
    a span's unchanged counters are no evidence of fast commands; thresholds changed between the readings (C5h set
    during the span): the counts mix two configurations. Neither gives an increase; the note says why."""
    from ptsbench.device.latency_monitor import monitor_change, read_latency_monitor

    def reading(page: bytes) -> dict[str, object]:
        return read_latency_monitor("/dev/nvme0", lambda _argv: (page, None, 0))

    enabled = reading(c3h_page({"3": (1, 0, 0)}))
    assert monitor_change(enabled, reading(c3h_page({"3": (2, 0, 0)})))["latency_monitor"]["3"]["read"] == 1
    off = reading(c3h_page({}, status=6))
    change = monitor_change(off, off)
    assert change["latency_monitor"] is None and change["latency_monitor_config"]["enabled"] is False
    assert change["latency_monitor_note"].startswith("the drive's latency monitor is not enabled (monitor NOT "
                                                     "enabled (feature status 0x6), thresholds A-D 5, 10, 20, 50 ms")
    moved = monitor_change(enabled, reading(c3h_page({"3": (2, 0, 0)}, thresholds_ms=(5, 10, 20, 100))))
    assert moved["latency_monitor"] is None and "set anew during the span" in moved["latency_monitor_note"]
    assert "after: monitor enabled (feature status 0x1), thresholds A-D 5, 10, 20, 100 ms" in \
        moved["latency_monitor_note"]


def test_a_pts_phase_s_rounds_are_set_beside_the_host_s_histograms(qual_run: Path) -> None:
    """A PTS phase: the drive's counts over its rounds added up, beside the host's counts each round stored
    (round.json telemetry.monitor_host, as host_beside_monitor makes it from the round's fio jobs), a line per
    bucket whatever they say; a round whose monitor counted under other thresholds is left out, and said; a round
    that stored no host counts is not added. (The host's side: the json+ bins of a real fio run, the qualification
    run's two jobs of 16,000 IOs each; threshold A at 0 ms takes every IO.)"""
    from ptsbench.catalog.monitor_host import host_beside_monitor, phase_beside_host
    from ptsbench.fio.output import parse_jobs

    (case_dir,) = qual_run.glob("cases/*")
    jobs = parse_jobs(json.loads((case_dir / "fio.json").read_text()))

    def round_record(thresholds_ms: list[int], counts: dict[str, tuple[int, int, int]]) -> dict[str, object]:
        change = {"latency_monitor": {bucket: dict(zip(("read", "write", "trim"), counts.get(bucket, (0, 0, 0)),
                                                       strict=True)) for bucket in "0123"}}
        after = {"latency_monitor_thresholds_ms": thresholds_ms}
        return {"telemetry": {"after": after, "change": change,
                              "monitor_host": host_beside_monitor(jobs, change, after)}}

    said = phase_beside_host([round_record([0, 5, 10, 20], {"0": (10, 20, 0), "3": (1, 0, 0)}),
                              round_record([0, 5, 10, 20], {"0": (5, 0, 0)}),
                              {"telemetry": {"after": {}, "change": {"latency_monitor": None}, "monitor_host": None}},
                              round_record([0, 5, 10, 50], {"0": (99, 0, 0)})])
    assert said["0"][0] == ("beside the host at or above 0 ms (bucket 0 and up): the drive counted read 16, write 20, "
                            "trim 0; the host's fio latency histogram read 32,000, write 32,000, trim 0 (2 round(s) "
                            "added up)")
    assert said["0"][-1] == "1 round(s) under other thresholds left out"
    # a round whose host timed IOs the drive did not count at its threshold: latency outside the drive (a threshold
    # of 0 ms, which no drive's log can hold, takes every IO of the real fio run)
    from ptsbench.catalog.monitor_host import round_disagreements

    assert ("the host saw 16,000 write(s) at or above 0 ms, the drive counted 0 (bucket 0 and up): latency outside "
            "the drive") in round_disagreements(round_record([0, 5, 10, 20], {"0": (5, 0, 0)}))["0"]
    from ptsbench.catalog.monitor_host import host_slower_counts

    slow = host_slower_counts(case_dir / "fio.json", [20e6])
    assert slow is not None
    assert said["3"] == [f"beside the host at or above 20 ms (bucket 3 and up): the drive counted read 1, write 0, "
                         f"trim 0; the host's fio latency histogram read {2 * slow['read'][0]:,}, write "
                         f"{2 * slow['write'][0]:,}, trim 0 (2 round(s) added up)"]
    assert phase_beside_host([{"telemetry": {"after": {}, "change": {}}}, {}]) == {}


def test_a_file_has_no_latency_monitor_to_judge(qual_run: Path, tmp_path: Path) -> None:
    done = run_cli("check", str(qual_run), "--profile", str(_profile(tmp_path, 'latency_monitor_max = {"3" = 0}\n')))
    assert done.returncode == 4 and "no device was read" in done.stdout, done.stdout


def test_pts_window_percentiles_count_every_window_round_s_ios(run_lab: Lab) -> None:
    """A PTS value's percentiles are merged from the bins of all its window rounds: the IOs behind them are the
    rounds' IOs added up, and the gate table shows them."""
    from ptsbench.report.pts.views import load_context

    store = RunStore.open(run_lab.pts)
    checked = 0
    for view in load_context(store)[1]:
        if view.result is None or not view.rounds:
            continue
        rounds = view.window_rounds()
        for cell, found in view.values().items():
            if found.get("lat_n"):
                assert found["lat_n"] == sum(r["cells"][cell]["total"]["lat_n"] for r in rounds), cell
                assert set(found["lat_beyond"]) == set(found["lat_percentiles_ns"])
                checked += 1
    assert checked
    (p99,) = [v for v in run_values(store) if v.name == "IOPS: rnd 4k 0/100 p99"]
    assert p99.samples and p99.beyond is not None and p99.beyond <= p99.samples
    done = run_cli("check", str(run_lab.pts), "--gate", "IOPS: rnd 4k 0/100 p99 <= 10s")
    assert f"{p99.samples:,} IOs, {p99.beyond:,} beyond" in done.stdout, done.stdout
    # PTS asks fio for six nines too: a target on p99.9999 is judged from the window's merged bins, and with fewer
    # than 10 IOs beyond it (10 million IOs are needed) it is NOT MEASURED, never passed
    (deep,) = [v for v in run_values(store) if v.name == "IOPS: rnd 4k 0/100 p99.9999"]
    assert deep.samples == p99.samples and deep.beyond is not None and deep.beyond < 10 and not deep.measured()
    profile = run_lab.folder / "six-nines.toml"
    profile.write_text('[[workload]]\nvalues = "IOPS: rnd 4k 0/100"\n"p99.9999" = "<= 10s"\n')
    done = run_cli("check", str(run_lab.pts), "--profile", str(profile))
    assert done.returncode == 4 and "0 passed, 0 failed, 1 not measured" in done.stdout, done.stdout
    assert f"{deep.samples:,} IOs, {deep.beyond:,} beyond" in done.stdout


def test_the_catalog_keeps_each_percentile_s_evidence(small_run: Path, tmp_path: Path) -> None:
    """`catalog values` gives samples and beyond beside each percentile; a catalog made before those columns gets
    them when opened, and a rebuild fills them."""
    import sqlite3

    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as connection:  # the schema before this change (run_values without the evidence)
        connection.executescript(
            "CREATE TABLE runs (path VARCHAR(1024) PRIMARY KEY, manifest_mtime_ns BIGINT NOT NULL, kind VARCHAR(255),"
            " name VARCHAR(255), status VARCHAR(255), created_utc VARCHAR(255), finished_utc VARCHAR(255),"
            " model VARCHAR(255), serial VARCHAR(255), firmware VARCHAR(255), capacity_bytes BIGINT,"
            " transport VARCHAR(255), host VARCHAR(255), ptsbench_version VARCHAR(255), fio_version VARCHAR(255),"
            " profile VARCHAR(255), tests TEXT, compliant BOOLEAN, report VARCHAR(1024));"
            "CREATE TABLE tags (path VARCHAR(1024) REFERENCES runs(path), tag VARCHAR(255), PRIMARY KEY (path, tag));"
            "CREATE TABLE run_values (path VARCHAR(1024) REFERENCES runs(path), name VARCHAR(512),"
            " quantity VARCHAR(8) NOT NULL, value FLOAT NOT NULL, noise FLOAT, PRIMARY KEY (path, name));")
    done = run_cli("catalog", "update", str(small_run), "--db", str(old))
    assert done.returncode == 0, done.stderr
    found = run_cli("catalog", "values", "p99.99", "--db", str(old), "--format", "json")
    assert found.returncode == 0, found.stderr
    (row,) = json.loads(found.stdout)
    assert row["name"] == "small/small read p99.99" and (row["samples"], row["beyond"]) == (2000, 0)
    table = run_cli("catalog", "values", "p99", "--db", str(old), env={"COLUMNS": "300"})
    assert "samples" in table.stdout and "beyond" in table.stdout and "2000" in table.stdout.replace(",", "")


def test_throttling_and_media_errors_over_a_case_are_judged(
        tmp_path: Path, fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest) -> None:
    """The drive's SMART log (nvme stand-in) says it entered thermal management once during the case and counted no
    new media error: the throttling line fails, the media-error line passes; a file has neither counter."""
    device = request.getfixturevalue("nvme_loop")
    smart, ocp = _counter_files(tmp_path, (1_000, 1_003), (5 * 10**9, 5 * 10**9 + 10**6))
    before, after = (Path(path) for path in smart.split(":"))
    counted = json.loads(before.read_text())["num_err_log_entries"]
    after.write_text(json.dumps({**json.loads(after.read_text()), "thm_temp1_trans_count": 1,
                                 "num_err_log_entries": counted + 3}))
    # the error log as nvme-cli 2.x prints it (status without its phase tag bit): an old entry, an empty slot, then
    # two new ones; the SMART log counted three new errors, one of which the log no longer holds
    old = {"error_count": 7, "sqid": 2, "cmdid": 0x11, "status_field": 0x4002, "phase_tag": 0,
           "parm_error_location": 0xFFFF, "lba": 0, "nsid": 1, "vs": 0, "trtype": 0, "csi": 0, "opcode": 6}
    empty = {**old, "error_count": 0, "status_field": 0}
    read_error = {**old, "error_count": 9, "sqid": 3, "cmdid": 0x2A, "status_field": 0x281, "lba": 123_456,
                  "opcode": 2}
    write_fault = {**old, "error_count": 10, "sqid": 1, "cmdid": 0x2B, "status_field": 0x4280, "lba": 99, "opcode": 1}
    logs = [tmp_path / "errors-before.json", tmp_path / "errors-after.json"]
    logs[0].write_text(json.dumps({"errors": [old, empty]}))
    logs[1].write_text(json.dumps({"errors": [write_fault, read_error, old, empty]}))
    monkeypatch.setenv("FAKE_NVME_ERROR_LOG", ":".join(str(path) for path in logs))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart)
    monkeypatch.setenv("FAKE_NVME_OCP_LOG", ocp)
    store = _run_on(device, tmp_path / "hot")
    from ptsbench.cases.records import load_records
    from ptsbench.cli.health import health_lines

    [stored] = json.loads(next(store.root.glob("cases/*/result.json")).read_text())["telemetry"]
    assert [entry["error_count"] for entry in stored["change"]["error_log_new"]] == [9, 10]  # the old one left out
    assert stored["change"]["error_log_new"][0] == {
        "error_count": 9, "sqid": 3, "cmdid": 0x2A, "status_field": 0x281, "status": 0x281,
        "parm_error_location": 0xFFFF, "lba": 123_456, "nsid": 1, "opcode": 2, "trtype": 0, "vs": 0}
    lines = health_lines(load_records(store))  # what run, quick and sweep print at their end, each entry in words
    assert lines[0] == f"ptsbench: write: {device}: THERMAL THROTTLING during the case; 3 new error log entries"
    assert f"ptsbench: write: {device}: error 9, status 0x0281 (media and data integrity error: unrecovered read " \
           "error), LBA 123,456, namespace 1, opcode 0x02, command id 0x002a, queue 3" in lines, lines
    assert f"ptsbench: write: {device}: error 10, status 0x4280 (media and data integrity error: write fault, do " \
           "not retry), LBA 99, namespace 1, opcode 0x01, command id 0x002b, queue 1" in lines
    assert f"ptsbench: write: {device}: 1 more error(s) counted by the SMART log are no longer in the error log " \
           "(the drive keeps only its last entries)" in lines
    from ptsbench.report.build import load_report

    said = [text for section in load_report(store.root).sections for block in section.blocks
            if (text := getattr(block, "text", "")).startswith("The drive's error log")]
    words = [line.removeprefix(f"ptsbench: write: {device}: ") for line in lines[1:]]
    assert said == [f"The drive's error log ({device}) gained entries during the case: {'; '.join(words)}."]
    profile = _profile(tmp_path, "no_throttling = true\nno_media_errors = true\n")
    done = run_cli("check", str(store.root), "--profile", str(profile))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any("no thermal throttling" in line and "throttled in 1 of 1" in line and " FAIL " in line
               for line in lines), done.stdout
    assert any("no new media errors" in line and " 0 new " in line and " pass " in line for line in lines)
    on_file = run_cli("check", str(request.getfixturevalue("qual_run")), "--profile", str(profile))
    assert on_file.returncode == 4 and "reported no such counter" in on_file.stdout, on_file.stdout


@pytest.mark.parametrize(("events", "status"), [((0, 2), 0), ((0, 0), 1)])
def test_the_ocp_logs_throttling_over_a_case_is_judged(
        tmp_path: Path, fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest, events: tuple[int, int], status: int) -> None:
    """The SMART log's thermal counters stay; the OCP C0h log (nvme stand-in) counts two new throttling events, or
    says the drive is throttling at the case's end: the case throttled, and no_throttling fails."""
    device = request.getfixturevalue("nvme_loop")
    smart, ocp = _counter_files(tmp_path, (1_000, 1_003), (5 * 10**9, 5 * 10**9 + 10**6))
    for path, count, now in zip(ocp.split(":"), events, (0, status), strict=True):
        Path(path).write_text(json.dumps({**json.loads(Path(path).read_text()),
                                          "Number of Thermal throttling events": count,
                                          "Current throttling status": now}))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart)
    monkeypatch.setenv("FAKE_NVME_OCP_LOG", ocp)
    store = _run_on(device, tmp_path / "hot")
    from ptsbench.cases.records import load_records

    (record,) = load_records(store)
    (change,) = [entry["change"] for entry in record.telemetry]
    assert change["thm_temp1_trans_count"] == 0 and change["warning_temp_time_min"] == 0  # SMART: nothing
    assert (change["ocp_throttle_events"], change["ocp_throttle_status_end"]) == (events[1], status)
    assert change["throttled"] is True
    from ptsbench.cli.health import health_lines

    assert health_lines([record]) == [f"ptsbench: {record.name}: {record.telemetry[0]['device']}: THERMAL THROTTLING "
                                      "during the case"]
    profile = _profile(tmp_path, "no_throttling = true\n")
    done = run_cli("check", str(store.root), "--profile", str(profile))
    assert done.returncode == 1 and any("no thermal throttling" in line and "throttled in 1 of 1" in line
                                        for line in done.stdout.splitlines()), done.stdout
