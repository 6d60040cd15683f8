"""Planning, pure: settings + target facts -> phases of rounds of cells, their fio job text, durations and the
reasons a run departs from the spec. Nothing here starts fio or touches the target.

Active range: size x active-range % rounded down to a whole number of alignment units, a unit being the smallest
common multiple of every block size and 1 MiB (under one block of the largest size is left out; the plan notes it).
Each thread of a sequential cell writes its own slice, the range divided by the thread count and rounded down to
whole blocks (the plan notes the few blocks no slice holds). Preconditioning (WIPC) is one sequential stream over the
whole range. The client profile's active range is `segments` (2,048) equal segments spread evenly over all LBAs: the
base tests' cells touch only them, through fio zonemode=strided (zonerange = a segment, zoneskip = the gap to the
next); WIPC writes the whole capacity. fio 3.33 wraps a strided job at the end of the file rather than of its size
(measured), so segmented cells run `loops` passes of exactly one visit per segment, stopped by their runtime, instead
of time_based: a random cell does one IO per segment per pass at a random offset in it (fio's zoned distributions
take at most 256 zones, too few for 2,048 segments), a sequential cell writes whole segments.

Sequential cells do not restart at offset 0 each round: the engine carries, per cell, the position each thread's
stream reached (`SeqStart`). A round then writes its slice from that position to the slice end (job part "a",
size-bound, capped at the round time) and carries on from the slice start (part "b", time-based for the rest of
the round time, predicted from the previous round's rate). fio has no "start here and wrap to 0" option: a
time-based job at offset X wraps back to X, so the two parts are what keep the stream continuous.

The advanced tests plan the same way: HDD zone cells are placed in their zone once the active range is known, a
composite workload's sizes under the logical sector run at the sector size (a note and a deviation), a round lasts
as its cells' startdelay schedule says (HIR), and a demand-intensity test's operating points, chosen only after its
sweep, are planned when the engine has stored them (`operating_points`) and counted at their maximum until then.
"""

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ptsbench.errors import PtsbenchError
from ptsbench.fio.chain import gate_options
from ptsbench.fio.jobs import FIO_MAX_JOBS, PTS_PERCENTILE_OPTIONS, render_job_file
from ptsbench.pts.advanced_specs import place_zones
from ptsbench.pts.cells import CellSpec, Phase, ZonedCellSpec, round_duration_s, start_delay_s
from ptsbench.pts.deviations import plan_deviations
from ptsbench.pts.params import OPERATING_POINTS, Settings
from ptsbench.pts.specs import MATRIX_TESTS, TEST_DEFS, build_phases
from ptsbench.units import format_bs, format_bytes, parse_size_bytes

MIB = 1024**2
SMALL_BS_BYTES = 512
SEGMENT_LOOPS = 1 << 30  # passes over the segments: the cell's runtime ends it long before
# fio 3.33 starts a stonewalled job only on its next 100 ms scheduling pass plus a 100 ms start-up wait
# (backend.c run_threads): measured 0.2-0.3 s between cells; a new fio process costs about 0.5 s.
CELL_HANDOFF_S = 0.3
PROCESS_START_S = 0.5
# A chained round (fio/chain.py) hands off in a few milliseconds (bench/README.md)
CHAIN_HANDOFF_S = 0.01


@dataclass(frozen=True)
class TargetInfo:
    """What planning needs to know about the target."""

    path: str
    kind: str  # "file" | "block"
    size_bytes: int
    logical_sector_bytes: int | None
    physical_sector_bytes: int | None
    ioengine: str
    remote: bool = False  # on fio servers (--hosts): fio's client runs every round
    # --fdp-placement (device/placement.py): off, spread or one; None: not given, on a target without FDP enabled
    fdp_placement: str | None = None
    fdp_device: str | None = None  # with FDP placement: the namespace's /dev/ngXnY, which fio opens
    fdp_plids: str = ""  # with FDP placement: the placement handles fio writes to in turn, e.g. "0,1,2,3"


