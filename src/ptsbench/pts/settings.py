"""From the command line to a run's `Settings`: the profile, the spec version, the selected tests and every
`[TEST=]VALUE` override, parsed and checked, each test's parameters read from its row of the table (pts/specs.py).
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ptsbench.errors import PtsbenchError
from ptsbench.fio.jobs import FIO_MAX_JOBS, IODEPTH_LIMIT, JOBS_LIMIT, MAX_IODEPTH
from ptsbench.pts.params import (
    PREWRITE_DEPTHS,
    PROFILES,
    SPEC_VERSIONS,
    SPRANDOM_OP,
    XSR_GROUPS,
    AdvancedParams,
    Settings,
    TestParams,
    check_advanced_params,
    check_settings,
    check_test_params,
    profile_params,
)
from ptsbench.pts.specs import DEFAULT_TESTS, TEST_DEFS, TEST_ORDER, check_spec, spec_params, sprandom_tests
from ptsbench.units import parse_seconds, parse_size_bytes

MAX_ROUNDS = 10_000  # rounds of one phase (PTS: 25); a round count beyond this is a typo
MAX_ZONES = 4096  # HDD zones (TKperf: 128); each adds 9 IOPS or 4 throughput cells to the round


@dataclass(frozen=True)
class RunChoices:
    """The command line's choices for the whole run, beside the tests' own parameters; None keeps the profile's."""

    active_range_pct: float | None = None
    wipc_multiple: float | None = None
    wsat_capacity_multiple: float | None = None
    wsat_max_time_s: float | None = None
    ramp_time_s: float = 0.0
    lat_histogram_s: float | None = None
    precondition: str = "wipc"
    sprandom_op: float | None = None


def make_settings(
    profile_name: str = "enterprise",
    spec: str = "2.0",
    tests: tuple[str, ...] = DEFAULT_TESTS,
    overrides: Mapping[str, Mapping[str, object]] | None = None,
    choices: RunChoices = RunChoices(),
) -> Settings:
    """Settings from a profile, a spec version, overrides (`overrides[test][field]` replaces a TestParams field) and
    the run's own choices."""
    if profile_name not in PROFILES:
        raise PtsbenchError(f"unknown profile {profile_name!r}", f"choose one of {', '.join(PROFILES)}")
    if spec not in SPEC_VERSIONS:
        raise PtsbenchError(f"unknown PTS version {spec!r}", f"choose one of {', '.join(SPEC_VERSIONS)}")
    if spec == "1.1" and PROFILES[profile_name].kind == "client":
        raise PtsbenchError("PTS-E 1.1 is the enterprise specification: it has no client profile",
                            "use --profile client with --spec 2.0, or --profile enterprise with --spec 1.1")
    lat_histogram_s = choices.lat_histogram_s
    if lat_histogram_s is not None and "lat" not in tests:
        raise PtsbenchError("--lat-histogram-time applies to the latency test, which is not selected",
                            "drop it or add lat to --tests")
    if spec == "1.1" and lat_histogram_s:
        raise PtsbenchError("PTS-E 1.1's latency test has no response-time histogram",
                            "leave --lat-histogram-time out, or use --spec 2.0")
    unknown = [test for test in tests if test not in TEST_DEFS]
    if unknown or not tests:
        raise PtsbenchError(f"unknown test {', '.join(unknown) or '(none)'}", f"choose from {','.join(TEST_ORDER)}")
    profile = PROFILES[profile_name]
    ordered = tuple(test for test in TEST_ORDER if test in tests)
    _check_precondition_choice(ordered, choices.precondition, choices.sprandom_op, choices.wipc_multiple)
    params, advanced = {}, {}
    for test in ordered:
        defn = check_spec(test, spec)
        changes = dict((overrides or {}).get(test, {}))
        if defn.matrix is None:
            advanced[test] = apply_overrides(test, profile_params(profile), changes)
            check_advanced_params(advanced[test])
            continue
        base = spec_params(defn, profile, spec)
        params[test] = _in_spec_order(replace(base, **changes))  # type: ignore[arg-type]
        check_test_params(test, params[test])
    settings = Settings(
        profile=profile.name,
        kind=profile.kind,
        spec=spec,
        tests=ordered,
        active_range_pct=_or(choices.active_range_pct, profile.active_range_pct),
        write_cache=profile.write_cache,
        wipc_multiple=_or(choices.wipc_multiple, profile.wipc_multiple),
        wsat_capacity_multiple=_or(choices.wsat_capacity_multiple, profile.wsat_capacity_multiple),
        wsat_max_time_s=_or(choices.wsat_max_time_s, profile.wsat_max_time_s),
        ramp_time_s=choices.ramp_time_s,
        params=params,
        scratch_size_bytes=profile.scratch_size_bytes,
        advanced=advanced,
        lat_histogram_s=0.0 if spec != "2.0" or "lat" not in ordered else _or(lat_histogram_s, profile.lat_histogram_s),
        segments=profile.segments,
        precondition=choices.precondition,
        sprandom_op=_or(choices.sprandom_op, SPRANDOM_OP),
    )
    check_settings(settings)
    return settings


