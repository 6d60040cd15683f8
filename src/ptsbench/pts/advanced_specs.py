"""Issue 7's tests as data: HIR, XSR, CBW, DIRTH, ECW (PTS-E 1.1) and the HDD zone tests.

Every test is built from the shapes of pts/specs.py - CellSpec, Phase, StopRule, Tracked - so the one PTS engine can
run it: a test is a chain of phases (purge only in the first), each phase rounds of cells run as one fio process.
TC is fio numjobs and QD is fio iodepth everywhere (CellSpec.numjobs / .iodepth); cell names say both ("tc16/qd4").

- HIR (host idle recovery): phase `hir-ss`: purge (no WIPC, as cloudharmony/block-storage and a PTS 2.0.2 Python suite
  do), 30-minute rounds (`ss_round_s`, cloudharmony's 30 one-minute intervals) of RND 4 KiB writes at the profile's
  TC/QD until steady state (its IOPS is the baseline): long enough that a fresh drive passes its write cliff before
  steady state is judged. Then one phase per wait state W (5, 10, 15, 25, 50 s), one round each: 360 burst cells of 5 s
  RND 4 KiB writes, burst k starting at k x (5 + W) s, and one 1800 s recovery cell starting at 360 x (5 + W) s (so W s
  of idle follow every burst, the last one included). The start times are fio `startdelay`, which fio counts from its
  own start (measured with fio 3.33: stonewalled jobs with startdelay 2 s and 4 s start 2 s apart, not after the
  previous job plus the delay), so the hand-off time between jobs never adds up over 360 cycles. (fio's thinktime_iotime
  looked simpler, but in fio 3.33 its first burst lasts iotime + thinktime, measured.)
- XSR (cross stimulus recovery): three phases of 1-minute rounds, no tracked variable: SEQ 1024 KiB writes for 8 h
  (purge first), RND 8 KiB writes for 6 h, SEQ 1024 KiB writes for 8 h; each round is one throughput sample.
  TC1/QD32 and no WIPC as in the public PTS implementations (cloudharmony/block-storage's ADATA fork,
  lib/BlockStorageTestXsr.php; a PTS 2.0.2 Python suite's 06_XSR); group lengths 8/6/8 h as in the ADATA fork
  (the Python suite has 6/8/6 h): see docs/pts-spec-sources.md.
- CBW / DIRTH / ECW (demand intensity): phase `KEY-wdpc`: purge, 30-minute rounds (`ss_round_s`, as the ADATA fork's
  DIRTH) of the workload's writes at TC32/QD32 until steady state; phase `KEY`: rounds of a 5-minute TC32/QD32 pre-write
  then the 49 cells for TC in 32,16,8,6,4,2,1 (outer) and QD in 32,16,8,6,4,2,1 (inner) - from the highest outstanding
  IO down to TC1/QD1 - tracked on the TC32/QD32 IOPS; then, once MaxIOPS / MidIOPS / MinIOPS are chosen
  (pts/advanced.py), phases `KEY-max`, `KEY-mid`, `KEY-min`: a 60-minute pre-write (at TC32/QD32 as a PTS 2.0.2 Python
  suite does, or with `point_prewrite_depth` "point" at the point's own TC/QD as the ADATA fork does) and a 10-minute
  capture at the point's TC/QD whose json+ bins give the response-time histogram. CBW's access pattern is JEDEC JESD219
  (fio bssplit and random_distribution=zoned), read/write 40/60 as JESD219 itself (fio's examples/jesd219.fio:
  rwmixread=40); DIRTH's is the operator's random workload (default 8 KiB 65/35, the ADATA fork's default); ECW is PTS-E
  1.1's counterpart of CBW with the same pattern, 40/60 mix and 7 x 7 sweep (a public PTS-E ECW script, 07_ECW).
  Pre-writes use the workload's block sizes and LBA zones with 100 % writes at TC32/QD32, as those scripts do. DIRTH is
  in PTS-E 1.1 too (cloudharmony/block-storage README lists it among the spec's eight tests).
- HDD zones (TKperf, src/perfTest/DeviceTests.py): the active range cut into 128 equal zones, outer (low LBAs) to
  inner; `hdd-iops`: per zone, RND mixes 100/50/0 % read (outer) x 64k, 16k, 4k (inner); `hdd-tp`: per block size
  1024k then 4k, every zone in turn, SEQ read then write. No purge, no steady state: one round of 60 s cells.
  TC1/QD1 (TKperf's defaults, overridable). Each cell is a ZonedCellSpec (a CellSpec with its zone);
  `place_zones` turns zones into fio offset/size once the active range is known.

Durations and sizes are AdvancedParams, one per selected test in Settings.advanced: SPEC_PARAMS are the spec's,
`profile_params` adds a profile's TC/QD, round time, maximum rounds and own changes (DEMO_PARAMS: the demo profile's,
each test end to end in about a minute on a scratch file), `apply_overrides` the command line's, and
`advanced_deviations` lists every departure (for the "not PTS-compliant" banner).

Roles (Phase.role, CellSpec.role) say what each phase and cell is, so the engine, tables and report need not parse
keys or names: phases "baseline" / "wait-state" (meta wait_s) for HIR, "group" (meta group) for XSR,
"precondition" / "sweep" / "point" (meta point, tc, qd) for CBW/DIRTH/ECW, "zones" (meta zones) for HDD; cells
"burst" / "recovery" (HIR), "pre-write", "histogram" (CBW/DIRTH/ECW) and "" for every measured cell.
"""

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

