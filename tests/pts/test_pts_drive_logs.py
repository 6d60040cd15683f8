"""The drive's own logs per PTS round (report/pts/drive_logs.py): its OCP C3h latency monitor read after each round
and set beside the host's latencies of that round (stored in round.json, shown in the report, `show`, the live line
and `check --profile`, which also adds a phase's rounds up), and its NVMe error log's new entries. Real fio rounds
(HIR on a file, null engine) taken for an NVMe namespace; the drive's logs come from the nvme stand-in (no drive or
QEMU here has the C3h log)."""

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from ocp_pages import c3h_page
from ptsbench.catalog.monitor_host import round_disagreements
from ptsbench.device.userfile import mark_made
from ptsbench.fio.output import parse_jobs
from ptsbench.pts.live import telemetry_line
from test_pts_advanced_engine import DATA, _api_run
from test_pts_engine import Recorder, fio_doc, rounds_of

NVME: dict[str, object] = {"transport": "nvme", "disk": "/dev/nvme0n1", "nvme_controller": "/dev/nvme0"}
BASELINE, WAIT = "Host idle recovery: steady state (baseline)", "Host idle recovery: wait state 0.1 s"
OLD = {"error_count": 8, "sqid": 2, "cmdid": 0x11, "status_field": 0x4002, "phase_tag": 0,
       "parm_error_location": 0xFFFF, "lba": 0, "nsid": 1, "vs": 0, "trtype": 0, "csi": 0, "opcode": 6}
READ_ERROR = {**OLD, "error_count": 9, "sqid": 3, "cmdid": 0x2A, "status_field": 0x281, "lba": 123_456, "opcode": 2}


def _serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, docs: list[Any]) -> None:
    """The stand-in serves these documents (or log pages' bytes) one per reading (the last from then on)."""
    paths = []
    for index, doc in enumerate(docs):
        paths.append(tmp_path / f"{variable}-{index}.json")
        if isinstance(doc, bytes):
            paths[-1].write_bytes(doc)
        else:
            paths[-1].write_text(json.dumps(doc))
    monkeypatch.setenv(variable, ":".join(map(str, paths)))


def _slower(run_dir: Path, phase: str, number: int, direction: str, threshold_ns: float) -> int:
    """The round's IOs of a direction at or above a latency, counted here in its fio.json's bins."""
    return sum(n for job in parse_jobs(fio_doc(run_dir, phase, number)) for one in job.directions
               if one.direction == direction for value, n in one.lat.bins.items() if value >= threshold_ns)