def _or(chosen: float | None, default: float) -> float:
    """The value chosen, else the default (a chosen 0 stays 0)."""
    return default if chosen is None else chosen


def _check_precondition_choice(tests: tuple[str, ...], precondition: str, sprandom_op: float | None,
                               wipc_multiple: float | None) -> None:
    """One clear error for a preconditioning option no selected test would use: sprandom replaces the WIPC of the
    random-write tests (IOPS, latency); the throughput test keeps its sequential WIPC at the tested block size."""
    if precondition != "sprandom":
        if sprandom_op is not None:
            raise PtsbenchError("--sprandom-op applies to --precondition sprandom", "add that, or drop --sprandom-op")
        return
    if not sprandom_tests(tests):
        raise PtsbenchError("--precondition sprandom replaces the WIPC of the IOPS and latency tests, and neither is "
                            "selected", "select iops or lat, or drop --precondition")
    keeps_wipc = [test for test in tests if (matrix := TEST_DEFS[test].matrix) and matrix.precondition != "none"
                  and test not in sprandom_tests(tests)]  # throughput: WIPC at the tested block size
    if wipc_multiple is not None and not keeps_wipc:
        raise PtsbenchError("--precondition-multiple sets WIPC's amount, and sprandom replaces WIPC here (it writes "
                            "1 + --sprandom-op times the range)", "drop --precondition-multiple")


def _in_spec_order(params: TestParams) -> TestParams:
    """Block sizes and mixes as the spec nests them, whatever order they were given in: mixes from all reads to all
    writes, block sizes from largest to smallest (IOPS, throughput and latency alike); each value once."""
    return replace(params, block_sizes=tuple(sorted(set(params.block_sizes), reverse=True)),
                   mixes=tuple(sorted(set(params.mixes), reverse=True)))


def apply_overrides(test: str, params: AdvancedParams, changes: Mapping[str, object]) -> AdvancedParams:
    """`params` with the command line's changes: AdvancedParams fields, plus numjobs / iodepth for a test whose
    TC/QD is its own pair (XSR, HDD) and dirth_workload (block size, read %)."""
    values = dict(changes)
    if "dirth_workload" in values:
        values["dirth_bs_bytes"], values["dirth_read_pct"] = values.pop("dirth_workload")  # type: ignore[misc]
    depth = TEST_DEFS[test].depth_field
    if depth and values.keys() & {"numjobs", "iodepth"}:
        tc, qd = getattr(params, depth)
        values[depth] = (values.pop("numjobs", tc), values.pop("iodepth", qd))
    return replace(params, **values)  # type: ignore[arg-type]


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


def parse_whole(text: str, maximum: int, why: str) -> int:
    """A whole number from 1 to `maximum` (`why` says where that bound comes from), checked before it is converted
    (a typo of many digits must not reach a loop or a list)."""
    text = text.strip()
    digits = text.lstrip("0")
    if not (text.isascii() and text.isdigit()) or not digits:
        raise PtsbenchError(f"{text[:40]!r} is not a positive whole number", "e.g. 4")
    if len(digits) > len(str(maximum)) or int(digits) > maximum:
        raise PtsbenchError(f"{text[:20]}{'...' if len(text) > 20 else ''} is over {maximum:,}", why)
    return int(digits)


def _counts(maximum: int, why: str) -> Callable[[str], int]:
    """A parser of whole numbers from 1 to `maximum`."""
    return lambda text: parse_whole(text, maximum, why)