@dataclass(frozen=True)
class PhasePlan:
    """One phase on this target: the cells that run (0.5 KiB ones dropped on 4 KiB-logical devices)."""

    phase: Phase
    cells: tuple[CellSpec, ...]
    skipped: tuple[str, ...]
    max_rounds: int
    precondition_bytes: int  # bytes written by preconditioning (0: none)
    scheduler_reason: str | None = None  # why fio's scheduler hands its cells off; None: they are chained

    @property
    def chained(self) -> bool:
        """Cells handed off through a chain of fio processes (fio/chain.py), not stonewalled jobs."""
        return self.scheduler_reason is None

    @property
    def key(self) -> str:
        return self.phase.key

    @property
    def round_s(self) -> float:
        """Planned IO time of one round: its cells' runtimes one after another, startdelay counted from the round's
        start (a HIR round lasts its whole burst schedule)."""
        return round_duration_s(self.cells)

    @property
    def worst_case_s(self) -> float:
        """Planned IO time at the maximum round count."""
        return self.round_s * self.max_rounds

    @property
    def overhead_s(self) -> float:
        """Estimated fio start-up and hand-off time at the maximum round count."""
        handoff_s = CHAIN_HANDOFF_S if self.chained else CELL_HANDOFF_S
        return self.max_rounds * (PROCESS_START_S + handoff_s * max(len(self.cells) - 1, 0))


@dataclass(frozen=True)
class Segments:
    """The client's segmented active range: `count` segments of `size_bytes`, one every `stride_bytes` from LBA 0."""

    count: int
    size_bytes: int
    stride_bytes: int

    @property
    def span_bytes(self) -> int:
        """The LBAs the segments spread over."""
        return self.count * self.stride_bytes

    @property
    def share_pct(self) -> float:
        """The share of the LBAs they spread over that the segments hold."""
        return 100 * self.size_bytes / self.stride_bytes

    def zone_options(self, visit_bytes: int) -> dict[str, str | None]:
        """fio options confining a job to the segments, `visit_bytes` of IO in each before the next."""
        return {"zonemode": "strided", "zonerange": str(self.size_bytes),
                "zoneskip": str(self.stride_bytes - self.size_bytes), "zonesize": str(visit_bytes)}


@dataclass(frozen=True)
class Plan:
    settings: Settings
    target: TargetInfo
    active_range_bytes: int  # the amount of LBAs the tests touch (segmented: all segments together)
    align_bytes: int
    phases: tuple[PhasePlan, ...]
    deviations: tuple[str, ...]
    notes: tuple[str, ...]
    segments: Segments | None = None

    @property
    def precondition_range_bytes(self) -> int:
        """What WIPC writes over, from LBA 0: the active range, or with segments every LBA they spread over."""
        return self.segments.span_bytes if self.segments else self.active_range_bytes

    def segmented(self, phase: Phase) -> bool:
        """Whether a phase's cells touch only the segments (the base tests of a segmented run)."""
        return self.segments is not None and phase.test in MATRIX_TESTS

    @property
    def worst_case_s(self) -> float:
        return sum(phase.worst_case_s for phase in self.phases) + self.pending_s

    @property
    def overhead_s(self) -> float:
        return sum(phase.overhead_s for phase in self.phases)

    @property
    def pending_points(self) -> tuple[str, ...]:
        """Demand-intensity tests whose operating points are not chosen yet (the engine chooses them after the
        sweep and plans again)."""
        sweeps = {p.phase.test for p in self.phases if p.phase.role == "sweep"}
        chosen = {p.phase.test for p in self.phases if p.phase.role == "point"}
        return tuple(test for test in self.settings.tests if test in sweeps - chosen)

    @property
    def pending_s(self) -> float:
        """Planned IO time of the operating points not planned yet (all three of each test)."""
        return sum(len(OPERATING_POINTS) * (params.point_prewrite_s + params.point_capture_s)
                   for params in (self.settings.advanced[test] for test in self.pending_points))

    def phase(self, key: str) -> PhasePlan:
        return next(phase for phase in self.phases if phase.key == key)

    def stream_bytes(self, phase: Phase, cell: CellSpec) -> int:
        """The bytes each thread of a sequential cell writes in one pass over its own slice: the active range split
        among the threads in whole blocks, or with segments, whole segments."""
        if self.segments and self.segmented(phase):
            return self.segments.count // cell.numjobs * self.segments.size_bytes
        return self.active_range_bytes // cell.numjobs // cell.bs_bytes * cell.bs_bytes


