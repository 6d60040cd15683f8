"""The files of a report folder, named once (build.py writes them and the HTML page links to its siblings), and
how each is written: under a temporary name, then renamed over the old one."""

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

HTML_NAME, PDF_NAME, XLSX_NAME, FIGURES_DIR = "index.html", "report.pdf", "report.xlsx", "figures"
IMAGE_FORMATS = ("png", "svg")  # a figure's image files, figures/KEY.FORMAT, written on request (--images)
RESULTS_XLSX = "results.xlsx"  # a run's one workbook, in the run directory (a comparison's is its XLSX_NAME)


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """A temporary path next to `path`, renamed over it when the block succeeds and removed when it fails: readers
    see the old or the new file, never part of one, and two writers never share a temporary file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
