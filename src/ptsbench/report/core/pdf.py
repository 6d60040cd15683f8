"""The printable report: A4 landscape pages drawn with matplotlib's PdfPages (offline, no LaTeX, no browser).

The first page opens with the answer: the title, the run's description and facts, then the first section (the
headline numbers). Every section starts a page; its facts are shown once, at its start; blocks flow down the pages,
figures two side by side, and every page ends with the provenance and the page number. Tables use the same number
formatting as the HTML report, at no less than 9 pt; text is embedded so it can be searched and copied.
"""

import functools
import logging
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ptsbench.report.core import pdf_text
from ptsbench.report.core.draw_mpl import draw, import_matplotlib, legend_fits
from ptsbench.report.core.figure import Figure
from ptsbench.report.core.layout import atomic_file
from ptsbench.report.core.model import Block, Report, Section, Table, Text, formatted_rows, split_groups
from ptsbench.report.core.table_layout import arranged, preferred_widths, split_to_fit, wrap_name

PAGE_W_IN, PAGE_H_IN = 11.69, 8.27  # A4 landscape
MARGIN_IN = 0.45
TEXT_WIDTH_PT = (PAGE_W_IN - 2 * MARGIN_IN - 0.1) * 72  # texts start 0.05 in inside the margin: as far from the other
TOP_BAND_IN = 0.62  # report title line and section title
FOOTER_IN = 0.35
BODY_PT = 9.0  # body text and tables: never smaller
TITLE_PT = 18.0
SECTION_PT = 14.0
SECTION_LINE_IN = 0.24  # a section title's line (the first is in TOP_BAND_IN)
WARNING_PAD_PT = 0.35 * BODY_PT  # a warning's box around its text
SMALL_PT = 8.0  # page header and footer, figure captions
FACT_LINE_IN = 0.17
TEXT_LINE_IN = 0.19
CODE_LINE_IN = 0.16
ROW_IN = 0.2
TABLE_TITLE_IN = 0.27
FIGURE_IN = 2.95  # figures are drawn two side by side, two rows to a page
MIN_FIGURE_IN = 2.4  # ... and down to this height to end a page that has room for no more
FIGURE_3D_IN = 4.4  # 3D figures take the page's width: at half of it their tick labels run into each other
FIGURE_GAP_IN = 0.2
GAP_IN = 0.12


@dataclass
class Placed:
    block: Block
    top_in: float  # from the top of the page
    height_in: float
    rows: range = range(0)  # table rows on this page
    continued: bool = False
    left_in: float = MARGIN_IN
    width_in: float = PAGE_W_IN - 2 * MARGIN_IN
    note: Text | None = None  # a half-width table's short note (its source), drawn under it


@dataclass
class Page:
    section: Section  # the section a page without starts continues
    placed: list[Placed] = field(default_factory=list)
    starts: list[tuple[Section, float]] = field(default_factory=list)  # sections beginning here: title, facts at
    #                                                                     this distance below the top margin
    title_page: bool = False  # the report's first page: title, description and facts above the first section

    def empty(self) -> bool:
        return not self.placed


FACT_COLUMNS = 2
FACT_GAP_PT = 12.0  # between the facts' columns


def _fact_lines(facts: Sequence[tuple[str, str]]) -> list[list[str]]:
    """Facts wrapped, in FACT_COLUMNS columns of whole facts."""
    indent = "    "
    width_pt = (PAGE_W_IN - 2 * MARGIN_IN) / FACT_COLUMNS * 72 - FACT_GAP_PT - pdf_text.width_pt(indent, BODY_PT)
    wrapped = [[f"{indent if number else ''}{line}" for number, line in
                enumerate(pdf_text.wrap_words(f"{label}: {value}", width_pt, BODY_PT))] for label, value in facts]
    total = sum(len(lines) for lines in wrapped)
    columns: list[list[str]] = [[] for _ in range(FACT_COLUMNS)]
    column = 0
    for lines in wrapped:
        if column < FACT_COLUMNS - 1 and len(columns[column]) + len(lines) / 2 > total / FACT_COLUMNS:
            column += 1
        columns[column].extend(lines)
    return columns


def _facts_height(facts: Sequence[tuple[str, str]]) -> float:
    if not facts:
        return 0.0
    return max(len(lines) for lines in _fact_lines(facts)) * FACT_LINE_IN + 0.16


def _title_lines(report: Report) -> list[str]:
    return pdf_text.wrap_words(report.title, TEXT_WIDTH_PT, TITLE_PT, bold=True)


