"""`ptsbench pts DEV1 DEV2 ...` (a fleet run, pts/fleet.py), its `resume` and its `show`: every target resolved,
planned and judged by the guard before any is touched, then the whole PTS on each at once."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli.pts_steps import Prepared, PtsRequest, prepare_target, print_plan, print_target_dry_run

if TYPE_CHECKING:
    from ptsbench.fio.runner import FioStatus
    from ptsbench.pts.engine import Progress
    from ptsbench.pts.fleet import Member
    from ptsbench.store import RunStore


class FleetLines:
    """A fleet's progress on stderr, one line per event and finished round, each naming its part (the parts run
    at once: a live status line per part would overwrite the others')."""

    def __init__(self, name: str) -> None:
        self.name = name

    def event(self, text: str) -> None:
        click.echo(f"ptsbench: {self.name}: {text}", err=True)

    def round_started(self, progress: "Progress") -> None:
        pass

    def fio_status(self, progress: "Progress", cell: str | None, status: "FioStatus") -> None:
        pass

    def round_finished(self, progress: "Progress", record: Mapping[str, Any]) -> None:
        from ptsbench.pts.live import steady_line

        line = steady_line(record)
        self.event(f"{progress.phase.phase.title} round {record['round']} stored" + (f"; {line}" if line else ""))


def pts_fleet(request: PtsRequest) -> None:
    """Resolve and plan every target, refuse one named twice, judge every one by the guard, then (not a dry run)
    make the fleet's run directory with a part per target and run them all at once."""
    from ptsbench.device.claim import check_distinct
    from ptsbench.pts.fleet import part_dir, part_names

    targets, run_dir, description = request.targets, request.run_dir, request.description
    names = part_names(targets)
    # a purge reaching beyond its namespace (NVMe sanitize, an all-namespace format) never erases another member:
    # auto takes a method that erases only its own, a method named is refused (the run chooses the same, pts/engine.py)
    prepared = [prepare_target(request, target, part_dir(run_dir, part), request.size_bytes, True, fleet=targets)
                for part, target in zip(names, targets, strict=True)]
    check_distinct(targets)  # as the user named them
    check_distinct([one.target.path for one in prepared])  # as they are tested: a folder's test file named again
    if request.dry_run:
        _print_fleet_dry_run(names, prepared, request.verbose, description)
        return
    for one in prepared:  # every target judged before any is touched
        one.check()
    from ptsbench.device.target import check_free_space
    from ptsbench.pts.fleet import Member, create_fleet

    check_free_space([one.target for one in prepared])
    store = create_fleet(run_dir, request.name,
                         [(part, one.target.path) for part, one in zip(names, prepared, strict=True)])
    store.update_manifest(report_images=list(request.images))
    members = []
    for part, one in zip(names, prepared, strict=True):
        pts_store, plan = one.create_run(part_dir(run_dir, part), request.settings, request.name, description)
        pts_store.store.update_manifest(drops=dict(request.drops), report_images=list(request.images))
        members.append(Member(part, pts_store, one.target))
    click.echo(f"ptsbench: run directory {run_dir} ({len(members)} targets at once, a part each in "
               f"{run_dir / 'devices'})", err=True)
    print_plan(plan, prepared[-1].timing)  # the last target's: the plans differ only in the target and its size
    _run_fleet(store, members, request.destructive)


def _print_fleet_dry_run(names: Sequence[str], prepared: Sequence[Prepared], verbose: bool,
                         description: Mapping[str, str]) -> None:
    """Every target's plan and guard verdict, then the fleet's worst case (its slowest target's: they run at
    once); the first refusal is raised once all are listed."""
    from ptsbench.pts.prep_time import prep_s
    from ptsbench.units import spoken_duration

    click.echo(f"# Fleet: {len(prepared)} targets at once, each with its own purge, preconditioning, rounds and "
               "steady state")
    refusals = []
    for part, one in zip(names, prepared, strict=True):
        click.echo(f"#\n# == {part}: {one.target.path} ==")
        refusal = print_target_dry_run(one, verbose, description, raise_refusal=False)
        if refusal is not None:
            refusals.append(refusal)
    worst = max(one.plan.worst_case_s + one.plan.overhead_s + prep_s(one.plan, one.timing) for one in prepared)
    click.echo(f"#\n# Fleet worst case: {spoken_duration(worst)} (the slowest target's, purges and preconditioning "
               "included; the targets run at once)")
    if refusals:
        click.echo(f"# guard: the fleet would be refused: {len(refusals)} of {len(prepared)} targets refused")
        raise refusals[0]
    click.echo("# guard: the fleet would start")


