"""The spec's numbers, the profiles, and the parameters and settings of a run.

The base tests' parameters are `TestParams` (block sizes, mixes, TC/QD, round time, maximum rounds), the advanced
tests' durations, counts and workload choices `AdvancedParams`; `Settings` holds both for every selected test, with
the run-wide choices (profile, spec version, active range, WIPC and WSAT amounts), and is what a run stores and
resume reads back. The values are the spec's; docs/pts-spec-sources.md gives the source and confidence of each.
Nothing here builds phases (pts/specs.py) or reads the command line (pts/settings.py).
"""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace

from ptsbench.errors import PtsbenchError
from ptsbench.pts.cells import WINDOW_ROUNDS
from ptsbench.units import parse_size_bytes

SPEC_VERSIONS = ("2.0", "1.1")
PTS_ROUND_TIME_S = 60.0
PTS_MAX_ROUNDS = 25
WIPC_BS_BYTES = 128 * 1024
WIPC_MULTIPLE = 2.0
# --precondition: PTS's workload-independent preconditioning, or fio's sprandom (fio 3.41 or newer): random writes
# of the range and its over-provisioning once, laid out so that the drive's share of invalid pages is already a
# random-write steady state's; fio's default over-provisioning (spr_op) is 0.15
PRECONDITIONS = ("wipc", "sprandom")
SPRANDOM_OP = 0.15
SPRANDOM_BS_BYTES = 4096  # the IOPS and latency tests' tracked block size
WSAT_CAPACITY_MULTIPLE = 4.0
WSAT_MAX_TIME_S = 24 * 3600.0
# WIPC as one sequential stream at TC1/QD32 (a PTS 2.0.2 Python suite's stdPrecond; cloudharmony's single job): each
# LBA written in order, as a drive sees it from the spec's "sequential 128 KiB writes", whatever the test's TC/QD
WIPC_DEPTH = (1, 32)
# PTS 2.0 latency test: response-time histogram of RND 4 KiB writes at TC1/QD1 after steady state
LAT_HISTOGRAM_S = 20 * 60.0
# PTS client: the active-range amount is touched in this many equal segments spread over all LBAs
CLIENT_SEGMENTS = 2048
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
    # the profile's own fields (profile_params)
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
    advanced: Mapping[str, AdvancedParams] = field(default_factory=dict)  # per selected advanced test
    lat_histogram_s: float = 0.0  # the latency test's response-time capture after steady state; 0: none
    segments: int = 0  # the active range in this many segments over all LBAs; 0: contiguous from LBA 0
    precondition: str = "wipc"  # one of PRECONDITIONS (a run stored before the choice existed: wipc)
    sprandom_op: float = SPRANDOM_OP  # the over-provisioning fio's sprandom assumes (spr_op)

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
            "precondition": self.precondition,
            "sprandom_op": self.sprandom_op,
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
        raw_advanced = data.get("advanced") or {}
        assert isinstance(raw_advanced, dict)
        advanced = {test: advanced_from_dict(p) for test, p in raw_advanced.items()}
        values = {key: data[key] for key in cls.__dataclass_fields__
                  if key in data and key not in ("params", "advanced")}
        values["tests"] = tuple(values["tests"])  # type: ignore[arg-type]
        return cls(params=params, advanced=advanced, **values)  # type: ignore[arg-type]


def check_test_params(test: str, params: TestParams) -> None:
    """One clear error for a matrix test's parameter it cannot run with."""
    if not params.block_sizes or any(bs <= 0 or bs % 512 for bs in params.block_sizes):
        raise PtsbenchError(f"{test}: block sizes must be multiples of 512 bytes", "e.g. --block-sizes 4k,64k,1m")
    if not params.mixes or any(not 0 <= mix <= 100 for mix in params.mixes):
        raise PtsbenchError(f"{test}: read percentages must be 0..100", "e.g. --mixes 100,65,0 (read %)")
    if params.numjobs < 1 or params.iodepth < 1:
        raise PtsbenchError(f"{test}: thread count and queue depth must be at least 1", "e.g. --numjobs 4")
    if params.round_time_s <= 0 or params.max_rounds < 1:
        raise PtsbenchError(f"{test}: round time and maximum rounds must be positive", "e.g. --round-time 60")


def check_advanced_params(params: AdvancedParams) -> None:
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


def check_settings(settings: Settings) -> None:
    """One clear error for a run-wide setting no run can use."""
    if not 0 < settings.active_range_pct <= 100:
        raise PtsbenchError("active range must be in (0, 100] percent", "e.g. --active-range 75")
    if settings.wipc_multiple <= 0 or settings.wsat_capacity_multiple <= 0 or settings.wsat_max_time_s <= 0:
        raise PtsbenchError("preconditioning amount and WSAT limits must be positive", "check the overrides")
    if settings.precondition not in PRECONDITIONS:
        raise PtsbenchError(f"unknown preconditioning {settings.precondition!r}",
                            f"use one of {', '.join(PRECONDITIONS)}")
    if not 0 < settings.sprandom_op < 1:
        raise PtsbenchError(f"sprandom over-provisioning must be above 0 and below 1, not {settings.sprandom_op:g}",
                            "e.g. --sprandom-op 0.07 for 7 %")
    if settings.ramp_time_s < 0:
        raise PtsbenchError("ramp time cannot be negative", "PTS uses 0")
    if settings.lat_histogram_s < 0 or 0 < settings.lat_histogram_s < 0.001:
        raise PtsbenchError("the latency histogram capture must be 0 (none) or at least 1 ms", "PTS 2.0: 20m")
