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
from pathlib import Path
from typing import Any

from ptsbench.report.core.draw_plotly import clean, plotly_spec
from ptsbench.report.core.layout import FIGURES_DIR, PDF_NAME, XLSX_NAME, atomic_file
from ptsbench.report.core.model import Block, Report, Table, Text, formatted_rows, split_groups
from ptsbench.report.core.table_layout import SEPARATORS, arranged, name_parts

TEMPLATE = "report.html.j2"
LIVE_REFRESH_S = 60


def _script_json(obj: object) -> str:
    """JSON safe inside a <script> element: no <, > or & that the HTML parser could take for markup."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _table_views(table: Table) -> list[dict[str, Any]]:
    """The table as the page shows it (table_layout's rule): its facts above it, and the columns that name its rows
    (`keys`), which every part repeats when the page splits a table too wide for its width (the page's script,
    which knows that width)."""
    shown, facts = arranged(table)
    numeric = [column.kind != "text" for column in shown.columns]
    return [{
        "key": shown.key, "title": shown.title, "constants": facts,
        "key_columns": [index for index in shown.keys if index < len(shown.columns)] or [0],
        "headers": [(column.name, flag) for column, flag in zip(shown.columns, numeric, strict=True)],
        "rows": [list(zip(row, numeric, strict=True)) for row in formatted_rows(shown)],
    }]


def _block_views(block: Block, palette: Sequence[str], provenance: str) -> list[dict[str, Any]]:
    if isinstance(block, Text):
        return [{"type": "text", "kind": block.kind, "text": block.text}]
    if isinstance(block, Table):
        return [{"type": "table", **view} for part in split_groups(block) for view in _table_views(part)]
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
                            for view in _block_views(block, palette, report.provenance)]}
                for section in report.sections]
    return environment.from_string(template_text).render(
        report=report, sections=sections, static=static, plotly_packed=_plotly_packed(), refresh_s=LIVE_REFRESH_S,
        files={"pdf": PDF_NAME, "xlsx": workbook, "figures": FIGURES_DIR},
        images=[suffix.upper() for suffix in images], elsewhere=_elsewhere(static, images),
    )


def _elsewhere(static: bool, images: Sequence[str]) -> str:
    """Where a 3D figure the browser cannot draw (no WebGL) is found instead, as the report's files stand."""
    if not static:
        return "the finished report's PDF will show the same figure."
    if not images:
        return f"the same figure is in {PDF_NAME}."
    return f"the same figure is in {PDF_NAME} and in {FIGURES_DIR}/ as {' and '.join(s.upper() for s in images)}."


def write_html(report: Report, path: Path, static: bool = True, workbook: str = XLSX_NAME,
               images: Sequence[str] = ()) -> None:
    """index.html, replaced atomically."""
    text = render_html(report, static, workbook, images)
    with atomic_file(path) as temporary:
        temporary.write_text(text)
