"""The report of a fleet run (pts/fleet.py): it opens with the fleet table (report/fleet.py: every device's tracked
values at steady state side by side, model, serial, firmware, steady-state round, the fleet's median, min and max,
outliers by the stated rule), then each device's status, then the devices' reports side by side."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ptsbench.report.compare import compare_reports
from ptsbench.report.core.model import Column, Report, Section, Table, Text
from ptsbench.report.fleet import FLEET_KEY, fleet_section, terminal_parts
from ptsbench.report.fleet_members import pts_member
from ptsbench.report.pts.report import pts_report

DEVICES_KEY = "devices"
FLEET_TITLE = "Fleet: every device side by side"


def _fleet(names: Sequence[str], folders: Sequence[Path]) -> Section:
    return fleet_section([pts_member(folder, name) for name, folder in zip(names, folders, strict=True)],
                         who="device", title=FLEET_TITLE)


def fleet_terminal(store: Any) -> tuple[list[Table], list[str]]:
    """For `show` and the end of a fleet run: the fleet table in terminal-wide parts, after its outlier lines and
    rule."""
    from ptsbench.pts.fleet import fleet_summary

    rows = fleet_summary(store)
    section = _fleet([str(row["name"]) for row in rows], [Path(row["folder"]) for row in rows])
    return terminal_parts(section), [block.text for block in section.blocks if isinstance(block, Text)]


def fleet_report(store: Any, in_progress: str | None = None) -> Report:
    """Report of a `ptsbench pts DEV1 DEV2 ...` run directory, from its parts' stores."""
    from ptsbench.pts.fleet import fleet_summary
    from ptsbench.store import RunStore

    rows = fleet_summary(store)
    names = [str(row["name"]) for row in rows]
    folders = [Path(row["folder"]) for row in rows]
    reports = [pts_report(RunStore.open(folder)) for folder in folders]
    compared = compare_reports(reports, names, folders)
    fleet = _fleet(names, folders)
    devices = Table(DEVICES_KEY, "Devices of the fleet", (Column("device"), Column("target"), Column("status"),
                                                         Column("why it failed"), Column("report")),
                    tuple((row["name"], row["path"], row["status"], row["failure"] or "",
                           str(Path(row["folder"]) / "report" / "index.html")) for row in rows))
    rest = [section for section in compared.sections if section.key not in (FLEET_KEY, "runs")]
    manifest = store.manifest
    status = str(manifest.get("status"))
    warnings = tuple(f"{row['name']} ({row['path']}) failed: {row['failure']}" for row in rows
                     if row["status"] == "failed")
    if status in ("interrupted", "failed"):
        warnings += (f"The fleet {status}: `ptsbench resume {store.root}` continues every device not done.",)
    facts = (("devices", ", ".join(f"{row['name']} ({row['path']})" for row in rows)), ("status", status))
    return Report(f"PTS fleet report: {len(rows)} devices", compared.provenance, facts,
                  (fleet, Section(DEVICES_KEY, "Devices", blocks=(devices,)), *rest),
                  in_progress or compared.in_progress, (*warnings, *compared.warnings))
