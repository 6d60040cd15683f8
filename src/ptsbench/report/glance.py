"""The answer first: the "At a glance" section every report opens with.

PTS runs: every tracked variable's value at steady state (the measurement window's average) with its verdict, a
line per phase. Case-runner runs (`run`, `quick`): a CrystalDiskMark-style grid, one row per test with read and
write side by side (MB/s, IOPS, mean latency), and the same numbers as a bar chart. Numbers are fio's as stored;
where fio measured nothing the cell is empty.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.report.core.figure import Figure, Series
from ptsbench.report.core.model import Block, Column, Section, Table

GLANCE_KEY = "glance"
GLANCE_TITLE = "At a glance"
DIRECTIONS = ("read", "write")
_SUFFIXES = tuple(f"-{direction}" for direction in DIRECTIONS)


# --- PTS ------------------------------------------------------------------------------------------------------

PTS_COLUMNS = (Column("test"), Column("workload"), Column("IOPS", "iops"), Column("MB/s", "mbs"),
               Column("mean latency (µs)", "us"), Column("steady state"))


def _verdict(view: Any, determined: Mapping[str, Any] | None) -> str:
    if view.result is None:
        return f"in progress (round {len(view.rounds)})"
    if not view.plan["tracked"]:
        return "n/a (not tracked)"
    if determined is None:
        return "-"
    return "reached" if determined.get("steady") else "NOT reached"


def _scaled(value: Any, factor: float) -> float | None:
    return None if value is None else float(value) * factor


def pts_headline_rows(views: Sequence[Any]) -> tuple[tuple[Any, ...], ...]:
    """A row per tracked variable of every started phase (a phase tracking nothing: its cells, up to two), with
    the cell's IOPS, MB/s and mean latency over the measurement window (the latest round while running)."""
    from ptsbench.report.pts.views import determination_of

    rows = []
    for view in views:
        if not view.rounds:
            continue
        values = view.values()
        determined = determination_of(view)
        tracked = [(t["cell"], f"{t['cell']} {t['metric']}") for t in view.plan["tracked"]]
        if not tracked:
            tracked = [(cell["name"], "") for cell in view.plan["cells"][:2]]
        for cell, label in tracked:
            found = values.get(cell) or {}
            rows.append((view.plan["title"], cell, _scaled(found.get("iops"), 1.0),
                         _scaled(found.get("bw_bytes"), 1e-6), _scaled(found.get("lat_mean_ns"), 1e-3),
                         _verdict(view, determined.get(label) if label else None)))
    return tuple(rows)


def pts_glance_section(views: Sequence[Any]) -> Section:
    """The PTS headline table (the compliance verdict is the report's one-line banner above it)."""
    table = Table("headline", "Tracked values at steady state (average over each phase's measurement window)",
                  PTS_COLUMNS, pts_headline_rows(views), keys=(0, 1))
    return Section(GLANCE_KEY, GLANCE_TITLE, blocks=(table,))


# --- case runner ----------------------------------------------------------------------------------------------

GRID_COLUMNS = (Column("test"), Column("read MB/s", "mbs"), Column("write MB/s", "mbs"), Column("read IOPS", "int"),
                Column("write IOPS", "int"), Column("read mean µs", "us"), Column("write mean µs", "us"))


def test_name(job: str) -> str:
    """A job's test: its name without a trailing -read / -write (quick's jobs come in such pairs)."""
    for suffix in _SUFFIXES:
        if job.endswith(suffix):
            return job[: -len(suffix)]
    return job


def grid_rows(rows: Sequence[Any]) -> tuple[tuple[Any, ...], ...]:
    """One row per test (a job, or quick's read and write jobs of one test together; per host on hosts) with read
    and write side by side. ResultRow-like input; failed rows and total rows are left out. Jobs are told apart by
    case and position, never by name alone: two job sections of one name stay two rows (fio ran them apart)."""
    found: dict[tuple[str, Any, str | None], tuple[str, dict[str, Any]]] = {}
    cases = {row.case for row in rows}
    for row in rows:
        if row.direction not in DIRECTIONS or row.iops is None:
            continue
        test = test_name(row.job)
        name = (f"{row.case}: " if len(cases) > 1 else "") + test + (f" @ {row.host}" if row.host else "")
        job = test if test != row.job else getattr(row, "job_index", row.job)  # quick's -read/-write pairs: one test
        found.setdefault((row.case, job, row.host), (name, {}))[1][row.direction] = row
    grid = []
    for name, directions in found.values():
        read, write = directions.get("read"), directions.get("write")
        grid.append((name, *(_scaled(one.bw_bytes, 1e-6) if one else None for one in (read, write)),
                     *(one.iops if one else None for one in (read, write)),
                     *(_scaled(one.lat_mean_ns, 1e-3) if one else None for one in (read, write))))
    return tuple(grid)


def grid_figure(grid: Sequence[Sequence[Any]]) -> Figure:
    """The grid's MB/s as grouped bars, read beside write, one group per test."""
    ticks = tuple((float(position), str(row[0])) for position, row in enumerate(grid))
    series = tuple(Series(direction, tuple(float(p) for p in range(len(grid))),
                          tuple(row[1 + index] for row in grid), mode="bars", color=index)
                   for index, direction in enumerate(DIRECTIONS)
                   if any(row[1 + index] is not None for row in grid))
    return Figure("glance-mbs", "MB/s per test, read and write", "test", "MB/s", series, x_ticks=ticks,
                  caption="Each test's bandwidth as fio measured it (decimal MB/s), read and write side by side.")


def case_glance_section(rows: Sequence[Any]) -> Section:
    """The case runner's grid of tests, and its chart."""
    grid = grid_rows(rows)
    blocks: list[Block] = [Table("grid", "Read and write per test", GRID_COLUMNS, grid, compare=(1, 2, 3, 4))]
    if grid:
        blocks.append(grid_figure(grid))
    return Section(GLANCE_KEY, GLANCE_TITLE, blocks=tuple(blocks))