def _notes(report: Report) -> list[str]:
    notes = [f"IN PROGRESS: {report.in_progress}"] if report.in_progress else []
    return [line for note in [*notes, *report.warnings]
            for line in pdf_text.wrap_words(note, TEXT_WIDTH_PT, BODY_PT + 1, bold=True)]


def _title_height(report: Report) -> float:
    """The report's own band on the first page: title, provenance, banners, facts."""
    return (len(_title_lines(report)) * 0.34 + 0.3 + len(_notes(report)) * TEXT_LINE_IN + 0.1
            + _facts_height(first_page_facts(report)) + 0.1)


def _text_lines(block: Text) -> list[str]:
    """A text block's lines, wrapped to the page's width in the font it is drawn in (a warning's box inside it)."""
    width_pt = TEXT_WIDTH_PT - (2 * WARNING_PAD_PT if block.kind == "warning" else 0.0)
    return pdf_text.wrap_words(block.text, width_pt, BODY_PT, bold=block.kind == "warning", mono=block.kind == "code")


def _height(block: Block) -> float:
    if isinstance(block, Text):
        line = CODE_LINE_IN if block.kind == "code" else TEXT_LINE_IN
        return len(_text_lines(block)) * line + GAP_IN + (0.12 if block.kind == "warning" else 0.0)
    if isinstance(block, Table):
        return TABLE_TITLE_IN + (len(block.rows) + 1) * ROW_IN + GAP_IN
    assert isinstance(block, Figure)
    return (FIGURE_3D_IN if full_width(block) else FIGURE_IN) + GAP_IN


def full_width(figure: Figure) -> bool:
    """3D figures are drawn across the page, and so are those whose legend would not show every name whole in half
    its width (many series of long names); the others two side by side."""
    half_in = (PAGE_W_IN - 2 * MARGIN_IN - FIGURE_GAP_IN) / 2
    return figure.kind in ("bars3d", "surface") or not legend_fits(figure, half_in, FIGURE_IN, figure.caption)


CELL_GAP = 8 * pdf_text.CENTI  # between columns: 8 points (widths are in hundredths of a point, as measured)


def _in(width: int) -> float:
    """A measured width (hundredths of a point) in inches."""
    return width / pdf_text.CENTI / 72


@dataclass(frozen=True)
class DrawnTable:
    """A table as drawn: each cell's lines (names wrapped at separators, numbers never), the column widths in
    hundredths of a point, measured in the page's font (pdf_text.py); each column followed by CELL_GAP."""

    table: Table
    widths: list[int]
    lines: list[list[list[str]]]  # header first
    whole: bool = True  # every word whole (False: a column too wide for the width wrapped inside its words)

    def heights(self) -> list[float]:
        return [max(len(cell) for cell in row) * ROW_IN for row in self.lines]

    def width_in(self) -> float:
        """The columns' width (the title wraps to it)."""
        return _in(sum(self.widths) + CELL_GAP * (len(self.widths) - 1))

    def above(self, width_in: float) -> tuple[list[str], list[str]]:
        """The title's lines and the facts said once (table_layout's rule), wrapped to `width_in`."""
        return (pdf_text.wrap_words(self.table.title, width_in * 72, BODY_PT + 1, bold=True),
                [line for name, value in self.table.facts
                 for line in pdf_text.wrap_words(f"{name}: {value}", width_in * 72, BODY_PT)])

    def above_in(self, width_in: float) -> float:
        titles, facts = self.above(width_in)
        return TABLE_TITLE_IN + (len(titles) - 1 + len(facts)) * ROW_IN


TEXT_W_IN = PAGE_W_IN - 2 * MARGIN_IN  # the page's text width, which a table may take whole


def _capacity(width_in: float) -> int:
    """Room for a table's columns and the gaps between them, `width_in` wide."""
    return int(width_in * 72 * pdf_text.CENTI)


def _drawn_table(table: Table, width_in: float = TEXT_W_IN) -> DrawnTable:
    """The (arranged, split to fit) table as drawn `width_in` wide at most, measured in the page's font: names wrap
    at separators; a column that does not fit even alone beside the row names wraps inside its words, as the last
    resort before cutting it."""
    return _drawn_in(table, width_in, pdf_text.EMBEDDED.get())


