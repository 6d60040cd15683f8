"""The FTL lab's OCP latency monitor check (part of `ftl-ci`, tests/device_lab/device_lab_ftl.py), in the guest:
NVMeVirt's C3h log and C5h feature (third_party/nvmevirt-ptsbench.patch) as ptsbench sets and reads them around
the IOPS test's rounds, and as `ptsbench check --profile` sets them beside the host's latencies."""

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from device_lab_admin import get_log
from device_lab_guest import WORK, Lab, ptsbench, run

# the thresholds the IOPS test sets the OCP latency monitor to: not the patch's power-on settings (30, 100, 155,
# 235 ms, the monitor not enabled), so what the log reports in force is what ptsbench set
LAB_MONITOR_MS = (5, 25, 100, 500)


def write_latencies(before: dict[str, int], after: dict[str, int]) -> str:
    """What the patch's counters say of the writes between two readings: their latency as the monitor counts it
    (mean, max), its modelled part alone (mean, max, how many reached 5 ms), the real time the dispatcher spent on
    each (mean, max), and the tries that found the write buffer full."""
    delta = {name: after[name] - before.get(name, 0) for name in after if name.startswith("write_")}
    cmds = max(delta["write_lat_cmds"], 1)

    def ms(name: str) -> str:
        return f"mean {delta[name + '_sum_ns'] / cmds / 1e6:.3f} ms, max {after[name + '_max_ns'] / 1e6:.3f} ms"

    return (f"{delta['write_lat_cmds']} writes: latency as counted {ms('write_lat')}; modelled alone "
            f"{ms('write_modelled')}, {delta['write_modelled_5ms']} at 5 ms or more; dispatcher time "
            f"{ms('write_proc')}; {delta['write_retries']} tries found the write buffer full")


def page_beside_nvme_cli(lab: Lab, ctrl: str) -> str:
    """The C3h page's bytes as ptsbench reads them (`nvme get-log --raw-binary`; the same bytes as the kernel's
    admin passthrough reads), decoded by ptsbench, against nvme-cli 2.3's labelled JSON of the same moment (its
    labels read OCP 1.0's order, the patch's): the same counters and thresholds. The page, the C0h page naming the
    DSSD version and nvme-cli's JSON are kept in the samples (tests/data/telemetry holds such a page)."""
    from ptsbench.device.latency_log import decode, dssd_major_version
    from ptsbench.device.latency_monitor import log_argv

    def raw(log_id: int) -> bytes:
        return subprocess.run(log_argv(ctrl, log_id), capture_output=True, check=True, timeout=300).stdout

    page, c0h = raw(0xC3), raw(0xC0)
    assert page == get_log(ctrl, 0xC3, 512, 0), page.hex()
    printed = json.loads(run(["nvme", "ocp", "latency-monitor-log", ctrl, "-o", "json"]).stdout)
    lab.keep("ftl-ci-c3h.hex", f"{page.hex()}\n{c0h.hex()}\n{json.dumps(printed)}\n")
    found = decode(page, lambda: dssd_major_version(c0h))
    labelled = {bucket: {operation: printed[f"Active Bucket Counter: Bucket {bucket}"][operation.title()]
                         for operation in ("read", "write", "trim")} for bucket in "0123"}
    assert found.order == "1.0" and found.counters == labelled, f"{found}; nvme-cli 2.3: {labelled}"
    assert found.thresholds_ms == [printed[f"Active Threshold {letter}"] for letter in "ABCD"], found
    return f"the C3h page decoded ({found.order_note}) equals nvme-cli 2.3's labels: {labelled}"


