"""The plan in words, for a person: what matters first (the tests, the worst-case time, whether steady state can be
judged, whether the run can be PTS-compliant), then each phase, the notes and the deviations. `ptsbench pts
--dry-run` prints it, and a run keeps it as plan.txt."""

from ptsbench.pts.cells import start_delay_s
from ptsbench.pts.params import OPERATING_POINTS
from ptsbench.pts.plan import PhasePlan, Plan, fio_time, handoff_text
from ptsbench.pts.prep_time import PrepTiming, assumed_timing, precondition_s, prep_lines, prep_s
from ptsbench.pts.specs import TEST_DEFS
from ptsbench.units import format_bs, format_bytes, spoken_duration


def _round_text(phase: PhasePlan) -> str:
    """'56 cells/round x 60s (TC4/QD32)', or with a schedule or mixed cell times the round's length."""
    cells = phase.cells
    depths = sorted({f"TC{c.numjobs}/QD{c.iodepth}" for c in cells})
    depth_text = ", ".join(depths) if len(depths) <= 4 else f"{len(depths)} TC/QD pairs"
    if len({c.runtime_s for c in cells}) == 1 and not any(start_delay_s(c) for c in cells):
        return f"{len(cells)} cell{'s' * (len(cells) != 1)}/round x {fio_time(cells[0].runtime_s)} ({depth_text})"
    return f"{len(cells)} cells/round, {spoken_duration(phase.round_s)} per round ({depth_text})"


def _stop_text(phase: PhasePlan) -> str:
    stop = phase.phase.stop
    if stop.kind == "steady":
        return f"until steady state or {stop.max_rounds} rounds"
    if stop.kind == "written":
        return f"until {stop.capacity_multiple:g} x capacity written or {spoken_duration(stop.max_time_s)}"
    return f"{stop.max_rounds} round(s)"


RUN_TIME_DEVIATIONS = ("the report may list more, found only while the run runs: the write cache or the purge "
                       "the device did not allow, steady state not reached")


def summary_lines(plan: Plan, timing: PrepTiming | None = None) -> list[str]:
    """What matters first: the target, the tests, the worst-case time (purges and preconditioning at `timing`'s
    estimate; without it at the assumed rate, purges not estimated), whether steady state can be judged, and
    whether the run can be PTS-compliant."""
    s = plan.settings
    timing = timing or assumed_timing(purge_method="")
    titles = ", ".join(dict.fromkeys(TEST_DEFS[phase.phase.test].title for phase in plan.phases))
    lines = [
        f"PTS {s.spec} {s.profile} profile on {plan.target.path} ({plan.target.kind}, "
        f"{format_bytes(plan.target.size_bytes)}), active range {s.active_range_pct:g} % = "
        f"{format_bytes(plan.active_range_bytes)}, ioengine {plan.target.ioengine}, write cache wanted {s.write_cache}",
        *([f"FDP placement {plan.target.fdp_placement}: fio writes {plan.target.fdp_device} (io_uring_cmd) over "
           f"placement handle(s) {plan.target.fdp_plids}"] if plan.target.fdp_device else []),
        *([f"FDP placement off: fio writes {plan.target.path} as always, naming no placement handle"]
          if plan.target.fdp_placement == "off" else []),
        f"Tests: {titles}",
        f"Worst case: {spoken_duration(plan.worst_case_s + plan.overhead_s + prep_s(plan, timing))} in all "
        f"({spoken_duration(plan.worst_case_s)} of IO, about {spoken_duration(plan.overhead_s)} of fio start-up and "
        f"hand-offs, about {spoken_duration(prep_s(plan, timing))} of purges and preconditioning; start-ups "
        "counted as on an idle machine, the reports not counted: a busy machine takes longer)",
        *prep_lines(plan, timing),
    ]
    short = [phase for phase in plan.phases if phase.phase.tracked and phase.phase.stop.kind == "steady"
             and phase.max_rounds < phase.phase.stop.window]
    if short:
        lines.append(f"Steady state cannot be judged: at most {short[0].max_rounds} round(s), fewer than the "
                     f"{short[0].phase.stop.window}-round measurement window (" + ", ".join(
                         phase.phase.title for phase in short) + " report their last rounds, not a steady state)")
    count = len(plan.deviations)
    lines.append("Can be PTS-compliant: yes (the purge and write cache are checked when the run starts)" if not count
                 else f"Can be PTS-compliant: no, {count} deviation{'s' if count != 1 else ''} (listed below; "
                 f"{RUN_TIME_DEVIATIONS})")
    return lines


