"""The printable report: A4 landscape pages drawn with matplotlib's PdfPages (offline, no LaTeX, no browser).

Blocks flow down the pages of their section; every page of a section repeats its facts (for a PTS test: the header
facts the specification asks for on every page) and ends with the provenance and the page number. Tables use the
same number formatting as the HTML report; text is embedded as TrueType so it can be searched and copied.
"""

import logging
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptsbench.report.figures import Figure, atomic_file, caption_text, draw
from ptsbench.report.model import Block, Report, Section, Table, Text, format_value

PAGE_W_IN, PAGE_H_IN = 11.69, 8.27  # A4 landscape
MARGIN_IN = 0.45
TOP_BAND_IN = 0.62  # report title line and section title
FACT_LINE_IN = 0.14
FACT_COLUMNS = 3
FOOTER_IN = 0.35
TEXT_LINE_IN = 0.18
CODE_LINE_IN = 0.14
ROW_IN = 0.175
TABLE_TITLE_IN = 0.25
FIGURE_IN = 4.9
GAP_IN = 0.12
TABLE_FONT_PT = 7.0
TABLE_MAX_TEXT = 44  # a text cell is shortened in the middle to no fewer characters than this, and only when the
#                      table would not fit the page at TABLE_FONT_PT otherwise (numbers are never shortened)


@dataclass
class Placed:
    block: Block
    top_in: float  # from the top of the page
    height_in: float
    rows: range = range(0)  # table rows on this page
    continued: bool = False


@dataclass
class Page:
    section: Section | None
    placed: list[Placed] = field(default_factory=list)
    first: bool = False  # the section's first page shows its facts in full

    def empty(self) -> bool:
        return not self.placed


FULL_FACT_COLUMNS = 2
FULL_FACT_CHARS = 120


def _full_fact_lines(section: Section) -> list[list[str]]:
    """The section's facts in full (first page), wrapped, in FULL_FACT_COLUMNS columns of whole facts."""
    wrapped = [textwrap.wrap(f"{label}: {value}", FULL_FACT_CHARS, subsequent_indent="    ") or [label]
               for label, value in section.facts]
    total = sum(len(lines) for lines in wrapped)
    columns: list[list[str]] = [[] for _ in range(FULL_FACT_COLUMNS)]
    column = 0
    for lines in wrapped:
        if column < FULL_FACT_COLUMNS - 1 and len(columns[column]) + len(lines) / 2 > total / FULL_FACT_COLUMNS:
            column += 1
        columns[column].extend(lines)
    return columns