from ptsbench.errors import PtsbenchError
from ptsbench.pts.specs import (
    PROFILES,
    PTS_MAX_ROUNDS,
    PTS_ROUND_TIME_S,
    CellSpec,
    Phase,
    Profile,
    StopRule,
    Tracked,
    cell_name,
    parse_positive_int,
    parse_seconds,
)
from ptsbench.units import format_bs, parse_size_bytes

# HIR (wait states, bursts and the 1800 s return to baseline: cloudharmony/block-storage lib/BlockStorageTestHir.php)
HIR_WAIT_STATES_S = (5.0, 10.0, 15.0, 25.0, 50.0)
HIR_BURSTS = 360
HIR_BURST_S = 5.0
HIR_RECOVERY_S = 1800.0
HIR_BLOCK_SIZE = 4096
# XSR: (pattern, block size) per access group, and each group's length
XSR_GROUPS = (("seq", 1024**2), ("rnd", 8192), ("seq", 1024**2))
XSR_GROUP_S = (8 * 3600.0, 6 * 3600.0, 8 * 3600.0)
XSR_DEPTH = (1, 32)
# CBW, DIRTH, ECW (sweep, pre-writes and capture: the ADATA fork's BlockStorageTestDirth.php, a PTS-E 07_ECW script)
DEMAND_TCS = (32, 16, 8, 6, 4, 2, 1)
DEMAND_QDS = (32, 16, 8, 6, 4, 2, 1)
PREWRITE_S = 300.0
POINT_PREWRITE_S = 3600.0
POINT_CAPTURE_S = 600.0
# HIR's baseline and CBW/DIRTH/ECW's preconditioning: rounds of 30 one-minute intervals (cloudharmony/block-storage's
# HIR, the ADATA fork's DIRTH), long enough that a fresh drive passes its write cliff before steady state is judged
SS_ROUND_S = 30 * 60.0
# Operating-point pre-writes: "top" at the sweep's highest TC/QD (TC32/QD32: a PTS 2.0.2 Python suite's 07_CBW_2,
# the same depth as every round's pre-write), or "point" at the operating point's own TC/QD (the ADATA fork)
PREWRITE_DEPTHS = ("top", "point")
OPERATING_POINTS = ("max", "mid", "min")
JESD219_BLOCK_SIZES = (  # (bytes, % of IOs)
    (512, 4), (1024, 1), (1536, 1), (2048, 1), (2560, 1), (3072, 1), (3584, 1),
    (4096, 67), (8192, 10), (16384, 7), (32768, 3), (65536, 3),
)
JESD219_ZONES = ((50, 5), (30, 15), (20, 80))  # (% of IOs, % of LBAs), from the first LBA on
CBW_READ_PCT = 40  # JESD219's read share (fio examples/jesd219.fio: rwmixread=40, rwmixwrite=60)
DIRTH_BLOCK_SIZE = 8192
DIRTH_READ_PCT = 65
# HDD zones (TKperf src/perfTest/DeviceTests.py: HddIopsTest, HddTPTest; Options: TC1/QD1, 60 s)
HDD_ZONES = 128
HDD_IOPS_BLOCK_SIZES = (64 * 1024, 16 * 1024, 4096)
HDD_IOPS_MIXES = (100, 50, 0)
HDD_TP_BLOCK_SIZES = (1024**2, 4096)
HDD_DEPTH = (1, 1)


def jesd219_bssplit() -> str:
    """fio bssplit of the JESD219 enterprise block-size mix, sizes in bytes: '512/4:1024/1:...:65536/3'."""
    return ":".join(f"{size}/{pct}" for size, pct in JESD219_BLOCK_SIZES)


def jesd219_zones() -> str:
    """fio random_distribution of the JESD219 LBA mix: 'zoned:50/5:30/15:20/80'."""
    return "zoned:" + ":".join(f"{ios}/{lbas}" for ios, lbas in JESD219_ZONES)