@functools.lru_cache(maxsize=32)
def _drawn_in(table: Table, width_in: float, embedded: bool) -> DrawnTable:
    """_drawn_table, remembered: a long table is laid out once, not again for each of its pages."""
    del embedded  # in the key only: the measure reads it
    header = [column.name for column in table.columns]
    cells = formatted_rows(table)
    numeric = [column.kind != "text" for column in table.columns]
    measure = pdf_text.measure(BODY_PT, bold=True)  # the header's bold is the wider: cells fit it too
    widths = preferred_widths(cells, header, numeric, _capacity(width_in), CELL_GAP, measure, len(table.keys))
    whole = widths is not None
    if widths is None:
        share = (_capacity(width_in) - CELL_GAP * len(header)) // max(len(header), 1)
        lines = [[_hard_wrap(name, share, measure) for name in header]]
        lines += [[_hard_wrap(text, share, measure) for text in row] for row in cells]
    else:
        lines = [[wrap_name(name, widths[i], measure) for i, name in enumerate(header)]]
        lines += [[[text] if numeric[i] else wrap_name(text, widths[i], measure) for i, text in enumerate(row)]
                  for row in cells]
    widths = [max(measure(line) for row in lines for line in row[i]) for i in range(len(header))]
    return DrawnTable(table, widths, lines, whole)


def _hard_wrap(text: str, width: int, measure: pdf_text.Measure) -> list[str]:
    """`text` at separators where it can, else cut between characters: no wider than `width`."""
    lines = []
    for line in wrap_name(text, width, measure):
        while measure(line) > width and len(line) > 1:
            cut = max(1, next((n for n in range(len(line), 0, -1) if measure(line[:n]) <= width), 1))
            lines.append(line[:cut])
            line = line[cut:]
        lines.append(line)
    return lines


def laid_out(table: Table) -> list[Table]:
    """A table as the page shows it (table_layout's rule): the parts the page's width needs, each naming its rows
    again, the first with the facts said once under its title."""
    shown, facts = arranged(table)
    parts = split_to_fit(shown, _capacity(TEXT_W_IN), CELL_GAP, pdf_text.measure(BODY_PT, bold=True)) \
        if shown.rows else [shown]
    return [replace(parts[0], facts=facts), *parts[1:]]


SECTION_ROOM = 0.45  # a section starts on the page before when at least this share of the page is left


def common_facts(sections: Sequence[Section]) -> tuple[tuple[str, str], ...]:
    """The facts every section with facts shares (the device, the platform, the specification): shown once, on the
    first page, not repeated at every test."""
    with_facts = [section for section in sections if section.facts]
    if len(with_facts) < 2:
        return ()
    shared = set(with_facts[0].facts).intersection(*(set(section.facts) for section in with_facts[1:]))
    return tuple(fact for fact in with_facts[0].facts if fact in shared)


def first_page_facts(report: Report) -> tuple[tuple[str, str], ...]:
    """The report's facts, then the facts all its tests share (each label once)."""
    labels = {label for label, _ in report.facts}
    return (*report.facts, *(fact for fact in common_facts(report.sections) if fact[0] not in labels))


def shown_facts(sections: Sequence[Section]) -> list[Section]:
    """The sections with the facts they show: their own, without those on the first page (common_facts)."""
    common = set(common_facts(sections))
    if not common:
        return list(sections)
    return [replace(section, facts=tuple(fact for fact in section.facts if fact not in common)) for section in sections]


def layout(report: Report) -> list[Page]:
    """Every page: the first holds the report's title band and the first section; a later section starts on the
    page before when most of that page is free, else on a new page."""
    pages: list[Page] = []
    bottom_in = PAGE_H_IN - MARGIN_IN - FOOTER_IN
    for index, section in enumerate(shown_facts(report.sections)):
        if index == 0:
            pages += _section_pages(section, None, _title_height(report))
            continue
        last = pages[-1]
        used_in = max((placed.top_in + placed.height_in for placed in last.placed), default=bottom_in)
        first_in = min(_height(section.blocks[0]), FIGURE_IN) if section.blocks else 0.0
        if bottom_in - used_in >= max(SECTION_ROOM * (bottom_in - MARGIN_IN),
                                      TOP_BAND_IN + _title_extra_in(section.title) + _facts_height(section.facts)
                                      + first_in + 0.1):
            pages[-1:] = _section_pages(section, last, used_in + 0.1 - MARGIN_IN)
        else:
            pages += _section_pages(section, None, 0.0)
    return pages