def test_each_round_sets_the_drive_s_latency_monitor_beside_the_host_and_names_new_errors(
        tmp_path: Path, fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Four readings (before round 1, after each of the three rounds). Round 1: the drive counts 1,000 reads of
    50 ms and more, HIR issues writes only: the drive saw latencies the host did not. Round 2: the monitor was set
    anew (thresholds 5, 10, 20, 50 -> 10, 20, 50, 100 ms): not compared, said why; the error log gains entries 9
    and 10. Round 3: the drive counts nothing; the host's writes at or above 10 ms, if a busy host made any, are
    latency outside the drive (a drive's thresholds start at 5 ms: the host's stack rarely reaches them here)."""
    # the SMART log's host data units and the OCP C0h log's media bytes per reading: write amplification 1.2 in
    # the baseline's rounds, 2.0 in the wait state's
    smart, ocp = json.loads((DATA / "nvme-cli-2.x-smart-log.json").read_text()), \
        json.loads((DATA / "nvme-cli-2.x-ocp-smart-add-log.json").read_text())
    media = [5 * 10**9 + sum(factor * 10 * 512_000 for factor in (1.2, 1.2, 2.0)[:n]) for n in range(4)]
    _serve(tmp_path, monkeypatch, "FAKE_NVME_SMART_LOG",
           [{**smart, "data_units_written": 1_000 + 10 * n} for n in range(4)])
    _serve(tmp_path, monkeypatch, "FAKE_NVME_OCP_LOG",
           [{**ocp, "Physical media units written": {"hi": 0, "lo": int(bytes_)}} for bytes_ in media])
    later = (10, 20, 50, 100)
    _serve(tmp_path, monkeypatch, "FAKE_NVME_LATENCY_LOG", [
        c3h_page({}), c3h_page({"3": (1000, 0, 0)}), c3h_page({"3": (1000, 0, 0)}, later)])
    write_fault = {**OLD, "error_count": 10, "status_field": 0x4280, "lba": 99, "opcode": 1}
    _serve(tmp_path, monkeypatch, "FAKE_NVME_ERROR_LOG", [
        {"errors": [OLD]}, {"errors": [OLD]}, {"errors": [write_fault, READ_ERROR, OLD]}])
    root = _api_run(tmp_path, NVME)
    first, second = rounds_of(root, "hir-ss")
    [third] = rounds_of(root, "hir-w0.1s")
    assert fakebin().count(["nvme", "get-log", "/dev/nvme0", "--log-id=0xc3", "--log-len=512", "--raw-binary"]) == 4
    # keep (nothing asked): the run directory keeps no request for a resume, and nothing was sent
    assert json.loads((root / "manifest.json").read_text())["latency_monitor_request"] is None
    assert not [argv for argv in fakebin() if argv[:2] == ["nvme", "set-feature"]]

    # stored per round: the host's IOs at or above each threshold beside the drive's increase
    stored = first["telemetry"]["monitor_host"]
    assert stored["thresholds_ms"] == [5, 10, 20, 50] and stored["read"] == [0, 0, 0, 0]
    assert stored["write"] == [_slower(root, "hir-ss", 1, "write", ms * 1e6) for ms in (5, 10, 20, 50)]
    assert first["telemetry"]["change"]["latency_monitor"]["3"] == {"read": 1000, "write": 0, "trim": 0}
    assert round_disagreements(first)["3"][0] == ("the drive counted 1,000 read(s) at or above 50 ms (bucket 3 and "
                                                  "up), the host 0: the drive saw latencies the host did not")
    assert second["telemetry"]["monitor_host"] is None
    assert "set anew during the span" in second["telemetry"]["change"]["latency_monitor_note"]
    writes = _slower(root, "hir-w0.1s", 1, "write", 10e6)
    outside = [f"the host saw {writes:,} write(s) at or above 10 ms, the drive counted 0 (bucket 0 and up): latency "
               "outside the drive"]
    assert third["telemetry"]["monitor_host"]["write"][0] == writes
    assert round_disagreements(third).get("0", []) == (outside if writes else [])
    assert [entry["error_count"] for entry in second["telemetry"]["change"]["error_log_new"]] == [9, 10]
    # the live line after each round
    assert "C3h LATENCY MONITOR AND HOST DIFFER" in telemetry_line(first)
    assert "2 NEW ERROR LOG ENTRIES" in telemetry_line(second) and "DIFFER" not in telemetry_line(second)

    # `show` (the report's tables and lines): the sums per bucket, each round that differs named, the error entries
    shown = run_cli("show", str(root), env={"COLUMNS": "400"})
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "Drive latency monitor (OCP C3h) beside the host" in text
    assert (f"Latency monitor and host differ: {BASELINE}, round 1: the drive counted 1,000 read(s) at or above 50 "
            "ms (bucket 3 and up), the host 0: the drive saw latencies the host did not") in text
    assert (f"Latency monitor and host differ: {WAIT}, round 1: the host saw " in text) == (writes > 0)
    assert "Latency monitor (OCP C3h) not compared in 1 round(s): the latency monitor was set anew" in text
    assert (f"The drive's error log (/dev/nvme0) gained entries during {BASELINE} round 2: error 9, status 0x0281 "
            "(media and data integrity error: unrecovered read error), LBA 123,456, namespace 1, opcode 0x02, "
            "command id 0x002a, queue 3; error 10, status 0x4280") in text
    assert "NVMe error log: no new entries in 2 round(s) read before and after." in text
    rows = [line.split() for line in shown.stdout.splitlines() if "3 (at or above 50 ms)" in line]
    assert [row[-6:-4] for row in rows if " ".join(row).startswith(BASELINE)] == [["1,000", "0"]], shown.stdout

    # the HTML report holds the same table and lines (the report model `show` prints)
    assert run_cli("report", str(root)).returncode == 0
    page = " ".join(html.unescape((root / "report" / "index.html").read_text()).split())
    assert "Drive latency monitor (OCP C3h) beside the host" in page
    assert f"Latency monitor and host differ: {BASELINE}, round 1: the drive counted 1,000 read(s)" in page
    assert f"The drive's error log (/dev/nvme0) gained entries during {BASELINE} round 2: error 9" in page

    # a profile's monitor line names the round; the baseline phase, one of whose rounds gave no increase, is not
    # measured
    profile = tmp_path / "profile.toml"
    profile.write_text('latency_monitor_max = {"0" = 0}\n')
    done = run_cli("check", str(root), "--profile", str(profile))
    assert done.returncode == 4, done.stdout + done.stderr
    judged = " ".join(done.stdout.split())
    assert (f"round 1: {outside[0]}" in judged) == (writes > 0) and "set anew" in judged
    # ... after the phase's line setting its rounds' stored counts side by side, whatever they say
    assert (f"beside the host at or above 10 ms (bucket 0 and up): the drive counted read 0, write 0, trim 0; the "
            f"host's fio latency histogram read 0, write {writes:,}, trim 0 (1 round(s) added up)") in judged, \
        done.stdout
    # the profile's other run-wide targets on the same run: compliance (a shortened run is not) and the write
    # amplification ceiling per phase
    profile.write_text("compliant = true\nwaf_max = 1.5\n")
    done = run_cli("check", str(root), "--profile", str(profile), env={"COLUMNS": "300"})
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert any("PTS-compliant" in line and " FAIL " in line for line in lines), done.stdout
    assert any(line.startswith(f"write amplification <= 1.5 {BASELINE} 1.200 ") and " pass " in line
               for line in lines), done.stdout
    assert any(line.startswith(f"write amplification <= 1.5 {WAIT} 2.000 ") and " FAIL " in line
               for line in lines), done.stdout


def test_a_drive_without_the_logs_is_said_once(tmp_path: Path, fakebin: Callable[[], list[list[str]]],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(DATA / "nvme-cli-2.x-smart-log.json"))
    root = _api_run(tmp_path, NVME)
    shown = run_cli("show", str(root), env={"COLUMNS": "400"})
    assert shown.returncode == 0, shown.stderr
    lines = [" ".join(line.split()) for line in shown.stdout.splitlines()]
    monitor = [line for line in lines if line.startswith("Latency monitor (OCP C3h)")]
    assert monitor == ["Latency monitor (OCP C3h) not compared in 3 round(s): no OCP C3h latency monitor log: `nvme "
                       "get-log /dev/nvme0 --log-id=0xc3 --log-len=512 --raw-binary`: nvme exited with status 1: "
                       "NVMe status: Invalid Log Page: The log page indicated is invalid(0x4109)."]
    errors = [line for line in lines if line.startswith("NVMe error log")]
    assert errors == ["NVMe error log not read in 3 round(s): no NVMe error log: `nvme error-log /dev/nvme0 -o "
                      "json`: nvme printed no JSON."]
    assert "Drive latency monitor (OCP C3h) beside the host" not in shown.stdout


class StoppedAfterRound1(Recorder):
    """The run stops as a kill leaves it, just after round 1 was stored (a KeyboardInterrupt: this process goes
    on to be the test)."""

    def round_finished(self, progress: Any, record: Any) -> None:
        super().round_finished(progress, record)
        if record["round"] == 1:
            raise KeyboardInterrupt


def test_a_resumed_run_sets_the_latency_monitor_again_and_compares_on(
        tmp_path: Path, fakebin: Callable[[], list[list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """`--latency-monitor 5,10,20,50` asked: the run directory keeps the request, and `ptsbench resume` (a new
    process, nothing asked on its command line) sends feature C5h again before its first reading, as the run asked;
    each round it runs stores that setting in force and its monitor beside the host's latencies, as before."""
    from ptsbench.device.latency_monitor import BUCKET_TIMER_MAX_MIN, MonitorSetting, request_setting

    setting = MonitorSetting((5, 10, 20, 50))
    page = tmp_path / "c3h.bin"
    page.write_bytes(c3h_page({"3": (0, 2, 0)}, timer_threshold_min=BUCKET_TIMER_MAX_MIN))
    monkeypatch.setenv("FAKE_NVME_SMART_LOG", str(DATA / "nvme-cli-2.x-smart-log.json"))
    monkeypatch.setenv("FAKE_NVME_LATENCY_LOG", str(page))
    request_setting(setting)
    try:
        with pytest.raises(KeyboardInterrupt):
            _api_run(tmp_path, NVME, StoppedAfterRound1())
    finally:
        request_setting(None)  # that process is gone

    def sets() -> int:
        return sum(argv[:2] == ["nvme", "set-feature"] and "--feature-id=0xc5" in argv for argv in fakebin())

    root = tmp_path / "run"
    assert sets() == 1 and len(rounds_of(root, "hir-ss")) == 1
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["latency_monitor_request"] == {"thresholds_ms": [5, 10, 20, 50]}
    with open(manifest["target_info"]["path"], "wb") as scratch:  # the null engine made no file; a resume checks it
        scratch.truncate(manifest["target_info"]["size_bytes"])
    mark_made([manifest["target_info"]["path"]], manifest["file_identity"]["token"])  # as the run's fio made it
    done = run_cli("resume", str(root))
    assert done.returncode == 0, done.stderr
    assert sets() == 2  # set again, once, by the resume
    first, second = rounds_of(root, "hir-ss")
    for record in (second, *rounds_of(root, "hir-w0.1s")):  # the rounds the resume ran
        telemetry = record["telemetry"]
        assert telemetry["before"]["latency_monitor_set"] == {**setting.stored(), "note": None}
        assert telemetry["change"]["latency_monitor"] == {bucket: {"read": 0, "write": 0, "trim": 0}
                                                           for bucket in "0123"}
        assert telemetry["monitor_host"]["thresholds_ms"] == [5, 10, 20, 50]
    assert first["telemetry"]["monitor_host"]["thresholds_ms"] == [5, 10, 20, 50]
