"""Write amplification per case (device/case_telemetry.py): a case that writes an NVMe namespace reads its counters
before and after it (the nvme stand-in on PATH, as in test_waf.py), stores them with its result, and `show` and the
report give the ratio with its source; cases on files and loop devices run no tool and show no such column."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ocp_pages import c3h_page
from ptsbench.cases.plan import Overrides, plan_cases
from ptsbench.cases.schedule import run_cases
from ptsbench.device import case_telemetry
from ptsbench.device.target import resolve_target
from ptsbench.device.waf import FDP_HOST_COUNTER, FDP_SOURCE, HOST_UNIT_BYTES, NOT_REPORTED, OCP_SOURCE
from ptsbench.report.cases.report import results_table, waf_blocks, waf_table_blocks
from ptsbench.report.cases.tables import result_rows
from ptsbench.store import RunStore

DATA = Path(__file__).parents[1] / "data" / "telemetry"
WRITE_JOB = "[w]\nioengine=psync\nrw=write\nbs=64k\nsize=1m\n"
Calls = Callable[[], list[list[str]]]


def _counter_files(tmp_path: Path, host_units: tuple[int, int], media: tuple[int, int]) -> tuple[str, str]:
    """SMART and OCP logs for the reading before and after a case (nvme-cli 2.x's recorded output, counters set)."""
    smart, ocp = json.loads((DATA / "nvme-cli-2.x-smart-log.json").read_text()), \
        json.loads((DATA / "nvme-cli-2.x-ocp-smart-add-log.json").read_text())
    smart_paths, ocp_paths = [], []
    for index, (units, media_bytes) in enumerate(zip(host_units, media, strict=True)):
        smart_path, ocp_path = tmp_path / f"smart{index}.json", tmp_path / f"ocp{index}.json"
        smart_path.write_text(json.dumps({**smart, "data_units_written": units}))
        ocp_path.write_text(json.dumps({**ocp, "Physical media units written": {"hi": 0, "lo": media_bytes}}))
        smart_paths.append(str(smart_path))
        ocp_paths.append(str(ocp_path))
    return ":".join(smart_paths), ":".join(ocp_paths)


def _run_on(target_path: str, tmp_path: Path) -> RunStore:
    tmp_path.mkdir(exist_ok=True)
    job = tmp_path / "write.fio"
    job.write_text(WRITE_JOB)
    run_dir = tmp_path / "run"
    store = RunStore.create(run_dir, {"kind": "run", "name": "run"})
    cases = plan_cases([job], [resolve_target(target_path, 1024**2)], Overrides(), run_dir, 1000)
    [record] = run_cases(store, cases, parallel=False)
    assert record.status == "ok", record.message
    return store


@pytest.mark.parametrize("kind", ["file", "loop device"])
def test_cases_on_files_and_loop_devices_read_nothing(kind: str, tmp_path: Path, fakebin: Calls,
                                                      request: pytest.FixtureRequest,
                                                      cli: Callable[..., object]) -> None:
    target = str(tmp_path / "test.dat") if kind == "file" else request.getfixturevalue("loop_device")
    store = _run_on(target, tmp_path)
    assert fakebin() == []  # no nvme, no smartctl
    [result] = store.root.glob("cases/*/result.json")
    assert json.loads(result.read_text())["telemetry"] == []
    shown = cli("show", str(store.root), env={"COLUMNS": "300"})
    assert shown.returncode == 0, shown.stderr
    assert "WAF" not in shown.stdout and "amplification" not in shown.stdout
    from ptsbench.cases.records import load_records

    records = load_records(store)
    assert "write amplification" not in [column.name for column in results_table(result_rows(records)).columns]
    assert waf_blocks(result_rows(records)) == [] and waf_table_blocks(records) == []  # run and sweep reports: nothing


@pytest.fixture
def loop_as_nvme(loop_device: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A loop device the case runner takes for an NVMe namespace of controller /dev/nvme0 (no NVMe drive here):
    fio writes the loop device, the counters come from the nvme stand-in."""
    real = case_telemetry.target_facts

    def facts(target: object) -> dict[str, object]:
        return {**real(target), "transport": "nvme", "disk": loop_device, "nvme_controller": "/dev/nvme0"}  # type: ignore[arg-type]

    monkeypatch.setattr(case_telemetry, "target_facts", facts)
    return loop_device


def test_case_on_nvme_stores_and_shows_its_write_amplification(tmp_path: Path, fakebin: Calls, loop_as_nvme: str,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                cli: Callable[..., object]) -> None:
    smart, ocp = _counter_files(tmp_path, (1_000, 1_003), (5 * 10**9, 5 * 10**9 + 3 * HOST_UNIT_BYTES * 11 // 10))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart)
    monkeypatch.setenv("FAKE_NVME_OCP_LOG", ocp)
    store = _run_on(loop_as_nvme, tmp_path)
    reading = [["nvme", "smart-log", "/dev/nvme0", "-o", "json"],
               ["nvme", "ocp", "smart-add-log", "/dev/nvme0", "-o", "json"],
               ["nvme", "get-log", "/dev/nvme0", "--log-id=0xc3", "--log-len=512", "--raw-binary"],
               ["nvme", "error-log", "/dev/nvme0", "-o", "json"]]
    assert fakebin() == reading * 2  # before and after the case, nothing else
    [result] = store.root.glob("cases/*/result.json")
    [stored] = json.loads(result.read_text())["telemetry"]
    assert stored["device"] == loop_as_nvme
    waf = stored["change"]["waf"]
    assert waf["host_written_bytes"] == 3 * HOST_UNIT_BYTES and waf["media_written_bytes"] == 1_689_600
    assert waf["ratio"] == pytest.approx(1.1) and waf["source"] == OCP_SOURCE
    shown = cli("show", str(store.root), env={"COLUMNS": "300"})
    assert shown.returncode == 0, shown.stderr
    assert "WAF" in shown.stdout and f"1.10 ({OCP_SOURCE})" in shown.stdout
    assert "each case's host bytes are known to within one unit" in " ".join(shown.stdout.split())
    as_json = json.loads(cli("show", str(store.root), "--format", "json").stdout)
    assert [row["waf"] for row in as_json] == pytest.approx([1.1] * len(as_json))
    assert {row["waf_source"] for row in as_json} == {OCP_SOURCE}
    from ptsbench.cases.records import load_records

    table = results_table(result_rows(load_records(store)))
    names = [column.name for column in table.columns]
    assert table.rows[0][names.index("write amplification")] == pytest.approx(1.1)
    assert table.rows[0][names.index("WAF source")] == OCP_SOURCE
    sweep_table, line = waf_table_blocks(load_records(store))  # a sweep's report: a table per case (cell)
    assert sweep_table.rows == (("write", pytest.approx(1.1), OCP_SOURCE),)  # type: ignore[union-attr]
    assert line.text.startswith(f"Write amplification: media bytes written ({OCP_SOURCE})")  # type: ignore[union-attr]


def test_case_with_fdp_statistics_names_their_host_counter(tmp_path: Path, fakebin: Calls, loop_as_nvme: str,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            cli: Callable[..., object]) -> None:
    """A case on a drive with FDP statistics and no OCP log, 8 MiB written as QEMU 10 counted it (17 SMART units,
    8,388,608 bytes in the FDP log): the ratio is 1.00 from the FDP log's own host bytes, and `show` names that
    counter, not the SMART units (issue 41: WAF names its counter)."""
    smart, _ = _counter_files(tmp_path, (1_000, 1_017), (0, 0))
    stats = json.loads((DATA / "nvme-cli-2.x-fdp-stats.json").read_text())
    paths = []
    for index, added in enumerate((0, 8 * 1024**2)):
        path = tmp_path / f"fdp{index}.json"
        path.write_text(json.dumps({**stats, "hbmw": str(int(stats["hbmw"]) + added),
                                    "mbmw": str(int(stats["mbmw"]) + added)}))
        paths.append(str(path))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart)
    monkeypatch.setenv("FAKE_NVME_FDP_STATS", ":".join(paths))
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:ocp")
    store = _run_on(loop_as_nvme, tmp_path)
    [result] = store.root.glob("cases/*/result.json")
    waf = json.loads(result.read_text())["telemetry"][0]["change"]["waf"]
    assert (waf["ratio"], waf["source"], waf["host_counter"]) == (1.0, FDP_SOURCE, FDP_HOST_COUNTER)
    shown = " ".join(cli("show", str(store.root), env={"COLUMNS": "300"}).stdout.split())
    assert f"1.00 ({FDP_SOURCE})" in shown
    assert f"over host bytes written (the {FDP_HOST_COUNTER}, exact)." in shown and "512,000" not in shown


def test_case_under_one_host_unit_or_without_media_log_has_no_number(tmp_path: Path, fakebin: Calls,
                                                                       loop_as_nvme: str,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       cli: Callable[..., object]) -> None:
    smart, ocp = _counter_files(tmp_path, (1_000, 1_000), (5 * 10**9, 5 * 10**9 + 300_000))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart)
    monkeypatch.setenv("FAKE_NVME_OCP_LOG", ocp)
    store = _run_on(loop_as_nvme, tmp_path)
    [result] = store.root.glob("cases/*/result.json")
    waf = json.loads(result.read_text())["telemetry"][0]["change"]["waf"]
    assert waf["ratio"] is None and waf["host_written_bytes"] == 0
    assert waf["note"].startswith("the case wrote less than one host data unit (512,000 bytes)")
    shown = cli("show", str(store.root), env={"COLUMNS": "300"}).stdout
    assert "WAF" not in shown and "1 case(s) without a ratio" in " ".join(shown.split())

    monkeypatch.delenv("FAKE_NVME_OCP_LOG")  # a drive with neither log: said once, never a number
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart.split(":")[0])
    store = _run_on(loop_as_nvme, tmp_path / "neither")
    shown = " ".join(cli("show", str(store.root), env={"COLUMNS": "300"}).stdout.split())  # the note wraps
    assert "WAF" not in shown and shown.count(f"Write amplification: not available - {NOT_REPORTED}") == 1
    from ptsbench.cases.records import load_records

    rows = result_rows(load_records(store))
    assert [block.text for block in waf_blocks(rows)][0].startswith("Write amplification: not available")
    assert "write amplification" not in [column.name for column in results_table(rows).columns]



def test_back_to_back_cases_share_the_reading_between_them(tmp_path: Path, fakebin: Calls, loop_as_nvme: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Cases one after another on a namespace read the drive once between them: a case's reading at its end is the
    next case's at its start. A case on a file between them (it may write the drive through a file system), cases
    run at once (--parallel) and a reading that failed are read afresh."""
    units = (1_000, 1_003, 1_005, 1_009)
    smart, ocp = _counter_files(tmp_path, units, tuple(10**9 + count * HOST_UNIT_BYTES for count in (0, 3, 5, 10)))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart)
    monkeypatch.setenv("FAKE_NVME_OCP_LOG", ocp)
    jobs = [tmp_path / "write.fio", tmp_path / "again.fio"]
    for job in jobs:
        job.write_text(WRITE_JOB)
    reading = [["nvme", "smart-log", "/dev/nvme0", "-o", "json"],
               ["nvme", "ocp", "smart-add-log", "/dev/nvme0", "-o", "json"],
               ["nvme", "get-log", "/dev/nvme0", "--log-id=0xc3", "--log-len=512", "--raw-binary"],
               ["nvme", "error-log", "/dev/nvme0", "-o", "json"]]

    def run(name: str, targets: list[str], parallel: bool = False, repeat: int = 1, job_count: int = 1,
            ) -> list[list[dict[str, Any]]]:
        run_dir = tmp_path / name
        store = RunStore.create(run_dir, {"kind": "run", "name": name})
        cases = plan_cases(jobs[:job_count], [resolve_target(path, 1024**2) for path in targets], Overrides(),
                           run_dir, 1000, repeat=repeat)
        records = run_cases(store, cases, parallel)
        assert all(record.status == "ok" for record in records), [record.message for record in records]
        return [record.telemetry for record in records]

    first, second, third = run("repeat", [loop_as_nvme], repeat=3)
    assert fakebin() == reading * 4  # before the first case, then once after each
    assert second[0]["before"] == first[0]["after"] and third[0]["before"] == second[0]["after"]
    assert [case[0]["change"]["waf"]["ratio"] for case in (first, second, third)] == pytest.approx([1.0, 1.0, 1.25])
    calls = len(fakebin())
    telemetry = run("file-between", [loop_as_nvme, str(tmp_path / "f.dat")], job_count=2)  # loop, file, loop, file
    assert telemetry[1] == [] and len(fakebin()) - calls == len(reading) * 4  # each loop case read before and after
    calls = len(fakebin())
    run("parallel", [loop_as_nvme], parallel=True, repeat=2)
    assert len(fakebin()) - calls == len(reading) * 4
    monkeypatch.setenv("FAKEBIN_FAIL", "nvme:smart-log")
    calls = len(fakebin())
    failed = run("failed", [loop_as_nvme], repeat=2)
    assert fakebin()[calls:] == reading[:1] * 4 and failed[1][0]["before"]["note"].startswith("not available")


def test_a_case_configures_the_latency_monitor_once_before_its_first_reading(tmp_path: Path, fakebin: Calls,
                                                                           loop_as_nvme: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """--latency-monitor asked (request_setting): the controller is sent Set Features C5h once, after a reading of
    the C3h log and before the case's first reading; the reading stores what was asked, in force."""
    from ptsbench.device.latency_monitor import BUCKET_TIMER_MAX_MIN, MonitorSetting, request_setting

    (tmp_path / "c3.bin").write_bytes(c3h_page(timer_threshold_min=BUCKET_TIMER_MAX_MIN))
    smart, _ocp = _counter_files(tmp_path, (1_000, 1_003), (5 * 10**9, 5 * 10**9))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", smart)
    monkeypatch.setenv("FAKE_NVME_LATENCY_LOG", str(tmp_path / "c3.bin"))
    request_setting(MonitorSetting((5, 10, 20, 50)))
    try:
        store = _run_on(loop_as_nvme, tmp_path)
    finally:
        request_setting(None)
    calls = fakebin()
    sets = [index for index, argv in enumerate(calls) if argv[:2] == ["nvme", "set-feature"]]
    monitor = [index for index, argv in enumerate(calls) if "--log-id=0xc3" in argv]
    assert len(sets) == 1 and monitor[0] < sets[0] < monitor[1] and len(monitor) == 4, calls  # 2 to set, 1 each
    [stored] = json.loads(next(store.root.glob("cases/*/result.json")).read_text())["telemetry"]
    assert stored["before"]["latency_monitor_set"] == stored["after"]["latency_monitor_set"] == {
        "thresholds_ms": [5, 10, 20, 50], "bucket_timer_threshold_min": BUCKET_TIMER_MAX_MIN, "enable": 7,
        "note": None}