@dataclass(frozen=True)
class AdvancedParams:
    """Every duration, count and workload choice of the advanced tests (the spec's values by default)."""

    round_time_s: float = PTS_ROUND_TIME_S  # steady-state round cells, XSR samples, HDD cells
    max_rounds: int = PTS_MAX_ROUNDS
    numjobs: int = 4  # HIR's TC/QD: the profile's (enterprise TC4/QD32)
    iodepth: int = 32
    hir_wait_states_s: tuple[float, ...] = HIR_WAIT_STATES_S
    hir_bursts: int = HIR_BURSTS
    hir_burst_s: float = HIR_BURST_S
    hir_recovery_s: float = HIR_RECOVERY_S
    xsr_group_s: tuple[float, ...] = XSR_GROUP_S
    xsr_depth: tuple[int, int] = XSR_DEPTH
    demand_tcs: tuple[int, ...] = DEMAND_TCS
    demand_qds: tuple[int, ...] = DEMAND_QDS
    prewrite_s: float = PREWRITE_S
    point_prewrite_s: float = POINT_PREWRITE_S
    point_capture_s: float = POINT_CAPTURE_S
    point_prewrite_depth: str = PREWRITE_DEPTHS[0]
    ss_round_s: float = SS_ROUND_S  # HIR baseline and CBW/DIRTH/ECW preconditioning rounds
    dirth_bs_bytes: int = DIRTH_BLOCK_SIZE
    dirth_read_pct: int = DIRTH_READ_PCT
    hdd_zones: int = HDD_ZONES
    hdd_depth: tuple[int, int] = HDD_DEPTH


SPEC_PARAMS = AdvancedParams()


def profile_params(profile: Profile) -> AdvancedParams:
    """A profile's parameters: the spec's, with the profile's TC/QD (HIR), round time, maximum rounds and its own
    changes (`Profile.advanced`)."""
    return replace(SPEC_PARAMS, numjobs=profile.numjobs, iodepth=profile.iodepth, round_time_s=profile.round_time_s,
                   max_rounds=profile.max_rounds, **profile.advanced)  # type: ignore[arg-type]


DEMO_PARAMS = profile_params(PROFILES["demo"])


def advanced_from_dict(data: Mapping[str, object]) -> AdvancedParams:
    """The inverse of dataclasses.asdict after a JSON round trip (lists back to tuples); missing fields keep the
    spec's value, except the steady-state round of a run made before it existed: the round time, as then."""
    values = {item.name: data[item.name] for item in fields(AdvancedParams) if item.name in data}
    if "ss_round_s" not in values and "round_time_s" in values:
        values["ss_round_s"] = values["round_time_s"]
    return AdvancedParams(**{name: tuple(v) if isinstance(v, list) else v  # type: ignore[arg-type]
                             for name, v in values.items()})


@dataclass(frozen=True)
class ZonedCellSpec(CellSpec):
    """A cell confined to one of `zones` equal parts of the active range (0 = the lowest LBAs, the outer tracks)."""

    zone: int = 0
    zones: int = 1


def zone_bounds(active_range_bytes: int, zones: int, align_bytes: int) -> list[tuple[int, int]]:
    """(offset, size) in bytes of each zone: equal sizes, whole alignment units, from offset 0."""
    size = active_range_bytes // zones // align_bytes * align_bytes
    if size <= 0:
        raise PtsbenchError(f"the active range is too small for {zones} zones of whole {align_bytes}-byte units",
                            "use fewer zones or a larger target")
    return [(index * size, size) for index in range(zones)]


def place_zones(phases: Sequence[Phase], active_range_bytes: int, align_bytes: int) -> tuple[Phase, ...]:
    """The phases with every ZonedCellSpec confined to its zone through fio `offset` and `size` (bytes), which
    round_job applies after its own (a cell's fio options win). Run make_plan once to learn the active range and
    alignment, place the zones, and plan again with the placed phases."""
    placed = []
    for phase in phases:
        cells = tuple(_placed(cell, active_range_bytes, align_bytes) for cell in phase.cells)
        placed.append(replace(phase, cells=cells) if cells != phase.cells else phase)
    return tuple(placed)


def _placed(cell: CellSpec, active_range_bytes: int, align_bytes: int) -> CellSpec:
    if not isinstance(cell, ZonedCellSpec):
        return cell
    offset, size = zone_bounds(active_range_bytes, cell.zones, align_bytes)[cell.zone]
    options = {**dict(cell.fio_options), "offset": str(offset), "size": str(size)}
    if cell.pattern == "seq" and cell.numjobs > 1:  # each thread its own slice of the zone
        share = size // cell.numjobs // cell.bs_bytes * cell.bs_bytes
        options.update(size=str(share), offset_increment=str(share))
    return replace(cell, fio_options=tuple(options.items()))


# ---------------------------------------------------------------------------------------------------------------
# cells


def depth_name(workload: str, numjobs: int, iodepth: int) -> str:
    """A cell name with its thread count and queue depth: 'cbw 40/60 tc32/qd32'."""
    return f"{workload} tc{numjobs}/qd{iodepth}"


def fio_ms(seconds: float) -> str:
    """A fio time value in whole milliseconds: 1.5 -> '1500ms'."""
    return f"{round(seconds * 1000)}ms"


