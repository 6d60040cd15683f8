"""The drops found inside a case or round, for a report: a findings table, and the regions that shade each drop on
the time series of its metric."""

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ptsbench.report.core.figure import Region
from ptsbench.report.core.model import Block, Column, Table, Text

if TYPE_CHECKING:
    from ptsbench.drops.rule import DropRule
    from ptsbench.drops.stored import Finding

# the figures of each log kind show the findings of these metrics (IOPS and MB/s drops are one event)
FIGURE_METRICS = {"iops": ("iops", "bw"), "bw": ("iops", "bw"), "lat": ("lat",)}
METRIC_NAMES = {"iops": "IOPS", "bw": "MB/s", "lat": "latency"}
FINDING_COLUMNS = (
    Column("where"), Column("job"), Column("dir"), Column("metric"), Column("from (s)", "number"),
    Column("for (s)", "number"), Column("kind"), Column("before"), Column("during"), Column("share", "ratio"),
    Column("done by then (GB)", "number"), Column("likely cause"),
)


def drop_regions(findings: Sequence["Finding"], log_kind: str) -> tuple[Region, ...]:
    """The findings to shade on a figure of one log kind ("iops", "bw", "lat")."""
    return tuple(Region(f.drop.start_s, f.drop.end_s, f"{f.label} {f.drop.direction} {f.drop.fraction:.0%}")
                 for f in findings if f.drop.metric in FIGURE_METRICS[log_kind])


def finding_rows(where: str, findings: Sequence["Finding"]) -> list[tuple[object, ...]]:
    from ptsbench.drops.stored import level_text

    return [(where, f.label, f.drop.direction, METRIC_NAMES[f.drop.metric], round(f.drop.start_s, 1),
             round(f.drop.duration_s, 1), "step (to the end)" if f.drop.to_end else "drop",
             level_text(f.drop.metric, f.drop.reference), level_text(f.drop.metric, f.drop.level),
             f.drop.fraction, f.drop.done_bytes / 1e9, f.cause_text) for f in findings]


def findings_table(key: str, rows: Sequence[tuple[object, ...]]) -> Table:
    return Table(f"{key}-drops", "Drops and steps found in the per-second data (shaded on the figures over time)",
                 FINDING_COLUMNS, tuple(rows), keys=(0, 1, 2, 3, 4))  # type: ignore[arg-type]


def rule_text(rule: "DropRule") -> str:
    return (f"a drop is {rule.min_seconds} s or more below {rule.fraction:.0%} of the best level the job held for "
            f"{rule.min_seconds} s (latency: above it by 1/{rule.fraction:g}, and by "
            f"{rule.lat_floor_ns / 1000:g} µs at least); see docs/drops.md")


def drop_blocks(key: str, where: str, folder: Path, findings: Sequence["Finding"], rule: "DropRule") -> list[Block]:
    """A case's findings table, or one line saying none were found (nothing without per-second data)."""
    if not (folder / "seconds.json").is_file():
        return []
    if not findings:
        return [Text(f"Drops: none found in the per-second data ({rule_text(rule)}).")]
    return [Text(f"Drops: {len(findings)} found ({rule_text(rule)})."),
            findings_table(key, finding_rows(where, findings))]
