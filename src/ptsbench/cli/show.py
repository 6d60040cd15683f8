"""`ptsbench show RUN_DIR`: print a stored run's results again, from the store alone."""

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ptsbench.report.core.terminal import FORMATS

if TYPE_CHECKING:
    from ptsbench.store import RunStore


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table", help="table, json or csv.")
def show(run_dir: Path, output_format: str) -> None:
    """Print the results of a run directory (no fio, no target needed).

    \b
    Examples:
      ptsbench show ptsbench-results/20261120T101500Z-quick
      ptsbench show ptsbench-results/20261120T101500Z-quick --format csv > results.csv
      ptsbench show ptsbench-results/demo-20261120T101500Z --format json    # a PTS run: every table
      ptsbench show ptsbench-results/20261120T101500Z-pts-demo/devices/loop3   # one target of a fleet run
    """
    from ptsbench.store import RunStore

    store = RunStore.open(run_dir)
    if store.kind == "pts-fleet":
        if output_format != "table":
            raise click.UsageError(f"{run_dir} is a fleet run: --format {output_format} shows one target, e.g. "
                                   f"`ptsbench show {run_dir / 'devices' / 'NAME'} --format {output_format}`")
        from ptsbench.cli.fleet import show_fleet

        show_fleet(store)
        return
    if store.kind == "pts":
        if output_format == "table":
            from ptsbench.report.core.terminal import terminal_console
            from ptsbench.report.pts.terminal import render_pts

            render_pts(store, terminal_console())
            return
        from ptsbench.report.build import load_report
        from ptsbench.report.core.terminal import report_tables_csv, report_tables_json

        tables = load_report(run_dir).tables()
        print(report_tables_json(tables) if output_format == "json" else report_tables_csv(tables), end="")
        return
    if store.kind == "capture":  # a captured workload: its characterisation
        from ptsbench.cli.workload import show_capture

        show_capture(store, output_format)
        return
    from ptsbench.cases.records import load_records
    from ptsbench.report.cases.tables import result_rows
    from ptsbench.report.core.terminal import print_rows

    manifest = store.manifest
    records = load_records(store)
    print_rows(result_rows(records), output_format,
               title=f"{manifest.get('name', run_dir.name)} ({manifest.get('created_utc')})",
               grid=manifest.get("name") == "quick")
    if output_format == "table":
        from ptsbench.cli.repeat import print_repeat_auto

        print_repeat_auto(store)
    if (line := _unfinished(store, sum(record.status != "interrupted" for record in records))) is not None:
        click.echo(f"ptsbench: {line}", err=True)


def _unfinished(store: "RunStore", ended: int) -> str | None:
    """How many of its cases a run that did not end (stopped, killed, or still running) ran to their end, and how to
    finish it; None for a run that ended (done, or failed)."""
    from ptsbench.pts.store import PtsStore

    status = PtsStore(store).run_status()  # 'running' that no process holds: killed, 'interrupted'
    if status not in ("running", "interrupted"):
        return None
    planned = len(store.manifest.get("cases") or [])
    count = f"{ended} of {planned} case(s)" if planned else f"{ended} case(s)"
    if status == "running":
        return f"the run is still running: {count} ran to their end so far"
    finish = (f"`ptsbench resume {store.root}` runs the others" if store.manifest.get("resume_plan")
              else "run it again for the others")
    return f"the run did not end ({status}): {count} ran to their end; {finish}"
