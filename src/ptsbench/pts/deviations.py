"""Every way a run's settings depart from the PTS profile they follow, known before anything runs: one line each,
for the plan, the store and the "not PTS-compliant" banner."""

from collections.abc import Sequence
from dataclasses import fields

from ptsbench.pts.cells import mix_label
from ptsbench.pts.params import (
    CLIENT_SEGMENTS,
    LAT_HISTOGRAM_S,
    PROFILES,
    PTS_MAX_ROUNDS,
    PTS_ROUND_TIME_S,
    SPEC_PARAMS,
    WIPC_MULTIPLE,
    WSAT_CAPACITY_MULTIPLE,
    WSAT_MAX_TIME_S,
    AdvancedParams,
    Settings,
    profile_params,
)
from ptsbench.pts.specs import TEST_DEFS, pts_params, sprandom_tests
from ptsbench.units import format_bs, spoken_duration


def plan_deviations(settings: Settings) -> list[str]:
    """Every way these settings depart from the PTS profile they follow (known before anything runs)."""
    reasons = []
    reference_ar = 100.0 if settings.kind == "enterprise" else 75.0
    if settings.active_range_pct != reference_ar:
        reasons.append(f"active range {settings.active_range_pct:g} % (PTS {settings.kind}: {reference_ar:g} %)")
    sprandom = [TEST_DEFS[test].title for test in sprandom_tests(settings.tests)]
    if settings.precondition == "sprandom" and sprandom:
        reasons.append(f"{', '.join(sprandom)}: preconditioned by fio's sprandom (4 KiB random writes of the range "
                       f"and {settings.sprandom_op:g} over-provisioning once, fio's lfsr generator), not WIPC (PTS: "
                       "2 x the active range of sequential 128 KiB writes)")
    if settings.wipc_multiple != WIPC_MULTIPLE:
        reasons.append(f"preconditioning writes {settings.wipc_multiple:g} x the active range (PTS: 2 x)")
    if settings.ramp_time_s:
        reasons.append(f"ramp time {settings.ramp_time_s:g} s (PTS: 0)")
    if settings.kind == "client" and settings.segments != CLIENT_SEGMENTS:
        reasons.append(f"active range in {settings.segments or 'one contiguous'} segment(s) from LBA 0 (PTS client: "
                       f"{CLIENT_SEGMENTS} segments over all LBAs)")
    if settings.spec == "2.0" and "lat" in settings.tests and settings.lat_histogram_s != LAT_HISTOGRAM_S:
        captured = (f"response-time histogram captured for {spoken_duration(settings.lat_histogram_s)}"
                    if settings.lat_histogram_s else "no response-time histogram")
        reasons.append(f"Latency: {captured} (PTS 2.0: {spoken_duration(LAT_HISTOGRAM_S)} after steady state)")
    for test in settings.tests:
        defn = TEST_DEFS[test]
        if defn.matrix is None:  # the advanced tests, against the spec at the profile's TC/QD
            reasons += advanced_deviations([test], settings.advanced[test], profile_params(PROFILES[settings.kind]))
            continue
        ours, ref = settings.params[test], pts_params(defn, settings.kind, settings.spec)
        if ours.round_time_s != PTS_ROUND_TIME_S:
            reasons.append(f"{defn.title}: {ours.round_time_s:g} s per cell (PTS: 60 s)")
        if defn.matrix.stop == "steady" and ours.max_rounds < PTS_MAX_ROUNDS:
            reasons.append(f"{defn.title}: at most {ours.max_rounds} rounds (PTS: up to {PTS_MAX_ROUNDS})")
        if ours.block_sizes != ref.block_sizes:
            reasons.append(f"{defn.title}: block sizes {_sizes(ours.block_sizes)} (PTS: {_sizes(ref.block_sizes)})")
        if ours.mixes != ref.mixes:
            reasons.append(f"{defn.title}: mixes {_mixes(ours.mixes)} (PTS: {_mixes(ref.mixes)})")
        if (ours.numjobs, ours.iodepth) != (ref.numjobs, ref.iodepth):
            reasons.append(
                f"{defn.title}: TC{ours.numjobs}/QD{ours.iodepth} "
                f"(PTS {settings.kind}: TC{ref.numjobs}/QD{ref.iodepth})"
            )
        if defn.matrix.stop == "written":
            if settings.wsat_capacity_multiple != WSAT_CAPACITY_MULTIPLE:
                reasons.append(f"{defn.title}: stops at {settings.wsat_capacity_multiple:g} x capacity (PTS: 4 x)")
            if settings.wsat_max_time_s != WSAT_MAX_TIME_S:
                reasons.append(f"{defn.title}: time limit {spoken_duration(settings.wsat_max_time_s)} (PTS: 24 h)")
    return reasons


def _sizes(sizes: tuple[int, ...]) -> str:
    return ",".join(format_bs(size) for size in sizes)


def _mixes(mixes: tuple[int, ...]) -> str:
    return ",".join(mix_label(mix) for mix in mixes)


# The operator's choices (DIRTH's workload) and TKperf's defaults (HDD zones): not deviations from the spec
OPERATOR_CHOICES = frozenset({"dirth_bs_bytes", "dirth_read_pct", "hdd_zones", "hdd_depth"})
# Recorded choices where the public implementations differ and the spec text was not at hand: shown in the plan,
# not deviations
READINGS = frozenset({"point_prewrite_depth"})


def advanced_deviations(tests: Sequence[str], params: AdvancedParams,
                        reference: AdvancedParams = SPEC_PARAMS) -> list[str]:
    """Every way `params` depart from the spec for the chosen tests, one line each."""
    reasons = []
    for item in fields(AdvancedParams):
        ours, theirs = getattr(params, item.name), getattr(reference, item.name)
        concerned = [TEST_DEFS[test].title for test in tests if item.name in TEST_DEFS[test].uses]
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