def start_delay_s(cell: CellSpec) -> float:
    """The cell's fio startdelay in seconds (0 when it has none)."""
    text = dict(cell.fio_options).get("startdelay")
    match = re.fullmatch(r"(\d+)ms", text or "")
    return int(match.group(1)) / 1000 if match else 0.0


def round_duration_s(cells: Sequence[CellSpec]) -> float:
    """Planned wall time of a round of stonewalled cells, startdelay counted from the round's start (as fio does)."""
    end_s = 0.0
    for cell in cells:
        end_s = max(end_s, start_delay_s(cell)) + cell.runtime_s
    return end_s


@dataclass(frozen=True)
class Workload:
    """What a demand-intensity test (CBW, DIRTH, ECW) runs: a random pattern, its mix and its extra fio options."""

    label: str  # how its cells are named: 'cbw' or 'rnd 8k'
    bs_bytes: int  # nominal block size (bssplit overrides it in fio)
    read_pct: int
    fio_options: tuple[tuple[str, str | None], ...] = ()

    def name(self, read_pct: int, numjobs: int, iodepth: int, role: str = "") -> str:
        mix = f"{read_pct}/{100 - read_pct}"
        return depth_name(f"{self.label} {mix}{' ' + role if role else ''}", numjobs, iodepth)

    def cell(self, read_pct: int, numjobs: int, iodepth: int, runtime_s: float, role: str = "") -> CellSpec:
        return CellSpec(self.name(read_pct, numjobs, iodepth, role), "rnd", read_pct, self.bs_bytes, numjobs, iodepth,
                        runtime_s, self.fio_options, role=role)


CBW_WORKLOAD = Workload("cbw", 4096, CBW_READ_PCT,
                        (("bssplit", jesd219_bssplit()), ("random_distribution", jesd219_zones())))


def dirth_workload(params: AdvancedParams) -> Workload:
    """DIRTH's random workload: the operator's block size and mix (default 8 KiB 65/35)."""
    return Workload(f"rnd {format_bs(params.dirth_bs_bytes)}", params.dirth_bs_bytes, params.dirth_read_pct)


# ---------------------------------------------------------------------------------------------------------------
# phases per test


def hir_burst_starts_s(params: AdvancedParams, wait_s: float) -> tuple[float, ...]:
    """Start of every burst of one wait state, from the start of its round: k x (burst + wait)."""
    return tuple(index * (params.hir_burst_s + wait_s) for index in range(params.hir_bursts))


def hir_recovery_start_s(params: AdvancedParams, wait_s: float) -> float:
    """The continuous recovery writes start after the last burst's idle time."""
    return params.hir_bursts * (params.hir_burst_s + wait_s)


def wait_label(wait_s: float) -> str:
    return f"w{wait_s:g}s"


def hir_phases(params: AdvancedParams) -> tuple[Phase, ...]:
    tc, qd = params.numjobs, params.iodepth
    workload = cell_name("rnd", HIR_BLOCK_SIZE, 0)
    steady = Phase(
        key="hir-ss", test="hir", title="Host idle recovery: steady state (baseline)", purge=True,
        precondition=None, cells=(CellSpec(workload, "rnd", 0, HIR_BLOCK_SIZE, tc, qd, params.ss_round_s),),
        tracked=(Tracked(workload, "iops"),), stop=StopRule("steady", params.max_rounds), role="baseline")
    phases = [steady]
    for wait_s in params.hir_wait_states_s:
        label = wait_label(wait_s)
        cells = [
            CellSpec(f"{workload} {label} burst {index + 1:03d}", "rnd", 0, HIR_BLOCK_SIZE, tc, qd, params.hir_burst_s,
                     (("startdelay", fio_ms(start_s)),) if start_s else (), role="burst")
            for index, start_s in enumerate(hir_burst_starts_s(params, wait_s))
        ]
        cells.append(CellSpec(f"{workload} {label} recovery", "rnd", 0, HIR_BLOCK_SIZE, tc, qd, params.hir_recovery_s,
                              (("startdelay", fio_ms(hir_recovery_start_s(params, wait_s))),), role="recovery"))
        phases.append(Phase(
            key=f"hir-{label}", test="hir", title=f"Host idle recovery: wait state {wait_s:g} s", purge=False,
            precondition=None, cells=tuple(cells), tracked=(), stop=StopRule("rounds", 1), role="wait-state",
            meta=(("wait_s", wait_s),)))
    return tuple(phases)


def xsr_phases(params: AdvancedParams) -> tuple[Phase, ...]:
    tc, qd = params.xsr_depth
    phases = []
    for number, ((pattern, bs), group_s) in enumerate(zip(XSR_GROUPS, params.xsr_group_s, strict=True), start=1):
        name = cell_name(pattern, bs, 0)
        phases.append(Phase(
            key=f"xsr-{number}", test="xsr", title=f"Cross stimulus recovery: group {number}, {name}",
            purge=number == 1, precondition=None,
            cells=(CellSpec(name, pattern, 0, bs, tc, qd, params.round_time_s),), tracked=(),
            stop=StopRule("rounds", max(1, math.ceil(group_s / params.round_time_s - 1e-9))), role="group",
            meta=(("group", number),)))
    return tuple(phases)


