"""Comparisons: several runs' reports merged into one. Sections, tables and figures are matched by key, so every
test type (and every later one) compares the same way: tables show each run's value and its ratio to the first run,
figures overlay the runs (colour per series as in one run, line style per run), 3D bars are shown run by run."""

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from ptsbench.report.core import style
from ptsbench.report.core.figure import Figure
from ptsbench.report.core.model import Block, Column, Report, Section, Table, Text, Value, split_groups
from ptsbench.report.fleet import (
    DEFAULT_K,
    FLEET_KEY,
    WITHIN_NOISE,
    Member,
    fleet_section,
    terminal_parts,
    within_noise,
)
from ptsbench.report.glance import GLANCE_KEY, GLANCE_TITLE

BlockT = TypeVar("BlockT", Table, Figure)

RUN_DASHES = style.DASHES


def _row_key(keys: Sequence[int], row: Sequence[Value]) -> tuple[Value, ...]:
    return tuple(row[index] for index in keys if index < len(row))


def pairing_keys(tables: Sequence[Table | None]) -> tuple[int, ...]:
    """The columns rows are matched by: the table's keys; its workload keys (`pair`) when runs differ in a setting
    (queue depth, case, target) so that no row would match by all keys, and the workload keys name each row of a
    run once."""
    base = next(table for table in tables if table is not None)
    present = [table for table in tables if table is not None]
    if base.pair is None or len(present) < 2:
        return base.keys
    full = [{_row_key(base.keys, row) for row in table.rows} for table in present]
    if set.intersection(*full):
        return base.keys
    loose = [[_row_key(base.pair, row) for row in table.rows] for table in present]
    if any(len(set(keys)) != len(keys) for keys in loose):
        return base.keys
    return base.pair


def compare_table(tables: Sequence[Table | None], labels: Sequence[str]) -> Table:
    """One table of several runs: key columns, then per compared column each run's value and its ratio to the
    first run's (numbers only). Rows are paired by workload (pairing_keys); a key the runs differ in becomes a
    compared column. Tables without value columns list each run's rows."""
    base = next(table for table in tables if table is not None)
    keys = pairing_keys(tables)
    values = [i for i in (base.compare if base.compare is not None else range(len(base.columns))) if i not in base.keys]
    if not values:
        listed = tuple((label, *row) for label, table in zip(labels, tables, strict=True) if table
                       for row in table.rows)
        return Table(base.key, base.title, (Column("run"), *base.columns), listed, keys=(0, 1))
    values = [i for i in base.keys if i not in keys] + values  # the setting the runs differ in, side by side
    found: dict[tuple[Value, ...], list[Sequence[Value] | None]] = {}
    noises: dict[tuple[Value, ...], list[Sequence[Value] | None]] = {}
    for position, table in enumerate(tables):
        for number, row in enumerate(table.rows if table else ()):
            found.setdefault(_row_key(keys, row), [None] * len(tables))[position] = row
            if table and number < len(table.noise):
                noises.setdefault(_row_key(keys, row), [None] * len(tables))[position] = table.noise[number]
    columns: list[Column] = [base.columns[i] for i in keys]
    groups: list[tuple[str, tuple[int, ...]]] = []
    for index in values:
        added = _compared_columns(base.columns[index], labels)
        groups.append((base.columns[index].name, tuple(range(len(columns), len(columns) + len(added)))))
        columns += added
    rows = tuple(_compared_row(base, key, per_run, values, noises.get(key, [None] * len(tables)))
                 for key, per_run in found.items())
    return Table(base.key, f"{base.title}: {' vs '.join(labels)}", tuple(columns), rows,
                 keys=tuple(range(len(keys))), groups=tuple(groups))


def _compared_columns(column: Column, labels: Sequence[str]) -> list[Column]:
    """A column per run, then (numbers only) each later run's ratio to the first."""
    columns = [Column(f"{column.name} [{label}]", column.kind) for label in labels]
    if column.kind != "text":
        columns += [Column(f"{column.name} {label}/{labels[0]}", "ratio") for label in labels[1:]]
    return columns


def _compared_row(base: Table, key: tuple[Value, ...], per_run: Sequence[Sequence[Value] | None],
                  values: Sequence[int], noise: Sequence[Sequence[Value] | None]) -> tuple[Value, ...]:
    """One row key's cells of every run (None where a run has no such row), with the ratios of numbers; a ratio
    whose difference is within the two values' noise is WITHIN_NOISE instead."""
    merged: list[Value] = list(key)
    for index in values:
        cells = [run[index] if run is not None and index < len(run) else None for run in per_run]
        spreads = [one[index] if one is not None and index < len(one) else None for one in noise]
        merged += cells
        if base.columns[index].kind != "text":
            merged += [_ratio(cells[0], spreads[0], other, its) for other, its in zip(cells[1:], spreads[1:],
                                                                                       strict=True)]
    return tuple(merged)


