"""How wide a text is drawn on the PDF's pages, from the metrics of the font it is drawn in: the standard Helvetica
(its AFM metrics, which matplotlib ships and places text by) or, for texts outside its encoding, the embedded
DejaVu Sans. pdf.py lays its tables out with these widths, so a table takes the page's whole width and no cell
passes its edge.
"""

import contextvars
import functools
from collections.abc import Callable
from typing import Any

Measure = Callable[[str], int]  # table_layout.Measure (not imported: this module stays free of the report model)
EMBEDDED = contextvars.ContextVar("pdf_embedded_fonts", default=False)  # set by write_pdf for the report it draws
CENTI = 100  # widths in hundredths of a point: whole numbers for table_layout's rule


@functools.cache
def _core_font(bold: bool) -> Any:
    from matplotlib import _afm, cbook

    name = "Helvetica-Bold.afm" if bold else "Helvetica.afm"
    with open(cbook._get_data_path("fonts", "pdfcorefonts", name), "rb") as file:
        return _afm.AFM(file)


@functools.cache
def _embedded_font(bold: bool) -> Any:
    from matplotlib import font_manager, ft2font

    found = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans",
                                                              weight="bold" if bold else "normal"))
    return ft2font.FT2Font(found)


def width_pt(text: str, size_pt: float, bold: bool = False, embedded: bool | None = None) -> float:
    """The width of the longest line of `text` at `size_pt`, in points (`embedded`: in DejaVu Sans, else in
    Helvetica; None: as the report being drawn, EMBEDDED)."""
    embedded = EMBEDDED.get() if embedded is None else embedded
    widths = []
    for line in text.split("\n"):
        if embedded:
            font = _embedded_font(bold)
            font.set_size(size_pt, 72)
            font.set_text(line, 0.0)
            widths.append(font.get_width_height()[0] / 64)
        else:
            # as matplotlib's PDF renderer measures (and aligns) a core font's text
            widths.append(_core_font(bold).get_str_bbox_and_descent(line)[2] * size_pt / 1000 if line else 0.0)
    return max(widths, default=0.0)


def measure(size_pt: float, bold: bool = False) -> Measure:
    """table_layout's Measure of texts at `size_pt`: widths in hundredths of a point."""
    embedded = EMBEDDED.get()
    return lambda text: _centi(text, size_pt, bold, embedded)


@functools.lru_cache(maxsize=1 << 16)
def _centi(text: str, size_pt: float, bold: bool, embedded: bool) -> int:
    """Remembered: splitting a table to fit measures each cell once per part it tries."""
    return int(width_pt(text, size_pt, bold, embedded) * CENTI + 0.999)


def wrap_words(text: str, width: float, size_pt: float, bold: bool = False) -> list[str]:
    """`text` wrapped at spaces to lines no wider than `width` points (a longer word keeps a line of its own)."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and width_pt(candidate, size_pt, bold) > width:
                lines.append(line)
                line = word
            else:
                line = candidate
        lines.append(line)
    return lines
