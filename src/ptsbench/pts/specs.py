"""The SNIA PTS tests declared as data, the profiles, and the settings a run uses.

A test is a row of `TEST_DEFS`: its loops (mixes outer, block sizes inner, in the order the spec requires), thread
count and queue depth, the tracked variables NAMED BY WORKLOAD (e.g. "rnd 4k 0/100", never a list position),
preconditioning and stop rule. `build_test` turns a row plus the run's `Settings` into `Phase`s - what the engine
runs: purge -> precondition -> rounds of cells -> stop. Throughput has one phase per block size.

Sources: PTS 2.0.2 (IOPS with three tracked cells, TP at TC1/QD32, LAT at TC1/QD1 with five-nines and, after steady
state, a 20-minute response-time histogram, WSAT) and PTS-E 1.1 (one tracked IOPS cell: 4 KiB random write; TP at
the profile's TC/QD; no client profile). Enterprise: active range 100 %, write cache disabled, TC4/QD32. Client
(PTS 2.0 only): active range 75 % in 2,048 segments over all LBAs, write cache enabled, TC2/QD16, TP at 1024 KiB
only. WIPC is one sequential stream at TC1/QD32 over the whole range (the client's: all LBAs).
The spec PDFs were not readable here; each value was checked against public implementations instead (TKperf's
DeviceTests.py and StdyState.py for the matrices, nesting, tracked cells and the 20 %/10 % steady-state rule;
cloudharmony/block-storage and a PTS 2.0.2 Python suite for WIPC, TP at TC1/QD32 and the profiles' TC/QD): the
table with every parameter, its source and confidence is docs/pts-spec-sources.md.

The advanced tests (HIR, XSR, CBW, DIRTH, ECW, HDD zones) are rows of `advanced_specs.ADVANCED_DEFS` built from
the same shapes: heterogeneous cells with their own TC/QD, runtime, role and extra fio options (bssplit,
random_distribution=zoned, startdelay), and several phases chained when a test has stages. Their durations and
counts are `AdvancedParams`, one per selected test in `Settings.advanced`. advanced_specs imports this module, so
this module imports it only inside functions.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ptsbench.pts.advanced_specs import AdvancedParams

from ptsbench.errors import PtsbenchError
from ptsbench.units import MAX_SECONDS, format_bs, parse_size_bytes

SPEC_VERSIONS = ("2.0", "1.1")
PROFILES_NAMES = ("enterprise", "client", "demo")
PTS_ROUND_TIME_S = 60.0
PTS_MAX_ROUNDS = 25
WINDOW_ROUNDS = 5
WIPC_BS_BYTES = 128 * 1024
WIPC_MULTIPLE = 2.0
WSAT_CAPACITY_MULTIPLE = 4.0
WSAT_MAX_TIME_S = 24 * 3600.0
# WIPC as one sequential stream at TC1/QD32 (a PTS 2.0.2 Python suite's stdPrecond; cloudharmony's single job): each
# LBA written in order, as a drive sees it from the spec's "sequential 128 KiB writes", whatever the test's TC/QD
WIPC_DEPTH = (1, 32)
# PTS 2.0 latency test: response-time histogram of RND 4 KiB writes at TC1/QD1 after steady state
LAT_HISTOGRAM_S = 20 * 60.0
# PTS client: the active-range amount is touched in this many equal segments spread over all LBAs
CLIENT_SEGMENTS = 2048

METRICS = ("iops", "bw_bytes", "lat_mean_ns", "lat_max_ns")


def mix_label(read_pct: int) -> str:
    """Read/write split as PTS writes it: 65 -> '65/35'."""
    return f"{read_pct}/{100 - read_pct}"


def cell_name(pattern: str, bs_bytes: int, read_pct: int) -> str:
    """The workload's name, e.g. 'rnd 4k 0/100' (random 4 KiB, 100 % writes): how tracked variables refer to it."""
    return f"{pattern} {format_bs(bs_bytes)} {mix_label(read_pct)}"


