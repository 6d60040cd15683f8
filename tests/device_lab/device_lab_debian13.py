"""The device lab's Debian 13 variant: checks that run INSIDE the guest `scripts/device-lab.sh --debian13` boots,
with QEMU 10's NVMe controller with the OCP extended SMART log (`ocp=on`) and an FDP subsystem (`fdp=on`), on the
real nvme driver, with Debian 13's fio 3.39, nvme-cli 2.13 and Python 3.13 and ptsbench installed from the checkout.

  device_lab_debian13.py --results FILE [--checks A,B]   (in the guest) run the checks, one JSON line each
  device_lab_debian13.py --summarize FILE [--checks A,B] (on the host) print `device lab: N passed, M failed`
  device_lab_debian13.py --list                          the check names, in run order

QEMU's media writes follow its host writes, so its write amplification is about 1: these checks prove the plumbing
and the arithmetic (what ptsbench reads equals nvme-cli's own output, the ratio is stored per round, fio places data
by handle), not amplification itself (docs/device-lab.md).
"""

import json
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from device_lab_guest import (
    WORK,
    Disk,
    Lab,
    controller,
    device_write_cache,
    facts_of,
    generic,
    lab_main,
    ptsbench,
    registry,
    run,
    run_in_order,
    write_cache_off_and_on,
)

SERIALS = {"ocp": "LABNVMEOCP", "fdp": "LABNVMEFDP"}  # scripts/device-lab.sh --debian13: serial of each controller
DISKS = {name: Disk(name, serial, "QEMU NVMe Ctrl", "nvme", 512, False) for name, serial in SERIALS.items()}
WRITTEN_BYTES = 8 * 2**20  # what a counter check writes with dd
FDP_PLACEMENT_IDS = [0, 1, 2, 3]  # QEMU nvme-subsys fdp.nruh=4, nvme-ns fdp.ruhs=0-3
FDP_JOB_PLIDS = (1, 2)  # the handles the FDP job writes through (round robin: half of its bytes each)
FDP_JOB = """[fdp]
filename={ng}
ioengine=io_uring_cmd
cmd_type=nvme
rw=write
bs=128k
iodepth=4
size=16M
dataplacement=fdp
plids={plids}
"""

CHECKS, check = registry()


def find_disks() -> dict[str, str]:
    """'ocp' / 'fdp' -> the /dev node of that controller's first namespace, found by serial."""
    found = {}
    for entry in sorted(os.listdir("/sys/block")):
        if re.fullmatch(r"nvme\d+c\d+n\d+", entry):  # a hidden path of a multipath namespace (the FDP subsystem's)
            continue
        try:
            serial = Path("/sys/block", entry, "device", "serial").read_text().strip()
        except OSError:
            continue
        for name, wanted in SERIALS.items():
            if serial == wanted:
                found.setdefault(name, f"/dev/{entry}")
    return found


def nvme_text(lab: Lab, sample: str, *args: str) -> dict[str, Any]:
    """`nvme ARGS -o json`, its output kept as a sample (tests/data/telemetry holds copies), parsed."""
    text = run(["nvme", *args, "-o", "json"]).stdout
    lab.keep(sample, text)
    return json.loads(text)


def ocp_written(doc: dict[str, Any]) -> int:
    """Physical Media Units Written as nvme-cli prints it: {"hi": upper 64 bits, "lo": lower 64 bits} or a number."""
    value = next(v for k, v in doc.items() if k.strip().lower().replace("_", " ") == "physical media units written")
    return (int(value["hi"]) << 64) + int(value["lo"]) if isinstance(value, dict) else int(value)


def dd_write(dev: str, offset_mib: int = 0) -> None:
    run(["dd", "if=/dev/urandom", f"of={dev}", "bs=1M", f"count={WRITTEN_BYTES // 2**20}", f"seek={offset_mib}",
         "oflag=direct", "status=none"])