@dataclass(frozen=True)
class SeqStart:
    """Where each thread's sequential stream of one cell continues, and the rate to predict part a's duration."""

    offset_bytes: int = 0
    rate_bytes_per_s: float | None = None  # per thread, from the previous round


@dataclass(frozen=True)
class RoundJob:
    """A round's job file and which fio jobs measure which cell (a sequential cell can have parts a and b)."""

    text: str
    jobs: tuple[tuple[str, str], ...]  # (fio job name, cell name), in run order
    seq_starts: Mapping[str, int] = field(default_factory=dict)  # cell name -> start offset within each slice


def make_plan(
    settings: Settings,
    target: TargetInfo,
    phases: tuple[Phase, ...] | None = None,
    operating_points: Mapping[str, Mapping[str, tuple[int, int]]] | None = None,
) -> Plan:
    """The whole run on this target (the settings' tests with the operating points chosen so far, or the `phases`
    given); PtsbenchError when the target is too small or a tracked cell is missing."""
    phases = build_phases(settings, operating_points) if phases is None else phases
    align = _align_bytes(phases)
    requested = target.size_bytes * settings.active_range_pct / 100
    active = int(requested) // align * align
    if active <= 0:
        raise PtsbenchError(
            f"target {target.path} is too small: {format_bytes(target.size_bytes)} at "
            f"{settings.active_range_pct:g} % active range is under one {format_bytes(align)} unit",
            "use a larger target or --size",
        )
    notes: list[str] = []
    segments = _segments(settings, target, phases) if settings.segments else None
    if segments is not None:
        active = segments.count * segments.size_bytes
        notes.append(f"active range: {settings.active_range_pct:g} % in {segments.count} segments of "
                     f"{segments.size_bytes:,} bytes, one every {segments.stride_bytes:,} bytes from LBA 0 "
                     f"({active:,} bytes; {requested:,.0f} asked); preconditioning writes all "
                     f"{segments.span_bytes:,} bytes they spread over")
        others = list(dict.fromkeys(TEST_DEFS[phase.test].title for phase in phases
                                     if phase.test not in MATRIX_TESTS))
        if others:
            notes.append(f"{', '.join(others)}: the same amount as one contiguous range from LBA 0 (the segments "
                         "apply to IOPS, throughput, latency and write saturation)")
    elif active < requested:
        notes.append(f"active range {active:,} bytes: {settings.active_range_pct:g} % of {target.size_bytes:,} is "
                     f"{requested:,.0f}, rounded down to whole {format_bytes(align)} units of the block sizes (the "
                     f"last {requested - active:,.0f} bytes left out)")
    phases = place_zones(phases, active, align)
    deviations = plan_deviations(settings)
    if segments is not None and segments.share_pct < settings.active_range_pct - 0.5:
        deviations.append(f"active range: the {segments.count} segments hold {segments.share_pct:.1f} % of the LBAs "
                          f"they spread over, not {settings.active_range_pct:g} % (whole units of the largest block "
                          "size on a small target)")
    sector = target.logical_sector_bytes or 512
    skip_small = sector > SMALL_BS_BYTES
    small_cells = any(_smallest_bs(cell) < 4096 for phase in phases for cell in phase.cells)
    if small_cells and sector == 512 and (target.physical_sector_bytes or 512) > 512:
        notes.append(f"{target.path} has 512-byte logical and {target.physical_sector_bytes}-byte physical sectors: "
                     "IOs under 4 KiB measure read-modify-write")
    fitted_tests: dict[str, str] = {}
    phase_plans = []
    for phase in phases:
        kept = tuple(c for c in phase.cells if not (skip_small and c.bs_bytes < sector))
        cells = tuple(_fit_to_sector(cell, sector) for cell in kept)
        if cells != kept:
            fitted_tests[phase.test] = next(dict(c.fio_options)["bssplit"] or "" for c in cells if c not in kept)
        skipped = tuple(c.name for c in phase.cells if c not in kept)
        if skipped:
            notes.append(f"{phase.title}: {len(skipped)} cell(s) below the {target.logical_sector_bytes}-byte logical "
                         f"sector skipped: {', '.join(skipped)}")
        if not cells:
            raise PtsbenchError(f"{phase.title}: no cell can run on this target", "choose other block sizes")
        _check_tracked(phase, cells)
        pre = phase.precondition
        pre_range = segments.span_bytes if segments else active
        pre_bytes = int(round(pre_range * pre.multiple)) if pre else 0
        phase_plans.append(PhasePlan(phase, cells, skipped, phase.stop.max_rounds, pre_bytes,
                                     scheduler_reason(target, cells)))
        _check_fio_jobs(phase_plans[-1])
    for test, bssplit in fitted_tests.items():
        deviations.append(f"{TEST_DEFS[test].title}: IOs under the {sector}-byte logical sector run as "
                          f"{sector}-byte IOs (bssplit {bssplit})")
    plan = Plan(settings, target, active, align, tuple(phase_plans), tuple(deviations), tuple(notes), segments)
    return replace(plan, notes=(*plan.notes, *_slice_notes(plan)))