def demand_phases(key: str, title: str, workload: Workload, params: AdvancedParams) -> tuple[Phase, ...]:
    """Preconditioning to steady state, then rounds of the pre-write and the TC x QD sweep (high to low)."""
    top_tc, top_qd = max(params.demand_tcs), max(params.demand_qds)
    writes = workload.cell(0, top_tc, top_qd, params.ss_round_s)
    wdpc = Phase(
        key=f"{key}-wdpc", test=key, title=f"{title}: preconditioning", purge=True, precondition=None,
        cells=(writes,), tracked=(Tracked(writes.name, "iops"),), stop=StopRule("steady", params.max_rounds),
        role="precondition")
    prewrite = workload.cell(0, top_tc, top_qd, params.prewrite_s, role="pre-write")
    sweep = tuple(workload.cell(workload.read_pct, tc, qd, params.round_time_s)
                  for tc in sorted(params.demand_tcs, reverse=True) for qd in sorted(params.demand_qds, reverse=True))
    rounds = Phase(
        key=key, test=key, title=title, purge=False, precondition=None, cells=(prewrite, *sweep),
        tracked=(Tracked(sweep[0].name, "iops"),), stop=StopRule("steady", params.max_rounds), role="sweep")
    return wdpc, rounds


def sweep_cells(cells: Sequence[CellSpec]) -> tuple[CellSpec, ...]:
    """The TC x QD cells of a demand-intensity round (not its pre-write)."""
    return tuple(cell for cell in cells if cell.role != "pre-write")


def operating_point_phases(key: str, title: str, workload: Workload, params: AdvancedParams,
                           points: Mapping[str, tuple[int, int]]) -> tuple[Phase, ...]:
    """One phase per chosen operating point ('max', 'mid', 'min' -> (TC, QD); a point left out is not run): a
    pre-write (at the sweep's top TC/QD, or the point's own: `point_prewrite_depth`), then the capture at the point's
    TC/QD whose latency bins make the response-time histogram."""
    top_tc, top_qd = max(params.demand_tcs), max(params.demand_qds)
    phases = []
    for point in (point for point in OPERATING_POINTS if point in points):
        tc, qd = points[point]
        pre_tc, pre_qd = (tc, qd) if params.point_prewrite_depth == "point" else (top_tc, top_qd)
        cells = (workload.cell(0, pre_tc, pre_qd, params.point_prewrite_s, role="pre-write"),
                 workload.cell(workload.read_pct, tc, qd, params.point_capture_s, role="histogram"))
        phases.append(Phase(
            key=f"{key}-{point}", test=key, title=f"{title}: {point.capitalize()}IOPS at TC{tc}/QD{qd}",
            purge=False, precondition=None, cells=cells, tracked=(), stop=StopRule("rounds", 1), role="point",
            meta=(("point", point), ("tc", tc), ("qd", qd))))
    return tuple(phases)


def hdd_iops_phases(params: AdvancedParams) -> tuple[Phase, ...]:
    tc, qd = params.hdd_depth
    cells = tuple(
        ZonedCellSpec(f"z{zone + 1:03d} {cell_name('rnd', bs, mix)}", "rnd", mix, bs, tc, qd, params.round_time_s,
                      zone=zone, zones=params.hdd_zones)
        for zone in range(params.hdd_zones) for mix in HDD_IOPS_MIXES for bs in HDD_IOPS_BLOCK_SIZES
    )
    return (Phase(key="hdd-iops", test="hdd-iops", title=f"HDD IOPS per zone ({params.hdd_zones} zones)",
                  purge=False, precondition=None, cells=cells, tracked=(), stop=StopRule("rounds", 1), role="zones",
                  meta=(("zones", params.hdd_zones),)),)


def hdd_tp_phases(params: AdvancedParams) -> tuple[Phase, ...]:
    tc, qd = params.hdd_depth
    cells = tuple(
        ZonedCellSpec(f"z{zone + 1:03d} {cell_name('seq', bs, mix)}", "seq", mix, bs, tc, qd, params.round_time_s,
                      zone=zone, zones=params.hdd_zones)
        for bs in HDD_TP_BLOCK_SIZES for zone in range(params.hdd_zones) for mix in (100, 0)
    )
    return (Phase(key="hdd-tp", test="hdd-tp", title=f"HDD throughput per zone ({params.hdd_zones} zones)",
                  purge=False, precondition=None, cells=cells, tracked=(), stop=StopRule("rounds", 1), role="zones",
                  meta=(("zones", params.hdd_zones),)),)


# ---------------------------------------------------------------------------------------------------------------
# the rows