def _half_height(block: Block, half_in: float, page_in: float) -> float | None:
    """The height of a block drawn in half the page's width (a figure; a table that fits it whole), else None."""
    if isinstance(block, Figure):
        return None if full_width(block) else FIGURE_IN
    if isinstance(block, Table) and block.rows:
        drawn = _drawn_table(block, half_in)
        height = drawn.above_in(half_in) + sum(drawn.heights())
        if drawn.whole and drawn.width_in() <= half_in and height <= page_in / 2:
            return height
    return None


def _note_lines(block: Text, width_in: float) -> list[str]:
    return pdf_text.wrap_words(block.text, width_in * 72, BODY_PT)


def _short_note(block: Block | None, width_in: float) -> bool:
    """A plain text of at most two lines at `width_in`: a table's source note, kept under it."""
    return isinstance(block, Text) and block.kind == "p" and len(_note_lines(block, width_in)) <= 2


def _section_pages(section: Section, before: Page | None, above_in: float) -> list[Page]:
    """A section's pages, the first `before` (a page the section starts on below what it holds) or a new page, with
    `above_in` taken at its top (the report's title band on the first page): blocks flow, figures pair up side by
    side, long tables are split."""
    bottom_in = PAGE_H_IN - MARGIN_IN - FOOTER_IN
    content_top_in = MARGIN_IN + TOP_BAND_IN
    page = before or Page(section, title_page=before is None and above_in > 0)
    page.starts.append((section, above_in))
    pages = [page]
    top_in = content_top_in + above_in + _title_extra_in(section.title) + _facts_height(section.facts)
    row: tuple[float, float] | None = None  # (top, height) of a row whose right half is still free
    half_in = (PAGE_W_IN - 2 * MARGIN_IN - FIGURE_GAP_IN) / 2

    def new_page() -> None:
        nonlocal page, top_in
        page = Page(section)
        pages.append(page)
        top_in = content_top_in + _title_extra_in(_continued(section))

    blocks = [piece for whole in section.blocks
              for part in (split_groups(whole) if isinstance(whole, Table) else [whole])
              for piece in (laid_out(part) if isinstance(part, Table) else [part])]
    skip = False
    for position, block in enumerate(blocks):
        if skip:  # a note drawn with its table
            skip = False
            continue
        half = _half_height(block, half_in, bottom_in - content_top_in)
        if half is not None:  # a figure, or a table narrow enough: two side by side (a chart and its table)
            after = blocks[position + 1] if position + 1 < len(blocks) else None
            note = after if isinstance(block, Table) and isinstance(after, Text) and _short_note(after, half_in) \
                else None
            if note is not None:
                half += len(_note_lines(note, half_in)) * TEXT_LINE_IN
                skip = True
            rows = range(len(block.rows)) if isinstance(block, Table) else range(0)
            if row is not None and isinstance(block, Figure) and row[0] + half > bottom_in:
                half = max(bottom_in - row[0], MIN_FIGURE_IN)  # as small as the figure beside it may be
            if row is not None and row[0] + half > bottom_in:  # too tall beside the block before it
                row = None
            if row is not None:
                page.placed.append(Placed(block, row[0], half, rows, left_in=MARGIN_IN + half_in + FIGURE_GAP_IN,
                                          width_in=half_in, note=note))
                top_in = row[0] + max(row[1], half) + GAP_IN
                row = None
                continue
            if isinstance(block, Figure) and bottom_in - top_in >= MIN_FIGURE_IN:
                half = min(half, bottom_in - top_in)  # a little smaller rather than a page left mostly empty
            if top_in + half > bottom_in and not page.empty():
                new_page()
            page.placed.append(Placed(block, top_in, half, rows, width_in=half_in, note=note))
            row = (top_in, half)
            top_in += half + GAP_IN
            continue
        row = None
        if isinstance(block, Table) and block.rows:
            drawn = _drawn_table(block)
            heights = drawn.heights()
            above_in = drawn.above_in(PAGE_W_IN - 2 * MARGIN_IN)
            start = 0
            while start < len(block.rows):
                room = bottom_in - top_in - above_in - GAP_IN - heights[0]
                end = start
                while end < len(block.rows) and room >= heights[end + 1]:
                    room -= heights[end + 1]
                    end += 1
                if end - start < min(3, len(block.rows) - start) and not page.empty():
                    new_page()
                    continue
                end = max(end, start + 1)
                height = above_in + heights[0] + sum(heights[start + 1:end + 1]) + GAP_IN
                page.placed.append(Placed(block, top_in, height, range(start, end), start > 0))
                top_in += height
                start = end
            continue
        height = _height(block)
        if top_in + height > bottom_in and not page.empty():
            new_page()
        page.placed.append(Placed(block, top_in, height))
        top_in += height
    return pages