def scheduler_reason(target: TargetInfo, cells: tuple[CellSpec, ...]) -> str | None:
    """Why a round's cells hand off through fio's scheduler (stonewalled jobs, about 0.3 s each), or None: they are
    chained, each cell's fio process released by the previous cell's end."""
    if target.remote:
        return "on fio servers (--hosts) fio's client starts every host's jobs"
    if any(start_delay_s(cell) for cell in cells):
        return "its cells are timed by fio's startdelay from the round's start"
    return None


def _check_fio_jobs(phase: PhasePlan) -> None:
    """Refuse a round fio would refuse at its start: one fio process runs at most FIO_MAX_JOBS jobs, counting every
    numjobs clone. A chained round runs a process per job; a stonewalled one all its cells in one process, a
    sequential cell maybe as two jobs."""
    if phase.chained:
        count = max(cell.numjobs for cell in phase.cells)
    else:
        count = sum(cell.numjobs * (2 if cell.pattern == "seq" else 1) for cell in phase.cells)
    if count > FIO_MAX_JOBS:
        raise PtsbenchError(f"{phase.phase.title}: a round would start {count:,} jobs (threads x cells) in one fio "
                            f"process, but fio runs at most {FIO_MAX_JOBS:,}", "lower --numjobs (or the bursts, "
                            "zones or cells per round)")


def handoff_text(phase: PhasePlan) -> str:
    """How a phase's cells hand off, for the plan and the report."""
    if phase.chained:
        return ("cells chained (each cell's fio process started ahead, released by the previous cell's end)"
                if len(phase.cells) > 1 else "one cell per round: no hand-off")
    return f"cells stonewalled (fio's scheduler, about {CELL_HANDOFF_S:g} s per hand-off): {phase.scheduler_reason}"


def _segments(settings: Settings, target: TargetInfo, phases: tuple[Phase, ...]) -> Segments:
    """The segmented active range: `settings.segments` equal strides over the target, each holding a segment of
    the active-range share, both whole multiples of every block size the base tests use."""
    sizes = [cell.bs_bytes for phase in phases if phase.test in MATRIX_TESTS for cell in phase.cells] or [4096]
    unit = math.lcm(4096, *sizes)
    stride = target.size_bytes // settings.segments // unit * unit
    size = int(stride * settings.active_range_pct / 100) // unit * unit
    if size <= 0:
        least = settings.segments * unit * math.ceil(100 / settings.active_range_pct)
        raise PtsbenchError(f"target {target.path} is too small for {settings.segments} segments of whole "
                            f"{format_bytes(unit)} units at {settings.active_range_pct:g} % active range",
                            f"use a target of at least {format_bytes(least)}, or smaller block sizes")
    for phase in phases:
        for cell in phase.cells:
            if phase.test in MATRIX_TESTS and cell.pattern == "seq" and settings.segments % cell.numjobs:
                raise PtsbenchError(f"{phase.title}: {settings.segments} segments cannot be shared evenly among "
                                    f"{cell.numjobs} sequential threads", "use a thread count that divides it")
    return Segments(settings.segments, size, stride)