@dataclass(frozen=True)
class CellSpec:
    """One workload of a round: a fio job run for `runtime_s`."""

    name: str
    pattern: str  # "rnd" | "seq"
    read_pct: int  # 100 = all reads, 0 = all writes
    bs_bytes: int
    numjobs: int
    iodepth: int
    runtime_s: float
    fio_options: tuple[tuple[str, str | None], ...] = ()  # extra options for tests beyond the matrix
    # "" for a measured cell of the test's loop; "pre-write" (writes that only prepare the next cells), "burst" and
    # "recovery" (HIR), "histogram" (a CBW/DIRTH operating point's response-time capture)
    role: str = ""

    @property
    def mix(self) -> str:
        return mix_label(self.read_pct)


@dataclass(frozen=True)
class Tracked:
    """A tracked (dependent) variable: a metric of one named cell."""

    cell: str
    metric: str  # one of METRICS

    @property
    def label(self) -> str:
        return f"{self.cell} {self.metric}"


@dataclass(frozen=True)
class Precondition:
    """Workload-independent preconditioning: `multiple` x the active range of sequential writes at `bs_bytes`."""

    bs_bytes: int
    multiple: float
    numjobs: int
    iodepth: int


@dataclass(frozen=True)
class StopRule:
    """When a phase stops: 'steady' (steady state or max_rounds), 'written' (capacity_multiple x capacity written or
    max_time_s of IO), or 'rounds' (exactly max_rounds)."""

    kind: str
    max_rounds: int
    window: int = WINDOW_ROUNDS
    capacity_multiple: float = 0.0
    max_time_s: float = 0.0


@dataclass(frozen=True)
class Phase:
    """What the engine runs: purge, preconditioning, then rounds of `cells` until the stop rule says stop."""

    key: str  # unique in a run, e.g. "iops", "tp-1m"; also its folder name in the store
    test: str  # the TestDef key
    title: str
    purge: bool
    precondition: Precondition | None
    cells: tuple[CellSpec, ...]
    tracked: tuple[Tracked, ...]
    stop: StopRule
    # what the phase is within its test (so readers need not parse keys): "" (the four base tests), "baseline"
    # (HIR steady state), "wait-state" (HIR), "group" (XSR), "precondition", "sweep", "point" (CBW/DIRTH/ECW),
    # "zones" (HDD); `meta` adds the phase's own numbers: wait_s, group, point/tc/qd, zones
    role: str = ""
    meta: tuple[tuple[str, str | int | float], ...] = ()


@dataclass(frozen=True)
class TestParams:
    """The parameters of one test a profile sets and the command line may override."""

    block_sizes: tuple[int, ...]
    mixes: tuple[int, ...]
    numjobs: int
    iodepth: int
    round_time_s: float
    max_rounds: int


@dataclass(frozen=True)
class TestDef:
    """One PTS test as data. `depth` None means the profile's TC/QD; `tracked` names cells per spec version
    ('{bs}' stands for the phase's block size when `phase_per_block_size`)."""

    key: str
    title: str
    pattern: str
    mixes: tuple[int, ...]
    block_sizes: Mapping[str, tuple[str, ...]]  # by profile kind ("enterprise", "client")
    depth: Mapping[str, tuple[int, int] | None]  # by spec version
    tracked: Mapping[str, tuple[str, ...]]  # by spec version
    metric: str
    precondition: str  # "wipc" (128 KiB) | "wipc-at-bs" (at the phase's block size) | "none"
    stop: str  # "steady" | "written"
    phase_per_block_size: bool = False
    section: Mapping[str, str] = field(default_factory=dict)  # the spec's name for the test, by spec version

    def spec_block_sizes(self, kind: str) -> tuple[int, ...]:
        return tuple(parse_size_bytes(bs) for bs in self.block_sizes.get(kind, self.block_sizes["enterprise"]))


IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
IOPS_BLOCK_SIZES = ("1m", "128k", "64k", "32k", "16k", "8k", "4k", "512")

