"""Comparisons: several runs' reports merged into one. Sections, tables and figures are matched by key, so every
test type (and every later one) compares the same way: tables show each run's value and its ratio to the first run,
figures overlay the runs (colour per series as in one run, line style per run), 3D bars are shown run by run."""

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ptsbench.report import style
from ptsbench.report.figures import Figure
from ptsbench.report.model import Block, Column, Report, Section, Table, Text, Value

RUN_DASHES = style.DASHES


def _row_key(table: Table, row: Sequence[Value]) -> tuple[Value, ...]:
    return tuple(row[index] for index in table.keys if index < len(row))


def compare_table(tables: Sequence[Table | None], labels: Sequence[str]) -> Table:
    """One table of several runs: key columns, then per compared column each run's value and its ratio to the
    first run's (numbers only). Tables without value columns list each run's rows."""
    base = next(table for table in tables if table is not None)
    values = [i for i in (base.compare if base.compare is not None else range(len(base.columns))) if i not in base.keys]
    if not values:
        listed = tuple((label, *row) for label, table in zip(labels, tables, strict=True) if table
                       for row in table.rows)
        return Table(base.key, base.title, (Column("run"), *base.columns), listed, keys=(0, 1))
    found: dict[tuple[Value, ...], list[Sequence[Value] | None]] = {}
    for position, table in enumerate(tables):
        for row in table.rows if table else ():
            found.setdefault(_row_key(base, row), [None] * len(tables))[position] = row
    columns: list[Column] = [base.columns[i] for i in base.keys]
    for index in values:
        columns += _compared_columns(base.columns[index], labels)
    rows = tuple(_compared_row(base, key, per_run, values) for key, per_run in found.items())
    return Table(base.key, f"{base.title}: {' vs '.join(labels)}", tuple(columns), rows,
                 keys=tuple(range(len(base.keys))))


def _compared_columns(column: Column, labels: Sequence[str]) -> list[Column]:
    """A column per run, then (numbers only) each later run's ratio to the first."""
    columns = [Column(f"{column.name} [{label}]", column.kind) for label in labels]
    if column.kind != "text":
        columns += [Column(f"{column.name} {label}/{labels[0]}", "ratio") for label in labels[1:]]
    return columns


def _compared_row(base: Table, key: tuple[Value, ...], per_run: Sequence[Sequence[Value] | None],
                  values: Sequence[int]) -> tuple[Value, ...]:
    """One row key's cells of every run (None where a run has no such row), with the ratios of numbers."""
    merged: list[Value] = list(key)
    for index in values:
        cells = [run[index] if run is not None and index < len(run) else None for run in per_run]
        merged += cells
        if base.columns[index].kind != "text":
            first = cells[0]
            merged += [other / first if isinstance(other, int | float) and isinstance(first, int | float) and first
                       else None for other in cells[1:]]
    return tuple(merged)


def compare_figure(figures: Sequence[Figure | None], labels: Sequence[str]) -> list[Figure]:
    """Line figures overlaid (series colour as in one run, line style per run); 3D bars one per run."""
    base = next(figure for figure in figures if figure is not None)
    if base.bars3d is not None:
        return [replace(figure, key=f"{figure.key}-run{position + 1}", title=f"{label}: {figure.title}")
                for position, (label, figure) in enumerate(zip(labels, figures, strict=True)) if figure is not None]
    series = []
    most = max(len(figure.series) for figure in figures if figure is not None)
    for position, (label, figure) in enumerate(zip(labels, figures, strict=True)):
        for index, one in enumerate(figure.series if figure else ()):
            color = one.color if one.color is not None else index
            if one.mode == "bars":  # bars have no line style: each run's bars a colour of their own
                color = position * most + color
            series.append(replace(one, name=f"{label}: {one.name}", color=color,
                                  dash=RUN_DASHES[position % len(RUN_DASHES)] if position else one.dash))
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
        peers = [_find_block(section, block) if section else None for section in sections]
        if isinstance(block, Table):
            blocks.append(compare_table(peers, labels))  # type: ignore[arg-type]
        else:
            blocks += compare_figure(peers, labels)  # type: ignore[arg-type]
    for label, section in zip(labels[1:], sections[1:], strict=True):
        for text in section.blocks if section else ():
            if isinstance(text, Text) and text.kind == "warning" and text not in base.blocks:
                blocks.append(Text(f"{label}: {text.text}", "warning"))
    facts = _facts_compared([section.facts if section else () for section in sections], labels)
    return Section(base.key, base.title, facts, tuple(blocks))


def _find_block(section: Section, block: Table | Figure) -> Table | Figure | None:
    return next((other for other in section.blocks if type(other) is type(block) and other.key == block.key), None)


def compare_reports(reports: Sequence[Report], labels: Sequence[str], run_dirs: Sequence[Path]) -> Report:
    """Several runs' reports side by side."""
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
    return Report(f"ptsbench comparison: {' vs '.join(labels)}",
                  "; ".join(f"{label}: {report.provenance}" for label, report in zip(labels, reports, strict=True)),
                  (("runs", ", ".join(labels)),), (Section("runs", "Runs", blocks=(runs,)), *sections),
                  "; ".join(progress) or None, warnings)


def run_labels(run_dirs: Sequence[Path]) -> list[str]:
    """Default names of compared runs: their folder names, numbered when two are the same."""
    names = [Path(path).resolve().name for path in run_dirs]
    return [f"{name} ({index})" if names.count(name) > 1 else name for index, name in enumerate(names, start=1)]