def _slice_notes(plan: Plan) -> list[str]:
    """What sequential threads leave out: the active range split among TC threads in whole blocks (or segments)."""
    notes = []
    for phase in plan.phases:
        for cell in phase.cells:
            if cell.pattern != "seq" or cell.numjobs == 1 or isinstance(cell, ZonedCellSpec):
                continue
            covered = plan.stream_bytes(phase.phase, cell) * cell.numjobs
            if covered < plan.active_range_bytes:
                notes.append(f"{phase.phase.title}: {cell.name} at TC{cell.numjobs} writes {covered:,} bytes per "
                             f"pass, each thread its own slice in whole blocks; {plan.active_range_bytes - covered:,}"
                             " bytes at the slices' ends are in none")
    return list(dict.fromkeys(notes))


def _bssplit_sizes(cell: CellSpec) -> list[tuple[int, int]]:
    """(size bytes, percent) of a cell's fio bssplit; empty when it has none."""
    text = dict(cell.fio_options).get("bssplit")
    if not text:
        return []
    pairs = [part.partition("/") for part in text.split(":") if part]
    return [(parse_size_bytes(size), int(pct or 0)) for size, _, pct in pairs]


def _smallest_bs(cell: CellSpec) -> int:
    return min([cell.bs_bytes, *(size for size, _ in _bssplit_sizes(cell))])


def _fit_to_sector(cell: CellSpec, sector_bytes: int) -> CellSpec:
    """The cell with every bssplit size under the logical sector issued at the sector size (their shares added to
    it): direct IO smaller than the sector fails. Unchanged when nothing is under it."""
    sizes = _bssplit_sizes(cell)
    if not sizes or min(size for size, _ in sizes) >= sector_bytes:
        return cell
    shares: dict[int, int] = {}
    for size, pct in sizes:
        shares[max(size, sector_bytes)] = shares.get(max(size, sector_bytes), 0) + pct
    bssplit = ":".join(f"{size}/{pct}" for size, pct in sorted(shares.items()))
    options = {**dict(cell.fio_options), "bssplit": bssplit}
    return replace(cell, fio_options=tuple(options.items()))


def _align_bytes(phases: tuple[Phase, ...]) -> int:
    sizes = [cell.bs_bytes for phase in phases for cell in phase.cells]
    sizes += [phase.precondition.bs_bytes for phase in phases if phase.precondition]
    return math.lcm(MIB, *sizes)


def _check_tracked(phase: Phase, cells: tuple[CellSpec, ...]) -> None:
    names = {cell.name for cell in cells}
    for tracked in phase.tracked:
        if tracked.cell not in names:
            raise PtsbenchError(
                f"{phase.title}: tracked variable '{tracked.cell}' is not in the round",
                "keep its block size and mix in --block-sizes / --mixes",
            )


def round_seed(base_seed: int, phase_key: str, round_number: int) -> int:
    """The recorded randseed of one round, derived from the run's base seed (so resume rebuilds the same job)."""
    digest = hashlib.sha256(f"{base_seed}:{phase_key}:{round_number}".encode()).digest()
    return int.from_bytes(digest[:4], "big") or 1


def job_name(index: int, cell: CellSpec, part: str = "") -> str:
    """A fio job name for a cell: 'c07-rnd-4k-0-100' (part 'a'/'b' for split sequential cells)."""
    return f"c{index:02d}-{re.sub(r'[^0-9A-Za-z]+', '-', cell.name)}" + (f"-{part}" if part else "")


def _escape(path: str) -> str:
    return path.replace(":", "\\:")


