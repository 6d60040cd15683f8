"""The full report workbook: an 'about' sheet, one sheet per table (native Excel chart where it fits), and the
data behind the time-based figures (with a native chart each).

Numbers are written at full precision, exactly as the report holds them; formats only change how Excel shows them.
"""

import math
import re
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from ptsbench.report.core.figure import Figure
from ptsbench.report.core.model import NUMBER_FORMATS, Report, Table, Value, format_value

ABOUT = "about"
RESULTS = "results"  # the key of a case run's results table
MAX_WIDTH = 100  # characters: a longer cell (a failure message) overflows rather than widen its column past a screen
_SHEET_CHARS = re.compile(r"[\[\]:*?/\\']")


def sheet_name(key: str, used: set[str]) -> str:
    """A valid, unique sheet name (at most 31 characters) for a table or figure key."""
    base = _SHEET_CHARS.sub("_", key)[:31] or "sheet"
    name = base
    number = 2
    while name.lower() in used:
        suffix = f"~{number}"
        name = base[: 31 - len(suffix)] + suffix
        number += 1
    used.add(name.lower())
    return name


def _fit_columns(sheet: Any, cells: Iterable[Sequence[str]], first_column: int = 0) -> None:
    """Each column as wide as its longest text as Excel shows it (cells: the rows, each cell's shown text, read once;
    the first cell of a row in `first_column`)."""
    widths: dict[int, int] = {}
    for row in cells:
        for column, text in enumerate(row, start=first_column):
            widths[column] = max(widths.get(column, 0), len(text))
    for column, width in widths.items():
        sheet.set_column(column, column, min(width + 2, MAX_WIDTH))


def _write_cell(sheet: Any, row: int, column: int, value: Value, cell_format: Any) -> None:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        sheet.write_blank(row, column, None)
    elif isinstance(value, str):
        sheet.write_string(row, column, value)
    else:
        sheet.write_number(row, column, value, cell_format)


def _write_about(workbook: Any, report: Report, contents: Sequence[tuple[str, str, str]]) -> None:
    sheet = workbook.add_worksheet(ABOUT)
    bold = workbook.add_format({"bold": True})
    title = workbook.add_format({"bold": True, "font_size": 14})
    sheet.write_string(0, 0, report.title, title)
    sheet.write_string(1, 0, report.provenance)
    row = 2
    if report.in_progress:
        sheet.write_string(row, 0, f"IN PROGRESS: {report.in_progress}", bold)
        row += 1
    for warning in report.warnings:
        sheet.write_string(row, 0, warning, bold)
        row += 1
    row += 1
    for label, value in report.facts:
        sheet.write_string(row, 0, label, bold)
        sheet.write_string(row, 1, value)
        row += 1
    row += 1
    sheet.write_row(row, 0, ["sheet", "section", "title"], bold)
    for entry in contents:
        row += 1
        sheet.write_row(row, 0, list(entry))
    _fit_columns(sheet, [[label, value] for label, value in report.facts] + [list(entry) for entry in contents])


def _write_table(workbook: Any, name: str, table: Table, formats: dict[str, Any], bold: Any) -> None:
    sheet = workbook.add_worksheet(name)
    if table.key == RESULTS:
        sheet.activate()  # the workbook opens on the numbers
    sheet.write_row(0, 0, [column.name for column in table.columns], bold)
    for row_index, row in enumerate(table.rows, start=1):
        for column_index, (value, column) in enumerate(zip(row, table.columns, strict=False)):
            _write_cell(sheet, row_index, column_index, value, formats.get(column.kind))
    sheet.freeze_panes(1, table.label_count() or 0)
    _fit_columns(sheet, chain([[column.name for column in table.columns]], (
        [format_value(value, column.kind) for value, column in zip(row, table.columns, strict=False)]
        for row in table.rows)))
    if table.chart is not None and table.rows:
        _add_table_chart(workbook, sheet, name, table)


