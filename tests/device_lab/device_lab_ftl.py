"""The device lab's FTL variant: checks that run INSIDE the guest `scripts/device-lab.sh --ftl` boots, on an SSD
with a flash translation layer: NVMeVirt's conventional SSD (page mapping, a write buffer, greedy garbage
collection), a kernel module making a PCIe NVMe device in memory the guest kernel reserved, driven by the real nvme
driver, nvme-cli and fio. Built from third_party/nvmevirt with third_party/nvmevirt-ptsbench.patch (the module
parameters for its geometry and NAND timing, its counters, the SMART and OCP C0h logs).

  device_lab_ftl.py --results FILE [--checks A,B]   (in the guest) run the checks, one JSON line each
  device_lab_ftl.py --summarize FILE [--checks A,B] (on the host) print `device lab: N passed, M failed`
  device_lab_ftl.py --list                          the check names, in run order

The model is tiny (64 MiB of flash, 7 % over-provisioning) and its NAND is slowed so that the FTL, not the emulated
CPU, sets the pace once garbage collection runs: the checks assert shapes (a transition, write amplification
above 1), never a real drive's numbers (docs/device-lab.md).
"""

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from device_lab_admin import get_log
from device_lab_ftl_monitor import LAB_MONITOR_MS, latency_monitor_shapes, write_latencies
from device_lab_guest import WORK, Lab, _utc, lab_main, ptsbench, registry, run, run_in_order

SERIAL = "CSL_Virt_SN_01"  # NVMeVirt's identify controller data
FTL_PAGE_BYTES = 4096  # its mapping unit: the OCP log's media bytes are its pages x this
# the model: 32 MiB of flash (scripts/device-lab.sh reserves 33 MiB: 1 MiB for NVMeVirt's registers), 29.1 MiB of it
# the namespace (10 % over-provisioning), in 4 partitions of 2 channels x 2 LUNs; 64 blocks per plane make blocks of
# one 32 KiB one-shot page and 64 lines (superblocks) of 128 KiB per partition, so garbage collection runs from the
# first full write on (with the model's 8192 blocks per plane it never would); 10 % leaves each partition about as
# many spare lines as the model's 7 % did on 64 MiB (and so about the same write amplification) in half the bytes:
# the transition takes half as long. Programming a one-shot page takes 300 ms, so 16 LUNs program about 1.7 MB/s
# (430 pages of 4 KiB a second): about the emulated CPU's pace of 4 KiB writes on an idle machine before garbage
# collection; after it, that over the write amplification (4-5), below the emulated CPU's pace on a loaded machine
# too. (400 ms, tried to widen that margin, slowed the transition as much as the smaller flash had sped it up.)
MODEL = {"blks_per_pl": 64, "nand_prog_ns": 300_000_000, "op_pct": 10}
OCP_GUID = bytes.fromhex("afd514c97c6f4f9ca4f2bfea2810afc5")[::-1]  # as the log holds it: least significant first

CHECKS, check = registry()


def find_namespace() -> str | None:
    for entry in sorted(os.listdir("/sys/block")):
        try:
            serial = Path("/sys/block", entry, "device", "serial").read_text().strip()
        except OSError:
            continue
        if serial == SERIAL:
            return f"/dev/{entry}"
    return None


def load_fresh(**params: int | str) -> str:
    """NVMeVirt unloaded (if loaded) and loaded again: a fresh-out-of-box SSD, every block erased and unmapped (it
    has no format, sanitize or discard). Its namespace's /dev node."""
    module = os.environ.get("PTSBENCH_LAB_NVMEV", "")
    assert module and Path(module).is_file(), f"no NVMeVirt module at PTSBENCH_LAB_NVMEV={module!r}"
    if Path("/sys/module/nvmev").exists():
        run(["rmmod", "nvmev"], timeout_s=300)
    # the lab's arguments (the reservation, the polling vCPU), the model's, then these (memmap_size: a smaller
    # device in the same reservation)
    args = dict(arg.split("=", 1) for arg in os.environ.get("PTSBENCH_LAB_NVMEV_ARGS", "").split())
    run(["insmod", module, *(f"{key}={value}" for key, value in {**args, **MODEL, **params}.items())],
        timeout_s=300)
    deadline = time.monotonic() + 120
    while (dev := find_namespace()) is None or not Path(dev).exists():
        assert time.monotonic() < deadline, "NVMeVirt loaded, but no namespace appeared in 120 s"
        time.sleep(0.5)
    return dev


def counters() -> dict[str, int]:
    """The patch's counters, /proc/nvmev/counters: host commands, logical blocks and pages, GC pages and lines."""
    lines = Path("/proc/nvmev/counters").read_text().split("\n")
    return {name: int(value) for name, value in (line.split() for line in lines if line.strip())}


def controller_of(dev: str) -> str:
    return "/dev/" + os.path.basename(os.path.realpath(f"/sys/block/{os.path.basename(dev)}/device"))