def global_options(plan: Plan, seed: int | None) -> dict[str, str | None]:
    """Options shared by every job ptsbench generates for a PTS run."""
    options: dict[str, str | None] = {
        "filename": _escape(plan.target.path),
        "ioengine": plan.target.ioengine,
        "direct": "1",
        "refill_buffers": None,
        "norandommap": None,
        "randrepeat": "0",
        "random_generator": "tausworthe64",
        "ramp_time": fio_time(plan.settings.ramp_time_s),
    }
    if plan.target.kind != "file":  # a device that vanishes mid-run must not come back as a file fio made in /dev
        options["allow_file_create"] = "0"
    if plan.target.fdp_device:  # FDP placement: NVMe passthrough to the namespace (fdp / fdp_pli: fio >= 3.34),
        del options["direct"]  # which bypasses the page cache anyway: the character device refuses O_DIRECT opens
        options.update(filename=_escape(plan.target.fdp_device), ioengine="io_uring_cmd", cmd_type="nvme", fdp="1",
                       fdp_pli=plan.target.fdp_plids)
    if seed is not None:
        options["randseed"] = str(seed)
    options.update(PTS_PERCENTILE_OPTIONS)
    return options


def fio_time(seconds: float) -> str:
    """A fio time value: whole seconds as '60s', anything finer in milliseconds."""
    milliseconds = round(seconds * 1000)
    return f"{milliseconds // 1000}s" if milliseconds % 1000 == 0 else f"{milliseconds}ms"


def _rw(cell: CellSpec) -> dict[str, str | None]:
    random = cell.pattern == "rnd"
    if cell.read_pct == 100:
        return {"rw": "randread" if random else "read"}
    if cell.read_pct == 0:
        return {"rw": "randwrite" if random else "write"}
    return {"rw": "randrw" if random else "rw", "rwmixread": str(cell.read_pct)}


def _cell_options(cell: CellSpec) -> dict[str, str | None]:
    return {"stonewall": None, **_rw(cell), "bs": format_bs(cell.bs_bytes), "numjobs": str(cell.numjobs),
            "iodepth": str(cell.iodepth)}