def _ratio(first: Value, first_noise: Value, other: Value, other_noise: Value) -> Value:
    """other / first, or WITHIN_NOISE when their difference is no larger than the larger noise."""
    if not isinstance(other, int | float) or not isinstance(first, int | float) or not first:
        return None
    noises = [float(n) if isinstance(n, int | float) else None for n in (first_noise, other_noise)]
    if within_noise(float(first), float(other), *noises):
        return WITHIN_NOISE
    return other / first


def compare_figure(figures: Sequence[Figure | None], labels: Sequence[str]) -> list[Figure]:
    """Line figures overlaid (series colour as in one run, line style per run); 3D bars one per run."""
    base = next(figure for figure in figures if figure is not None)
    if base.grid is not None:  # one z scale for all: equal heights are equal values
        top = max((value for figure in figures if figure is not None and figure.grid is not None
                   for row in figure.grid.z for value in row if value is not None), default=None)
        y_range = (0, top * 1.05) if top else (None, None)
        return [replace(figure, key=f"{figure.key}-run{position + 1}", title=f"{label}: {figure.title}",
                        y_range=y_range)
                for position, (label, figure) in enumerate(zip(labels, figures, strict=True)) if figure is not None]
    series = []
    most = max(len(figure.series) for figure in figures if figure is not None)
    for position, (label, figure) in enumerate(zip(labels, figures, strict=True)):
        for index, one in enumerate(figure.series if figure else ()):
            color = one.color if one.color is not None else index
            if one.mode == "bars" and isinstance(color, int):  # bars have no line style: each run's a colour of its own
                color = position * most + color
            series.append(replace(one, name=f"{label}: {one.name}", color=color,
                                  dash=RUN_DASHES[position % len(RUN_DASHES)] if position else one.dash))
    if all(one.mode == "bars" for one in series):  # told apart by colour and legend, not by a line style
        return [replace(base, series=tuple(series))]
    styles = ", ".join(f"{label} {RUN_DASHES[i % len(RUN_DASHES)]}" for i, label in enumerate(labels))
    return [replace(base, series=tuple(series), caption=f"{base.caption} Runs: {styles}.".strip())]


def _facts_compared(facts: Sequence[Sequence[tuple[str, str]]], labels: Sequence[str]) -> tuple[tuple[str, str], ...]:
    merged: dict[str, list[str]] = {}
    for position, run_facts_ in enumerate(facts):
        for label, value in run_facts_:
            merged.setdefault(label, ["-"] * len(facts))[position] = value
    return tuple((label, values[0] if len(set(values)) == 1 else
                  " | ".join(f"{run}: {value}" for run, value in zip(labels, values, strict=True)))
                 for label, values in merged.items())


def compare_section(sections: Sequence[Section | None], labels: Sequence[str]) -> Section:
    base = next(section for section in sections if section is not None)
    blocks: list[Block] = []
    for block in base.blocks:
        if isinstance(block, Text):
            if block.kind == "warning":
                blocks += [Text(f"{label}: {text.text}", "warning") for label, section in zip(labels, sections,
                           strict=True) if section for text in section.blocks
                           if isinstance(text, Text) and text.kind == "warning" and text.text == block.text]
            elif block.kind == "p":
                blocks.append(block)
            continue
        if isinstance(block, Table):
            blocks.append(compare_table(_peers(sections, block), labels))
        else:
            blocks += compare_figure(_peers(sections, block), labels)
    # a figure only later runs drew (the first run's held too few values to chart: drawn_or_said) is theirs to show
    drawn = {block.key for block in base.blocks if isinstance(block, Figure)}
    for section in sections:
        for figure in section.figures() if section else ():
            if figure.key not in drawn:
                drawn.add(figure.key)
                blocks += compare_figure(_peers(sections, figure), labels)
    for label, section in zip(labels[1:], sections[1:], strict=True):
        for text in section.blocks if section else ():
            if isinstance(text, Text) and text.kind == "warning" and text not in base.blocks:
                blocks.append(Text(f"{label}: {text.text}", "warning"))
    facts = _facts_compared([section.facts if section else () for section in sections], labels)
    return Section(base.key, base.title, facts, tuple(blocks))


def _peers(sections: Sequence[Section | None], block: BlockT) -> list[BlockT | None]:
    """Each run's block of the same kind and key as `block` (None where a run has none)."""
    return [next((other for other in section.blocks if isinstance(other, type(block)) and other.key == block.key),
                 None) if section else None for section in sections]


SAME_BY_NATURE = {"run", "started (UTC)", "command line", "store schema", "status", "test date (UTC)"}
TARGET_FACTS = ("vendor", "model", "serial", "firmware", "path", "kind", "size", "transport", "write cache")


def _differing(name: str, values: Sequence[str], labels: Sequence[str]) -> str | None:
    if len(set(values)) < 2:
        return None
    return f"{name}: " + " vs ".join(f"{value} ({label})" for value, label in zip(values, labels, strict=True))


