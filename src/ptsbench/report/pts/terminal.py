"""A PTS run's results on the terminal, from the store alone: the report's own tables (report/pts/report.py), so
the terminal, HTML, PDF, xlsx and `show --format json|csv` show the same numbers in the same number formats.

The header and the compliance verdict first, then each test's section: its warnings, its tables and the notes that
say where their values come from (the guides and figures stay in the report). Then the rounds per phase, every
deviation and the run's notes. The at-a-glance values come first (`show`), or last with the verdict again at the
end of a run, so that the answer is what stays on the screen. Round-by-round tables longer than ROUND_ROWS show that
many evenly spaced rounds, and say so; every other table is whole.
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ptsbench.report.core.model import Section, Table, Text
from ptsbench.report.core.terminal import print_model_table
from ptsbench.report.pts.facts import device_description
from ptsbench.report.pts.guides import guide
from ptsbench.store import RunStore

ROUND_ROWS = 25


def _spread(count: int, most: int) -> list[int]:
    """Up to `most` indexes out of range(count), evenly spaced, always the first and the last."""
    if count <= most:
        return list(range(count))
    return sorted({round(i * (count - 1) / (most - 1)) for i in range(most)})


def thinned(table: Table) -> tuple[Table, str | None]:
    """A round-by-round table (a key column named 'round') of at most ROUND_ROWS rows, and the line that says so."""
    by_round = any(table.columns[index].name == "round" for index in table.keys if index < len(table.columns))
    if not by_round or len(table.rows) <= ROUND_ROWS:
        return table, None
    shown = _spread(len(table.rows), ROUND_ROWS)
    return (replace(table, rows=tuple(table.rows[index] for index in shown)),
            f"{len(shown)} of {len(table.rows)} rows shown, evenly spaced; every row is in the report and in "
            "`ptsbench show --format csv`")


def terminal_blocks(section: Section) -> list[Table | Text]:
    """What the terminal shows of a report section: its tables (thinned) and its texts, but the test's guide and its
    deviations (the verdict line says they are listed at the end)."""
    from ptsbench.report.pts.report import COMPLIANCE_BANNER

    about = guide(section.key.removeprefix("test-"))
    blocks: list[Table | Text] = []
    for block in section.blocks:
        if isinstance(block, Table):
            table, note = thinned(block)
            blocks += [table, *([Text(note)] if note else [])]
        elif isinstance(block, Text) and block.text != about and not block.text.startswith(COMPLIANCE_BANNER):
            blocks.append(block)
    return blocks


def pts_sections(store: RunStore) -> list[Section]:
    """The report's sections the terminal prints: at a glance, each test, compliance (not the environment)."""
    from ptsbench.report.pts.report import pts_report

    return [section for section in pts_report(store).sections if section.key != "environment"]


def header_lines(manifest: Mapping[str, Any], status: str | None = None) -> list[str]:
    """The run and its target; `status` the run's status now (PtsStore.run_status), else the manifest's."""
    settings, target, info = manifest["settings"], manifest.get("target") or {}, manifest["target_info"]
    device = " ".join(str(target[k]) for k in ("vendor", "model", "serial", "firmware") if target.get(k))
    status = status or str(manifest.get("status"))
    if status == "interrupted" and manifest.get("status") in ("running", "created"):
        status = "interrupted (killed while running: `ptsbench resume` continues it)"
    return [
        f"PTS {settings['spec']} {settings['profile']} profile, run {manifest.get('name')} created "
        f"{manifest.get('created_utc')}, status {status}",
        f"target {info['path']} ({info['kind']}, {info['size_bytes'] / 1e9:,.2f} GB{', ' + device if device else ''}), "
        f"ioengine {info['ioengine']}, active range {settings['active_range_pct']:g} %, "
        f"fio {manifest.get('fio_version')}",
        *([f"device description: {device_description(manifest)}"] if manifest.get("device_info") else []),
        *([f"on {len(manifest['hosts'])} hosts at once (rounds in lockstep): "
           + ", ".join(f"{h['host']}:{h['port']} ({h['hostname']}, {h['fio_version']})" for h in manifest["hosts"])]
          if manifest.get("hosts") else []),
    ]


def verdict_line(manifest: Mapping[str, Any]) -> tuple[str, str]:
    """The compliance verdict in one line, and its style."""
    compliance = manifest.get("compliance") or {}
    if compliance.get("compliant"):
        return "PTS-compliant", "bold green"
    count = len(compliance.get("reasons") or [])
    return (f"NOT PTS-compliant ({count} deviation{'s' if count != 1 else ''}, listed under 'Compliance and rounds' "
            "at the end)", "bold yellow")


def _print_blocks(blocks: Sequence[Table | Text], console: Any) -> None:
    """Tables (fitted to a terminal, whole when piped), texts as lines."""
    for block in blocks:
        if isinstance(block, Text):
            console.print(block.text, highlight=False, style="yellow" if block.kind == "warning" else "dim")
        else:
            print_model_table(block, console)


def render_pts(store: RunStore, console: Any, answer_last: bool = False) -> None:
    """Print a PTS run's results with rich: the header and the compliance verdict, then the report's sections; with
    `answer_last` (the end of a run) the at-a-glance section last and the verdict after it."""
    from ptsbench.pts.store import PtsStore

    manifest = store.manifest
    for line in header_lines(manifest, PtsStore(store).run_status()):
        console.print(line, highlight=False)
    from ptsbench.report.glance import GLANCE_KEY

    verdict, style = verdict_line(manifest)
    console.print(verdict, style=style, highlight=False)
    sections = pts_sections(store)
    if answer_last:
        sections = [*(s for s in sections if s.key != GLANCE_KEY), *(s for s in sections if s.key == GLANCE_KEY)]
    for section in sections:
        console.rule(section.title)
        _print_blocks(terminal_blocks(section), console)
    if answer_last:
        console.print(verdict, style=style, highlight=False)
