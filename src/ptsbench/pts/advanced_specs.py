"""The phases of the advanced tests: HIR, XSR, CBW, DIRTH, ECW (PTS-E 1.1) and the HDD zone tests.

Each test is a row of pts/specs.py's table, like IOPS or throughput; the functions here build its phases from the
shapes of pts/cells.py and its AdvancedParams (pts/params.py), so the one PTS engine runs it: a test is a chain of
phases (purge only in the first), each phase rounds of cells run as one fio process.
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
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ptsbench.errors import PtsbenchError
from ptsbench.pts.cells import CellSpec, Phase, StopRule, Tracked, ZonedCellSpec, cell_name, depth_name, fio_ms
from ptsbench.pts.params import (
    CBW_READ_PCT,
    HDD_IOPS_BLOCK_SIZES,
    HDD_IOPS_MIXES,
    HDD_TP_BLOCK_SIZES,
    HIR_BLOCK_SIZE,
    JESD219_BLOCK_SIZES,
    JESD219_ZONES,
    OPERATING_POINTS,
    XSR_GROUPS,
    AdvancedParams,
)
from ptsbench.units import format_bs


def jesd219_bssplit() -> str:
    """fio bssplit of the JESD219 enterprise block-size mix, sizes in bytes: '512/4:1024/1:...:65536/3'."""
    return ":".join(f"{size}/{pct}" for size, pct in JESD219_BLOCK_SIZES)


def jesd219_zones() -> str:
    """fio random_distribution of the JESD219 LBA mix: 'zoned:50/5:30/15:20/80'."""
    return "zoned:" + ":".join(f"{ios}/{lbas}" for ios, lbas in JESD219_ZONES)


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