def phase_lines(plan: Plan, timing: PrepTiming | None = None) -> list[str]:
    """Each phase (purge and preconditioning with their estimated times, cells per round, rounds, duration), notes,
    and the deviations from the spec."""
    timing = timing or assumed_timing(purge_method="")
    lines = []
    for phase in plan.phases:
        pre = phase.phase.precondition
        purge = {"": "purge", "none": "no purge (method none)"}.get(
            timing.purge_method, f"purge ({timing.purge_method}, about {spoken_duration(timing.purge_s)})")
        steps = [purge] if phase.phase.purge else []
        steps.append(_precondition_text(phase, timing) if pre else "no WIPC")
        tracked = ", ".join(t.label for t in phase.phase.tracked) or "none"
        lines.append(
            f"  {phase.phase.title}: {', '.join(steps)}; {_round_text(phase)}, {_stop_text(phase)}; "
            f"tracked: {tracked}; worst case {spoken_duration(phase.worst_case_s)}; {handoff_text(phase)}"
        )
        if phase.phase.role == "sweep" and phase.phase.test in plan.pending_points:
            params = plan.settings.advanced[phase.phase.test]
            point_s = params.point_prewrite_s + params.point_capture_s
            depth = ("at the sweep's top TC/QD" if params.point_prewrite_depth == "top"
                     else "at the point's own TC/QD")
            lines.append(f"  {TEST_DEFS[phase.phase.test].title}: then MaxIOPS, MidIOPS and MinIOPS, chosen "
                         f"after steady state: each {spoken_duration(params.point_prewrite_s)} pre-write {depth} "
                         f"(--point-prewrite-depth {params.point_prewrite_depth}) + "
                         f"{spoken_duration(params.point_capture_s)} histogram capture; worst case "
                         f"{spoken_duration(len(OPERATING_POINTS) * point_s)}")
    lines.extend(f"Note: {note}" for note in plan.notes)
    if plan.deviations:
        lines.append("Not PTS-compliant:")
        lines.extend(f"  - {reason}" for reason in plan.deviations)
    return lines


def _precondition_text(phase: PhasePlan, timing: PrepTiming) -> str:
    pre = phase.phase.precondition
    assert pre is not None
    amount = format_bytes(phase.precondition_bytes)
    if pre.kind == "sprandom":  # fio writes the range and the over-provisioning; at the sequential rate: a floor
        return (f"fio's sprandom preconditioning, about {amount} of {format_bs(pre.bs_bytes)} random writes "
                f"(over-provisioning {pre.spr_op:g}, TC{pre.numjobs}/QD{pre.iodepth}; at least "
                f"{spoken_duration(precondition_s(phase.precondition_bytes, timing))})")
    return (f"WIPC {amount} of {format_bs(pre.bs_bytes)} seq writes "
            f"({'one stream' if pre.numjobs == 1 else f'{pre.numjobs} streams'}, TC{pre.numjobs}/QD{pre.iodepth}; "
            f"about {spoken_duration(precondition_s(phase.precondition_bytes, timing))})")


def describe(plan: Plan, timing: PrepTiming | None = None) -> list[str]:
    """The plan as lines for a person: what matters first (summary_lines), then each phase and the deviations."""
    return summary_lines(plan, timing) + phase_lines(plan, timing)