def parse_depths(text: str, tcs: bool = False) -> tuple[int, ...]:
    """'32,16,1' -> (32, 16, 1), for --demand-qds (and with `tcs` --demand-tcs, bounded by fio's job limit)."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items or not all(item.isascii() and item.isdigit() and item.strip("0") for item in items):
        raise PtsbenchError(f"not a list of whole numbers >= 1: {text[:40]!r}", "e.g. 32,16,8,6,4,2,1")
    maximum, why = (FIO_MAX_JOBS, JOBS_LIMIT) if tcs else (MAX_IODEPTH, IODEPTH_LIMIT)
    return tuple(dict.fromkeys(parse_whole(item, maximum, why) for item in items))  # a repeat would be a 2nd cell


def parse_dirth_workload(text: str) -> tuple[int, int]:
    """'8k:65' (block size : read %) -> (8192, 65), for --dirth-workload."""
    size, sep, read = text.partition(":")
    if not sep or not read.strip().isdigit():
        raise PtsbenchError(f"not a DIRTH workload: {text!r}", "use BLOCK_SIZE:READ_PERCENT, e.g. 8k:65")
    return parse_size_bytes(size.strip()), int(read)


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


OVERRIDE_PARSERS: dict[str, Callable[[str], object]] = {
    "block_sizes": lambda text: parse_list(text, parse_size_bytes, "block size"),
    "mixes": lambda text: parse_list(text, _parse_mix, "mix"),
    "numjobs": _counts(FIO_MAX_JOBS, JOBS_LIMIT),
    "iodepth": _counts(MAX_IODEPTH, IODEPTH_LIMIT),
    "round_time_s": parse_seconds,
    "max_rounds": _counts(MAX_ROUNDS, f"use at most {MAX_ROUNDS:,} rounds (PTS: 25)"),
}
# Parsers of the advanced tests' command-line overrides (by parameter name; OPTION_NAMES gives the options)
ADVANCED_PARSERS: dict[str, Callable[[str], object]] = {
    "hir_wait_states_s": _wait_states,
    "hir_bursts": _counts(FIO_MAX_JOBS, f"a wait state's bursts are jobs of one fio process: {JOBS_LIMIT}"),
    "hir_burst_s": parse_seconds,
    "hir_recovery_s": parse_seconds,
    "xsr_group_s": _xsr_groups,
    "demand_tcs": lambda text: parse_depths(text, tcs=True),
    "demand_qds": parse_depths,
    "prewrite_s": parse_seconds,
    "point_prewrite_s": parse_seconds,
    "point_capture_s": parse_seconds,
    "point_prewrite_depth": _prewrite_depth,
    "ss_round_s": parse_seconds,
    "dirth_workload": parse_dirth_workload,
    "hdd_zones": _counts(MAX_ZONES, f"use at most {MAX_ZONES:,} zones (TKperf: 128)"),
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
    """The override names a test takes: every TestParams field for a matrix test; for the others the AdvancedParams
    fields it uses, numjobs / iodepth for a test whose TC/QD is its own pair (XSR, HDD) and dirth_workload for
    DIRTH's block size and mix."""
    defn = TEST_DEFS.get(test)
    if defn is None:
        return frozenset()
    if defn.matrix is not None:
        return TEST_PARAM_NAMES
    names = set(defn.uses)
    if defn.depth_field:
        names |= {"numjobs", "iodepth"}
    if "dirth_bs_bytes" in names:
        names.add("dirth_workload")
    return frozenset(names)


def parse_overrides(raw: Mapping[str, Sequence[str]], tests: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """Command-line overrides '[TEST=]VALUE' per parameter -> overrides[test][name]. A plain VALUE applies to every
    selected test that has the parameter, 'iops=VALUE' to one (later values win); a value no test can take is an
    error."""
    parsers = {**OVERRIDE_PARSERS, **ADVANCED_PARSERS}
    known = TEST_ORDER
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
            try:
                parsed = parsers[name](value if sep else text)
            except PtsbenchError as error:  # name the option: several take the same kind of value
                raise PtsbenchError(f"{option}: {error.message}", error.hint) from None
            for selected in chosen:
                if selected in overrides:
                    overrides[selected][name] = parsed
    return overrides


def parse_tests(text: str) -> tuple[str, ...]:
    """'iops,tp' -> ('iops', 'tp'), checked against the known tests."""
    known = TEST_ORDER
    tests = tuple(item.strip().lower() for item in text.split(",") if item.strip())
    unknown = [test for test in tests if test not in known]
    if unknown or not tests:
        raise PtsbenchError(f"unknown test(s): {', '.join(unknown) or '(none)'}", f"choose from {','.join(known)}")
    return tests