def differences(reports: Sequence[Report], labels: Sequence[str],
                tags: Sequence[Sequence[str]] = ()) -> list[str]:
    """What the runs differ in: the report's facts, the targets' facts (model, firmware, ...), the runs' tags
    (--tag firmware=1.3), and the settings of the workloads the tables pair (queue depth and threads, case)."""
    found: list[str | None] = []
    if tags:
        keyed = [dict(tag.split("=", 1) for tag in run_tags if "=" in tag) for run_tags in tags]
        for name in dict.fromkeys(key for one in keyed for key in one):
            found.append(_differing(f"{name} (tag)", [one.get(name, "-") for one in keyed], labels))
        plain = [", ".join(tag for tag in run_tags if "=" not in tag) or "-" for run_tags in tags]
        found.append(_differing("tags", plain, labels))
    for name in dict.fromkeys(label for report in reports for label, _ in report.facts):
        if name not in SAME_BY_NATURE:
            found.append(_differing(name, [dict(report.facts).get(name, "-") for report in reports], labels))
    targets = [_target_rows(report) for report in reports]
    for name in TARGET_FACTS:
        found.append(_differing(name, [rows.get(name, "-") for rows in targets], labels))
    for key in dict.fromkeys(table.key for report in reports for table in report.tables()):
        tables = [next((t for t in report.tables() if t.key == key), None) for report in reports]
        base = next(table for table in tables if table is not None)
        for index in (i for i in base.keys if i not in pairing_keys(tables)):
            per_run = [", ".join(dict.fromkeys(str(row[index]) for row in table.rows)) if table else "-"
                       for table in tables]
            found.append(_differing(base.columns[index].name, per_run, labels))
    return list(dict.fromkeys(line for line in found if line))


def _target_rows(report: Report) -> dict[str, str]:
    """fact -> value of a run's first target, from its environment section."""
    table = next((t for t in report.tables() if t.key == "targets"), None)
    return {str(row[0]): str(row[1]) for row in table.rows if len(row) > 1} if table else {}


def compare_reports(reports: Sequence[Report], labels: Sequence[str], run_dirs: Sequence[Path],
                    members: Sequence[Member] = (), outlier_k: float = DEFAULT_K) -> Report:
    """Several runs' reports side by side; with `members` (fleet_members.py), opening with the fleet's table."""
    keys = list(dict.fromkeys(section.key for report in reports for section in report.sections))
    sections = []
    for key in keys:
        found = [next((s for s in report.sections if s.key == key), None) for report in reports]
        sections.append(compare_section(found, labels))
    runs = Table("runs", "Runs compared (ratios are to the first run)",
                 (Column("run"), Column("directory"), Column("report"), Column("provenance")),
                 tuple((label, str(path), report.title, report.provenance)
                       for label, path, report in zip(labels, run_dirs, reports, strict=True)))
    warnings = tuple(f"{label}: {warning}" for label, report in zip(labels, reports, strict=True)
                     for warning in report.warnings)
    progress = [f"{label}: {report.in_progress}" for label, report in zip(labels, reports, strict=True)
                if report.in_progress]
    from ptsbench.store import RunStore

    differ = differences(reports, labels, [[str(tag) for tag in RunStore.open(path).manifest.get("tags") or []]
                                           for path in run_dirs])
    said = Text("What differs: " + "; ".join(differ) if differ else
                "What differs: nothing the runs record (same device, settings and workloads).")
    glance = [section for section in sections if section.key == GLANCE_KEY]
    if members:
        fleet = fleet_section(members, outlier_k, title="Every run side by side")
        first = [replace(fleet, blocks=(said, *fleet.blocks)), *glance]
    else:
        first = [replace(section, blocks=(said, *section.blocks)) for section in glance] or \
            [Section(GLANCE_KEY, GLANCE_TITLE, blocks=(said,))]
    rest = [section for section in sections if section.key != GLANCE_KEY]
    return Report(f"ptsbench comparison: {' vs '.join(labels)}",
                  "; ".join(f"{label}: {report.provenance}" for label, report in zip(labels, reports, strict=True)),
                  (("runs", ", ".join(labels)),), (*first, *rest, Section("runs", "Runs", blocks=(runs,))),
                  "; ".join(progress) or None, warnings)


def glance_by_value(compared: Report) -> tuple[list[Table], list[str]]:
    """For the terminal: the fleet's table (the members' facts, then their values beside their noise) and the
    compared headline one value at a time (each fits a terminal: the keys, each run's value, the ratios), and the
    lines above them (what differs, the outliers)."""
    tables: list[Table] = []
    texts: list[str] = []
    for section in compared.sections:
        if section.key == FLEET_KEY:
            texts += [block.text for block in section.blocks if isinstance(block, Text)]
            tables += terminal_parts(section)
        elif section.key == GLANCE_KEY:
            texts += [block.text for block in section.blocks if isinstance(block, Text)]
            tables += [part for table in section.tables() for part in split_groups(table)]
    return tables, texts


def run_labels(run_dirs: Sequence[Path]) -> list[str]:
    """Default names of compared runs: their folder names, numbered when two are the same."""
    names = [Path(path).resolve().name for path in run_dirs]
    return [f"{name} ({index})" if names.count(name) > 1 else name for index, name in enumerate(names, start=1)]
