"""Drops inside PTS rounds, for a test's section: each round's per-second data searched (drops/), the findings in a
table, each shown on the per-second series of its cell and round, and which rounds held one (for the steady-state
table)."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ptsbench.report.core.figure import Figure, Series
from ptsbench.report.core.model import Block, Text
from ptsbench.report.drops import drop_regions, finding_rows, findings_table, rule_text
from ptsbench.report.pts.views import PtsContext, slug

if TYPE_CHECKING:
    from ptsbench.drops.stored import Finding

MAX_FIGURES = 8  # per test: the findings table lists them all
# metric -> (y label, value -> plotted unit)
PLOTTED = {"iops": ("IOPS", 1.0), "bw": ("MB/s", 1e-6), "lat": ("latency (µs)", 1e-3)}

PhaseFindings = dict[str, list[tuple[int, "Finding"]]]  # phase key -> (round, finding)


def phase_findings(context: PtsContext, views: Sequence[Any]) -> tuple[PhaseFindings, int]:
    """The findings of every round of the phases, and how many rounds had per-second data."""
    from ptsbench.drops.stored import folder_findings, stored_rule

    rule = stored_rule(context.manifest)[0]
    found: PhaseFindings = {}
    with_data = 0
    for view in views:
        for record in view.rounds:
            folder = context.pts.round_dir(view.key, int(record["round"]))
            with_data += (folder / "seconds.json").is_file()
            found.setdefault(view.key, []).extend(
                (int(record["round"]), finding) for finding in folder_findings(folder, rule, record.get("telemetry")))
    return found, with_data


def drop_rounds(found: PhaseFindings) -> dict[str, dict[str, list[int]]]:
    """Phase key -> cell -> the rounds that held a drop in it."""
    rounds: dict[str, dict[str, list[int]]] = {}
    for key, findings in found.items():
        for number, finding in findings:
            cells = rounds.setdefault(key, {}).setdefault(finding.label, [])
            if number not in cells:
                cells.append(number)
    return rounds


def pts_drop_blocks(test: str, views: Sequence[Any], context: PtsContext, found: PhaseFindings,
                    with_data: int) -> list[Block]:
    from ptsbench.drops.stored import stored_rule

    if not with_data:
        return []
    rule = stored_rule(context.manifest)[0]
    titles = {view.key: view.plan["title"] for view in views}
    rows = [row for key, findings in found.items() for number, finding in findings
            for row in finding_rows(f"{titles[key]} round {number}", [finding])]
    if not rows:
        return [Text(f"Drops: none found in the per-second data of {with_data} round(s) ({rule_text(rule)}).")]
    blocks: list[Block] = [Text(f"Drops: {len(rows)} found ({rule_text(rule)})."), findings_table(slug(test), rows)]
    shown = list(dict.fromkeys((key, number, finding.job) for key, findings in found.items()
                               for number, finding in findings))
    for key, number, job in shown[:MAX_FIGURES]:
        findings = [f for n, f in found[key] if n == number and f.job == job]
        blocks += _round_figures(context, key, titles[key], number, job, findings)
    return blocks


def _round_figures(context: PtsContext, key: str, title: str, number: int, job: str,
                   findings: Sequence["Finding"]) -> list[Block]:
    """The per-second series of one cell in one round, a figure per metric that held a finding, the drops shaded."""
    from ptsbench.drops.stored import stored_seconds

    folder = context.pts.round_dir(key, number)
    series_of = next((stored.directions for stored in stored_seconds(folder) if stored.job == job), {})
    figures: list[Block] = []
    for metric in dict.fromkeys("lat" if f.drop.metric == "lat" else "bw" for f in findings):
        y_label, factor = PLOTTED[metric]
        lines = tuple(Series(direction, tuple(float(x) for x in seconds.end_s),
                             tuple(None if v != v else float(v) * factor for v in seconds.values[metric]),
                             mode="lines+markers")
                      for direction, seconds in series_of.items())
        label = findings[0].label
        figures.append(Figure(slug(key, str(number), job, metric), f"{title} round {number}: {label}, per second",
                              "time in the cell (s)", y_label, lines, regions=drop_regions(findings, metric),
                              caption=f"Per second, from fio's status documents: {label} in round {number}; the "
                                      "shaded stretches are the drops found.", data_sheet=True))
    return figures


def window_drop_text(rounds: Mapping[str, list[int]] | None, cell: str, window: Sequence[int]) -> str:
    """Which of a tracked cell's window rounds held a drop: 'rounds 3, 5', 'none', or '-' without per-second data."""
    if rounds is None:
        return "-"
    held = [number for number in rounds.get(cell, []) if number in window]
    return "rounds " + ", ".join(map(str, held)) if held else "none"