TEST_DEFS: dict[str, TestDef] = {
    "iops": TestDef(
        key="iops",
        title="IOPS",
        pattern="rnd",
        mixes=IOPS_MIXES,
        block_sizes={"enterprise": IOPS_BLOCK_SIZES},
        depth={"2.0": None, "1.1": None},
        tracked={"2.0": ("rnd 4k 0/100", "rnd 64k 65/35", "rnd 1m 100/0"), "1.1": ("rnd 4k 0/100",)},
        metric="iops",
        precondition="wipc",
        stop="steady",
        section={"2.0": "PTS 2.0.2 section 7 (IOPS)", "1.1": "PTS-E 1.1 IOPS test"},
    ),
    "tp": TestDef(
        key="tp",
        title="Throughput",
        pattern="seq",
        mixes=(100, 0),
        block_sizes={"enterprise": ("1m", "128k"), "client": ("1m",)},
        depth={"2.0": (1, 32), "1.1": None},
        tracked={"2.0": ("seq {bs} 0/100",), "1.1": ("seq {bs} 0/100",)},
        metric="bw_bytes",
        precondition="wipc-at-bs",
        stop="steady",
        phase_per_block_size=True,
        section={"2.0": "PTS 2.0.2 section 8 (Throughput)", "1.1": "PTS-E 1.1 Throughput test"},
    ),
    "lat": TestDef(
        key="lat",
        title="Latency",
        pattern="rnd",
        mixes=(100, 65, 0),
        block_sizes={"enterprise": ("8k", "4k", "512")},
        depth={"2.0": (1, 1), "1.1": (1, 1)},
        tracked={"2.0": ("rnd 4k 0/100",), "1.1": ("rnd 4k 0/100",)},
        metric="lat_mean_ns",
        precondition="wipc",
        stop="steady",
        section={"2.0": "PTS 2.0.2 section 9 (Latency)", "1.1": "PTS-E 1.1 Latency test"},
    ),
    "wsat": TestDef(
        key="wsat",
        title="Write saturation",
        pattern="rnd",
        mixes=(0,),
        block_sizes={"enterprise": ("4k",)},
        depth={"2.0": None, "1.1": None},
        tracked={"2.0": (), "1.1": ()},
        metric="iops",
        precondition="none",
        stop="written",
        section={"2.0": "PTS 2.0.2 section 10 (Write saturation)", "1.1": "PTS-E 1.1 Write Saturation test"},
    ),
}
TEST_ORDER = ("iops", "tp", "lat", "wsat")


@dataclass(frozen=True)
class Profile:
    """A profile: which spec parameters it follows and which it changes (demo)."""

    name: str
    kind: str  # the spec profile it follows: "enterprise" | "client"
    active_range_pct: float
    write_cache: str  # the state the spec requires: "disabled" | "enabled"
    numjobs: int
    iodepth: int
    round_time_s: float = PTS_ROUND_TIME_S
    max_rounds: int = PTS_MAX_ROUNDS
    wipc_multiple: float = WIPC_MULTIPLE
    wsat_capacity_multiple: float = WSAT_CAPACITY_MULTIPLE
    wsat_max_time_s: float = WSAT_MAX_TIME_S
    per_test: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # TestParams fields per test
    scratch_size_bytes: int | None = None  # a scratch file in the run directory when no target is given
    description: str = ""
    # AdvancedParams fields the profile changes; the advanced tests take TC/QD, round time and maximum rounds from
    # the profile's own fields (advanced_specs.profile_params)
    advanced: Mapping[str, object] = field(default_factory=dict)
    lat_histogram_s: float = LAT_HISTOGRAM_S  # PTS 2.0 only; 0: none
    segments: int = 0  # 0: one contiguous active range from LBA 0 (enterprise); client: CLIENT_SEGMENTS