def _y(top_in: float) -> float:
    """Figure fraction of a distance from the top of the page."""
    return 1.0 - top_in / PAGE_H_IN


def _x(left_in: float) -> float:
    return left_in / PAGE_W_IN


def _page_frame(canvas: Any, report: Report, page: Page, number: int) -> None:
    """Title line, progress note, footer with provenance and page number, the section's title and first facts."""
    if not page.title_page:
        canvas.text(_x(MARGIN_IN), _y(MARGIN_IN), textwrap.shorten(report.title, 120), fontsize=SMALL_PT,
                    color="#555555", va="top")
    if report.in_progress:
        canvas.text(_x(PAGE_W_IN - MARGIN_IN), _y(MARGIN_IN), f"IN PROGRESS: {report.in_progress}",
                    fontsize=SMALL_PT, color="#0b3d70", va="top", ha="right", weight="bold")
    canvas.text(_x(PAGE_W_IN - MARGIN_IN), _y(PAGE_H_IN - MARGIN_IN), f"page {number}", fontsize=SMALL_PT,
                color="#555555", ha="right", va="bottom")
    canvas.text(_x(MARGIN_IN), _y(PAGE_H_IN - MARGIN_IN), textwrap.shorten(report.provenance, 165),
                fontsize=SMALL_PT, color="#555555", va="bottom")
    if page.title_page:
        _title_band(canvas, report)
    if not page.starts:
        _draw_section_title(canvas, _continued(page.section), MARGIN_IN)
    for section, above_in in page.starts:
        _draw_section_title(canvas, section.title, MARGIN_IN + above_in)
        _draw_facts(canvas, section.facts, MARGIN_IN + above_in + TOP_BAND_IN + _title_extra_in(section.title))


def _section_title_lines(title: str) -> list[str]:
    """A section's title wrapped to the page's width (a case named after a long device path takes two lines)."""
    return pdf_text.wrap_words(title, TEXT_WIDTH_PT, SECTION_PT, bold=True)


def _title_extra_in(title: str) -> float:
    """The height a section's title takes beyond the one line TOP_BAND_IN holds."""
    return (len(_section_title_lines(title)) - 1) * SECTION_LINE_IN


def _continued(section: Section) -> str:
    return f"{section.title} (continued)"


def _draw_section_title(canvas: Any, title: str, top_in: float) -> None:
    canvas.text(_x(MARGIN_IN), _y(top_in + 0.2), "\n".join(_section_title_lines(title)), fontsize=SECTION_PT,
                weight="bold", va="top", linespacing=SECTION_LINE_IN * 72 / SECTION_PT)


def _draw_facts(canvas: Any, facts: Sequence[tuple[str, str]], top_in: float) -> None:
    column_in = (PAGE_W_IN - 2 * MARGIN_IN) / FACT_COLUMNS
    for column, lines in enumerate(_fact_lines(facts)):
        if lines:
            canvas.text(_x(MARGIN_IN + column * column_in), _y(top_in), "\n".join(lines), fontsize=BODY_PT,
                        va="top", linespacing=1.33)


def _title_band(canvas: Any, report: Report) -> float:
    """The first page's top: title, provenance, banners and the report's facts; returns where the section starts."""
    top_in = MARGIN_IN
    for line in _title_lines(report):
        canvas.text(_x(MARGIN_IN), _y(top_in), line, fontsize=TITLE_PT, weight="bold", va="top")
        top_in += 0.34
    canvas.text(_x(MARGIN_IN), _y(top_in), textwrap.shorten(report.provenance, 150), fontsize=BODY_PT,
                color="#555555", va="top")
    top_in += 0.3
    for line in _notes(report):
        canvas.text(_x(MARGIN_IN), _y(top_in), line, fontsize=BODY_PT + 1, weight="bold", color="#8a1c00",
                    va="top")
        top_in += TEXT_LINE_IN
    top_in += 0.1
    facts = first_page_facts(report)
    _draw_facts(canvas, facts, top_in)
    return top_in + _facts_height(facts) + 0.1


def _draw_text(canvas: Any, placed: Placed) -> None:
    assert isinstance(placed.block, Text)
    block = placed.block
    style: dict[str, Any] = {"fontsize": BODY_PT, "linespacing": 1.4}
    if block.kind == "code":
        style = {"fontsize": BODY_PT, "family": "monospace", "linespacing": 1.3}
    elif block.kind == "warning":
        style = {"fontsize": BODY_PT, "weight": "bold", "color": "#8a1c00", "linespacing": 1.4,
                 "bbox": {"facecolor": "#fff1eb", "edgecolor": "#8a1c00",
                          "boxstyle": f"square,pad={WARNING_PAD_PT / BODY_PT}"}}
    canvas.text(_x(MARGIN_IN + 0.05), _y(placed.top_in + 0.04), "\n".join(_text_lines(block)), va="top", **style)