def latency_monitor_shapes(lab: Lab, ctrl: str, out: Path, rounds: list[dict[str, Any]], latencies: str,
                           collecting: Callable[[dict[str, Any]], bool]) -> str:
    """The IOPS test ran with `--latency-monitor 5,25,100,500`: ptsbench set feature C5h before its first reading
    and reported no problem; every round's reading of the C3h log has that configuration in force (enabled, those
    thresholds, the longest bucket timer), its counters decoded in OCP 1.0's order, and Get Features C5h gives back
    the data ptsbench sent; in the rounds `collecting` garbage the monitor counted writes at or above 5 ms;
    `ptsbench check --profile` sets each bucket beside the host's fio latency histogram of the phase's rounds (their
    stored counts, round.json telemetry.monitor_host, added up)."""
    from ptsbench.device.latency_monitor import BUCKET_TIMER_MAX_MIN, MonitorSetting

    setting = MonitorSetting(LAB_MONITOR_MS)
    for record in rounds:
        after = record["telemetry"]["after"]
        assert after["latency_monitor_set"] == {**setting.stored(), "note": None}, after["latency_monitor_set"]
        config = after["latency_monitor_config"]
        assert config["enabled"] and config["thresholds_ms"] == list(LAB_MONITOR_MS) and \
            config["bucket_timer_threshold_min"] == BUCKET_TIMER_MAX_MIN, config
        assert str(after["latency_monitor_order"]).startswith("OCP 1.0"), after["latency_monitor_order"]
    got = subprocess.run(["nvme", "get-feature", ctrl, "--feature-id=0xc5", "--data-len=4096", "--raw-binary"],
                         capture_output=True, check=True, timeout=300).stdout
    assert got[:13] == setting.feature_data()[:13], f"Get Features C5h: {got[:16].hex()}"
    latencies += f"; {page_beside_nvme_cli(lab, ctrl)}"
    counted = {}
    for record in filter(collecting, rounds):
        change = record["telemetry"]["change"]
        increase = change["latency_monitor"]
        assert increase is not None, change["latency_monitor_note"]
        # the round stored the host's side beside it (round.json telemetry.monitor_host), under the thresholds set
        host = record["telemetry"]["monitor_host"]
        assert host is not None and host["thresholds_ms"] == list(LAB_MONITOR_MS), host
        counted[record["round"]] = [increase[bucket]["write"] for bucket in "0123"]
    assert counted, "no round collected garbage (write amplification 1.5 or more)"
    assert any(sum(buckets) for buckets in counted.values()), \
        f"the monitor counted no write at or above {LAB_MONITOR_MS[0]} ms in the rounds collecting garbage: " \
        f"{counted}; {latencies}"
    profile = WORK / "monitor-profile.toml"
    profile.write_text('name = "lab"\nlatency_monitor_max = {"0" = 1000000000, "1" = 1000000000, "2" = 1000000000, '
                       '"3" = 1000000000}\n')  # a line per bucket, each with the host beside it
    done = ptsbench("check", str(out), "--profile", str(profile), ok=None)
    shown = done.stdout
    lab.keep("ftl-ci-check-monitor.txt", shown)
    assert done.returncode in (0, 4), f"check exited {done.returncode} (0 or 4: nothing failed): {shown[-2000:]}"
    flat = " ".join(shown.split())
    beside = [f"beside the host at or above {ms} ms (bucket {bucket} and up): the drive counted read"
              for bucket, ms in zip("0123", LAB_MONITOR_MS, strict=True)]
    assert all(line in flat for line in beside), f"{shown}; counted {counted}; {latencies}"
    # the phase's line adds up the rounds' stored counts: every round that stored both sides
    stored = sum(record["telemetry"].get("monitor_host") is not None for record in rounds)
    assert f"({stored} round(s) added up)" in flat, f"{shown}; {stored} round(s) stored the host's counts"
    return (f"set {','.join(map(str, LAB_MONITOR_MS))} ms and in force in all {len(rounds)} rounds, Get Features "
            f"equal; writes per bucket 0-3 in the rounds collecting garbage {counted} ({latencies}); `check` sets "
            f"each bucket beside the host's histogram: {flat[flat.index(beside[0]) - 40:][:600]}")