PROFILES: dict[str, Profile] = {
    "enterprise": Profile(
        "enterprise", "enterprise", 100.0, "disabled", 4, 32, description="PTS enterprise: AR 100 %, WCD, TC4/QD32"
    ),
    "client": Profile("client", "client", 75.0, "enabled", 2, 16, segments=CLIENT_SEGMENTS,
                      description=f"PTS client: AR 75 % in {CLIENT_SEGMENTS} segments, WCE, TC2/QD16"),
    "demo": Profile(
        "demo",
        "enterprise",
        100.0,
        "disabled",
        2,
        8,
        round_time_s=0.5,
        max_rounds=WINDOW_ROUNDS,
        wsat_max_time_s=20.0,
        lat_histogram_s=1.0,
        per_test={
            # the three PTS 2.0 tracked IOPS cells sit in this reduced matrix
            "iops": {"mixes": (100, 65, 0), "block_sizes": tuple(parse_size_bytes(b) for b in ("1m", "64k", "4k"))},
            "wsat": {"round_time_s": 1.0},
        },
        scratch_size_bytes=256 * 1024**2,
        description="the enterprise flow in about two minutes on a 256 MiB scratch file: 0.5 s cells, 5 rounds, "
        "reduced IOPS matrix; each advanced test in about a minute; not PTS-compliant",
        advanced={
            "hir_wait_states_s": (0.5, 1.0, 1.5, 2.5, 5.0),
            "hir_bursts": 3,
            "hir_burst_s": 0.5,
            "hir_recovery_s": 2.0,
            "xsr_group_s": (8.0, 6.0, 8.0),
            "demand_tcs": (4, 2, 1),
            "demand_qds": (16, 4, 1),
            "prewrite_s": 2.0,
            "point_prewrite_s": 2.0,
            "point_capture_s": 2.0,
            "hdd_zones": 4,
            "ss_round_s": 0.5,
        },
    ),
}