def write_cache_put_back(out: Path, name: str, dev: str) -> str:
    """A finished PTS run (demo profile: write cache disabled) on a lab disk, whose cache was on: it turned the cache
    off, read it back off, and put it back on, as the device answers (`nvme get-feature`, feature 6)."""
    manifest = json.loads((out / "manifest.json").read_text())
    [record] = manifest["write_cache"]
    assert (record["before"], record["after"], record["set"]) == (True, False, True), record
    restored = manifest["write_cache_restored"]
    assert (restored["to"], restored["done"]) == (True, True), restored
    assert device_write_cache(DISKS[name], dev) == 1, f"write cache not on after the run: {restored}"
    return "write cache off during the run, on again after it"


@check("counters-ocp")
def counters_ocp(lab: Lab) -> str:
    """ptsbench's reading of the OCP controller equals nvme-cli's `ocp smart-add-log` and `smart-log` read right
    after; 8 MiB written by dd move the host counter by that many 512,000-byte units and the media counter by the
    bytes written as QEMU 10 counts them."""
    from ptsbench.device.telemetry import read_telemetry

    dev = lab.devs["ocp"]
    target, facts = facts_of(dev)
    before = read_telemetry(target, facts)
    dd_write(dev)
    after = read_telemetry(target, facts)
    ocp = nvme_text(lab, "nvme-cli-2.13-ocp-smart-add-log-qemu-10.json", "ocp", "smart-add-log", controller(dev))
    smart = nvme_text(lab, "nvme-cli-2.13-smart-log-qemu-10.json", "smart-log", controller(dev))
    assert after["media_source"] == "OCP C0h", after
    assert after["media_written_bytes"] == ocp_written(ocp), (after["media_written_bytes"], ocp)
    assert after["data_units_written"] == int(smart["data_units_written"]), (after, smart)
    media = after["media_written_bytes"] - before["media_written_bytes"]
    units = after["data_units_written"] - before["data_units_written"]
    # the host counter: thousands of 512-byte units, rounded up at each reading (so within one unit)
    assert abs(units * 512_000 - WRITTEN_BYTES) <= 512_000, (units, WRITTEN_BYTES)
    assert media in (WRITTEN_BYTES, WRITTEN_BYTES // 512), f"{WRITTEN_BYTES} bytes written, OCP counter +{media}"
    unit = "bytes" if media == WRITTEN_BYTES else "512-byte sectors"
    # the NVMe error log (01h) is read too: QEMU 10 answers it with empty entries (it logs no errors), which nvme-cli
    # prints as entries of error count 0; ptsbench finds no entry and no new one over the write
    errors = nvme_text(lab, "nvme-cli-2.13-error-log-qemu-10.json", "error-log", controller(dev))
    from ptsbench.device.error_log import parse_error_log
    from ptsbench.device.telemetry import telemetry_change

    assert isinstance(errors.get("errors"), list) and parse_error_log(errors) == [] == after["error_log"], errors
    change = telemetry_change(before, after, "case")
    assert change["error_log_new"] == [] and after["error_log_note"] is None, change
    # QEMU 10 has no OCP C3h latency monitor log: the reading says so, and no configuration is claimed
    assert after["latency_monitor"] is None and after["latency_monitor_config"] is None
    assert "no OCP C3h latency monitor log" in str(after["latency_monitor_note"]), after["latency_monitor_note"]
    return (f"{dev}: ptsbench's OCP physical media units written {after['media_written_bytes']} and data units "
            f"written {after['data_units_written']} equal nvme-cli's; dd of {WRITTEN_BYTES} bytes: +{units} data "
            f"units, OCP counter +{media} ({unit}); error log read ({len(errors['errors'])} empty entries, none new); "
            f"{after['latency_monitor_note']}")


def fdp_stats(lab: Lab, dev: str, sample: str | None = None) -> dict[str, int]:
    text = run(["nvme", "fdp", "stats", dev, "--endgrp-id=1", "-o", "json"]).stdout
    if sample:
        lab.keep(sample, text)
    return {key: int(value) for key, value in json.loads(text).items() if key in ("hbmw", "mbmw", "mbe")}


@check("counters-fdp")
def counters_fdp(lab: Lab) -> str:
    """ptsbench's reading of the FDP namespace (no OCP log on its controller) equals nvme-cli's `fdp stats` read
    right after; 8 MiB written by dd (no placement: the default handle) move host and media bytes by exactly that."""
    from ptsbench.device.telemetry import read_telemetry

    dev = lab.devs["fdp"]
    target, facts = facts_of(dev)
    before = read_telemetry(target, facts)
    dd_write(dev)
    after = read_telemetry(target, facts)
    stats = fdp_stats(lab, dev, "nvme-cli-2.13-fdp-stats-qemu-10.json")
    assert after["media_source"] == "FDP statistics", after
    assert (after["fdp_host_written_bytes"], after["media_written_bytes"], after["media_erased_bytes"]) == (
        stats["hbmw"], stats["mbmw"], stats["mbe"]), (after, stats)
    host = after["fdp_host_written_bytes"] - before["fdp_host_written_bytes"]
    media = after["media_written_bytes"] - before["media_written_bytes"]
    assert host == media == WRITTEN_BYTES, (host, media)
    return (f"{dev}: ptsbench's FDP host / media bytes written / media bytes erased {stats['hbmw']} / "
            f"{stats['mbmw']} / {stats['mbe']} equal nvme-cli's; dd of {WRITTEN_BYTES} bytes: host +{host}, "
            f"media +{media}")


@check("pts-waf-ocp")
def pts_waf(lab: Lab) -> str:
    """A short PTS (demo profile, IOPS, 4 KiB writes, three rounds of 2 s) on the OCP namespace stores each round's
    write amplification with its source, equal to its readings' differences, and `show` prints it."""
    dev = lab.devs["ocp"]
    out = WORK / "pts-waf"
    ptsbench("pts", dev, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "2",
             "--max-rounds", "3", "--block-sizes", "iops=4k", "--mixes", "iops=0", "--purge", "none",
             "--active-range", "25", "--precondition-multiple", "1", "--destructive", "--out", str(out))
    rounds = [json.loads(path.read_text()) for path in sorted(out.glob("pts/*/rounds/*/round.json"))]
    assert rounds, "no rounds stored"
    ratios, host_bytes, media_bytes = [], 0, 0
    for record in rounds:
        telemetry = record["telemetry"]
        waf, before, after = telemetry["change"]["waf"], telemetry["before"], telemetry["after"]
        assert waf["source"] == "OCP C0h" and waf["ratio"] is not None, waf
        media = after["media_written_bytes"] - before["media_written_bytes"]
        units = after["data_units_written"] - before["data_units_written"]
        assert (waf["media_written_bytes"], waf["host_written_bytes"]) == (media, units * 512_000), (waf, before, after)
        assert math.isclose(waf["ratio"], media / (units * 512_000), rel_tol=1e-12), waf
        ratios.append(waf["ratio"])
        host_bytes += waf["host_written_bytes"]
        media_bytes += waf["media_written_bytes"]
    shown = ptsbench("show", str(out)).stdout
    lab.keep("pts-waf-show.txt", shown)
    # the telemetry table's phase value: all rounds' media bytes over their host bytes
    phase = f"{media_bytes / host_bytes:.3f}×"
    table = [line for line in shown.splitlines() if line.startswith("IOPS ") and phase in line.split()]
    assert table and "media bytes written (OCP C0h)" in shown, (phase, shown[-3000:])
    from ptsbench.report.build import load_report

    facts = dict(load_report(out).facts)
    assert "FDP placement" not in facts, facts  # a namespace without FDP: no placement to name, not even off
    cache = write_cache_put_back(out, "ocp", dev)
    return f"{len(rounds)} rounds, write amplification per round {[round(r, 5) for r in ratios]} (OCP C0h); " \
           f"show: {phase} for the phase, source named; {cache}"


def fdp_status(dev: str) -> dict[int, int]:
    """Placement identifier -> its reclaim unit's available media writes (logical blocks), `nvme fdp status`."""
    doc = json.loads(run(["nvme", "fdp", "status", dev, "-o", "json"]).stdout)
    return {int(entry["pid"]): int(entry["ruamw"]) for entry in doc["ruhss"]}


@check("fdp-placement")
def fdp_placement(lab: Lab) -> str:
    """`info` on the FDP namespace shows FDP enabled with its reclaim groups and handles as nvme-cli reads them; an
    FDP fio job on /dev/ngXnY is refused without --destructive naming the namespace, and with it writes through
    handles 1 and 2 only: fio's bytes written equal the FDP statistics' host and media bytes written since, and each
    handle's reclaim unit lost half of them."""
    dev = lab.devs["fdp"]
    ng = generic(dev)
    info = json.loads(ptsbench("info", dev, "--json").stdout)["fdp"]
    configs = nvme_text(lab, "nvme-cli-2.13-fdp-configs-qemu-10.json", "fdp", "configs", controller(dev),
                        "--endgrp-id=1")
    config = configs["configs"][info["fdp_config_index"]]
    assert info["fdp"] == "enabled" and info["fdp_note"] is None, info
    assert (info["fdp_reclaim_groups"], info["fdp_reclaim_unit_handles"], info["fdp_reclaim_unit_bytes"]) == (
        config["nrg"], config["nruh"], config["runs"]) == (1, len(FDP_PLACEMENT_IDS), 64 * 2**20), (info, config)
    nvme_text(lab, "nvme-cli-2.13-fdp-status-qemu-10.json", "fdp", "status", dev)
    assert info["fdp_placement_ids"] == FDP_PLACEMENT_IDS, info
    job = WORK / "fdp.fio"
    job.write_text(FDP_JOB.format(ng=ng, plids=",".join(map(str, FDP_JOB_PLIDS))))
    refused = ptsbench("run", str(job), "--out", str(WORK / "fdp-refused"), ok=False)
    said = refused.stderr.strip().splitlines()[-1] if refused.stderr.strip() else ""
    assert said.startswith("ptsbench: error: refusing to write") and dev in said, refused.stderr[-800:]
    stats_before, handles_before = fdp_stats(lab, dev), fdp_status(dev)
    started = time.monotonic()
    done = ptsbench("run", str(job), "--destructive", "--format", "json", "--out", str(WORK / "fdp-run"))
    stats_after, handles_after = fdp_stats(lab, dev), fdp_status(dev)
    rows = json.loads(done.stdout)
    assert rows and rows[0]["status"] == "ok", rows
    fio = json.loads(next((WORK / "fdp-run" / "cases").glob("*/fio.json")).read_text())
    options = fio["jobs"][0]["job options"]
    assert options.get("dataplacement") == "fdp" and options["filename"] == ng, options
    written = int(fio["jobs"][0]["write"]["io_bytes"])
    host = stats_after["hbmw"] - stats_before["hbmw"]
    media = stats_after["mbmw"] - stats_before["mbmw"]
    assert written == 16 * 2**20 and host == media == written, (written, stats_before, stats_after)
    block_bytes = int(Path("/sys/block", os.path.basename(dev), "queue", "logical_block_size").read_text())
    used = {pid: (handles_before[pid] - handles_after[pid]) * block_bytes for pid in FDP_PLACEMENT_IDS}
    want = {pid: written // len(FDP_JOB_PLIDS) if pid in FDP_JOB_PLIDS else 0 for pid in FDP_PLACEMENT_IDS}
    assert used == want, f"bytes per placement handle: {used}, expected {want}"
    return (f"info: FDP enabled, {info['fdp_reclaim_groups']} reclaim group, {info['fdp_reclaim_unit_handles']} "
            f"handles {info['fdp_placement_ids']}; without --destructive: {said}; fio on {ng} plids "
            f"{FDP_JOB_PLIDS}: {written} bytes = FDP host +{host} = media +{media}; bytes per handle {used} "
            f"({time.monotonic() - started:.0f} s)")


@check("write-cache-fdp")
def write_cache_fdp(lab: Lab) -> str:
    """The FDP namespace (a multipath head): ptsbench switches its controller's volatile write cache (feature 6)
    off and on with nvme-cli 2.13, each read back by `nvme get-feature` (2.13 takes `-v` for --verbose: the
    `-v 1` ptsbench once gave set it to 0)."""
    return write_cache_off_and_on(DISKS["fdp"], lab.devs["fdp"])


@check("pts-fdp-placement")
def pts_fdp_placement(lab: Lab) -> str:
    """`pts --fdp-placement spread` (demo profile, IOPS, 4 KiB writes, two rounds of 2 s) on the FDP namespace: the
    dry run names the placement (and without the option names it off); every job runs on /dev/ngXnY through
    io_uring_cmd with fdp_pli over all four handles, each handle's reclaim unit is written, and each round's write
    amplification comes from the FDP statistics; the report's facts name the placement (what `compare` sets beside
    an FDP-off run)."""
    dev = lab.devs["fdp"]
    ng = generic(dev)
    plain = [dev, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "2", "--max-rounds", "2",
             "--block-sizes", "iops=4k", "--mixes", "iops=0", "--purge", "none", "--active-range", "25",
             "--precondition-multiple", "1", "--destructive"]
    args = [*plain, "--fdp-placement", "spread"]
    plids = ",".join(map(str, FDP_PLACEMENT_IDS))
    dry = ptsbench("pts", *args, "--dry-run", "--verbose", "--out", str(WORK / "pts-fdp-dry")).stdout
    lab.keep("pts-fdp-dry-run.txt", dry)
    assert f"FDP placement spread: fio writes {ng} (io_uring_cmd) over placement handle(s) {plids}" in dry, dry[-2000:]
    assert "ioengine=io_uring_cmd" in dry and f"fdp_pli={plids}" in dry, dry[-2000:]
    # without the option, FDP enabled on the namespace: placement off is recorded (compare's FDP-off side)
    off = ptsbench("pts", *plain, "--dry-run", "--out", str(WORK / "pts-fdp-off-dry")).stdout
    assert f"FDP placement off: fio writes {dev} as always" in off and "io_uring_cmd" not in off, off[-2000:]
    out = WORK / "pts-fdp"
    handles_before = fdp_status(dev)
    ptsbench("pts", *args, "--out", str(out))
    handles_after = fdp_status(dev)
    jobs = [path.read_text().splitlines() for path in sorted(out.glob("pts/*/*/job.fio"))
            + sorted(out.glob("pts/*/rounds/*/job.fio"))]
    assert jobs, "no job files stored"
    for lines in jobs:
        assert {f"filename={ng}", "ioengine=io_uring_cmd", "cmd_type=nvme", "fdp=1", f"fdp_pli={plids}"} <= set(
            lines), lines
    written = sorted(pid for pid in FDP_PLACEMENT_IDS if handles_after[pid] != handles_before[pid])
    assert written == FDP_PLACEMENT_IDS, (handles_before, handles_after)
    rounds = [json.loads(path.read_text()) for path in sorted(out.glob("pts/*/rounds/*/round.json"))]
    wafs = [record["telemetry"]["change"]["waf"] for record in rounds]
    assert rounds and all(waf["source"] == "FDP statistics" and waf["ratio"] is not None for waf in wafs), wafs
    from ptsbench.report.build import load_report

    facts = dict(load_report(out).facts)
    assert facts.get("FDP placement") == f"spread: placement handle(s) {plids} through {ng} (io_uring_cmd)", facts
    cache = write_cache_put_back(out, "fdp", dev)
    return (f"{len(jobs)} job files on {ng} with fdp_pli={plids}; reclaim units written on handles {written}; "
            f"write amplification per round {[round(waf['ratio'], 4) for waf in wafs]} (FDP statistics); {cache}")


@check("case-waf-ocp")
def case_waf_ocp(lab: Lab) -> str:
    """Two `ptsbench run` cases (--repeat 2), each writing 16 MiB to the OCP namespace, store their readings before
    and after; the second's before is the first's after (back to back: read once between them), and each case's
    write amplification equals its own differences; `show` prints them with their source."""
    dev = lab.devs["ocp"]
    job = WORK / "case-waf.fio"
    job.write_text("[w]\nioengine=libaio\ndirect=1\nrw=write\nbs=1M\niodepth=4\nsize=16M\n")
    out = WORK / "case-waf"
    ptsbench("run", str(job), "--target", dev, "--destructive", "--repeat", "2", "--out", str(out))
    results = [json.loads(path.read_text()) for path in sorted(out.glob("cases/*/result.json"))]
    entries = [result["telemetry"][0] for result in results]
    assert len(entries) == 2 and entries[1]["before"] == entries[0]["after"], entries
    said = []
    for entry in entries:
        before, after, waf = entry["before"], entry["after"], entry["change"]["waf"]
        media = after["media_written_bytes"] - before["media_written_bytes"]
        units = after["data_units_written"] - before["data_units_written"]
        assert waf["source"] == "OCP C0h" and (waf["media_written_bytes"], waf["host_written_bytes"]) == (
            media, units * 512_000), waf
        assert abs(units * 512_000 - 16 * 2**20) <= 512_000 and math.isclose(waf["ratio"], media / (units * 512_000))
        said.append(f"{units} data units, OCP +{media} bytes, write amplification {waf['ratio']:.4f}")
    shown = ptsbench("show", str(out)).stdout
    lab.keep("case-waf-show.txt", shown)
    ratios = [f"{entry['change']['waf']['ratio']:.2f} (OCP C0h)" for entry in entries]
    assert "WAF" in shown and all(ratio in shown for ratio in ratios), shown
    return f"{dev}: two cases back to back, the second's before the first's after; " + "; ".join(said) + \
        f"; show: {', '.join(ratios)}"


@check("capture-nvme")
def capture_nvme(lab: Lab) -> str:
    """`ptsbench capture` of the OCP namespace (the kernel's nvme driver) while fio runs a known mix: no event
    dropped, and the IOs fio's process queued equal fio's own JSON, direction by direction, count by count, byte by
    byte and size by size; the device's view (issue and completion events) is there too."""
    dev = lab.devs["ocp"]
    out, fio_json = WORK / "capture-nvme", WORK / "capture-nvme-fio.json"
    read_bs, write_bs = 4096, 16384
    fio = ["fio", "--name=known", f"--filename={dev}", "--rw=randrw", f"--bs={read_bs},{write_bs}", "--direct=1",
           "--ioengine=libaio", "--iodepth=4", "--size=32M", "--io_size=2M", "--output-format=json",
           f"--output={fio_json}"]
    ptsbench("capture", dev, "--out", str(out), "--", *fio)
    job = json.loads(fio_json.read_text())["jobs"][0]
    issued = {name: (job[name]["total_ios"], job[name]["io_bytes"]) for name in ("read", "write")}
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["status"], manifest["dropped_events"]) == ("done", 0), manifest
    whole = json.loads((out / "characterisation.json").read_text())
    from ptsbench.workload.characterise import characterise  # as `characterise --pid` (no second start-up)
    from ptsbench.workload.stream import load_stream, of_process

    pid = whole["processes"][0]["pid"]  # the process that queued the most IOs: fio's job (udev may probe too)
    found = characterise(of_process(load_stream(out / "trace.blktrace"), pid))
    for name, size in (("read", read_bs), ("write", write_bs)):
        part = found["directions"][name]
        assert (part["io_count"], part["bytes"]) == issued[name], (name, part, issued)
        assert part["sizes"] == [[size, issued[name][0]]], (name, part["sizes"])
    assert whole["outstanding"]["max"] >= 1, whole["outstanding"]
    return (f"{dev}: captured {manifest['event_count']} events, 0 dropped; fio's process queued {issued['read'][0]} "
            f"reads of {read_bs} and {issued['write'][0]} writes of {write_bs} bytes, as fio's JSON says; "
            f"outstanding at most {whole['outstanding']['max']}")


def run_variant_checks(names: list[str], results: Path) -> int:
    lab = Lab(find_disks(), results.parent / "samples")
    print(f"lab disks: {lab.devs}", flush=True)
    return run_in_order(lab, names, results, CHECKS)


def main() -> int:
    return lab_main(__doc__, CHECKS, run_variant_checks)


if __name__ == "__main__":
    sys.exit(main())