def _draw_table(canvas: Any, placed: Placed) -> None:
    from matplotlib.lines import Line2D

    assert isinstance(placed.block, Table)
    drawn = _drawn_table(placed.block, placed.width_in)
    titles, facts = drawn.above(placed.width_in)
    for number, line in enumerate(titles):
        text = f"{line} (continued)" if placed.continued and number == len(titles) - 1 else line
        canvas.text(_x(placed.left_in), _y(placed.top_in + number * ROW_IN), text, fontsize=BODY_PT + 1,
                    weight="bold", va="top")
    top_in = placed.top_in + TABLE_TITLE_IN + (len(titles) - 1) * ROW_IN
    for line in facts:
        canvas.text(_x(placed.left_in), _y(top_in), line, fontsize=BODY_PT, color="#555555", va="top")
        top_in += ROW_IN
    lefts = [placed.left_in]
    for width in drawn.widths:
        lefts.append(lefts[-1] + _in(width + CELL_GAP))
    numeric = [column.kind != "text" for column in drawn.table.columns]
    heights = drawn.heights()
    for row_number in [0, *(index + 1 for index in placed.rows)]:
        for column, lines in enumerate(drawn.lines[row_number]):
            x_in = lefts[column + 1] - _in(CELL_GAP) if numeric[column] else lefts[column]
            canvas.text(_x(x_in), _y(top_in), "\n".join(lines), fontsize=BODY_PT, va="top", linespacing=1.25,
                        ha="right" if numeric[column] else "left", weight="bold" if row_number == 0 else "normal")
        top_in += heights[row_number]
        line_y = _y(top_in - 0.03)
        canvas.add_artist(Line2D([_x(placed.left_in), _x(lefts[-1] - _in(CELL_GAP))], [line_y, line_y],
                                 linewidth=0.3 if row_number else 0.7, color="#999999" if row_number else "#333333"))


def _draw_figure(canvas: Any, placed: Placed) -> None:
    assert isinstance(placed.block, Figure)
    region = (_x(placed.left_in), _y(placed.top_in + placed.height_in), placed.width_in / PAGE_W_IN,
              placed.height_in / PAGE_H_IN)
    draw(placed.block, canvas, region, placed.block.caption)  # the provenance is in every page's footer


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
                if block.grid is not None:
                    yield from (*block.grid.x_labels, *block.grid.y_labels)


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
    """report.pdf: every page of the layout; replaced atomically."""
    import_matplotlib()  # the cheaper import, when no figure file was drawn before
    import matplotlib
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure as MplFigure

    fonts = _fonts(report)
    embedded = pdf_text.EMBEDDED.set("pdf.fonttype" in fonts)  # the tables are measured in the fonts drawn
    pages = layout(report)
    metadata = {"Title": report.title, "Author": "ptsbench", "Subject": report.provenance, "Creator": "ptsbench"}
    font_log = logging.getLogger("matplotlib.font_manager")
    level = font_log.level
    font_log.setLevel(logging.ERROR)  # "failed to find font weight normal for Helvetica": the core fonts are meant
    try:
        with atomic_file(path) as temporary, matplotlib.rc_context(fonts), \
                PdfPages(temporary, metadata=metadata) as document:
            for number, page in enumerate(pages, start=1):
                canvas = MplFigure(figsize=(PAGE_W_IN, PAGE_H_IN))
                _page_frame(canvas, report, page, number)
                for placed in page.placed:
                    if isinstance(placed.block, Text):
                        _draw_text(canvas, placed)
                    elif isinstance(placed.block, Table):
                        _draw_table(canvas, placed)
                        if placed.note is not None:
                            canvas.text(_x(placed.left_in), _y(placed.top_in + placed.height_in), "\n".join(
                                _note_lines(placed.note, placed.width_in)), fontsize=BODY_PT, va="bottom",
                                linespacing=1.4)
                    else:
                        _draw_figure(canvas, placed)
                document.savefig(canvas)
    finally:
        font_log.setLevel(level)
        pdf_text.EMBEDDED.reset(embedded)
        _drawn_in.cache_clear()  # no report's tables kept alive after it is written