@dataclass(frozen=True)
class AdvancedDef:
    """One advanced test as a row: which spec versions have it and how its phases are built."""

    key: str
    title: str
    specs: tuple[str, ...]
    section: Mapping[str, str]  # the spec's name for the test, by spec version
    build: Callable[[AdvancedParams], tuple[Phase, ...]] = field(repr=False)
    workload: Callable[[AdvancedParams], Workload] | None = field(default=None, repr=False)  # demand tests


def _demand(key: str, title: str, workload: Callable[[AdvancedParams], Workload]) -> Callable[
        [AdvancedParams], tuple[Phase, ...]]:
    return lambda params: demand_phases(key, title, workload(params), params)


def _cbw(_params: AdvancedParams) -> Workload:
    return CBW_WORKLOAD


ADVANCED_DEFS: dict[str, AdvancedDef] = {
    "hir": AdvancedDef("hir", "Host idle recovery", ("2.0", "1.1"),
                       {"2.0": "PTS 2.0.2 section 11 (HIR)", "1.1": "PTS-E 1.1 Host Idle Recovery test"}, hir_phases),
    "xsr": AdvancedDef("xsr", "Cross stimulus recovery", ("2.0", "1.1"),
                       {"2.0": "PTS 2.0.2 section 12 (XSR)", "1.1": "PTS-E 1.1 Cross Stimulus Recovery test"},
                       xsr_phases),
    "cbw": AdvancedDef("cbw", "Composite block size workload", ("2.0",), {"2.0": "PTS 2.0.2 section 13 (CBW)"},
                       _demand("cbw", "Composite block size workload", _cbw), _cbw),
    "dirth": AdvancedDef("dirth", "Demand intensity / response time histogram", ("2.0", "1.1"),
                         {"2.0": "PTS 2.0.2 section 14 (DIRTH)", "1.1": "PTS-E 1.1 Demand Intensity test"},
                         _demand("dirth", "Demand intensity / response time histogram", dirth_workload),
                         dirth_workload),
    "ecw": AdvancedDef("ecw", "Enterprise composite workload", ("1.1",),
                       {"1.1": "PTS-E 1.1 Enterprise Composite Workload test"},
                       _demand("ecw", "Enterprise composite workload", _cbw), _cbw),
    "hdd-iops": AdvancedDef("hdd-iops", "HDD IOPS per zone", ("2.0", "1.1"),
                            {"2.0": "TKperf HDD mode", "1.1": "TKperf HDD mode"}, hdd_iops_phases),
    "hdd-tp": AdvancedDef("hdd-tp", "HDD throughput per zone", ("2.0", "1.1"),
                          {"2.0": "TKperf HDD mode", "1.1": "TKperf HDD mode"}, hdd_tp_phases),
}
ADVANCED_ORDER = ("hir", "xsr", "cbw", "ecw", "dirth", "hdd-iops", "hdd-tp")


def check_spec(test: str, spec: str) -> AdvancedDef:
    """The test's row, or one clear error for an unknown test or one the spec version does not have."""
    defn = ADVANCED_DEFS.get(test)
    if defn is None:
        raise PtsbenchError(f"unknown test {test!r}", f"choose from {','.join(ADVANCED_ORDER)}")
    if spec not in defn.specs:
        other = "cbw with --spec 2.0" if test == "ecw" else "ecw with --spec 1.1" if test == "cbw" else "another test"
        raise PtsbenchError(f"{test} is not part of PTS {spec}", f"use {other}")
    return defn


def build_advanced(test: str, params: AdvancedParams, spec: str = "2.0") -> tuple[Phase, ...]:
    """The phases of one advanced test (operating-point phases come later, from `point_phases`)."""
    defn = check_spec(test, spec)
    check_params(params)
    return defn.build(params)


def point_phases(test: str, params: AdvancedParams, points: Mapping[str, tuple[int, int]]) -> tuple[Phase, ...]:
    """The operating-point phases of a demand-intensity test, from the points the engine chose and stored."""
    defn = ADVANCED_DEFS[test]
    if defn.workload is None:
        raise PtsbenchError(f"{test} has no operating points", "only CBW, DIRTH and ECW have them")
    return operating_point_phases(test, defn.title, defn.workload(params), params, points)


def advanced_params(test: str, profile: Profile, spec: str, changes: Mapping[str, object]) -> AdvancedParams:
    """One advanced test's parameters under a profile with the command line's changes, checked."""
    check_spec(test, spec)
    params = apply_overrides(test, profile_params(profile), changes)
    check_params(params)
    return params


