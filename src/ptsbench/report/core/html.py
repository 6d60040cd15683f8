"""The report as one self-contained HTML file: plotly.js inlined once, every figure interactive, no network access.

The plotly.js inlined is a build of its own (scripts/build-plotly.sh): plotly's core with only the trace types the
charts use (BUNDLED_TRACES), gzip-compressed and base64-encoded, unpacked by the page (the browser's
DecompressionStream) before the first chart is drawn: 0.8 MB in the file instead of plotly's full 4.8 MB bundle.

Each Figure becomes a plotly spec (draw_plotly.py; JSON in a script tag) drawn on page load; tables are plain HTML
tables written with the same number formatting as the PDF. The file is written atomically, so a browser reloading a
live report never reads half of it.
"""

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ptsbench.report.core import pdf_text
from ptsbench.report.core.draw_plotly import clean, plotly_spec
from ptsbench.report.core.layout import FIGURES_DIR, PDF_NAME, XLSX_NAME, atomic_file
from ptsbench.report.core.model import Block, Report, Table, Text, formatted_rows, split_groups
from ptsbench.report.core.table_layout import SEPARATORS, arranged, name_parts, split_to_fit

TEMPLATE = "report.html.j2"
LIVE_REFRESH_S = 60


def _script_json(obj: object) -> str:
    """JSON safe inside a <script> element: no <, > or & that the HTML parser could take for markup."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


TABLE_FONT_PX = 13  # the page's table text (report.html.j2); the at-a-glance tables' 15 px
GLANCE_FONT_PX = 15
CELL_PADDING_PX = 12  # a cell's padding, left and right
PRINTED_WIDTH_PX = 700  # the text width of a printed A4 or Letter page at 12 mm margins (703 and 725 px)


def _table_views(table: Table, font_px: float = TABLE_FONT_PX) -> list[dict[str, Any]]:
    """The table as the page shows it (table_layout's rule): its facts above it, and the columns that name its rows
    (`keys`). Written already split to the width of a printed page (a part per view), measured in the wider of the
    fonts a browser may draw it in, so that a page read without scripts, or printed, cuts no table; the page's
    script joins the parts and splits the table again for the window's width."""
    shown, facts = arranged(table)
    if not shown.keys:
        shown = replace(shown, keys=(0,))  # the first column names the rows of every part
    measure = pdf_text.widest_measure(font_px)
    room = (PRINTED_WIDTH_PX - CELL_PADDING_PX) * pdf_text.CENTI  # the gaps between n columns, and one more
    parts = split_to_fit(shown, room, CELL_PADDING_PX * pdf_text.CENTI, measure) if shown.rows else [shown]
    views = []
    for number, part in enumerate(parts, start=1):
        flags = [column.kind != "text" for column in part.columns]
        views.append({
            "key": shown.key, "title": part.title, "whole_title": shown.title,
            "constants": facts if number == 1 else (),
            "id": f"table-{shown.key}" if len(parts) == 1 else f"table-{shown.key}-part{number}",
            "part_of": f"table-{shown.key}" if len(parts) > 1 else "",
            "key_columns": list(range(len(part.keys))),
            "headers": [(column.name, flag) for column, flag in zip(part.columns, flags, strict=True)],
            "rows": [list(zip(row, flags, strict=True)) for row in formatted_rows(part)],
        })
    return views


def _block_views(block: Block, palette: Sequence[str], provenance: str, font_px: float) -> list[dict[str, Any]]:
    if isinstance(block, Text):
        return [{"type": "text", "kind": block.kind, "text": block.text}]
    if isinstance(block, Table):
        return [{"type": "table", **view} for part in split_groups(block) for view in _table_views(part, font_px)]
    spec = clean(plotly_spec(block, palette))
    return [{"type": "figure", "key": block.key, "title": block.title, "caption": block.caption,
             "provenance": provenance, "spec": _script_json(spec)}]


BUNDLED_TRACES = frozenset({"scatter", "bar", "heatmap", "mesh3d", "surface"})  # what draw_plotly.py draws
PLOTLY_BUNDLE = "plotly-ptsbench.min.js.gz"


def _plotly_packed() -> str:
    """The plotly.js bundle as base64 text of its gzip-compressed bytes (no character HTML would parse)."""
    import base64
    import importlib.resources

    return base64.b64encode((importlib.resources.files("ptsbench") / "data" / PLOTLY_BUNDLE).read_bytes()).decode()


def breakable(text: object) -> object:
    """A cell's text, escaped, that may wrap after each separator (/ _ - @) as well as at spaces, never inside a
    word (table_layout's rule)."""
    import markupsafe

    value = str(text)
    if not any(separator in value for separator in SEPARATORS.strip()):
        return text
    pieces = name_parts(value)  # spaces break by themselves; <wbr> after the other separators
    return markupsafe.Markup("").join(markupsafe.escape(piece) + (markupsafe.Markup("<wbr>") if piece[-1:] in
                                                                   SEPARATORS.strip() else "") for piece in pieces)


def render_html(report: Report, static: bool, workbook: str = XLSX_NAME, images: Sequence[str] = ()) -> str:
    """The whole page as text (`workbook`: the workbook's path relative to the page; `images`: the formats of the
    figures' image files in figures/, linked only when written)."""
    import importlib.resources

    import jinja2

    from ptsbench.report.core import style

    palette = tuple(style.PALETTE)
    template_text = (importlib.resources.files("ptsbench") / "data" / "templates" / TEMPLATE).read_text()
    environment = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True,
                                     undefined=jinja2.StrictUndefined)
    environment.filters["breakable"] = breakable
    sections = [{"key": section.key, "title": section.title, "facts": section.facts,
                 "blocks": [view for block in section.blocks
                            for view in _block_views(block, palette, report.provenance,
                                                     GLANCE_FONT_PX if section.key == "glance" else TABLE_FONT_PX)]}
                for section in report.sections]
    return environment.from_string(template_text).render(
        report=report, sections=sections, static=static, plotly_packed=_plotly_packed(), refresh_s=LIVE_REFRESH_S,
        files={"pdf": PDF_NAME, "xlsx": workbook, "figures": FIGURES_DIR},
        images=[suffix.upper() for suffix in images], elsewhere=_elsewhere(static, images),
        noscript=_elsewhere(static, images, "figure"),
    )


def _elsewhere(static: bool, images: Sequence[str], what: str = "same figure") -> str:
    """Where a figure the browser cannot draw (no WebGL for 3D; scripts off) is found instead, as the report's
    files stand."""
    if not static:
        return f"the finished report's PDF will show the {what}."
    if not images:
        return f"the {what} is in {PDF_NAME}."
    return f"the {what} is in {PDF_NAME} and in {FIGURES_DIR}/ as {' and '.join(s.upper() for s in images)}."


def write_html(report: Report, path: Path, static: bool = True, workbook: str = XLSX_NAME,
               images: Sequence[str] = ()) -> None:
    """index.html, replaced atomically."""
    text = render_html(report, static, workbook, images)
    with atomic_file(path) as temporary:
        temporary.write_text(text)