def precondition_job(plan: Plan, phase: PhasePlan) -> str:
    """The WIPC job file: sequential writes over the whole range from LBA 0, `multiple` x the range in all: one
    stream (TC1), or each thread its own slice when the precondition has more threads. Or fio's sprandom over the
    range: fio writes it and its over-provisioning once, in random order (sprandom needs fio's lfsr generator)."""
    pre = phase.phase.precondition
    if pre is None:
        raise PtsbenchError(f"{phase.phase.title} has no preconditioning", "")
    if pre.kind == "sprandom":
        size = plan.precondition_range_bytes // pre.bs_bytes * pre.bs_bytes
        return render_job_file({**global_options(plan, None), "random_generator": "lfsr"}, [(
            "sprandom", {"rw": "randwrite", "bs": format_bs(pre.bs_bytes), "numjobs": "1", "iodepth": str(pre.iodepth),
                         "offset": "0", "size": str(size), "sprandom": "1", "spr_op": f"{pre.spr_op:g}"})])
    slice_bytes = plan.precondition_range_bytes // pre.numjobs // pre.bs_bytes * pre.bs_bytes
    options: dict[str, str | None] = {
        "rw": "write",
        "bs": format_bs(pre.bs_bytes),
        "numjobs": str(pre.numjobs),
        "iodepth": str(pre.iodepth),
        "offset": "0",
        "size": str(slice_bytes),
        "io_size": str(phase.precondition_bytes // pre.numjobs),
    }
    if pre.numjobs > 1:
        options["offset_increment"] = str(slice_bytes)
    return render_job_file(global_options(plan, None), [(f"wipc-{format_bs(pre.bs_bytes)}", options)])


def round_job(
    plan: Plan, phase: PhasePlan, seed: int, seq_starts: Mapping[str, SeqStart] | None = None, chained: bool = False
) -> RoundJob:
    """One round as one fio job file, every cell a job (a sequential cell maybe two) in the spec's order:
    stonewalled, or `chained`: each job gated for fio/chain.py (run one fio process per job)."""
    jobs: list[tuple[str, dict[str, str | None]]] = []
    names: list[tuple[str, str]] = []
    starts: dict[str, int] = {}
    for index, cell in enumerate(phase.cells):
        options = _cell_options(cell)
        runtime = fio_time(cell.runtime_s)
        if cell.pattern != "seq":
            if plan.segments and plan.segmented(phase.phase):  # one IO per segment per pass (see the docstring)
                options.update({"offset": "0", "size": str(plan.segments.count * cell.bs_bytes),
                                **plan.segments.zone_options(cell.bs_bytes), "loops": str(SEGMENT_LOOPS),
                                "runtime": runtime})
            else:
                options.update({"offset": "0", "size": str(plan.active_range_bytes), "time_based": None,
                                "runtime": runtime})
            options.update(dict(cell.fio_options))  # a test's own options win (zones, bssplit, startdelay...)
            jobs.append((job_name(index, cell), options))
            names.append((job_name(index, cell), cell.name))
            continue
        start = (seq_starts or {}).get(cell.name, SeqStart())
        used, parts = _seq_parts(plan, phase.phase, cell, start)
        starts[cell.name] = used
        for part, part_options in parts:
            jobs.append((job_name(index, cell, part), {**options, **part_options, **dict(cell.fio_options)}))
            names.append((job_name(index, cell, part), cell.name))
    if chained:
        jobs = [(name, {**{k: v for k, v in options.items() if k != "stonewall"},
                        **gate_options(index, phase.round_s)}) for index, (name, options) in enumerate(jobs)]
    text = render_job_file(global_options(plan, seed), jobs)
    return RoundJob(text, tuple(names), starts)


def _seq_parts(plan: Plan, phase: Phase, cell: CellSpec,
               start: SeqStart) -> tuple[int, list[tuple[str, dict[str, str | None]]]]:
    """Where each thread's stream continues within its slice (segmented: at the start of the segment it reached)
    and the job parts that continue it there."""
    stream = plan.stream_bytes(phase, cell)
    runtime = fio_time(cell.runtime_s)
    offset = start.offset_bytes % stream
    if plan.segments and plan.segmented(phase):
        segments = plan.segments
        per_thread = segments.count // cell.numjobs
        offset = offset // segments.size_bytes * segments.size_bytes
        lba_offset = offset // segments.size_bytes * segments.stride_bytes
        spread: dict[str, str | None] = {"offset_increment": str(per_thread * segments.stride_bytes)}
        # fio 3.33 does not restart a strided job's zones at a new loop: a thread whose share ends before the end
        # of the file would go on into the next thread's segments (measured), so with several threads each writes
        # its share once per part and the cell may end before its runtime (fio's runtime says how long it ran)
        repeat: dict[str, str | None] = {"loops": str(SEGMENT_LOOPS if cell.numjobs == 1 else 1)}
        spread.update(segments.zone_options(segments.size_bytes))
    else:
        lba_offset = offset
        spread = {"offset_increment": str(stream)}
        repeat = {"time_based": None}
    if cell.numjobs == 1:
        spread.pop("offset_increment")
    whole: dict[str, str | None] = {"offset": "0", "size": str(stream), **spread, **repeat, "runtime": runtime}
    if offset == 0:
        return offset, [("", whole)]
    part_a: dict[str, str | None] = {"offset": str(lba_offset), "size": str(stream - offset), **spread,
                                     "runtime": runtime}
    if not start.rate_bytes_per_s:
        return offset, [("a", part_a), ("b", whole)]
    rest_s = cell.runtime_s - (stream - offset) / start.rate_bytes_per_s
    if rest_s * 1000 < 1:
        return offset, [("a", part_a)]
    return offset, [("a", part_a), ("b", {**whole, "runtime": fio_time(rest_s)})]


def next_seq_offset(plan: Plan, phase: Phase, cell: CellSpec, start_offset: int, io_bytes: int) -> int:
    """Where each thread's stream stops after a round that moved `io_bytes` in total from `start_offset`."""
    per_thread = io_bytes // cell.numjobs // cell.bs_bytes * cell.bs_bytes
    return (start_offset + per_thread) % plan.stream_bytes(phase, cell)