def check_params(params: AdvancedParams) -> None:
    """One clear error for a parameter no test can run with."""
    durations = (params.round_time_s, params.ss_round_s, params.hir_burst_s, params.hir_recovery_s, params.prewrite_s,
                 params.point_prewrite_s, params.point_capture_s, *params.xsr_group_s)
    if any(value <= 0 for value in durations) or any(wait < 0 for wait in params.hir_wait_states_s):
        raise PtsbenchError("advanced test durations must be positive", "e.g. --round-time 60")
    counts = (params.max_rounds, params.numjobs, params.iodepth, params.hir_bursts, params.hdd_zones,
              *params.xsr_depth, *params.hdd_depth, *params.demand_tcs, *params.demand_qds)
    if any(value < 1 for value in counts) or not params.hir_wait_states_s:
        raise PtsbenchError("thread counts, queue depths, rounds, bursts and zones must be at least 1", "e.g. 4")
    if 1 not in params.demand_tcs or 1 not in params.demand_qds:
        raise PtsbenchError("the TC x QD sweep must include TC1/QD1 (the MinIOPS point)", "keep 1 in both lists")
    if params.dirth_bs_bytes <= 0 or params.dirth_bs_bytes % 512 or not 0 <= params.dirth_read_pct <= 100:
        raise PtsbenchError("DIRTH block size must be a multiple of 512 and its read share 0..100",
                            "e.g. 8k and 65")
    if params.point_prewrite_depth not in PREWRITE_DEPTHS:
        raise PtsbenchError(f"unknown operating-point pre-write depth {params.point_prewrite_depth!r}",
                            f"use one of {', '.join(PREWRITE_DEPTHS)}")
    if len(params.xsr_group_s) != len(XSR_GROUPS):
        raise PtsbenchError("XSR has three access groups", "give three durations")


# Which tests use each parameter: what a command-line override may change and what a deviation concerns
PARAM_TESTS: dict[str, tuple[str, ...]] = {
    "round_time_s": ("xsr", "cbw", "ecw", "dirth", "hdd-iops", "hdd-tp"),
    "ss_round_s": ("hir", "cbw", "ecw", "dirth"),
    "max_rounds": ("hir", "cbw", "ecw", "dirth"),
    "numjobs": ("hir",),
    "iodepth": ("hir",),
    "hir_wait_states_s": ("hir",),
    "hir_bursts": ("hir",),
    "hir_burst_s": ("hir",),
    "hir_recovery_s": ("hir",),
    "xsr_group_s": ("xsr",),
    "xsr_depth": ("xsr",),
    "demand_tcs": ("cbw", "ecw", "dirth"),
    "demand_qds": ("cbw", "ecw", "dirth"),
    "prewrite_s": ("cbw", "ecw", "dirth"),
    "point_prewrite_s": ("cbw", "ecw", "dirth"),
    "point_capture_s": ("cbw", "ecw", "dirth"),
    "point_prewrite_depth": ("cbw", "ecw", "dirth"),
    "dirth_bs_bytes": ("dirth",),
    "dirth_read_pct": ("dirth",),
    "hdd_zones": ("hdd-iops", "hdd-tp"),
    "hdd_depth": ("hdd-iops", "hdd-tp"),
}
# The operator's choices (DIRTH's workload) and TKperf's defaults (HDD zones): not deviations from the spec
OPERATOR_CHOICES = frozenset({"dirth_bs_bytes", "dirth_read_pct", "hdd_zones", "hdd_depth"})
# Recorded choices where the public implementations differ and the spec text was not at hand: shown in the plan,
# not deviations
READINGS = frozenset({"point_prewrite_depth"})
# Tests whose TC/QD is a pair of their own: --numjobs / --iodepth change it
DEPTH_FIELDS = {"xsr": "xsr_depth", "hdd-iops": "hdd_depth", "hdd-tp": "hdd_depth"}


def advanced_deviations(tests: Sequence[str], params: AdvancedParams,
                        reference: AdvancedParams = SPEC_PARAMS) -> list[str]:
    """Every way `params` depart from the spec for the chosen tests, one line each."""
    reasons = []
    for item in fields(AdvancedParams):
        ours, theirs = getattr(params, item.name), getattr(reference, item.name)
        concerned = [ADVANCED_DEFS[test].title for test in tests if test in PARAM_TESTS[item.name]]
        if ours != theirs and concerned and item.name not in OPERATOR_CHOICES | READINGS:
            mine, spec = PARAM_WORDS.get(item.name, (f"{item.name} {{}}", "{}"))
            reasons.append(f"{', '.join(concerned)}: {mine.format(_show(item.name, ours))} "
                           f"(PTS: {spec.format(_show(item.name, theirs))})")
    return reasons


# a parameter's value in words, as the deviation says it: (ours, the spec's); {} is the value
PARAM_WORDS: dict[str, tuple[str, str]] = {
    "round_time_s": ("{} per cell", "{}"), "max_rounds": ("at most {} rounds", "up to {}"),
    "numjobs": ("TC{}", "TC{}"), "iodepth": ("QD{}", "QD{}"),
    "hir_wait_states_s": ("wait states of {}", "{}"), "hir_bursts": ("{} bursts per wait state", "{}"),
    "hir_burst_s": ("bursts of {}", "{}"), "hir_recovery_s": ("{} of return-to-baseline writes", "{}"),
    "xsr_group_s": ("access groups of {}", "{}"), "xsr_depth": ("TC/QD {}", "{}"),
    "demand_tcs": ("thread counts {}", "{}"), "demand_qds": ("queue depths {}", "{}"),
    "prewrite_s": ("pre-write of {}", "{}"), "point_prewrite_s": ("pre-write of {} per operating point", "{}"),
    "point_capture_s": ("histogram capture of {} per operating point", "{}"),
    "ss_round_s": ("steady-state rounds of {}", "{}"), "hdd_zones": ("{} zones", "{}"),
    "hdd_depth": ("TC/QD {}", "{}"),
}