@check("ftl-counters")
def ftl_counters(lab: Lab) -> str:
    """A fresh NVMeVirt SSD: `nvme id-ctrl` (plain and JSON) answers; dd writes 8 MiB; the patch's SMART log
    counts them (data units of 512,000 bytes, rounded up) and its OCP C0h log (GUID at its end, which nvme-cli
    checks) counts the pages programmed: (host + GC pages) x 4 KiB, as /proc/nvmev/counters says; ptsbench's
    reading equals nvme-cli's; a log read into a buffer crossing a page boundary (PRP2) equals one read into a
    page-aligned buffer, the OCP GUID landing in the second page."""
    from device_lab_guest import facts_of
    from ptsbench.device.telemetry import read_telemetry

    dev = load_fresh()
    ctrl = controller_of(dev)
    plain = run(["nvme", "id-ctrl", ctrl])  # upstream's identify data crashed it (issue 38); -o json did not
    ident = json.loads(run(["nvme", "id-ctrl", ctrl, "-o", "json"]).stdout)
    assert ident["sn"].strip() == SERIAL, ident["sn"]
    run(["dd", "if=/dev/urandom", f"of={dev}", "bs=1M", "count=8", "oflag=direct", "status=none"])
    target, facts = facts_of(dev)
    reading = read_telemetry(target, facts)
    smart = json.loads(run(["nvme", "smart-log", ctrl, "-o", "json"]).stdout)
    ocp_text = run(["nvme", "ocp", "smart-add-log", ctrl, "-o", "json"]).stdout
    lab.keep("nvme-cli-2.3-ocp-smart-add-log-nvmevirt.json", ocp_text)
    ocp = json.loads(ocp_text)
    counted = counters()
    written = 8 * 2**20
    assert counted["host_write_lbas"] * 512 == written and counted["host_pages_written"] == written // 4096, counted
    units = -(-written // 512_000)
    assert int(smart["data_units_written"]) == units == reading["data_units_written"], (smart, reading)
    media = (counted["host_pages_written"] + counted["gc_pages_written"]) * FTL_PAGE_BYTES
    from ptsbench.device.waf import parse_ocp_smart_add_log

    assert parse_ocp_smart_add_log(ocp) == media == reading["media_written_bytes"], (ocp, counted, reading)
    assert reading["media_source"] == "OCP C0h", reading
    aligned = get_log(ctrl, 0xC0, 512, 0)
    crossing = get_log(ctrl, 0xC0, 512, mmap_page() - 256)
    assert aligned[496:] == OCP_GUID, aligned[496:].hex()
    assert crossing == aligned, f"across a page boundary: {crossing[256:].hex()} != {aligned[256:].hex()}"
    smart_crossing = get_log(ctrl, 0x02, 512, mmap_page() - 256)
    assert smart_crossing == get_log(ctrl, 0x02, 512, 0), smart_crossing.hex()
    lines = len(plain.stdout.splitlines())
    return (f"{dev} ({ctrl}): id-ctrl answers plain ({lines} lines) and as JSON (serial {SERIAL}); dd 8 MiB: "
            f"SMART data units {units}, OCP media bytes {media} = (host {counted['host_pages_written']} + GC "
            f"{counted['gc_pages_written']} pages) x 4 KiB, ptsbench's reading equal; the OCP and SMART logs read "
            f"across a page boundary (PRP2) equal the aligned reads, GUID in the second page; {start_up(dev, ctrl)}")


def start_up(dev: str, ctrl: str) -> str:
    """Where a ptsbench command's start goes in the emulated guest (issue 38 saw 5.6 minutes before a PTS run's
    first round under load): `ptsbench info DEV --json` in a new interpreter (Python's start and ptsbench's imports,
    read over 9p, then the device facts with their nvme-cli calls) against the same command forked from the lab's
    warm process (the facts alone), and one nvme-cli call."""
    timed = {}
    for name, command in (("new", lambda: run([sys.executable, "-m", "ptsbench", "info", dev, "--json"])),
                          ("forked", lambda: ptsbench("info", dev, "--json")),
                          ("nvme", lambda: run(["nvme", "smart-log", ctrl, "-o", "json"]))):
        started = time.monotonic()
        command()
        timed[name] = time.monotonic() - started
    return (f"`ptsbench info --json` took {timed['new']:.1f} s in a new interpreter, {timed['forked']:.1f} s forked "
            f"from a warm one; one `nvme smart-log` {timed['nvme']:.1f} s")


def mmap_page() -> int:
    import mmap

    return mmap.PAGESIZE


@check("ftl-run-dir-9p")
def run_dir_9p(lab: Lab) -> str:
    """A PTS round's chained cells (fio/chain.py run_chain, as a round runs them) with the round's folder on a 9p
    mount (the lab's results share): before, the hand-off FIFOs were made in that folder, cannot be opened on 9p,
    and round 1 failed with "[Errno 6] No such device or address"; now they live in a local folder of their own,
    and fio runs both cells (the null engine: no device), back to back, documents stored in the 9p folder."""
    from ptsbench.fio.chain import ChainJob, gate_options, run_chain
    from ptsbench.fio.jobs import render_job_file

    share = lab.samples.parent
    mounts = {fields[1]: fields[2] for fields in map(str.split, Path("/proc/mounts").read_text().splitlines())}
    assert mounts.get(str(share)) == "9p", f"{share} is not a 9p mount: {mounts.get(str(share))}"
    folder = share / "chain-9p"
    folder.mkdir(exist_ok=True)
    jobs = [(f"c{index}", {"rw": "randread", "bs": "4k", "numjobs": "2", "runtime": "2s", **gate_options(index, 2)})
            for index in range(2)]
    job = folder / "job.fio"
    job.write_text(render_job_file({"ioengine": "null", "size": "1g", "time_based": None}, jobs))
    ran = run_chain(job, [ChainJob(f"c{index}", 2, 2.0) for index in range(2)], folder=folder)
    said = [outcome.error_line() for outcome in ran.outcomes if not outcome.ok]
    assert len(ran.outcomes) == 2 and not said, said or ran.notes
    stored = sorted(path.name for path in folder.glob("fio-*.json"))
    assert stored == ["fio-00.json", "fio-01.json"], stored
    left = [str(path) for path in folder.rglob("*") if path.is_fifo()]
    assert not left, f"FIFOs in the 9p folder: {left}"
    return f"{folder} on 9p: two chained cells ran back to back (gap {ran.gaps_ms()} ms), their documents stored there"


# The PTS IOPS test on a fresh drive, PTS-E 1.1 (one tracked cell: 4 KiB random writes), short rounds. Its
# workload-independent preconditioning writes a tenth of the capacity instead of twice it (a deviation ptsbench
# records): at twice the capacity the whole transition would happen during preconditioning, unseen by the rounds.
IOPS_ROUND_S = 15
IOPS_MAX_ROUNDS = 25
IOPS_PRECONDITION = 0.1
WAF_STEADY_MIN = 1.5  # write amplification at steady state is above this (greedy GC, 7 % over-provisioning)
WAF_FRESH_MAX = 1.05  # before the first full write nothing is collected: media bytes = host bytes (rounding aside)
# write saturation from fresh: 4 KiB random writes, rounds of 40 s until four times the capacity is written (PTS's
# rule; not for a time: on a loaded machine the emulated CPU writes less in a minute, and a run of 3 minutes once
# ended before garbage collection had set in): the erased flash runs out in the first round or so (about 20 s at an
# idle machine's pace), so a round holds the step (the drop finder searches each round on its own and needs a level
# held for seconds on either side); the last round is near the steady level
WSAT_ROUND_S = 40
WSAT_CAPACITY = 4
WSAT_TIME_CAP = "1200s"  # a bound only: four capacities take about 3 minutes on an idle machine
CLIFF_MIN = 1.5  # the first round's IOPS at least this many times the last round's


def iops_test(dev: str, out: Path, precondition: tuple[str, ...], round_s: float = IOPS_ROUND_S,
              extra: tuple[str, ...] = ()) -> None:
    """`ptsbench pts --tests iops` as the lab runs it: the tracked cell only, rounds of 15 s, at most 25, no purge;
    `precondition`: the preconditioning's options; `extra`: more options."""
    ptsbench("pts", dev, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", str(round_s),
             "--max-rounds", str(IOPS_MAX_ROUNDS), "--block-sizes", "iops=4k", "--mixes", "iops=0", "--purge", "none",
             "--active-range", "100", *precondition, *extra, "--destructive", "--out", str(out))


def wipc(multiple: float) -> tuple[str, ...]:
    return ("--precondition-multiple", str(multiple))


def pts_rounds(out: Path) -> list[dict[str, Any]]:
    rounds = [json.loads(path.read_text()) for path in sorted(out.glob("pts/*/rounds/*/round.json"))]
    assert rounds, f"no rounds stored in {out}"
    return rounds


def tracked_iops(record: dict[str, Any]) -> float:
    """The round's value of the IOPS test's tracked variable (PTS-E 1.1: 4 KiB random writes)."""
    [cell] = record["cells"].values()
    return float(cell["iops"])


@check("ftl-pts-iops")
def ftl_pts_iops(lab: Lab) -> str:
    """`ptsbench pts --tests iops` on a fresh SSD (NVMeVirt loaded again): round 1, on erased flash, is above the
    steady-state mean; the first window (rounds 1-5) is rejected; steady state is reached within the round limit,
    once garbage collection sets the pace. Write amplification per round (OCP C0h: media bytes over host bytes)
    is about 1 before the first full write and above 1.5 at steady state, and the report names its source. The
    host-bound flag is read against NVMeVirt's polling vCPU."""
    return iops_transition(lab, load_fresh(), WORK / "pts-iops", IOPS_ROUND_S)[0]


def iops_transition(lab: Lab, dev: str, out: Path, round_s: float, fresh_round: bool = True,
                    extra: tuple[str, ...] = ()) -> tuple[str, list["GcFinding"]]:
    """ftl-pts-iops's IOPS test and its judgement, with rounds of `round_s` on the fresh drive `dev`. `fresh_round`:
    a round must end before the first full write, and round 1 be above the steady-state mean; else (a small drive,
    whose round 1 may write past it) the highest round before garbage collection took hold (write amplification
    under 2) must be FOB_MARGIN times the steady-state mean: a round on erased flash runs at the emulated CPU's pace,
    which a busy host can starve for a round (round 1 once read 99 IOPS, round 2 226)."""
    size = int(Path("/sys/block", os.path.basename(dev), "size").read_text()) * 512
    started, started_at = time.monotonic(), time.time()
    iops_test(dev, out, wipc(IOPS_PRECONDITION), round_s, extra)
    took = time.monotonic() - started
    keep_rounds(lab, out)
    rounds = pts_rounds(out)
    values = [tracked_iops(record) for record in rounds]
    last = rounds[-1]["steady"]
    said = [f"IOPS per round {[round(v) for v in values]}"]
    said.append(where_time_goes(out, started_at, rounds))
    assert last["steady"], f"steady state not reached in {len(rounds)} rounds in {took:.0f} s: {said}"
    window = last["window_rounds"]
    mean = sum(values[n - 1] for n in window) / len(window)
    said.append(f"steady state in rounds {window[0]}-{window[-1]} (mean {mean:.0f})")
    assert values[0] > mean or not fresh_round, f"round 1 ({values[0]:.0f}) is not above the steady-state mean: {said}"
    assert len(rounds) > 5 and not rounds[4]["steady"]["steady"], \
        f"the first window (rounds 1-5) was not rejected: {said}"
    # write amplification per round, and where the first full write ended
    precondition = json.loads(next(out.glob("pts/*/precondition/result.json")).read_text())
    written = int(precondition["written_bytes"])
    wafs, fresh, steady_wafs = [], [], []
    for record in rounds:
        waf = record["telemetry"]["change"]["waf"]
        assert waf["source"] == "OCP C0h" and waf["ratio"] is not None, waf
        wafs.append(waf["ratio"])
        written += int(record["cells"][next(iter(record["cells"]))]["write"]["io_bytes"])
        if written <= size:
            fresh.append(waf["ratio"])
        if record["round"] in window:
            steady_wafs.append(waf["ratio"])
    said.append(f"write amplification per round {[round(w, 2) for w in wafs]} (OCP C0h)")
    if not fresh_round:
        erased = [value for value, waf in zip(values, wafs, strict=True) if waf < FOB_WAF_MAX]
        assert erased and max(erased) >= FOB_MARGIN * mean, \
            f"no round before garbage collection took hold at {FOB_MARGIN} x the steady-state mean: {said}"
        said.append(f"fresh-out-of-box {max(erased):.0f} IOPS: {max(erased) / mean:.1f} x the steady-state mean")
    if not fresh_round and not fresh:
        said.append("round 1 wrote past the capacity: no round ended before the first full write")
    assert fresh or not fresh_round, \
        f"round 1 already wrote past the capacity ({size} bytes): no round before the first full write: {said}"
    assert max(fresh, default=1.0) <= WAF_FRESH_MAX, \
        f"write amplification before the first full write above {WAF_FRESH_MAX}: {said}"
    assert min(steady_wafs) > WAF_STEADY_MIN, f"write amplification at steady state not above {WAF_STEADY_MIN}: {said}"
    shown = ptsbench("show", str(out)).stdout
    lab.keep(f"ftl-{out.name}-show.txt", shown)
    assert "media bytes written (OCP C0h)" in shown, shown[-3000:]
    said.append(host_bound_statement(rounds))
    found = gc_findings(out, size)
    said.append(gc_judgement(found))
    return f"{took:.0f} s; " + "; ".join(said), found


def where_time_goes(out: Path, started_at: float, rounds: list[dict[str, Any]]) -> str:
    """Where a PTS run's time went (issue 38 saw 5.6 minutes of start-up under load), from the stored UTC times:
    the command to its purge step (device facts, the guard, the write cache, the plan and run directory), the
    purge and preconditioning (and fio's own IO time in it), to round 1; in the rounds, fio's process against the
    rest (telemetry after each round; between rounds the steady-state judge, storing and the live report)."""
    [attempt] = json.loads(next(out.glob("pts/*/purge.json")).read_text())
    precondition = json.loads(next(out.glob("pts/*/precondition/result.json")).read_text())
    purge_at, conditioned_at = _utc(attempt["started_utc"]), _utc(precondition["finished_utc"])
    first = _utc(rounds[0]["started_utc"])
    fio_s = sum(record["wall_s"] for record in rounds) / len(rounds)
    inside_s = sum(_utc(r["finished_utc"]) - _utc(r["started_utc"]) - r["wall_s"] for r in rounds) / len(rounds)
    between = [_utc(b["started_utc"]) - _utc(a["finished_utc"]) for a, b in zip(rounds, rounds[1:], strict=False)]
    between_s = sum(between) / len(between) if between else 0.0
    return (f"start-up {first - started_at:.0f} s: {purge_at - started_at:.0f} s to the purge step (device facts, "
            f"guard, write cache, plan), {conditioned_at - purge_at:.0f} s purge and preconditioning (fio's IO "
            f"{precondition['runtime_ms'] / 1000:.0f} s), {first - conditioned_at:.0f} s to round 1; per round: fio "
            f"{fio_s:.0f} s, telemetry {inside_s:.1f} s, {between_s:.1f} s between rounds")


def host_bound_statement(rounds: list[dict[str, Any]]) -> str:
    """What the host-bound flag said: NVMeVirt's dispatcher and I/O worker poll on the third vCPU, so the guest's
    CPUs are at least a third busy in every round; the flag (90 % busy, or the queue depth not kept) counts that
    vCPU like any other."""
    busy = [record["host_bound"]["host_cpu_busy_pct"] for record in rounds]
    assert None not in busy, f"a round without the host's CPU reading: {busy}"
    flagged = [record["round"] for record in rounds if record["host_bound"]["possibly"]]
    polling = 100 / (os.cpu_count() or 1)
    # the polling vCPU alone keeps the guest about a third busy: in the median round at least three quarters of
    # that (a single round read as little as 17 % at a load average of about 35, when the host starved the emulated
    # CPUs); a guest whose NVMeVirt threads slept would fall well below
    median = sorted(busy)[len(busy) // 2]
    assert median >= 0.75 * polling, \
        f"the median round's CPUs were less busy than NVMeVirt's polling vCPU alone ({polling:.0f} %): {busy}"
    return (f"host CPU busy {min(busy):.0f}-{max(busy):.0f} % per round (median {median:.0f} %), of which the "
            f"polling vCPU is {polling:.0f} %; flagged possibly host-bound: rounds {flagged or 'none'}")


GC_CLEAR_WAF = 1.5  # a round with this write amplification was certainly collecting garbage


def collecting_garbage(record: dict[str, Any]) -> bool:
    waf = record["telemetry"]["change"]["waf"]["ratio"]
    return waf is not None and waf >= GC_CLEAR_WAF

# garbage collection's onset, as a step: NVMeVirt collects once a partition has 2 free lines left (of 32 or 64), so
# not before about the namespace was written once (its pages and the over-provisioning); the step may be placed up to
# a second early (the drop finder places its edge inside a second), hence a little less; and it is the transition,
# not a stall at steady state, when it begins before the drive was written twice
GC_STEP_CAPACITIES = (0.9, 2.0)


@dataclass(frozen=True)
class GcFinding:
    """An IOPS or MB/s finding of a PTS run's round, as the check reads it."""

    said: str  # "round N (write amplification R): the finding's line: its cause"
    names_gc: bool  # its cause names garbage collection
    certain: bool  # the round's write amplification says it was certainly collecting garbage
    step: bool  # the level never came back in the round
    capacities: float  # the host's bytes written since the drive was fresh when it began, over the capacity


def gc_findings(out: Path, size: int) -> list[GcFinding]:
    """The IOPS and MB/s findings of a PTS run on a drive fresh before it (docs/drops.md; a run of one IO size has
    the same drops in both), each with the bytes the host had written when it began (the preconditioning, the
    rounds before and the round's own before it) over the drive's `size`. The drop finder names garbage collection
    from a round's write amplification of 1.05 or more; a round of 1.5 or more was certainly collecting garbage."""
    from ptsbench.drops.find import DropRule
    from ptsbench.drops.stored import folder_findings

    preconditioned = [json.loads(path.read_text()) for path in out.glob("pts/*/precondition/result.json")]
    written = sum(int(result["written_bytes"]) for result in preconditioned)
    found = []
    for folder in sorted(out.glob("pts/*/rounds/*")):
        if not (folder / "round.json").exists():
            continue
        record = json.loads((folder / "round.json").read_text())
        ratio = record["telemetry"]["change"]["waf"]["ratio"]
        for finding in folder_findings(folder, DropRule(), record.get("telemetry")):
            if finding.drop.metric not in ("iops", "bw") or ratio is None:
                continue
            found.append(GcFinding(
                f"round {record['round']} (write amplification {ratio:.2f}): {finding.line()}: {finding.cause_text}",
                "garbage" in finding.cause_text, ratio >= GC_CLEAR_WAF, finding.drop.to_end,
                (written + finding.drop.written_bytes) / size))
        written += sum(int((cell["write"] or {}).get("io_bytes", 0)) for cell in record["cells"].values())
    return found


def gc_judgement(found: list[GcFinding]) -> str:
    """Every finding in a round certainly collecting garbage names it; what was found, as the check reports it."""
    unnamed = [finding.said for finding in found if finding.certain and not finding.names_gc]
    assert not unnamed, f"findings in rounds collecting garbage that do not name it: {unnamed}"
    named = [f"{finding.said} (after {finding.capacities:.2f} x the capacity written)"
             for finding in found if finding.names_gc]
    return f"findings naming garbage collection: {named or 'none'}"


def gc_transition_step(found: list[GcFinding]) -> GcFinding | None:
    """The first step naming garbage collection that begins between GC_STEP_CAPACITIES of the capacity written
    since the drive was fresh: garbage collection's onset as the drop finder sees it."""
    low, high = GC_STEP_CAPACITIES
    return next((finding for finding in found if finding.step and finding.names_gc
                 and low <= finding.capacities <= high), None)


def keep_rounds(lab: Lab, out: Path) -> None:
    """Each round's record and per-second samples, kept beside the results (the guest's copy goes with it): what
    the drop finder searched, to read again on the host."""
    for folder in sorted(out.glob("pts/*/rounds/*")):
        for name in ("round.json", "seconds.json"):
            if (folder / name).exists():
                lab.keep(f"{out.name}-{folder.parent.parent.name}-{folder.name}-{name}", (folder / name).read_text())


@check("ftl-wsat")
def ftl_wsat(lab: Lab) -> str:
    """`ptsbench pts --tests wsat` on a fresh SSD: write saturation falls off a cliff once the erased flash is
    used up and garbage collection runs: the first round's IOPS at least 1.5 times the last round's. The drop
    finder finds the transition as a drop or step (the round in which the erased flash runs out holds it) naming
    garbage collection as its likely cause (the round's write amplification), and every finding in a round that was
    certainly collecting garbage names it."""
    said, found = wsat_cliff(lab, load_fresh(), WORK / "pts-wsat", WSAT_ROUND_S, WSAT_CAPACITY)
    assert any(finding.names_gc for finding in found), f"no drop or step naming garbage collection: {said}"
    return said


def wsat_cliff(lab: Lab, dev: str, out: Path, round_s: float, capacity: float) -> tuple[str, list[GcFinding]]:
    """ftl-wsat's write saturation test and its judgement, with rounds of `round_s` until `capacity` times the
    capacity is written, on the fresh drive `dev`: what it showed, and its findings (every one in a round certainly
    collecting garbage naming it)."""
    started = time.monotonic()
    ptsbench("pts", dev, "--profile", "demo", "--spec", "1.1", "--tests", "wsat", "--round-time", str(round_s),
             "--wsat-capacity", str(capacity), "--wsat-time", WSAT_TIME_CAP, "--purge", "none",
             "--active-range", "100", "--destructive", "--out", str(out))
    took = time.monotonic() - started
    keep_rounds(lab, out)
    rounds = pts_rounds(out)
    values = [tracked_iops(record) for record in rounds]
    said = f"IOPS per round {[round(v) for v in values]}"
    assert len(values) >= 3, f"only {len(values)} rounds: {said}"
    first, last = values[0], values[-1]
    assert first >= CLIFF_MIN * last, f"no cliff: the first round {first:.0f} IOPS, the last {last:.0f}: {said}"
    found = gc_findings(out, int(Path("/sys/block", os.path.basename(dev), "size").read_text()) * 512)
    return f"{took:.0f} s; {said}: the first round {first / last:.1f} x the last; {gc_judgement(found)}", found


# The CI-sized check: the same shapes as ftl-pts-iops and ftl-wsat on half the flash with faster NAND, in shorter
# rounds. 16 MiB of flash (NVMeVirt given 17 MiB of the reservation: 1 MiB for its registers) with 32 blocks per
# plane keeps blocks of one 32 KiB one-shot page and lines of 128 KiB, 32 lines per partition (the fewest at which
# 10 % over-provisioning leaves about 3 spare lines per partition, the garbage collector needing 2): the first full
# write takes half the bytes, and so does each capacity written at steady state. Programs of 200 ms (not 300) put
# the steady level at about 1.5 times the full model's, still well below a loaded emulated CPU's pace on erased
# flash (238-425 IOPS in round 1 of the full model's runs). Rounds of 10 s: fio's start and end under TCG (about 8 s
# a process) make a round cost about twice its IO time, so shorter ones would buy little. Write saturation in rounds
# of 20 s until four times the capacity is written (PTS's rule): the erased flash runs out in round 1 (about 1.04 x
# the capacity written, at 250-600 IOPS 7-15 s into it), which then holds seconds on both sides of garbage
# collection's onset for the drop finder (in rounds of 10 s it fell near a round's edge: found as a step in one run
# of two); fewer, longer rounds cost about the same (fio's start and end per round), and four capacities give three
# rounds or more.
FOB_WAF_MAX = 2.0  # a round below this write amplification was mostly on erased flash
FOB_MARGIN = 1.5  # ... and its IOPS at least this many times the steady-state mean
CI_MODEL: dict[str, int | str] = {"memmap_size": "17M", "blks_per_pl": 32, "nand_prog_ns": 200_000_000}
CI_ROUND_S = 10
CI_WSAT_ROUND_S = 20
CI_WSAT_CAPACITY = 4


@check("ftl-ci")
def ftl_ci(lab: Lab) -> str:
    """The CI-sized FTL check (ftl-pts-iops and ftl-wsat in a few minutes): on a fresh 16 MiB SSD with 200 ms NAND
    programs, the IOPS test in rounds of 10 s: fresh-out-of-box (the highest round before garbage collection took
    hold, write amplification under 2) 1.5 times the steady-state mean or more, the first window rejected,
    steady state within the round limit, write amplification (the device's OCP C0h log) above 1.5 at steady state
    (and about 1 in any round that ended before the first full write), the OCP latency monitor as ptsbench set it
    counting garbage collection's slow writes (latency_monitor_shapes); then on a fresh drive again write saturation
    in rounds of 20 s until four times the capacity is written: the first round's IOPS at least 1.5 times the
    last's. The drop finder finds garbage collection's onset as a step naming it as the likely cause, in either
    run: a step (the level not back by the round's end) beginning after the namespace was about written once and
    before it was written twice (GC_STEP_CAPACITIES)."""
    dev = load_fresh(**CI_MODEL)
    monitor_option = ("--latency-monitor", ",".join(str(ms) for ms in LAB_MONITOR_MS))
    counted_before = counters()
    iops, iops_found = iops_transition(lab, dev, WORK / "ci-iops", CI_ROUND_S, fresh_round=False,
                                       extra=monitor_option)
    monitor = latency_monitor_shapes(lab, controller_of(dev), WORK / "ci-iops", pts_rounds(WORK / "ci-iops"),
                                     write_latencies(counted_before, counters()), collecting_garbage)
    wsat, wsat_found = wsat_cliff(lab, load_fresh(**CI_MODEL), WORK / "ci-wsat", CI_WSAT_ROUND_S, CI_WSAT_CAPACITY)
    steps = {run: step for run, found in (("IOPS test", iops_found), ("write saturation", wsat_found))
             if (step := gc_transition_step(found)) is not None}
    said = f"IOPS test: {iops} | latency monitor: {monitor} | write saturation: {wsat}"
    assert steps, f"no step naming garbage collection between {GC_STEP_CAPACITIES} x the capacity written: {said}"
    onsets = "; ".join(f"{run}: {step.said} (after {step.capacities:.2f} x the capacity)"
                       for run, step in steps.items())
    return f"garbage collection's onset as a step: {onsets} | {said}"


# the checks of the CI-sized FTL lab (tests/conftest.py's ftl-ci variant) and of the full one (ftl, opt-in)
CI_CHECKS = ("ftl-counters", "ftl-run-dir-9p", "ftl-ci")
FULL_CHECKS = ("ftl-counters", "ftl-run-dir-9p", "ftl-pts-iops", "ftl-wsat")


# ptsbench's --precondition sprandom (fio 3.41's) against PTS's preconditioning (opt-in: PTSBENCH_LAB_SPRANDOM=1 makes
# scripts/device-lab.sh build a fio with sprandom (3.41 or later) once and pass it in PTSBENCH_LAB_FIO; the check
# runs two whole IOPS tests)
SPRANDOM = os.environ.get("PTSBENCH_LAB_SPRANDOM") == "1"
CLASSIC_MULTIPLE = 2  # PTS's workload-independent preconditioning: twice the capacity, 128 KiB sequential writes
# ptsbench's --precondition sprandom, with the model's over-provisioning
SPRANDOM_OPTIONS = ("--precondition", "sprandom", "--sprandom-op", str(MODEL["op_pct"] / 100))


def steady_arm(dev: str, out: Path, fio: str, precondition: tuple[str, ...]) -> dict[str, Any]:
    """One IOPS test with `fio` (PTSBENCH_FIO) as ftl-pts-iops runs it, with this preconditioning: its rounds,
    steady-state window and mean, when the window's last round ended, and what the preconditioning wrote."""
    os.environ["PTSBENCH_FIO"] = fio
    try:
        iops_test(dev, out, precondition)
    finally:
        del os.environ["PTSBENCH_FIO"]
    rounds = pts_rounds(out)
    values = [tracked_iops(record) for record in rounds]
    last = rounds[-1]["steady"]
    assert last["steady"], f"{out.name}: steady state not reached in {len(rounds)} rounds: {[round(v) for v in values]}"
    window = [values[n - 1] for n in last["window_rounds"]]
    wafs = [rounds[n - 1]["telemetry"]["change"]["waf"]["ratio"] for n in last["window_rounds"]]
    assert min(wafs) > WAF_STEADY_MIN, f"{out.name}: write amplification in the window {wafs}: not collecting garbage"
    conditioned = json.loads(next(out.glob("pts/*/precondition/result.json")).read_text())
    return {"values": values, "rounds": last["window_rounds"], "mean": sum(window) / len(window),
            "spread": max(window) - min(window), "ended": _utc(rounds[-1]["finished_utc"]), "wafs": wafs,
            "written": conditioned["written_bytes"], "pre_s": conditioned["runtime_ms"] / 1000}


def ftl_sprandom(lab: Lab) -> str:
    """`ptsbench pts --precondition sprandom` against PTS's preconditioning on the same model, each on a fresh drive
    (rmmod + insmod), with that fio for both: PTS's twice the capacity of sequential writes, then rounds of 4 KiB
    random writes until steady state; or fio's sprandom (the namespace and its over-provisioning of random writes
    once), then the same rounds. Both must reach steady state with garbage collection running (write amplification
    above 1.5 in the window), sprandom must write more than the namespace, its preconditioning job must be fio's
    sprandom with the model's over-provisioning, and the plan must record it as a deviation. The comparison: time
    from the command to the end of the steady-state window, and the steady-state means, the same within the run's
    noise when they differ by no more than the wider of the two windows' spreads (max - min). Reported, not
    required: the evidence for offering it (docs/device-lab.md)."""
    fio = os.environ.get("PTSBENCH_LAB_FIO", "")
    assert fio and Path(fio).is_file(), f"no fio at PTSBENCH_LAB_FIO={fio!r} (scripts/device-lab.sh builds it)"
    version = run([fio, "--version"]).stdout.strip()
    dev = load_fresh()
    started = time.time()
    classic = steady_arm(dev, WORK / "pts-classic", fio, wipc(CLASSIC_MULTIPLE))
    classic_s = classic["ended"] - started
    dev = load_fresh()
    size = int(Path("/sys/block", os.path.basename(dev), "size").read_text()) * 512
    started = time.time()
    fast = steady_arm(dev, WORK / "pts-sprandom", fio, SPRANDOM_OPTIONS)
    fast_s = fast["ended"] - started
    job = next((WORK / "pts-sprandom").glob("pts/*/precondition/job.fio")).read_text()
    lab.keep("ftl-sprandom-job.fio", job)
    assert "sprandom=1" in job.splitlines() and f"spr_op={MODEL['op_pct'] / 100:g}" in job.splitlines(), job
    deviations = json.loads((WORK / "pts-sprandom" / "plan.json").read_text())["deviations"]
    deviation = next((text for text in deviations if "sprandom" in text), None)
    assert deviation, f"the plan does not record sprandom as a deviation: {deviations}"
    noise = max(classic["spread"], fast["spread"])
    same = abs(fast["mean"] - classic["mean"]) <= noise
    faster = fast_s < classic_s
    said = [f"{version}", f"the plan's deviation: {deviation}",
            f"PTS (2 x capacity sequential): steady in rounds {classic['rounds'][0]}-{classic['rounds'][-1]}, mean "
            f"{classic['mean']:.0f} IOPS (spread {classic['spread']:.0f}), {classic_s:.0f} s to steady state, "
            f"IOPS {[round(v) for v in classic['values']]}, WAF in the window {[round(w, 1) for w in classic['wafs']]}",
            f"--precondition sprandom ({fast['written'] / size:.2f} x the namespace written in {fast['pre_s']:.0f} "
            f"s): steady in rounds {fast['rounds'][0]}-{fast['rounds'][-1]}, mean {fast['mean']:.0f} IOPS (spread "
            f"{fast['spread']:.0f}), {fast_s:.0f} s to steady state, IOPS {[round(v) for v in fast['values']]}, WAF "
            f"in the window {[round(w, 1) for w in fast['wafs']]}",
            f"steady means {'within' if same else 'NOT within'} the noise ({abs(fast['mean'] - classic['mean']):.0f} "
            f"IOPS apart, spread {noise:.0f}); sprandom {'faster' if faster else 'NOT faster'} to steady state "
            f"({fast_s / classic_s:.2f} x); the comparison {'holds' if same and faster else 'does not hold'}"]
    assert fast["written"] > size, f"sprandom wrote {fast['written']} bytes, not more than the namespace's {size}"
    return "; ".join(said)


if SPRANDOM:
    check("ftl-sprandom")(ftl_sprandom)
    FULL_CHECKS += ("ftl-sprandom",)


def run_variant_checks(names: list[str], results: Path) -> int:
    return run_in_order(Lab({}, results.parent / "samples"), names, results, CHECKS)


def main() -> int:
    return lab_main(__doc__, CHECKS, run_variant_checks)


if __name__ == "__main__":
    sys.exit(main())