def _add_table_chart(workbook: Any, sheet: Any, name: str, table: Table) -> None:
    assert table.chart is not None
    spec = table.chart
    last = len(table.rows)
    columns = spec.columns or tuple(i for i, column in enumerate(table.columns) if column.kind != "text")
    chart = workbook.add_chart({"type": "line"})
    for column in columns:
        chart.add_series({
            "name": [name, 0, column], "categories": [name, 1, spec.category, last, spec.category],
            "values": [name, 1, column, last, column],
            "marker": {"type": "circle", "size": 4},
        })
    chart.set_title({"name": spec.title})
    chart.set_x_axis({"name": spec.x_label})
    y_axis: dict[str, Any] = {"name": spec.y_label, "major_gridlines": {"visible": True}}
    if spec.y_log:
        y_axis["log_base"] = 10
    chart.set_y_axis(y_axis)
    chart.set_size({"width": 760, "height": 420})
    sheet.insert_chart(1, len(table.columns) + 1, chart)


def _write_figure_data(workbook: Any, name: str, figure: Figure, bold: Any) -> None:
    """Two columns (x, y) per series, and a scatter chart drawing them as the figure does (the series of a second y
    axis on the chart's second axis)."""
    sheet = workbook.add_worksheet(name)
    chart = workbook.add_chart({"type": "scatter", "subtype": "straight"})
    for position, series in enumerate(figure.series):
        column = 2 * position
        y_label = figure.y2_label if series.y2 else figure.y_label
        sheet.write_string(0, column, series.name, bold)
        sheet.write_row(1, column, [figure.x_label, y_label], bold)
        for offset, (x, y) in enumerate(zip(series.x, series.y, strict=True), start=2):
            _write_cell(sheet, offset, column, x, None)
            _write_cell(sheet, offset, column + 1, y, None)
        _fit_columns(sheet, chain([[series.name], [figure.x_label, y_label]], (
            [format_value(x, "number"), format_value(y, "number")] for x, y in zip(series.x, series.y, strict=True))),
            column)
        last = len(series.x) + 1
        chart.add_series({"name": series.name, "categories": [name, 2, column, last, column],
                          "values": [name, 2, column + 1, last, column + 1], "y2_axis": series.y2})
    chart.set_title({"name": figure.title})
    chart.set_x_axis({"name": figure.x_label, **({"log_base": 10} if figure.x_log else {})})
    chart.set_y_axis({"name": figure.y_label, "major_gridlines": {"visible": True},
                      **({"log_base": 10} if figure.y_log else {})})
    if figure.has_y2():
        chart.set_y2_axis({"name": figure.y2_label, **({"log_base": 10} if figure.y2_log else {})})
    chart.set_size({"width": 760, "height": 420})
    sheet.insert_chart(1, 2 * len(figure.series) + 1, chart)


def write_workbook(report: Report, path: Path) -> None:
    """The workbook of a report (a run's results.xlsx, a comparison's report.xlsx): made in memory, then replaced
    atomically (a full disk is one clear error, and no half-written zip is left to complain when it is collected)."""
    import io

    import xlsxwriter

    from ptsbench.atomic import atomic_write_bytes

    data = io.BytesIO()
    _write(xlsxwriter.Workbook(data, {"nan_inf_to_errors": False, "in_memory": True}), report)
    atomic_write_bytes(path, data.getvalue())


def _write(workbook: Any, report: Report) -> None:
    workbook.set_properties({"title": report.title, "comments": report.provenance, "author": "ptsbench"})
    bold = workbook.add_format({"bold": True})
    formats = {kind: workbook.add_format({"num_format": excel}) for kind, (_python, excel) in NUMBER_FORMATS.items()}
    used = {ABOUT}
    planned: list[tuple[str, str, Table | Figure]] = []
    for section in report.sections:
        for table in section.tables():
            planned.append((sheet_name(table.key, used), section.title, table))
        for figure in section.figures():
            if figure.data_sheet and figure.series:
                planned.append((sheet_name(f"data {figure.key}", used), section.title, figure))
    _write_about(workbook, report, [(name, section, item.title) for name, section, item in planned])
    for name, _section, item in planned:
        if isinstance(item, Table):
            _write_table(workbook, name, item, formats, bold)
        else:
            _write_figure_data(workbook, name, item, bold)
    workbook.close()