@dataclass(frozen=True)
class Settings:
    """Everything that decides what a PTS run does: profile, spec version, tests and per-test parameters."""

    profile: str
    kind: str
    spec: str
    tests: tuple[str, ...]
    active_range_pct: float
    write_cache: str
    wipc_multiple: float
    wsat_capacity_multiple: float
    wsat_max_time_s: float
    ramp_time_s: float
    params: Mapping[str, TestParams]
    scratch_size_bytes: int | None = None
    advanced: Mapping[str, "AdvancedParams"] = field(default_factory=dict)  # per selected advanced test
    lat_histogram_s: float = 0.0  # the latency test's response-time capture after steady state; 0: none
    segments: int = 0  # the active range in this many segments over all LBAs; 0: contiguous from LBA 0

    def to_dict(self) -> dict[str, object]:
        return {
            "profile": self.profile,
            "kind": self.kind,
            "spec": self.spec,
            "tests": list(self.tests),
            "active_range_pct": self.active_range_pct,
            "write_cache": self.write_cache,
            "wipc_multiple": self.wipc_multiple,
            "wsat_capacity_multiple": self.wsat_capacity_multiple,
            "wsat_max_time_s": self.wsat_max_time_s,
            "ramp_time_s": self.ramp_time_s,
            "scratch_size_bytes": self.scratch_size_bytes,
            "lat_histogram_s": self.lat_histogram_s,
            "segments": self.segments,
            "params": {
                test: {
                    "block_sizes": list(p.block_sizes),
                    "mixes": list(p.mixes),
                    "numjobs": p.numjobs,
                    "iodepth": p.iodepth,
                    "round_time_s": p.round_time_s,
                    "max_rounds": p.max_rounds,
                }
                for test, p in self.params.items()
            },
            "advanced": {test: asdict(p) for test, p in self.advanced.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> "Settings":
        """The inverse of to_dict (what resume reads back from the store). A key a run made by an older ptsbench
        lacks keeps that version's behaviour (no latency histogram, a contiguous active range)."""
        raw_params = data["params"]
        assert isinstance(raw_params, dict)
        params = {
            test: TestParams(
                block_sizes=tuple(p["block_sizes"]),
                mixes=tuple(p["mixes"]),
                numjobs=int(p["numjobs"]),
                iodepth=int(p["iodepth"]),
                round_time_s=float(p["round_time_s"]),
                max_rounds=int(p["max_rounds"]),
            )
            for test, p in raw_params.items()
        }
        from ptsbench.pts.advanced_specs import advanced_from_dict

        raw_advanced = data.get("advanced") or {}
        assert isinstance(raw_advanced, dict)
        advanced = {test: advanced_from_dict(p) for test, p in raw_advanced.items()}
        values = {key: data[key] for key in cls.__dataclass_fields__
                  if key in data and key not in ("params", "advanced")}
        values["tests"] = tuple(values["tests"])  # type: ignore[arg-type]
        return cls(params=params, advanced=advanced, **values)  # type: ignore[arg-type]


def spec_params(defn: TestDef, profile: Profile, spec: str) -> TestParams:
    """What the spec (and the profile's own changes) say for one test, before command-line overrides."""
    depth = defn.depth[spec]
    numjobs, iodepth = depth if depth is not None else (profile.numjobs, profile.iodepth)
    params = TestParams(
        block_sizes=defn.spec_block_sizes(profile.kind),
        mixes=defn.mixes,
        numjobs=numjobs,
        iodepth=iodepth,
        round_time_s=profile.round_time_s,
        max_rounds=profile.max_rounds,
    )
    return replace(params, **profile.per_test.get(defn.key, {}))  # type: ignore[arg-type]


def pts_params(defn: TestDef, kind: str, spec: str) -> TestParams:
    """The unmodified PTS parameters of a test for a spec profile kind (the compliance reference)."""
    return spec_params(defn, PROFILES[kind], spec)


def all_tests() -> tuple[str, ...]:
    """Every test ptsbench knows, in run order: the four base tests, then the advanced ones."""
    from ptsbench.pts.advanced_specs import ADVANCED_ORDER

    return (*TEST_ORDER, *ADVANCED_ORDER)


def make_settings(
    profile_name: str = "enterprise",
    spec: str = "2.0",
    tests: tuple[str, ...] = TEST_ORDER,
    overrides: Mapping[str, Mapping[str, object]] | None = None,
    active_range_pct: float | None = None,
    wipc_multiple: float | None = None,
    wsat_capacity_multiple: float | None = None,
    wsat_max_time_s: float | None = None,
    ramp_time_s: float = 0.0,
    lat_histogram_s: float | None = None,
) -> Settings:
    """Settings from a profile, a spec version and overrides (`overrides[test][field]` replaces a TestParams field)."""
    if profile_name not in PROFILES:
        raise PtsbenchError(f"unknown profile {profile_name!r}", f"choose one of {', '.join(PROFILES)}")
    if spec not in SPEC_VERSIONS:
        raise PtsbenchError(f"unknown PTS version {spec!r}", f"choose one of {', '.join(SPEC_VERSIONS)}")
    if spec == "1.1" and PROFILES[profile_name].kind == "client":
        raise PtsbenchError("PTS-E 1.1 is the enterprise specification: it has no client profile",
                            "use --profile client with --spec 2.0, or --profile enterprise with --spec 1.1")
    if lat_histogram_s is not None and "lat" not in tests:
        raise PtsbenchError("--lat-histogram-time applies to the latency test, which is not selected",
                            "drop it or add lat to --tests")
    if spec == "1.1" and lat_histogram_s:
        raise PtsbenchError("PTS-E 1.1's latency test has no response-time histogram",
                            "leave --lat-histogram-time out, or use --spec 2.0")
    from ptsbench.pts.advanced_specs import advanced_params

    known = all_tests()
    unknown = [test for test in tests if test not in known]
    if unknown or not tests:
        raise PtsbenchError(f"unknown test {', '.join(unknown) or '(none)'}", f"choose from {','.join(known)}")
    profile = PROFILES[profile_name]
    ordered = tuple(test for test in known if test in tests)
    params, advanced = {}, {}
    for test in ordered:
        changes = dict((overrides or {}).get(test, {}))
        if test not in TEST_DEFS:
            advanced[test] = advanced_params(test, profile, spec, changes)
            continue
        base = spec_params(TEST_DEFS[test], profile, spec)
        params[test] = _in_spec_order(replace(base, **changes))  # type: ignore[arg-type]
        _check_params(test, params[test])
    settings = Settings(
        profile=profile.name,
        kind=profile.kind,
        spec=spec,
        tests=ordered,
        active_range_pct=profile.active_range_pct if active_range_pct is None else active_range_pct,
        write_cache=profile.write_cache,
        wipc_multiple=profile.wipc_multiple if wipc_multiple is None else wipc_multiple,
        wsat_capacity_multiple=(
            profile.wsat_capacity_multiple if wsat_capacity_multiple is None else wsat_capacity_multiple
        ),
        wsat_max_time_s=profile.wsat_max_time_s if wsat_max_time_s is None else wsat_max_time_s,
        ramp_time_s=ramp_time_s,
        params=params,
        scratch_size_bytes=profile.scratch_size_bytes,
        advanced=advanced,
        lat_histogram_s=0.0 if spec != "2.0" or "lat" not in ordered
        else profile.lat_histogram_s if lat_histogram_s is None else lat_histogram_s,
        segments=profile.segments,
    )
    _check_settings(settings)
    return settings


def _in_spec_order(params: TestParams) -> TestParams:
    """Block sizes and mixes as the spec nests them, whatever order they were given in: mixes from all reads to all
    writes, block sizes from largest to smallest (IOPS, throughput and latency alike); each value once."""
    return replace(params, block_sizes=tuple(sorted(set(params.block_sizes), reverse=True)),
                   mixes=tuple(sorted(set(params.mixes), reverse=True)))


def _check_params(test: str, params: TestParams) -> None:
    if not params.block_sizes or any(bs <= 0 or bs % 512 for bs in params.block_sizes):
        raise PtsbenchError(f"{test}: block sizes must be multiples of 512 bytes", "e.g. --block-sizes 4k,64k,1m")
    if not params.mixes or any(not 0 <= mix <= 100 for mix in params.mixes):
        raise PtsbenchError(f"{test}: read percentages must be 0..100", "e.g. --mixes 100,65,0 (read %)")
    if params.numjobs < 1 or params.iodepth < 1:
        raise PtsbenchError(f"{test}: thread count and queue depth must be at least 1", "e.g. --numjobs 4")
    if params.round_time_s <= 0 or params.max_rounds < 1:
        raise PtsbenchError(f"{test}: round time and maximum rounds must be positive", "e.g. --round-time 60")


def _check_settings(settings: Settings) -> None:
    if not 0 < settings.active_range_pct <= 100:
        raise PtsbenchError("active range must be in (0, 100] percent", "e.g. --active-range 75")
    if settings.wipc_multiple <= 0 or settings.wsat_capacity_multiple <= 0 or settings.wsat_max_time_s <= 0:
        raise PtsbenchError("preconditioning amount and WSAT limits must be positive", "check the overrides")
    if settings.ramp_time_s < 0:
        raise PtsbenchError("ramp time cannot be negative", "PTS uses 0")
    if settings.lat_histogram_s < 0 or 0 < settings.lat_histogram_s < 0.001:
        raise PtsbenchError("the latency histogram capture must be 0 (none) or at least 1 ms", "PTS 2.0: 20m")


def _phase_block_sizes(defn: TestDef, params: TestParams) -> list[tuple[str, tuple[int, ...]]]:
    """(phase key, block sizes) pairs: one phase with all sizes, or one phase per size (throughput)."""
    if defn.phase_per_block_size:
        return [(f"{defn.key}-{format_bs(bs)}", (bs,)) for bs in params.block_sizes]
    return [(defn.key, params.block_sizes)]


def build_test(test: str, settings: Settings) -> tuple[Phase, ...]:
    """The phases of one test under `settings`, cells in the spec's nesting order (mix outer, block size inner)."""
    defn = TEST_DEFS[test]
    params = settings.params[test]
    phases = []
    for key, block_sizes in _phase_block_sizes(defn, params):
        cells = tuple(
            CellSpec(
                name=cell_name(defn.pattern, bs, mix),
                pattern=defn.pattern,
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
            Tracked(name.format(bs=format_bs(block_sizes[0])), defn.metric) for name in defn.tracked[settings.spec]
        )
        phases.append(
            Phase(
                key=key,
                test=test,
                title=defn.title if len(block_sizes) > 1 or not defn.phase_per_block_size
                else f"{defn.title} {format_bs(block_sizes[0])}",
                purge=True,
                precondition=_precondition(defn, block_sizes, settings),
                cells=cells,
                tracked=tracked,
                stop=_stop_rule(defn, params, settings),
            )
        )
    if test == "lat" and settings.lat_histogram_s:
        phases.append(_lat_histogram(params, settings.lat_histogram_s))
    return tuple(phases)


def _lat_histogram(params: TestParams, runtime_s: float) -> Phase:
    """PTS 2.0's response-time histogram of the latency test: once steady state is reached, RND 4 KiB writes at
    the test's TC/QD (TC1/QD1) for `runtime_s`; its json+ bins give the histogram and the confidence levels."""
    name = cell_name("rnd", 4096, 0)
    cell = CellSpec(name, "rnd", 0, 4096, params.numjobs, params.iodepth, runtime_s, role="histogram")
    return Phase(key="lat-histogram", test="lat", title="Latency: response-time histogram", purge=False,
                 precondition=None, cells=(cell,), tracked=(), stop=StopRule("rounds", 1), role="histogram")


def _precondition(defn: TestDef, block_sizes: tuple[int, ...], settings: Settings) -> Precondition | None:
    if defn.precondition == "none":
        return None
    bs = block_sizes[0] if defn.precondition == "wipc-at-bs" else WIPC_BS_BYTES
    return Precondition(bs_bytes=bs, multiple=settings.wipc_multiple, numjobs=WIPC_DEPTH[0], iodepth=WIPC_DEPTH[1])


def _stop_rule(defn: TestDef, params: TestParams, settings: Settings) -> StopRule:
    if defn.stop == "written":
        rounds = max(1, int(-(-settings.wsat_max_time_s // params.round_time_s)))
        return StopRule(
            "written",
            max_rounds=rounds,
            capacity_multiple=settings.wsat_capacity_multiple,
            max_time_s=settings.wsat_max_time_s,
        )
    return StopRule("steady", max_rounds=params.max_rounds)


def build_phases(
    settings: Settings, operating_points: Mapping[str, Mapping[str, tuple[int, int]]] | None = None
) -> tuple[Phase, ...]:
    """Every phase of the run, in test order. A demand-intensity test (CBW, DIRTH, ECW) ends with its operating
    points' phases once they are chosen: `operating_points[test]` = {'max': (TC, QD), ...} as stored by the engine."""
    from ptsbench.pts.advanced_specs import build_advanced, point_phases

    phases: list[Phase] = []
    for test in settings.tests:
        if test in TEST_DEFS:
            phases += build_test(test, settings)
            continue
        phases += build_advanced(test, settings.advanced[test], settings.spec)
        if operating_points and test in operating_points:
            phases += point_phases(test, settings.advanced[test], operating_points[test])
    return tuple(phases)


def parse_list(text: str, parse_one: Callable[[str], int], what: str) -> tuple[int, ...]:
    """'a,b,c' parsed item by item; an empty list is an error."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise PtsbenchError(f"empty {what} list", "give a comma-separated list")
    return tuple(parse_one(item) for item in items)


def _parse_mix(text: str) -> int:
    """'65' or '65/35' -> 65 (read %); the two parts of a mix must add up to 100."""
    read, sep, write = text.partition("/")
    if not read.isdigit() or (sep and not (write.isdigit() and int(read) + int(write) == 100)):
        raise PtsbenchError(f"not a read/write mix: {text!r}", "use read percentages like 100,65,0 or mixes like "
                            "65/35 (read/write, adding up to 100)")
    return int(read)


def parse_positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise PtsbenchError(f"not a positive whole number: {text!r}", "e.g. 4")
    return int(text)


def parse_seconds(text: str) -> float:
    """'60', '500ms', '2m', '1h' -> seconds (positive)."""
    from ptsbench.fio.jobs import parse_duration_s

    seconds = parse_duration_s(text)
    if seconds is None or seconds <= 0:
        raise PtsbenchError(f"not a duration: {text!r}", "use seconds, or a suffix: 500ms, 60s, 2m, 1h")
    if seconds < 0.001:  # fio counts whole milliseconds, and its runtime=0 means "no limit"
        raise PtsbenchError(f"duration {text!r} is under fio's 1 ms resolution", "use at least 1ms")
    if seconds > MAX_SECONDS:
        raise PtsbenchError(f"duration {text!r} is over a year", "use a duration of at most 366 days")
    return seconds


OVERRIDE_PARSERS: dict[str, Callable[[str], object]] = {
    "block_sizes": lambda text: parse_list(text, parse_size_bytes, "block size"),
    "mixes": lambda text: parse_list(text, _parse_mix, "mix"),
    "numjobs": parse_positive_int,
    "iodepth": parse_positive_int,
    "round_time_s": parse_seconds,
    "max_rounds": parse_positive_int,
}
TEST_PARAM_NAMES = frozenset(OVERRIDE_PARSERS)  # what a base test accepts: every TestParams field
# The command-line option of each override (for messages)
OPTION_NAMES = {
    "block_sizes": "--block-sizes", "mixes": "--mixes", "numjobs": "--numjobs", "iodepth": "--iodepth",
    "round_time_s": "--round-time", "max_rounds": "--max-rounds", "hir_wait_states_s": "--hir-wait-states",
    "hir_bursts": "--hir-bursts", "hir_burst_s": "--hir-burst-time", "hir_recovery_s": "--hir-recovery-time",
    "xsr_group_s": "--xsr-groups", "demand_tcs": "--demand-tcs", "demand_qds": "--demand-qds",
    "prewrite_s": "--prewrite-time", "point_prewrite_s": "--point-prewrite-time",
    "point_capture_s": "--point-capture-time", "dirth_workload": "--dirth-workload", "hdd_zones": "--zones",
    "point_prewrite_depth": "--point-prewrite-depth", "ss_round_s": "--ss-round-time",
}


def accepted_overrides(test: str) -> frozenset[str]:
    """The override names a test takes: TestParams fields for the base tests, its parameters for the others."""
    from ptsbench.pts.advanced_specs import override_names

    return TEST_PARAM_NAMES if test in TEST_DEFS else override_names(test)


def parse_overrides(raw: Mapping[str, Sequence[str]], tests: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """Command-line overrides '[TEST=]VALUE' per parameter -> overrides[test][name]. A plain VALUE applies to every
    selected test that has the parameter, 'iops=VALUE' to one (later values win); a value no test can take is an
    error."""
    from ptsbench.pts.advanced_specs import ADVANCED_PARSERS

    parsers = {**OVERRIDE_PARSERS, **ADVANCED_PARSERS}
    known = all_tests()
    overrides: dict[str, dict[str, object]] = {test: {} for test in tests}
    for name, values in raw.items():
        option = OPTION_NAMES.get(name, name)
        for text in values:
            test, sep, value = text.partition("=")
            test = test.strip()
            if sep and test not in known:
                raise PtsbenchError(f"unknown test {test!r} in {option} {text}", f"use one of {','.join(known)}")
            if sep and name not in accepted_overrides(test):
                takes = ", ".join(sorted(OPTION_NAMES[n] for n in accepted_overrides(test) if n in OPTION_NAMES))
                raise PtsbenchError(f"{option} does not apply to {test}", f"{test} takes {takes}")
            chosen = [test] if sep else [t for t in tests if name in accepted_overrides(t)]
            if not chosen:
                raise PtsbenchError(f"{option} applies to none of the selected tests ({','.join(tests)})",
                                    "drop it or select a test that has it")
            parsed = parsers[name](value if sep else text)
            for selected in chosen:
                if selected in overrides:
                    overrides[selected][name] = parsed
    return overrides


def parse_tests(text: str) -> tuple[str, ...]:
    """'iops,tp' -> ('iops', 'tp'), checked against the known tests."""
    known = all_tests()
    tests = tuple(item.strip().lower() for item in text.split(",") if item.strip())
    unknown = [test for test in tests if test not in known]
    if unknown or not tests:
        raise PtsbenchError(f"unknown test(s): {', '.join(unknown) or '(none)'}", f"choose from {','.join(known)}")
    return tests
