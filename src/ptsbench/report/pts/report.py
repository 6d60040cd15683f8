"""The report of a `ptsbench pts` directory: the headline numbers, a section per test that ran (in run order), the
compliance details, the environment.

A section per test, built from data: the common part (header facts, banners, convergence, measurement window,
steady-state determination) for every test, then the blocks TEST_BLOCKS (basic.py) or ADVANCED_BLOCKS
(advanced.py) name for the test. A test without an entry still gets the common part and a table of every cell.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ptsbench.report.common import description_facts, environment_section, fact, provenance_line, run_facts
from ptsbench.report.core.model import Block, Column, Report, Section, Table, Text
from ptsbench.report.core.style import device_name, short_device_name
from ptsbench.report.glance import pts_glance_section
from ptsbench.report.pts.advanced import ADVANCED_BLOCKS, telemetry_blocks
from ptsbench.report.pts.basic import cells_blocks, iops_blocks, lat_blocks, tp_blocks, wsat_blocks
from ptsbench.report.pts.drive_logs import drive_log_blocks
from ptsbench.report.pts.drops import drop_rounds, phase_findings, pts_drop_blocks
from ptsbench.report.pts.facts import pts_test_facts, reasons_for, test_title
from ptsbench.report.pts.guides import guide
from ptsbench.report.pts.handoffs import handoff_blocks
from ptsbench.report.pts.steady import host_blocks, steady_blocks
from ptsbench.report.pts.views import SPEC_NAMES, PtsContext, load_context, slug

TestBlocks = Callable[[Sequence[Any], PtsContext], list[Block]]
TEST_BLOCKS: dict[str, TestBlocks] = {"iops": iops_blocks, "tp": tp_blocks, "lat": lat_blocks, "wsat": wsat_blocks}
COMPLIANCE_BANNER = "NOT PTS-compliant: "  # a test's deviations, at the top of its section
STEADY_STATE_SOURCE = {"2.0": "PTS 2.0.2 section 2.1.24", "1.1": "PTS-E 1.1"}  # cited as the version that ran
STEADY_STATE_RULE = (
    "Steady state ({source}): over the measurement window (the last 5 rounds) the tracked variable's "
    "range (max - min) is at most 20 % of its average, and the least-squares line through the window changes by at "
    "most 10 % of the average across the window. 'At most' is read as <=. Reported values are averages over the "
    "window rounds.")


def _banners(context: PtsContext, test: str, views: Sequence[Any]) -> list[Block]:
    """Warnings at the top of a test: its compliance deviations, steady state not reached, phases not finished."""
    blocks: list[Block] = []
    compliance = context.manifest.get("compliance") or {}
    if not compliance.get("compliant", False):
        reasons = reasons_for(compliance.get("reasons") or [], test, views, context)
        blocks.append(Text(COMPLIANCE_BANNER + ("; ".join(reasons) or "see Compliance"), "warning"))
    for view in views:
        if view.result is not None and view.plan["tracked"] and not view.result.get("steady"):
            blocks.append(Text(f"{view.plan['title']}: steady state not reached ({view.result['stop_reason']}); "
                               f"values are the last {len(view.result['window_rounds'])} rounds.", "warning"))
        if view.result is None:
            blocks.append(Text(f"{view.plan['title']}: {view.source()}", "warning"))
    return blocks


def pts_test_section(context: PtsContext, test: str, views: Sequence[Any]) -> Section:
    """One test: banners, the steady-state part, the test's own blocks, per-host numbers, telemetry."""
    about = guide(test)
    blocks: list[Block] = [Text(about)] if about else []
    blocks += _banners(context, test, views)
    found, with_data = phase_findings(context, views)
    blocks += steady_blocks(test, views, drop_rounds(found) if with_data else None)
    blocks += TEST_BLOCKS.get(test, ADVANCED_BLOCKS.get(test, cells_blocks))(views, context)
    blocks += pts_drop_blocks(test, views, context, found, with_data)
    blocks += host_blocks(test, views, context)
    blocks += telemetry_blocks(test, views)
    blocks += drive_log_blocks(test, views)  # the drive's latency monitor beside the host, its error log
    blocks += handoff_blocks(test, views)
    spec = str((context.manifest.get("settings") or {}).get("spec"))
    return Section(slug("test", test), test_title(test, views, spec)[0], pts_test_facts(context, test, views),
                   tuple(blocks))


