"""Every SNIA PTS test as a row of one table, `TEST_DEFS`, and the one builder that turns rows into phases.

A row names the test, the spec versions that have it (with their name for it) and how its phases are built from the
run's `Settings`. IOPS, throughput, latency and write saturation carry their loops as data (`Matrix`: mixes outer,
block sizes inner, in the order the spec requires; thread count and queue depth; the tracked variables NAMED BY
WORKLOAD, e.g. "rnd 4k 0/100", never a list position; preconditioning and stop rule) and take `TestParams`. The
advanced tests (HIR, XSR, CBW, DIRTH, ECW, HDD zones) build heterogeneous cells with their own TC/QD, runtime, role
and extra fio options (pts/advanced_specs.py) from `AdvancedParams`; a row names the parameters its test uses.
`build_phases` reads the table for every selected test: purge -> precondition -> rounds of cells -> stop, one phase
per block size for throughput, chained phases when a test has stages.

Sources: PTS 2.0.2 (IOPS with three tracked cells, TP at TC1/QD32, LAT at TC1/QD1 with five-nines and, after steady
state, a 20-minute response-time histogram, WSAT) and PTS-E 1.1 (one tracked IOPS cell: 4 KiB random write; TP at
the profile's TC/QD; no client profile). Enterprise: active range 100 %, write cache disabled, TC4/QD32. Client
(PTS 2.0 only): active range 75 % in 2,048 segments over all LBAs, write cache enabled, TC2/QD16, TP at 1024 KiB
only. WIPC is one sequential stream at TC1/QD32 over the whole range (the client's: all LBAs).
The spec PDFs were not readable here; each value was checked against public implementations instead (TKperf's
DeviceTests.py and StdyState.py for the matrices, nesting, tracked cells and the 20 %/10 % steady-state rule;
cloudharmony/block-storage and a PTS 2.0.2 Python suite for WIPC, TP at TC1/QD32 and the profiles' TC/QD): the
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from ptsbench.errors import PtsbenchError
from ptsbench.pts.advanced_specs import (
    CBW_WORKLOAD,
    Workload,
    demand_phases,
    dirth_workload,
    hdd_iops_phases,
    hdd_tp_phases,
    hir_phases,
    operating_point_phases,
    xsr_phases,
)
from ptsbench.pts.cells import CellSpec, Phase, Precondition, StopRule, Tracked, cell_name
from ptsbench.pts.params import (
    PROFILES,
    SPRANDOM_BS_BYTES,
    WIPC_BS_BYTES,
    WIPC_DEPTH,
    AdvancedParams,
    Profile,
    Settings,
    TestParams,
    check_advanced_params,
)
from ptsbench.units import format_bs, parse_size_bytes

Builder = Callable[["TestDef", Settings], tuple[Phase, ...]]


@dataclass(frozen=True)
class Matrix:
    """The loops of IOPS, throughput, latency and write saturation. `depth` None means the profile's TC/QD;
    `tracked` names cells per spec version ('{bs}' stands for the phase's block size when `phase_per_block_size`)."""

    pattern: str
    mixes: tuple[int, ...]
    block_sizes: Mapping[str, tuple[str, ...]]  # by profile kind ("enterprise", "client")
    depth: Mapping[str, tuple[int, int] | None]  # by spec version
    tracked: Mapping[str, tuple[str, ...]]  # by spec version
    metric: str
    precondition: str  # "wipc" (128 KiB) | "wipc-at-bs" (at the phase's block size) | "none"
    stop: str  # "steady" | "written"
    phase_per_block_size: bool = False

    def spec_block_sizes(self, kind: str) -> tuple[int, ...]:
        return tuple(parse_size_bytes(bs) for bs in self.block_sizes.get(kind, self.block_sizes["enterprise"]))


@dataclass(frozen=True)
class TestDef:
    """One PTS test as a row: its key and title, the spec's name for it by spec version (the versions that have
    it), and `build`, which makes its phases from the run's settings. A matrix test has its `matrix` and takes
    TestParams; the others take AdvancedParams, of which `uses` names the fields the test reads (what the command
    line may change for it and what a deviation concerns), `depth_field` their own TC/QD pair (changed by --numjobs
    / --iodepth), and `workload` a demand-intensity test's workload (its operating points)."""

    key: str
    title: str
    section: Mapping[str, str]
    build: Builder = field(repr=False)
    matrix: Matrix | None = None
    uses: tuple[str, ...] = ()
    depth_field: str = ""
    workload: Callable[[AdvancedParams], Workload] | None = field(default=None, repr=False)

    @property
    def specs(self) -> tuple[str, ...]:
        """The spec versions that have the test."""
        return tuple(self.section)


def build_matrix(defn: TestDef, settings: Settings) -> tuple[Phase, ...]:
    """The phases of a matrix test under `settings`, cells in the spec's nesting order (mix outer, block size
    inner)."""
    matrix = defn.matrix
    assert matrix is not None  # the rows that name this builder have one
    params = settings.params[defn.key]
    phases = []
    for key, block_sizes in _phase_block_sizes(defn.key, matrix, params):
        cells = tuple(
            CellSpec(
                name=cell_name(matrix.pattern, bs, mix),
                pattern=matrix.pattern,
                read_pct=mix,
                bs_bytes=bs,
                numjobs=params.numjobs,
                iodepth=params.iodepth,
                runtime_s=params.round_time_s,
            )
            for mix in params.mixes
            for bs in block_sizes
        )
        tracked = tuple(
            Tracked(name.format(bs=format_bs(block_sizes[0])), matrix.metric) for name in matrix.tracked[settings.spec]
        )
        phases.append(
            Phase(
                key=key,
                test=defn.key,
                title=defn.title if len(block_sizes) > 1 or not matrix.phase_per_block_size
                else f"{defn.title} {format_bs(block_sizes[0])}",
                purge=True,
                precondition=_precondition(matrix, block_sizes, settings),
                cells=cells,
                tracked=tracked,
                stop=_stop_rule(matrix, params, settings),
            )
        )
    if defn.key == "lat" and settings.lat_histogram_s:
        phases.append(_lat_histogram(params, settings.lat_histogram_s))
    return tuple(phases)


def _phase_block_sizes(key: str, matrix: Matrix, params: TestParams) -> list[tuple[str, tuple[int, ...]]]:
    """(phase key, block sizes) pairs: one phase with all sizes, or one phase per size (throughput)."""
    if matrix.phase_per_block_size:
        return [(f"{key}-{format_bs(bs)}", (bs,)) for bs in params.block_sizes]
    return [(key, params.block_sizes)]


def _lat_histogram(params: TestParams, runtime_s: float) -> Phase:
    """PTS 2.0's response-time histogram of the latency test: once steady state is reached, RND 4 KiB writes at
    the test's TC/QD (TC1/QD1) for `runtime_s`; its json+ bins give the histogram and the confidence levels."""
    name = cell_name("rnd", 4096, 0)
    cell = CellSpec(name, "rnd", 0, 4096, params.numjobs, params.iodepth, runtime_s, role="histogram")
    return Phase(key="lat-histogram", test="lat", title="Latency: response-time histogram", purge=False,
                 precondition=None, cells=(cell,), tracked=(), stop=StopRule("rounds", 1), role="histogram")


def sprandom_tests(tests: tuple[str, ...]) -> tuple[str, ...]:
    """The tests whose WIPC --precondition sprandom replaces: those preconditioned with 128 KiB writes (IOPS,
    latency), measured by random IO; throughput's WIPC at the tested block size stays."""
    return tuple(test for test in tests if (matrix := TEST_DEFS[test].matrix) and matrix.precondition == "wipc")


def _precondition(matrix: Matrix, block_sizes: tuple[int, ...], settings: Settings) -> Precondition | None:
    if matrix.precondition == "none":
        return None
    if matrix.precondition == "wipc" and settings.precondition == "sprandom":  # the random-write tests' WIPC only
        return Precondition(bs_bytes=SPRANDOM_BS_BYTES, multiple=1 + settings.sprandom_op, numjobs=WIPC_DEPTH[0],
                            iodepth=WIPC_DEPTH[1], kind="sprandom", spr_op=settings.sprandom_op)
    bs = block_sizes[0] if matrix.precondition == "wipc-at-bs" else WIPC_BS_BYTES
    return Precondition(bs_bytes=bs, multiple=settings.wipc_multiple, numjobs=WIPC_DEPTH[0], iodepth=WIPC_DEPTH[1])


def _stop_rule(matrix: Matrix, params: TestParams, settings: Settings) -> StopRule:
    if matrix.stop == "written":
        rounds = max(1, int(-(-settings.wsat_max_time_s // params.round_time_s)))
        return StopRule(
            "written",
            max_rounds=rounds,
            capacity_multiple=settings.wsat_capacity_multiple,
            max_time_s=settings.wsat_max_time_s,
        )
    return StopRule("steady", max_rounds=params.max_rounds)


def _advanced(phases: Callable[[AdvancedParams], tuple[Phase, ...]]) -> Builder:
    """The builder of an advanced test whose phases follow from its own AdvancedParams alone."""
    return lambda defn, settings: phases(settings.advanced[defn.key])


def _demand(defn: TestDef, settings: Settings) -> tuple[Phase, ...]:
    """A demand-intensity test (CBW, DIRTH, ECW): preconditioning, then rounds of the TC x QD sweep."""
    assert defn.workload is not None  # the rows that name this builder have one
    params = settings.advanced[defn.key]
    return demand_phases(defn.key, defn.title, defn.workload(params), params)


def _cbw(_params: AdvancedParams) -> Workload:
    return CBW_WORKLOAD


IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
IOPS_BLOCK_SIZES = ("1m", "128k", "64k", "32k", "16k", "8k", "4k", "512")
_DEMAND_USES = ("round_time_s", "ss_round_s", "max_rounds", "demand_tcs", "demand_qds", "prewrite_s",
                "point_prewrite_s", "point_capture_s", "point_prewrite_depth")
_HDD_USES = ("round_time_s", "hdd_zones", "hdd_depth")

TEST_DEFS: dict[str, TestDef] = {
    "iops": TestDef(
        "iops", "IOPS", {"2.0": "PTS 2.0.2 section 7 (IOPS)", "1.1": "PTS-E 1.1 IOPS test"}, build_matrix,
        matrix=Matrix(
            pattern="rnd",
            mixes=IOPS_MIXES,
            block_sizes={"enterprise": IOPS_BLOCK_SIZES},
            depth={"2.0": None, "1.1": None},
            tracked={"2.0": ("rnd 4k 0/100", "rnd 64k 65/35", "rnd 1m 100/0"), "1.1": ("rnd 4k 0/100",)},
            metric="iops",
            precondition="wipc",
            stop="steady",
        ),
    ),
    "tp": TestDef(
        "tp", "Throughput", {"2.0": "PTS 2.0.2 section 8 (Throughput)", "1.1": "PTS-E 1.1 Throughput test"},
        build_matrix,
        matrix=Matrix(
            pattern="seq",
            mixes=(100, 0),
            block_sizes={"enterprise": ("1m", "128k"), "client": ("1m",)},
            depth={"2.0": (1, 32), "1.1": None},
            tracked={"2.0": ("seq {bs} 0/100",), "1.1": ("seq {bs} 0/100",)},
            metric="bw_bytes",
            precondition="wipc-at-bs",
            stop="steady",
            phase_per_block_size=True,
        ),
    ),
    "lat": TestDef(
        "lat", "Latency", {"2.0": "PTS 2.0.2 section 9 (Latency)", "1.1": "PTS-E 1.1 Latency test"}, build_matrix,
        matrix=Matrix(
            pattern="rnd",
            mixes=(100, 65, 0),
            block_sizes={"enterprise": ("8k", "4k", "512")},
            depth={"2.0": (1, 1), "1.1": (1, 1)},
            tracked={"2.0": ("rnd 4k 0/100",), "1.1": ("rnd 4k 0/100",)},
            metric="lat_mean_ns",
            precondition="wipc",
            stop="steady",
        ),
    ),
    "wsat": TestDef(
        "wsat", "Write saturation",
        {"2.0": "PTS 2.0.2 section 10 (Write saturation)", "1.1": "PTS-E 1.1 Write Saturation test"}, build_matrix,
        matrix=Matrix(
            pattern="rnd",
            mixes=(0,),
            block_sizes={"enterprise": ("4k",)},
            depth={"2.0": None, "1.1": None},
            tracked={"2.0": (), "1.1": ()},
            metric="iops",
            precondition="none",
            stop="written",
        ),
    ),
    "hir": TestDef(
        "hir", "Host idle recovery", {"2.0": "PTS 2.0.2 section 11 (HIR)", "1.1": "PTS-E 1.1 Host Idle Recovery test"},
        _advanced(hir_phases),
        uses=("ss_round_s", "max_rounds", "numjobs", "iodepth", "hir_wait_states_s", "hir_bursts", "hir_burst_s",
              "hir_recovery_s"),
    ),
    "xsr": TestDef(
        "xsr", "Cross stimulus recovery",
        {"2.0": "PTS 2.0.2 section 12 (XSR)", "1.1": "PTS-E 1.1 Cross Stimulus Recovery test"}, _advanced(xsr_phases),
        uses=("round_time_s", "xsr_group_s", "xsr_depth"), depth_field="xsr_depth",
    ),
    "cbw": TestDef(
        "cbw", "Composite block size workload", {"2.0": "PTS 2.0.2 section 13 (CBW)"}, _demand,
        uses=_DEMAND_USES, workload=_cbw,
    ),
    "ecw": TestDef(
        "ecw", "Enterprise composite workload", {"1.1": "PTS-E 1.1 Enterprise Composite Workload test"}, _demand,
        uses=_DEMAND_USES, workload=_cbw,
    ),
    "dirth": TestDef(
        "dirth", "Demand intensity / response time histogram",
        {"2.0": "PTS 2.0.2 section 14 (DIRTH)", "1.1": "PTS-E 1.1 Demand Intensity test"}, _demand,
        uses=(*_DEMAND_USES, "dirth_bs_bytes", "dirth_read_pct"), workload=dirth_workload,
    ),
    "hdd-iops": TestDef(
        "hdd-iops", "HDD IOPS per zone", {"2.0": "TKperf HDD mode", "1.1": "TKperf HDD mode"},
        _advanced(hdd_iops_phases), uses=_HDD_USES, depth_field="hdd_depth",
    ),
    "hdd-tp": TestDef(
        "hdd-tp", "HDD throughput per zone", {"2.0": "TKperf HDD mode", "1.1": "TKperf HDD mode"},
        _advanced(hdd_tp_phases), uses=_HDD_USES, depth_field="hdd_depth",
    ),
}
TEST_ORDER = tuple(TEST_DEFS)  # the order tests run in, whatever order they were selected in
DEFAULT_TESTS = ("iops", "tp", "lat", "wsat")
MATRIX_TESTS = tuple(key for key, defn in TEST_DEFS.items() if defn.matrix is not None)


def check_spec(test: str, spec: str) -> TestDef:
    """The test's row, or one clear error for an unknown test or one the spec version does not have."""
    defn = TEST_DEFS.get(test)
    if defn is None:
        raise PtsbenchError(f"unknown test {test!r}", f"choose from {','.join(TEST_ORDER)}")
    if spec not in defn.specs:
        other = "cbw with --spec 2.0" if test == "ecw" else "ecw with --spec 1.1" if test == "cbw" else "another test"
        raise PtsbenchError(f"{test} is not part of PTS {spec}", f"use {other}")
    return defn


def build_test(test: str, settings: Settings) -> tuple[Phase, ...]:
    """The phases of one test under `settings` (a demand-intensity test's operating points come later, from
    `point_phases`)."""
    defn = check_spec(test, settings.spec)
    if defn.matrix is None:
        check_advanced_params(settings.advanced[test])
    return defn.build(defn, settings)


def build_phases(
    settings: Settings, operating_points: Mapping[str, Mapping[str, tuple[int, int]]] | None = None
) -> tuple[Phase, ...]:
    """Every phase of the run, in test order. A demand-intensity test (CBW, DIRTH, ECW) ends with its operating
    points' phases once they are chosen: `operating_points[test]` = {'max': (TC, QD), ...} as stored by the engine."""
    phases: list[Phase] = []
    for test in settings.tests:
        phases += build_test(test, settings)
        if operating_points and test in operating_points:
            phases += point_phases(test, settings.advanced[test], operating_points[test])
    return tuple(phases)


def point_phases(test: str, params: AdvancedParams, points: Mapping[str, tuple[int, int]]) -> tuple[Phase, ...]:
    """The operating-point phases of a demand-intensity test, from the points the engine chose and stored."""
    defn = TEST_DEFS[test]
    if defn.workload is None:
        raise PtsbenchError(f"{test} has no operating points", "only CBW, DIRTH and ECW have them")
    return operating_point_phases(test, defn.title, defn.workload(params), params, points)


def spec_params(defn: TestDef, profile: Profile, spec: str) -> TestParams:
    """What the spec (and the profile's own changes) say for one matrix test, before command-line overrides."""
    matrix = defn.matrix
    assert matrix is not None  # only matrix tests take TestParams
    depth = matrix.depth[spec]
    numjobs, iodepth = depth if depth is not None else (profile.numjobs, profile.iodepth)
    params = TestParams(
        block_sizes=matrix.spec_block_sizes(profile.kind),
        mixes=matrix.mixes,
        numjobs=numjobs,
        iodepth=iodepth,
        round_time_s=profile.round_time_s,
        max_rounds=profile.max_rounds,
    )
    return replace(params, **profile.per_test.get(defn.key, {}))  # type: ignore[arg-type]


def pts_params(defn: TestDef, kind: str, spec: str) -> TestParams:
    """The unmodified PTS parameters of a test for a spec profile kind (the compliance reference)."""
    return spec_params(defn, PROFILES[kind], spec)