def _show(name: str, value: object) -> str:
    """A value as the deviation says it: durations in s, min or h, lists with commas, TC/QD pairs with a slash."""
    from ptsbench.units import spoken_duration

    if isinstance(value, tuple):
        joiner = "/" if name.endswith("_depth") else ", "
        return joiner.join(_show(name, item) for item in value)
    if name.endswith("_s") and isinstance(value, int | float):
        return spoken_duration(float(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def parse_depths(text: str) -> tuple[int, ...]:
    """'32,16,1' -> (32, 16, 1), for --demand-tcs / --demand-qds."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items or not all(item.isdigit() and int(item) >= 1 for item in items):
        raise PtsbenchError(f"not a list of whole numbers >= 1: {text!r}", "e.g. 32,16,8,6,4,2,1")
    return tuple(dict.fromkeys(int(item) for item in items))  # each depth once: a repeat would be a second cell


def parse_dirth_workload(text: str) -> tuple[int, int]:
    """'8k:65' (block size : read %) -> (8192, 65), for --dirth-workload."""
    size, sep, read = text.partition(":")
    if not sep or not read.strip().isdigit():
        raise PtsbenchError(f"not a DIRTH workload: {text!r}", "use BLOCK_SIZE:READ_PERCENT, e.g. 8k:65")
    return parse_size_bytes(size.strip()), int(read)


def override_names(test: str) -> frozenset[str]:
    """The command-line overrides an advanced test takes (see `apply_overrides`)."""
    names = {name for name, tests in PARAM_TESTS.items() if test in tests}
    if test in DEPTH_FIELDS:
        names |= {"numjobs", "iodepth"}
    if "dirth_bs_bytes" in names:
        names.add("dirth_workload")
    return frozenset(names)


def apply_overrides(test: str, params: AdvancedParams, changes: Mapping[str, object]) -> AdvancedParams:
    """`params` with the command line's changes: AdvancedParams fields, plus numjobs / iodepth for a test whose
    TC/QD is its own pair (XSR, HDD) and dirth_workload (block size, read %)."""
    values = dict(changes)
    if "dirth_workload" in values:
        values["dirth_bs_bytes"], values["dirth_read_pct"] = values.pop("dirth_workload")  # type: ignore[misc]
    depth = DEPTH_FIELDS.get(test)
    if depth and values.keys() & {"numjobs", "iodepth"}:
        tc, qd = getattr(params, depth)
        values[depth] = (values.pop("numjobs", tc), values.pop("iodepth", qd))
    return replace(params, **values)  # type: ignore[arg-type]


def _seconds_list(text: str) -> tuple[float, ...]:
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise PtsbenchError("empty list of durations", "e.g. 5,10,15,25,50")
    return tuple(parse_seconds(item) for item in items)


def _wait_states(text: str) -> tuple[float, ...]:
    """--hir-wait-states: each wait state once (a repeat would be a second phase in the same folder)."""
    return tuple(dict.fromkeys(_seconds_list(text)))


def _xsr_groups(text: str) -> tuple[float, ...]:
    groups = _seconds_list(text)
    if len(groups) != len(XSR_GROUPS):
        raise PtsbenchError(f"XSR has three access groups, got {len(groups)} durations in {text!r}", "e.g. 8h,6h,8h")
    return groups


def _prewrite_depth(text: str) -> str:
    if text not in PREWRITE_DEPTHS:
        raise PtsbenchError(f"not an operating-point pre-write depth: {text!r}",
                            "top (the sweep's highest TC/QD, TC32/QD32) or point (the point's own TC/QD)")
    return text


# Parsers of the advanced tests' command-line overrides (by parameter name; specs.OPTION_NAMES gives the options)
ADVANCED_PARSERS: dict[str, Callable[[str], object]] = {
    "hir_wait_states_s": _wait_states,
    "hir_bursts": parse_positive_int,
    "hir_burst_s": parse_seconds,
    "hir_recovery_s": parse_seconds,
    "xsr_group_s": _xsr_groups,
    "demand_tcs": parse_depths,
    "demand_qds": parse_depths,
    "prewrite_s": parse_seconds,
    "point_prewrite_s": parse_seconds,
    "point_capture_s": parse_seconds,
    "point_prewrite_depth": _prewrite_depth,
    "ss_round_s": parse_seconds,
    "dirth_workload": parse_dirth_workload,
    "hdd_zones": parse_positive_int,
}
