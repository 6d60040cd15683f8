"""How a PTS test's cells were handed off: the way each phase's rounds used (chained, or fio's scheduler) and, per
round, the gaps between cells as ptsbench's relay saw each cell's end and the next one's start (round.json)."""

import statistics
from collections.abc import Sequence
from typing import Any

from ptsbench.report.core.model import Block, Column, Table, Text, Value
from ptsbench.report.pts.views import slug

HANDOFF_COLUMNS = (Column("phase"), Column("round", "int"), Column("hand-offs", "int"),
                   Column("median gap (ms)", "number"), Column("largest gap (ms)", "number"))


def handoff_blocks(test: str, views: Sequence[Any]) -> list[Block]:
    """A line per phase saying how its cells handed off, and a table of the measured gaps of every round."""
    blocks: list[Block] = []
    rows: list[tuple[Value, ...]] = []
    for view in views:
        records = [record["handoff"] for record in view.rounds if record.get("handoff")]
        text = view.plan.get("handoff") or (records[-1]["text"] if records else None)
        if text:
            blocks.append(Text(f"{view.plan['title']}: {text}."))
        for record in view.rounds:
            gaps = [gap for gap in (record.get("handoff") or {}).get("gaps_ms") or () if gap is not None]
            if gaps:
                rows.append((view.plan["title"], int(record["round"]), len(gaps), statistics.median(gaps), max(gaps)))
    if rows:
        blocks.append(Table(slug(test, "handoffs"), "Gaps between cells, as ptsbench's relay saw them (from a cell's "
                            "last thread ending to the next cell's first thread starting; fio's own exit and start "
                            "around them add a few ms)", HANDOFF_COLUMNS, tuple(rows), keys=(0, 1)))
    return blocks
