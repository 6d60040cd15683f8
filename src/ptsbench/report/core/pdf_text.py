"""How wide a text is drawn on the PDF's pages, from the metrics of the font it is drawn in, read with fontTools: the
standard Helvetica (the AFM metrics matplotlib ships and draws the core font by) or, for texts outside its encoding,
the embedded DejaVu Sans (its TrueType advance widths and kerning). pdf.py lays its tables out with these widths, so
a table takes the page's whole width and no cell passes its edge.

Measured as matplotlib draws: a core font's text is written as one string, without kerning; an embedded font's
glyph by glyph, kerned. poppler reads back the same widths (tests/report/test_table_layout.py).
"""

import contextvars
import functools
import itertools
from collections.abc import Callable

Measure = Callable[[str], int]  # table_layout.Measure (not imported: this module stays free of the report model)
EMBEDDED = contextvars.ContextVar("pdf_embedded_fonts", default=False)  # set by write_pdf for the report it draws
CENTI = 100  # widths in hundredths of a point: whole numbers for table_layout's rule


@functools.cache
def _core_widths(bold: bool) -> tuple[dict[int, float], float]:
    """Helvetica's advance widths by code point, in thousandths of the font size, and that of '?' (drawn for a
    character the font lacks)."""
    from pathlib import Path

    import matplotlib
    from fontTools.afmLib import AFM
    from fontTools.agl import AGL2UV

    name = "Helvetica-Bold.afm" if bold else "Helvetica.afm"
    font = AFM(str(Path(matplotlib.get_data_path()) / "fonts" / "pdfcorefonts" / name))
    widths = {AGL2UV[glyph]: float(font[glyph][1]) for glyph in font.chars() if glyph in AGL2UV}
    return widths, float(font["question"][1])


@functools.cache
def _embedded_widths(bold: bool) -> tuple[dict[int, str], dict[str, float], dict[tuple[str, str], float]]:
    """DejaVu Sans (the file matplotlib embeds): its glyph by code point, advance widths and kerning, in font
    sizes."""
    from fontTools.ttLib import TTFont
    from matplotlib import font_manager

    found = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans",
                                                              weight="bold" if bold else "normal"))
    with TTFont(found, lazy=True) as font:
        per_em = float(font["head"].unitsPerEm)
        advances = {glyph: advance / per_em for glyph, (advance, _left) in font["hmtx"].metrics.items()}
        kerning = {pair: value / per_em for table in (font["kern"].kernTables if "kern" in font else ())
                   for pair, value in getattr(table, "kernTable", {}).items()}
        return dict(font.getBestCmap()), advances, kerning


def _line_width(line: str, bold: bool, embedded: bool) -> float:
    """`line`'s advance in font sizes."""
    if not embedded:
        widths, missing = _core_widths(bold)
        return sum(widths.get(ord(char), missing) for char in line) / 1000
    glyphs, advances, kerning = _embedded_widths(bold)
    names = [glyphs.get(ord(char), ".notdef") for char in line]
    return sum(advances[name] for name in names) + sum(kerning.get(pair, 0.0) for pair in itertools.pairwise(names))


def width_pt(text: str, size_pt: float, bold: bool = False, embedded: bool | None = None) -> float:
    """The width of the longest line of `text` at `size_pt`, in points (`embedded`: in DejaVu Sans, else in
    Helvetica; None: as the report being drawn, EMBEDDED)."""
    embedded = EMBEDDED.get() if embedded is None else embedded
    return max((_line_width(line, bold, embedded) * size_pt for line in text.split("\n")), default=0.0)


def widest_measure(size: float) -> Measure:
    """table_layout's Measure of bold texts `size` (px or pt) high in whichever of Helvetica (Arial, Liberation Sans
    and Nimbus Sans share its widths) and DejaVu Sans draws them wider: for a page whose font the browser picks
    (the HTML report's static layout), in hundredths of the unit."""
    return lambda text: max(_centi(text, size, True, False), _centi(text, size, True, True))


def measure(size_pt: float, bold: bool = False) -> Measure:
    """table_layout's Measure of texts at `size_pt`: widths in hundredths of a point."""
    embedded = EMBEDDED.get()
    return lambda text: _centi(text, size_pt, bold, embedded)


@functools.lru_cache(maxsize=1 << 16)
def _centi(text: str, size_pt: float, bold: bool, embedded: bool) -> int:
    """Remembered: splitting a table to fit measures each cell once per part it tries."""
    return int(width_pt(text, size_pt, bold, embedded) * CENTI + 0.999)


MONO_ADVANCE_EM = 1233 / 2048  # every glyph of DejaVu Sans Mono, matplotlib's monospace font
CUT_AFTER = "/_@-"  # where a word too wide for a line is cut, when one falls within it (table_layout's separators)


def wrap_words(text: str, width: float, size_pt: float, bold: bool = False, mono: bool = False) -> list[str]:
    """`text` wrapped at spaces to lines no wider than `width` points, in the body font or (`mono`) the monospace one.
    A word wider than a line (a long path) is cut where the line ends, after a separator (CUT_AFTER) where one falls
    within it, so that no text passes the page's edge."""
    def wide(part: str) -> float:
        return len(part) * MONO_ADVANCE_EM * size_pt if mono else width_pt(part, size_pt, bold)

    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and wide(candidate) > width:
                lines.append(line)
                candidate = word
            while len(candidate) > 1 and wide(candidate) > width:
                head = _head(candidate, width, wide)
                lines.append(head)
                candidate = candidate[len(head):]
            line = candidate
        lines.append(line)
    return lines


def _head(word: str, width: float, wide: Callable[[str], float]) -> str:
    """The longest start of `word` no wider than `width` (at least one character), ended after its last separator
    where it holds one."""
    fits = 1
    while fits < len(word) and wide(word[:fits + 1]) <= width:
        fits += 1
    cut = max((at + 1 for at in range(fits) if word[at] in CUT_AFTER), default=fits)
    return word[:cut]
