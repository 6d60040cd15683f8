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


def pts_headline_noise(views: Sequence[Any]) -> tuple[tuple[Any, ...], ...]:
    """The noise of each headline value, row for row with pts_headline_rows: max - min over the measurement
    window's rounds (the tracked metric's is the window's data excursion); None while a phase runs."""
    from ptsbench.report.fleet_members import spread_of

    noise = []
    for view in views:
        if not view.rounds:
            continue
        tracked = [t["cell"] for t in view.plan["tracked"]] or [cell["name"] for cell in view.plan["cells"][:2]]
        window = view.window_rounds() if view.result is not None else []
        for cell in tracked:
            found = [record["cells"].get(cell) or {} for record in window]
            noise.append((None, None, *(spread_of([_scaled(one.get(metric), factor) for one in found])
                                        for metric, factor in (("iops", 1.0), ("bw_bytes", 1e-6),
                                                               ("lat_mean_ns", 1e-3))), None))
    return tuple(noise)


def pts_glance_section(views: Sequence[Any]) -> Section:
    """The PTS headline table (the compliance verdict is the report's one-line banner above it)."""
    table = Table("headline", "Tracked values at steady state (average over each phase's measurement window)",
                  PTS_COLUMNS, pts_headline_rows(views), keys=(0, 1), noise=pts_headline_noise(views))
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
    and write side by side; with --repeat, the mean of the repetitions. ResultRow-like input; total rows are left
    out, a test that failed keeps its row, named so, with empty numbers. Jobs are told apart by case and position,
    never by name alone: two job sections of one name stay two rows (fio ran them apart)."""
    return _grid(rows)[0]


def _grid(rows: Sequence[Any]) -> tuple[tuple[tuple[Any, ...], ...], tuple[tuple[Any, ...], ...]]:
    """The grid (grid_rows), and the noise of each of its cells: max - min over the repetitions."""
    from ptsbench.confidence import base_case_name
    from ptsbench.report.fleet_members import spread_of

    found: dict[tuple[str, Any, str | None], tuple[str, dict[str, list[Any]]]] = {}
    cases = {base_case_name(row.case, row.repetition) for row in rows}
    for row in rows:
        failed = row.status != "ok" and row.iops is None
        if not failed and (row.direction not in DIRECTIONS or row.iops is None):
            continue
        case = base_case_name(row.case, row.repetition)
        test = test_name(row.job)
        name = (f"{case}: " if len(cases) > 1 else "") + test + (f" @ {row.host}" if row.host else "")
        job = test if test != row.job else getattr(row, "job_index", row.job)  # quick's -read/-write pairs: one test
        if failed:  # a case that failed before fio named its jobs has the job '-': named by its case
            name = name if row.job not in ("", "-") else case + (f" @ {row.host}" if row.host else "")
            found.setdefault((case, job, row.host), (f"{name} ({row.status.split(':')[0]})", {}))
            continue
        found.setdefault((case, job, row.host), (name, {}))[1].setdefault(row.direction, []).append(row)
    grid, noise = [], []
    for name, directions in found.values():
        read, write = directions.get("read", []), directions.get("write", [])
        values = [[_scaled(one.bw_bytes, 1e-6) for one in side] for side in (read, write)]
        values += [[one.iops for one in side] for side in (read, write)]
        values += [[_scaled(one.lat_mean_ns, 1e-3) for one in side] for side in (read, write)]
        grid.append((name, *(_mean(numbers) for numbers in values)))
        noise.append((None, *(spread_of(numbers) for numbers in values)))
    return tuple(grid), tuple(noise)


def _mean(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) / len(known) if known else None


def repetitions_table(rows: Sequence[Any]) -> Table | None:
    """With --repeat: each test's mean, spread (max - min) and every repetition's value; None without."""
    from ptsbench.report.fleet_members import case_tracked

    if not any(row.repetition for row in rows):
        return None
    from ptsbench.confidence import interval

    tracked = case_tracked(rows)
    count = max(len(one.per_round) for one in tracked) if tracked else 0
    columns = (Column("test"), Column("unit"), Column("mean", "mbs"), Column("spread (max - min)", "mbs"),
               Column("95 % CI ± (Student's t)", "mbs"), Column("CI ± % of mean", "pct"),
               *(Column(f"r{number}", "mbs") for number in range(1, count + 1)))
    table_rows = []
    for one in tracked:
        found = interval([value for value in one.per_round if value is not None])
        table_rows.append((one.name, one.unit, one.value, one.noise, found.half_width if found else None,
                           found.relative_pct if found else None, *one.per_round,
                           *([None] * (count - len(one.per_round)))))
    return Table("repetitions", "Repetitions: each test's mean, its spread, the 95 % confidence interval of the mean "
                 "and every repetition", columns, tuple(table_rows))


def repeat_auto_table(records: Sequence[Any], manifest: Mapping[str, Any]) -> Table | None:
    """With --repeat auto: per case the repetitions run, the 95 % confidence interval of its widest value (IOPS of a
    job and direction) computed from the stored cells, and why the repeats stopped; None otherwise."""
    from ptsbench.confidence import Values, case_values, repeat_group, widest

    if manifest.get("repeat") != "auto":
        return None
    stops = manifest.get("repeat_stops") or {}
    cases: dict[str, list[Values | None]] = {}
    sweep = manifest.get("kind") == "sweep"
    for record in records:
        if not (sweep and record.name.startswith("precondition")):
            cases.setdefault(repeat_group(record.name, record.repetition, sweep), []).append(case_values(record))
    table_rows = []
    for base, repetitions in cases.items():
        found = widest(repetitions)
        name, shown = found if found else ("-", None)
        table_rows.append((base, len(repetitions), name, shown.mean if shown else None,
                           shown.half_width if shown else None, shown.relative_pct if shown else None,
                           str(stops.get(base, "not decided (interrupted)"))))
    return Table("repeat-auto", f"--repeat auto: each case repeated until the 95 % confidence interval of each of its "
                 f"IOPS is within ±{manifest.get('repeat_ci_pct'):g} % of the mean (at most "
                 f"{manifest.get('repeat_max')} repetitions or {manifest.get('repeat_max_s'):g} s); the widest shown",
                 (Column("case"), Column("repetitions", "int"), Column("widest value"), Column("mean IOPS", "iops"),
                  Column("95 % CI ± IOPS", "iops"), Column("CI ± % of mean", "pct"), Column("stopped")),
                 tuple(table_rows))


def grid_figure(grid: Sequence[Sequence[Any]]) -> Figure:
    """The grid's MB/s as grouped bars, read beside write, one group per test."""
    ticks = tuple((float(position), str(row[0])) for position, row in enumerate(grid))
    series = tuple(Series(direction, tuple(float(p) for p in range(len(grid))),
                          tuple(row[1 + index] for row in grid), mode="bars", color=index)
                   for index, direction in enumerate(DIRECTIONS)
                   if any(row[1 + index] is not None for row in grid))
    return Figure("glance-mbs", "MB/s per test, read and write", "test", "MB/s (log scale)", series, x_ticks=ticks,
                  y_log=True,
                  caption="Each test's bandwidth as fio measured it (decimal MB/s), read and write side by side, on "
                          "a log scale: small random blocks move a hundredth of what large sequential ones do, and "
                          "stay visible beside them.")


def case_glance_section(rows: Sequence[Any], extra: Sequence[Block] = ()) -> Section:
    """The case runner's grid of tests, and its chart (with --repeat, the repetitions and `extra` after them)."""
    grid, noise = _grid(rows)
    repeated = any(row.repetition for row in rows)
    blocks: list[Block] = [Table("grid", "Read and write per test" + (" (mean of the repetitions)" if repeated else ""),
                                 GRID_COLUMNS, grid, compare=(1, 2, 3, 4), noise=noise)]
    if grid:
        blocks.append(grid_figure(grid))
    repetitions = repetitions_table(rows)
    if repetitions is not None:
        blocks.append(repetitions)
    blocks.extend(extra)
    return Section(GLANCE_KEY, GLANCE_TITLE, blocks=tuple(blocks))
