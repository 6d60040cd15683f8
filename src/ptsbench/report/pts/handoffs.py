"""How a PTS test's cells were handed off: the way each phase's rounds used (chained, or fio's scheduler) and, per
round, the gaps between cells (round.json): by fio's job_start where fio gave it, else as ptsbench's relay saw them."""

import statistics
from collections.abc import Sequence
from typing import Any

from ptsbench.report.core.model import Block, Column, Table, Text, Value
from ptsbench.report.pts.views import slug

HANDOFF_COLUMNS = (Column("phase"), Column("round", "int"), Column("hand-offs", "int"),
                   Column("median gap (ms)", "number"), Column("largest gap (ms)", "number"), Column("measured by"))


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
            handoff = record.get("handoff") or {}
            gaps = [gap for gap in handoff.get("gaps_ms") or () if gap is not None]
            if gaps:  # rounds stored before fio's job_start was used were measured by the relay
                rows.append((view.plan["title"], int(record["round"]), len(gaps), statistics.median(gaps), max(gaps),
                             handoff.get("gaps_source") or "ptsbench's relay"))
    if rows:
        blocks.append(Table(slug(test, "handoffs"), "Gaps between cells, from a cell's last thread ending to the next "
                            "cell's first thread starting: by fio's own clock where its JSON has job_start (fio 3.36 "
                            "and newer: each thread's start, plus its ramp and run time), else as ptsbench's relay saw "
                            "them (fio's own exit and start around them add a few ms)", HANDOFF_COLUMNS, tuple(rows),
                            keys=(0, 1)))
    return blocks