def _facts_height(section: Section, first: bool) -> float:
    """Height of the facts band: in full on a section's first page, one shortened line per fact after that."""
    if not section.facts:
        return 0.0
    if first:
        return max(len(lines) for lines in _full_fact_lines(section)) * FACT_LINE_IN + 0.14
    return -(-len(section.facts) // FACT_COLUMNS) * FACT_LINE_IN + 0.12


def _text_lines(block: Text) -> list[str]:
    width = {"code": 180, "warning": 125}.get(block.kind, 145)
    return textwrap.wrap(block.text, width, break_long_words=True, replace_whitespace=False) or [""]


def _height(block: Block) -> float:
    if isinstance(block, Text):
        line = CODE_LINE_IN if block.kind == "code" else TEXT_LINE_IN
        return len(_text_lines(block)) * line + GAP_IN + (0.12 if block.kind == "warning" else 0.0)
    if isinstance(block, Table):
        return TABLE_TITLE_IN + (len(block.rows) + 1) * ROW_IN + GAP_IN
    return FIGURE_IN + GAP_IN


def layout(report: Report) -> list[Page]:
    """Pages after the title page: each section starts a page; blocks flow, long tables are split."""
    pages: list[Page] = []
    for section in report.sections:
        page = Page(section, first=True)
        pages.append(page)
        top_in = MARGIN_IN + TOP_BAND_IN + _facts_height(section, first=True)
        bottom_in = PAGE_H_IN - MARGIN_IN - FOOTER_IN
        content_top_in = MARGIN_IN + TOP_BAND_IN + _facts_height(section, first=False)
        for block in section.blocks:
            if isinstance(block, Table) and block.rows:
                start = 0
                while start < len(block.rows):
                    room_rows = int((bottom_in - top_in - TABLE_TITLE_IN - GAP_IN) / ROW_IN) - 1
                    if room_rows < min(3, len(block.rows) - start) and not page.empty():
                        page = Page(section)
                        pages.append(page)
                        top_in = content_top_in
                        continue
                    end = min(len(block.rows), start + max(room_rows, 1))
                    height = TABLE_TITLE_IN + (end - start + 1) * ROW_IN + GAP_IN
                    page.placed.append(Placed(block, top_in, height, range(start, end), start > 0))
                    top_in += height
                    start = end
                continue
            height = _height(block)
            if top_in + height > bottom_in and not page.empty():
                page = Page(section)
                pages.append(page)
                top_in = content_top_in
            page.placed.append(Placed(block, top_in, height))
            top_in += height
    return pages


def _y(top_in: float) -> float:
    """Figure fraction of a distance from the top of the page."""
    return 1.0 - top_in / PAGE_H_IN


def _x(left_in: float) -> float:
    return left_in / PAGE_W_IN


def _page_frame(canvas: Any, report: Report, page: Page | None, number: int) -> None:
    """Title line, progress note, footer with provenance and page number, and the section's facts band."""
    canvas.text(_x(MARGIN_IN), _y(MARGIN_IN), report.title, fontsize=8, color="#555555", va="top")
    if report.in_progress:
        canvas.text(_x(PAGE_W_IN - MARGIN_IN), _y(MARGIN_IN), f"IN PROGRESS: {report.in_progress}", fontsize=8,
                    color="#0b3d70", va="top", ha="right", weight="bold")
    canvas.text(_x(PAGE_W_IN - MARGIN_IN), _y(PAGE_H_IN - MARGIN_IN), f"page {number}", fontsize=7,
                color="#555555", ha="right", va="bottom")
    canvas.text(_x(MARGIN_IN), _y(PAGE_H_IN - MARGIN_IN), textwrap.shorten(report.provenance, 190), fontsize=6.5,
                color="#555555", va="bottom")
    if page is None or page.section is None:
        return
    section = page.section
    title = section.title if page.first else f"{section.title} (continued)"
    canvas.text(_x(MARGIN_IN), _y(MARGIN_IN + 0.2), title, fontsize=14, weight="bold", va="top")
    top_in = MARGIN_IN + TOP_BAND_IN
    if page.first:
        column_in = (PAGE_W_IN - 2 * MARGIN_IN) / FULL_FACT_COLUMNS
        for column, lines in enumerate(_full_fact_lines(section)):
            if lines:
                canvas.text(_x(MARGIN_IN + column * column_in), _y(top_in), "\n".join(lines), fontsize=6.5,
                            va="top", linespacing=1.45)
        return
    column_in = (PAGE_W_IN - 2 * MARGIN_IN) / FACT_COLUMNS
    rows = -(-len(section.facts) // FACT_COLUMNS)
    columns: list[list[str]] = [[] for _ in range(FACT_COLUMNS)]
    for index, (label, value) in enumerate(section.facts):
        columns[index // rows].append(textwrap.shorten(f"{label}: {value}", int(column_in * 17), placeholder="…"))
    for column, lines in enumerate(columns):
        if lines:
            canvas.text(_x(MARGIN_IN + column * column_in), _y(top_in), "\n".join(lines), fontsize=6.5, va="top",
                        linespacing=1.45)


def _draw_text(canvas: Any, placed: Placed) -> None:
    assert isinstance(placed.block, Text)
    block = placed.block
    style: dict[str, Any] = {"fontsize": 9, "linespacing": 1.45}
    if block.kind == "code":
        style = {"fontsize": 7, "family": "monospace", "linespacing": 1.4}
    elif block.kind == "warning":
        style = {"fontsize": 9, "weight": "bold", "color": "#8a1c00", "linespacing": 1.45,
                 "bbox": {"facecolor": "#fff1eb", "edgecolor": "#8a1c00", "boxstyle": "square,pad=0.35"}}
    canvas.text(_x(MARGIN_IN + 0.05), _y(placed.top_in + 0.04), "\n".join(_text_lines(block)), va="top", **style)


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half]}…{text[-half:]}"


def _text_limit(widths: Sequence[int], text_columns: Sequence[bool], capacity: int) -> int:
    """The longest text cell (characters) that lets the table fit `capacity` characters of the page; never below
    TABLE_MAX_TEXT (the font shrinks instead)."""
    limit = max((width for width, text in zip(widths, text_columns, strict=True) if text), default=TABLE_MAX_TEXT)
    while limit > TABLE_MAX_TEXT and sum(
            (min(width, limit) if text else width) + 2 for width, text in zip(widths, text_columns, strict=True)
    ) > capacity:
        limit -= 1
    return max(limit, TABLE_MAX_TEXT)


def _column_widths(header: Sequence[str], cells: Sequence[Sequence[str]]) -> list[int]:
    return [max(len(text) for text in [name, *(row[i] for row in cells if i < len(row))])
            for i, name in enumerate(header)]


def _draw_table(canvas: Any, placed: Placed) -> None:
    from matplotlib.lines import Line2D

    assert isinstance(placed.block, Table)
    table = placed.block
    title = f"{table.title} (continued)" if placed.continued else table.title
    canvas.text(_x(MARGIN_IN), _y(placed.top_in), title, fontsize=9.5, weight="bold", va="top")
    header = [column.name for column in table.columns]
    cells = [[format_value(value, column.kind) for value, column in zip(table.rows[index], table.columns, strict=False)]
             for index in placed.rows]
    available_in = PAGE_W_IN - 2 * MARGIN_IN
    text_columns = [column.kind == "text" for column in table.columns]
    limit = _text_limit(_column_widths(header, cells), text_columns,
                        int(available_in / (TABLE_FONT_PT * 0.55 / 72)))
    cells = [[_shorten(text, limit) if index < len(text_columns) and text_columns[index] else text
              for index, text in enumerate(row)] for row in cells]
    widths = _column_widths(header, cells)
    font_pt = min(TABLE_FONT_PT, available_in / max(sum(w + 2 for w in widths) * 0.55 / 72, 1e-9))
    char_in = font_pt * 0.55 / 72
    lefts = [MARGIN_IN]
    for width in widths:
        lefts.append(lefts[-1] + (width + 2) * char_in)
    top_in = placed.top_in + TABLE_TITLE_IN
    numeric = [column.kind != "text" for column in table.columns]
    for row_index, row in enumerate([header, *cells]):
        y = _y(top_in + row_index * ROW_IN)
        for column, text in enumerate(row):
            right = numeric[column] if column < len(numeric) else False
            x_in = lefts[column + 1] - 2 * char_in if right else lefts[column]
            canvas.text(_x(x_in), y, text, fontsize=font_pt, va="top", ha="right" if right else "left",
                        weight="bold" if row_index == 0 else "normal")
        line_y = _y(top_in + (row_index + 1) * ROW_IN - 0.03)
        canvas.add_artist(Line2D([_x(MARGIN_IN), _x(lefts[-1])], [line_y, line_y], linewidth=0.3 if row_index else 0.7,
                                 color="#999999" if row_index else "#333333"))


def _draw_figure(canvas: Any, placed: Placed, provenance: str) -> None:
    assert isinstance(placed.block, Figure)
    width = PAGE_W_IN - 2 * MARGIN_IN
    region = (_x(MARGIN_IN), _y(placed.top_in + FIGURE_IN), width / PAGE_W_IN, FIGURE_IN / PAGE_H_IN)
    draw(placed.block, canvas, region, caption_text(placed.block, provenance, width_chars=int(width * 19)))


def _title_page(report: Report, contents: Sequence[tuple[str, int]]) -> Any:
    from matplotlib.figure import Figure as MplFigure

    canvas = MplFigure(figsize=(PAGE_W_IN, PAGE_H_IN))
    _page_frame(canvas, report, None, 1)
    top_in = MARGIN_IN + 0.5
    canvas.text(_x(MARGIN_IN), _y(top_in), report.title, fontsize=20, weight="bold", va="top")
    top_in += 0.5
    canvas.text(_x(MARGIN_IN), _y(top_in), textwrap.fill(report.provenance, 160), fontsize=8.5, va="top")
    top_in += 0.4
    notes = [f"IN PROGRESS: {report.in_progress}"] if report.in_progress else []
    for note in [*notes, *report.warnings]:
        canvas.text(_x(MARGIN_IN), _y(top_in), textwrap.shorten(note, 170), fontsize=9.5, weight="bold",
                    color="#8a1c00", va="top")
        top_in += 0.22
    top_in += 0.1
    for label, value in report.facts:
        canvas.text(_x(MARGIN_IN), _y(top_in), label, fontsize=8.5, color="#555555", va="top")
        canvas.text(_x(MARGIN_IN + 1.6), _y(top_in), textwrap.shorten(value, 150), fontsize=8.5, va="top")
        top_in += 0.19
    top_in += 0.25
    canvas.text(_x(MARGIN_IN), _y(top_in), "Contents", fontsize=12, weight="bold", va="top")
    top_in += 0.3
    column_top_in = top_in
    column_left_in = MARGIN_IN
    for title, number in contents:
        if top_in > PAGE_H_IN - MARGIN_IN - FOOTER_IN - 0.2:
            top_in = column_top_in
            column_left_in += 3.6
        canvas.text(_x(column_left_in), _y(top_in), textwrap.shorten(title, 48), fontsize=8.5, va="top")
        canvas.text(_x(column_left_in + 3.3), _y(top_in), str(number), fontsize=8.5, va="top", ha="right")
        top_in += 0.18
    return canvas


def _report_text(report: Report) -> Iterator[str]:
    """Every piece of text the PDF shows."""
    yield from (report.title, report.provenance, report.in_progress or "", *report.warnings)
    for label, value in report.facts:
        yield from (label, value)
    for section in report.sections:
        yield section.title
        for label, value in section.facts:
            yield from (label, value)
        for block in section.blocks:
            if isinstance(block, Text):
                yield block.text
            elif isinstance(block, Table):
                yield block.title
                yield from (column.name for column in block.columns)
                yield from (value for row in block.rows for value in row if isinstance(value, str))
            else:
                yield from (block.title, block.caption, block.x_label, block.y_label, block.z_label)
                yield from (series.name for series in block.series)
                if block.bars3d is not None:
                    yield from (*block.bars3d.x_labels, *block.bars3d.y_labels)


def _fonts(report: Report) -> Any:
    """The PDF's standard fonts (fast, small, searchable) when every text fits their encoding, else embedded
    TrueType fonts (any script)."""
    try:
        for text in _report_text(report):
            text.encode("cp1252")
    except UnicodeEncodeError:
        return {"pdf.fonttype": 42}
    return {"pdf.use14corefonts": True}


def write_pdf(report: Report, path: Path) -> None:
    """report.pdf: a title page with contents, then every section; replaced atomically."""
    import matplotlib
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure as MplFigure

    pages = layout(report)
    contents: list[tuple[str, int]] = []
    for number, page in enumerate(pages, start=2):
        if page.section is not None and (not contents or contents[-1][0] != page.section.title):
            contents.append((page.section.title, number))
    metadata = {"Title": report.title, "Author": "ptsbench", "Subject": report.provenance, "Creator": "ptsbench"}
    font_log = logging.getLogger("matplotlib.font_manager")
    level = font_log.level
    font_log.setLevel(logging.ERROR)  # "failed to find font weight normal for Helvetica": the core fonts are meant
    try:
        with atomic_file(path) as temporary, matplotlib.rc_context(_fonts(report)), \
                PdfPages(temporary, metadata=metadata) as document:
            document.savefig(_title_page(report, contents))
            for number, page in enumerate(pages, start=2):
                canvas = MplFigure(figsize=(PAGE_W_IN, PAGE_H_IN))
                _page_frame(canvas, report, page, number)
                for placed in page.placed:
                    if isinstance(placed.block, Text):
                        _draw_text(canvas, placed)
                    elif isinstance(placed.block, Table):
                        _draw_table(canvas, placed)
                    else:
                        _draw_figure(canvas, placed, report.provenance)
                document.savefig(canvas)
    finally:
        font_log.setLevel(level)