def resume_fleet(store: "RunStore", destructive: bool) -> None:
    """Continue every part not done. A part whose target did not come back as it was, or that the guard refuses
    now, is recorded as failed with its reason and the others go on."""
    from ptsbench.device.claim import check_distinct
    from ptsbench.device.guard import check_write_allowed
    from ptsbench.errors import PtsbenchError
    from ptsbench.pts.fleet import Member, fleet_parts, part_state, record_failure
    from ptsbench.pts.start import resume_target
    from ptsbench.pts.store import PtsStore
    from ptsbench.store import RunStore

    members: list[Member] = []
    failures: dict[str, str] = {}
    for name, folder in fleet_parts(store):
        part = RunStore.open(folder)
        if part_state(part)[0] == "done":
            continue
        pts_store = PtsStore(part)
        try:
            target, notes = resume_target(pts_store)
            pts_store.check_readable()
            check_write_allowed(target, destructive)
        except PtsbenchError as error:
            failures[name] = record_failure(pts_store, error)
            click.echo(f"ptsbench: {name}: not resumed: {failures[name]}", err=True)
            continue
        for note in notes:
            click.echo(f"ptsbench: {name}: note: {note}", err=True)
        members.append(Member(name, pts_store, target))
    check_distinct([member.target.path for member in members])
    click.echo(f"ptsbench: resuming {store.root}: {', '.join(member.name for member in members) or 'nothing'}",
               err=True)
    _run_fleet(store, members, destructive, failures)


def _run_fleet(store: "RunStore", members: Sequence["Member"], destructive: bool,
               failures: dict[str, str] | None = None) -> None:
    """Run the parts at once, then each part's report and the fleet's summary; an error naming every part that
    failed (the others' results are stored)."""
    from ptsbench.cli.drops import fail_on_limit, say_pts_drops
    from ptsbench.cli.run_end import report_images, write_final_report
    from ptsbench.device.userfile import missing
    from ptsbench.errors import PtsbenchError
    from ptsbench.pts.fleet import fleet_parts, run_fleet
    from ptsbench.pts.live import MarkOnLayout
    from ptsbench.store import RunStore

    made = {member.name: (missing([member.target.path]) if member.target.kind == "file" else [],
                          (member.pts.store.manifest.get("file_identity") or {}).get("token")) for member in members}
    failed = run_fleet(store, members, destructive,  # each target file fio makes marked as its part's (resume)
                       lambda name: MarkOnLayout(FleetLines(name), *made.get(name, ([], None))), failures)
    for name, folder in fleet_parts(store):  # every part: one done in a run that was then interrupted has none yet
        write_final_report(folder, after_failure=name in failed, images=report_images(RunStore.open(folder)))
    # the fleet's own: its table, then every device
    write_final_report(store.root, after_failure=bool(failed), images=report_images(store))
    show_fleet(store)
    broken = [line for member in members for line in say_pts_drops(member.pts)]
    if failed:
        raise PtsbenchError(f"{len(failed)} of {len(store.manifest.get('devices') or [])} targets failed: "
                            + "; ".join(f"{name}: {reason}" for name, reason in failed.items()),
                            f"the others' results are stored; fix the cause, then `ptsbench resume {store.root}` "
                            "continues every target not done")
    fail_on_limit(broken)


def show_fleet(store: "RunStore") -> None:
    """Each part's status (and why it failed), the fleet table, then each part's results as `show` prints a PTS
    run."""
    from ptsbench.pts.fleet import fleet_summary
    from ptsbench.report.core.terminal import print_model_tables, terminal_console
    from ptsbench.report.pts.fleet_run import fleet_terminal
    from ptsbench.report.pts.terminal import render_pts
    from ptsbench.store import RunStore

    rows = fleet_summary(store)
    click.echo(f"Fleet run {store.root}: {len(rows)} targets, {store.manifest.get('status')}")
    for row in rows:
        why = f": {row['failure']}" if row["status"] == "failed" and row["failure"] else ""
        click.echo(f"  {row['name']:<16} {row['path']:<28} {row['status']}{why}")
    print_model_tables(*fleet_terminal(store))
    for row in rows:
        click.echo(f"\n== {row['name']} ({row['path']}): {row['folder']} ==")
        render_pts(RunStore.open(Path(row["folder"])), terminal_console())