def _steady_status(view: Any) -> str:
    if not view.plan["tracked"]:
        return "n/a"
    if view.result is None:
        return "in progress"
    return "reached" if view.result.get("steady") else "NOT reached"


def pts_compliance_section(context: PtsContext, groups: Sequence[tuple[str, Sequence[Any]]]) -> Section:
    """After the tests: every phase's rounds and stop, the run's deviations and notes, and the steady-state rule."""
    manifest = context.manifest
    rows = tuple((view.plan["title"], str(len(view.rounds)), str(view.plan["max_rounds"]), _steady_status(view),
                  view.result["stop_reason"] if view.result else view.source())
                 for _test, views in groups for view in views)
    blocks: list[Block] = [Table("summary", "Rounds per phase", (Column("phase"), Column("rounds"),
                                                                 Column("max rounds"), Column("steady state"),
                                                                 Column("stop")), rows, compare=(1, 3, 4))]
    reasons = (manifest.get("compliance") or {}).get("reasons") or []
    if reasons:
        blocks.append(Table("deviations", "Why this run is not PTS-compliant", (Column("deviation"),),
                            tuple((reason,) for reason in reasons)))
    notes = manifest.get("notes") or []
    if notes:
        blocks.append(Table("notes", "Notes", (Column("note"),), tuple((note,) for note in notes)))
    spec = str((manifest.get("settings") or {}).get("spec"))
    blocks.append(Text(STEADY_STATE_RULE.format(source=STEADY_STATE_SOURCE.get(spec, f"PTS {spec}"))))
    return Section("compliance", "Compliance and rounds", blocks=tuple(blocks))


def compliance_line(manifest: Mapping[str, Any]) -> str:
    """The compliance verdict in one line."""
    compliance = manifest.get("compliance") or {}
    if compliance.get("compliant", False):
        return "PTS-compliant: every test ran as the specification asks."
    reasons = compliance.get("reasons") or []
    count = f"{len(reasons)} deviation{'s' if len(reasons) != 1 else ''}"
    return f"NOT PTS-compliant: {count} from the specification, listed under Compliance after the tests."


def _run_warnings(manifest: Mapping[str, Any], status: str, root: Any) -> tuple[str, ...]:
    """The report's banners: not compliant, and a run that stopped before its end."""
    warnings = []
    if not (manifest.get("compliance") or {}).get("compliant", False):
        warnings.append(compliance_line(manifest))
    if status in ("interrupted", "failed"):
        warnings.append(f"The run {status}: `ptsbench resume {root}` continues it.")
    return tuple(warnings)


def pts_report(store: Any, in_progress: str | None = None) -> Report:
    """Report of a `ptsbench pts` directory: at a glance, a section per test (in run order), compliance, environment."""
    manifest = store.manifest
    context, views = load_context(store)
    groups: dict[str, list[Any]] = {}
    for view in views:
        groups.setdefault(view.plan["test"], []).append(view)
    started = [(test, mine) for test, mine in groups.items() if any(view.rounds for view in mine)]
    sections = [pts_glance_section(views)]
    sections += [pts_test_section(context, test, mine) for test, mine in started]
    sections.append(pts_compliance_section(context, list(groups.items())))
    sections.append(environment_section({**manifest, "targets": [manifest.get("target") or {}]}))
    settings = manifest.get("settings") or {}
    status = context.pts.run_status()  # a run killed with kill -9 is "interrupted", though its manifest says running
    if in_progress is None and status == "running":
        in_progress = "the run was still running when this report was made"
    device = device_name(manifest.get("target") or {})
    facts = (("specification", f"{SPEC_NAMES.get(str(settings.get('spec')), settings.get('spec'))}, "
                               f"{settings.get('profile')} profile"),
             ("device", device), *placement_facts(manifest), *description_facts(manifest), ("status", fact(status)),
             *run_facts(manifest))
    title = f"PTS report: {short_device_name(manifest.get('target') or {})}"
    return Report(title, provenance_line(manifest), facts, tuple(sections), in_progress,
                  _run_warnings(manifest, status, store.root))


def placement_facts(manifest: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The run's FDP placement (`pts --fdp-placement`), for the report and `compare` of an FDP on and off run."""
    info = manifest.get("target_info") or {}
    if info.get("fdp_device"):
        return (("FDP placement", f"{info['fdp_placement']}: placement handle(s) {info['fdp_plids']} through "
                                  f"{info['fdp_device']} (io_uring_cmd)"),)
    return (("FDP placement", "off"),) if info.get("fdp_placement") == "off" else ()
