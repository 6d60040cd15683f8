"""The report of a run directory (HTML, PDF, xlsx, figures), made from the store alone; and comparisons of runs.

    build_report(run_dir)                       -> RUN_DIR/report/: HTML, PDF, xlsx (figures' images on request)
    write_report(run_dir, in_progress="...")    -> the call made during runs (HTML and xlsx only, fast) and at their end
    build_compare([run_dir, ...], out_dir)      -> one report putting several runs side by side

A report is first assembled as data (core/model.py) from the store - cases/report.py for case-runner runs,
pts/report.py for PTS runs, compare.py for several runs - then core/html.py, pdf.py, workbook.py and draw_mpl.py draw
that data.
"""

import contextlib
import errno
import os
from collections.abc import Sequence
from pathlib import Path

from ptsbench.errors import PtsbenchError, os_error_in, os_error_text
from ptsbench.report.cases.report import case_run_report
from ptsbench.report.core.draw_mpl import DEFAULT_DPI
from ptsbench.report.core.layout import FIGURES_DIR, HTML_NAME, IMAGE_FORMATS, PDF_NAME, RESULTS_XLSX, XLSX_NAME
from ptsbench.report.core.model import Report
from ptsbench.report.fleet import DEFAULT_K

REPORT_DIR = "report"
IMAGES_LEDGER = ".ptsbench-images.json"  # in a report's folder: the images in its figures/ that ptsbench wrote
COMPARED = "compared.json"  # which runs a comparison's folder compares, with which labels


def build_compare(run_dirs: Sequence[Path], out_dir: Path, labels: Sequence[str] | None = None,
                  static: bool = True, report: Report | None = None, outlier_k: float = DEFAULT_K,
                  images: Sequence[str] = ()) -> Path:
    """One report putting several runs side by side (`report`: load_compare's, when already made), written to
    out_dir, which must be new, empty or an earlier comparison (figures' image files in the `images` formats);
    returns out_dir."""
    from ptsbench.atomic import atomic_write_json
    from ptsbench.outfolder import own_folder
    from ptsbench.report.compare import run_labels
    from ptsbench.store import utc_now

    out_dir = Path(out_dir)
    check_compare_out(out_dir)
    report = report or load_compare(run_dirs, labels, outlier_k)
    with own_folder(out_dir):
        render(report, out_dir, static, images=images)
        atomic_write_json(out_dir / COMPARED, {"runs": [str(path) for path in run_dirs],
                                               "labels": list(labels) if labels else run_labels(run_dirs),
                                               "written_utc": utc_now()})
    return out_dir


def load_compare(run_dirs: Sequence[Path], labels: Sequence[str] | None = None,
                 outlier_k: float = DEFAULT_K) -> Report:
    """Several runs' reports side by side, as data, opening with the fleet table (outliers at `outlier_k` x MAD)."""
    from ptsbench.report.compare import compare_reports, run_labels
    from ptsbench.report.fleet_members import run_member
    from ptsbench.store import RunStore

    run_dirs = [Path(path) for path in run_dirs]
    seen: dict[Path, Path] = {}
    for path in run_dirs:
        if path.resolve() in seen:
            raise PtsbenchError(f"{seen[path.resolve()]} and {path} are the same run",
                                "compare different runs (each run directory once)")
        seen[path.resolve()] = path
    kinds = {RunStore.open(path).kind for path in run_dirs}
    if "pts-fleet" in kinds:  # its own report already compares its devices
        fleet = next(path for path in run_dirs if RunStore.open(path).kind == "pts-fleet")
        raise PtsbenchError(f"{fleet} is a fleet run: its report compares its devices; here, each device's results "
                            "are a run of their own",
                            f"name a device's part, e.g. `ptsbench compare {fleet}/devices/*`")
    if len(kinds) > 1:
        raise PtsbenchError(f"cannot compare runs of different kinds ({', '.join(sorted(kinds))})",
                            "compare PTS runs with PTS runs, and case-runner runs with case-runner runs")
    labels = list(labels) if labels else run_labels(run_dirs)
    members = [run_member(path, label) for path, label in zip(run_dirs, labels, strict=True)]
    return compare_reports([load_report(path) for path in run_dirs], labels, run_dirs, members, outlier_k)


def check_compare_out(out_dir: Path) -> None:
    """A comparison goes into a new or empty folder, or over what ptsbench wrote there before (outfolder.py); never
    into a run directory (its own report and workbook) or over other files."""
    from ptsbench.outfolder import check_own_folder
    from ptsbench.store import MANIFEST

    for folder in (out_dir, *out_dir.resolve().parents):
        if (folder / MANIFEST).is_file():
            raise PtsbenchError(f"--out {out_dir} is inside the run directory {folder}",
                                "choose a folder of its own for the comparison: it would overwrite the run's files")
    check_own_folder(out_dir)


def load_report(run_dir: Path, in_progress: str | None = None) -> Report:
    """The report of one run directory, as data (the PTS report's modules imported only for a PTS run)."""
    from ptsbench.store import RunStore

    store = RunStore.open(run_dir)
    if store.kind == "pts":
        from ptsbench.report.pts.report import pts_report

        return pts_report(store, in_progress)
    if store.kind == "pts-fleet":
        from ptsbench.report.pts.fleet_run import fleet_report

        return fleet_report(store, in_progress)
    if store.kind == "capture":
        from ptsbench.report.workload import workload_report
        from ptsbench.workload.runs import read_characterisation

        found = read_characterisation(run_dir)
        if found is None:
            raise PtsbenchError(f"{run_dir} holds no trace", "capture again: a capture's trace is its result")
        return workload_report(store.manifest, found, in_progress)
    if store.kind == "sweep":
        from ptsbench.report.cases.sweep import sweep_report

        return sweep_report(store, in_progress)
    report = case_run_report(store, in_progress)
    return _with_replay(report, run_dir)


def _with_replay(report: Report, run_dir: Path) -> Report:
    """A replay's run (ptsbench replay) also shows the trace beside what fio did, and its steady-state rounds."""
    import dataclasses

    from ptsbench.store import read_json
    from ptsbench.workload.runs import REPLAY, STEADY, read_characterisation

    if not (run_dir / REPLAY).is_file():
        return report
    from ptsbench.report.workload import replay_sections

    steady = read_json(run_dir / STEADY) if (run_dir / STEADY).is_file() else None
    extra = replay_sections(read_json(run_dir / REPLAY), read_characterisation(run_dir), steady)
    return dataclasses.replace(report, sections=(*report.sections, *extra))


FIGURE_WORKERS_MIN_FIGURES = 8  # below this, starting worker processes costs more than it saves


def _figure_workers(count: int) -> int:
    """Worker processes for the figure files: one core stays with the PDF, the others draw figures."""
    return 0 if count < FIGURE_WORKERS_MIN_FIGURES else max(1, min((os.cpu_count() or 1) - 1, 3))


def write_static(report: Report, out_dir: Path, images: Sequence[str] = (), dpi: int = DEFAULT_DPI) -> None:
    """report.pdf, and with `images` (image formats: png, svg) every figure as figures/KEY.FORMAT, drawn at the same
    time in worker processes (matplotlib is single-threaded and a PTS report has dozens of figures). Workers take
    figures from the front of the list, this process from the back once the PDF is done; a claim file per figure
    keeps each drawn once. Workers are DrawWorker processes (`python -m ptsbench.report.core.draw_mpl`)."""
    import shutil
    import tempfile

    from ptsbench.report.core import pdf
    from ptsbench.report.core.draw_mpl import DrawWorker, write_figure_batch

    if not images:
        pdf.write_pdf(report, out_dir / PDF_NAME)
        return
    figures_dir = out_dir / FIGURES_DIR
    figures_dir.mkdir(exist_ok=True)
    figures = report.figures()
    claims = Path(tempfile.mkdtemp(prefix=f".claims-{os.getpid()}-", dir=figures_dir))
    workers: list[DrawWorker] = []
    try:
        for _ in range(_figure_workers(len(figures))):
            workers.append(worker := DrawWorker())
            worker.send(figures=figures, directory=figures_dir, provenance=report.provenance, claims=claims, dpi=dpi,
                        formats=tuple(images))
        pdf.write_pdf(report, out_dir / PDF_NAME)
        write_figure_batch(figures[::-1], figures_dir, report.provenance, claims, dpi, tuple(images))
        for worker in workers:
            if (failure := worker.finish()) is not None:
                raise PtsbenchError(f"writing the figures failed: {failure}",
                                    f"run `ptsbench report {out_dir.parent}`")
    finally:
        for worker in workers:
            worker.stop()
        shutil.rmtree(claims, ignore_errors=True)


def image_names(report: Report, images: Sequence[str]) -> set[str]:
    """The files a report with `images` writes in figures/: KEY.FORMAT per figure."""
    return {f"{figure.key}.{suffix}" for figure in report.figures() for suffix in images if suffix in IMAGE_FORMATS}


def check_images_folder(report: Report, out_dir: Path, images: Sequence[str]) -> None:
    """Before anything is written: the images go into a figures/ folder of the report's own (not a link to another
    folder, which may be the user's), and replace only images ptsbench wrote there, unchanged (its ledger,
    outfolder.py); a user's file of a figure's name is never overwritten."""
    from ptsbench.outfolder import file_digest, ledger_files

    figures_dir = out_dir / FIGURES_DIR
    if not images or not os.path.lexists(figures_dir):
        return
    if figures_dir.is_symlink() or not figures_dir.is_dir():
        raise PtsbenchError(f"{figures_dir} is {'a link' if figures_dir.is_symlink() else 'not a folder'}: the "
                            "report's images are written only into a folder of its own",
                            "move it away (or leave --images out)")
    owned = ledger_files(figures_dir, out_dir / IMAGES_LEDGER)
    for name in sorted(image_names(report, images)):
        path = figures_dir / name
        if os.path.lexists(path) and owned.get(name) != file_digest(path):
            raise PtsbenchError(f"{path} is not an image this report wrote there (or it changed since): it is not "
                                "overwritten", "move it out of figures/ (or leave --images out)")


def remove_older_images(report: Report, out_dir: Path, images: Sequence[str]) -> None:
    """Remove the images an earlier report wrote in figures/ (its ledger IMAGES_LEDGER lists them) and this one did
    not (of other formats, or of figures it no longer has), unchanged since; then the ledger lists this report's
    images, and figures/ goes once empty. Any other file there (a user's) stays as it is."""
    from ptsbench.outfolder import file_digest, ledger_files, record_files

    figures_dir = out_dir / FIGURES_DIR
    if not figures_dir.is_dir() or figures_dir.is_symlink():
        return
    written = image_names(report, images)
    for name, digest in ledger_files(figures_dir, out_dir / IMAGES_LEDGER).items():
        path = figures_dir / name
        if name not in written and path.parent == figures_dir and file_digest(path) == digest:
            path.unlink()
    record_files(figures_dir, written, out_dir / IMAGES_LEDGER)
    with contextlib.suppress(OSError):  # not empty: another file stays, and so does the folder
        figures_dir.rmdir()


def check_report_folder(out_dir: Path) -> None:
    """A report is written only into a folder of its own: a link there (to a folder of the user's, say) is never
    followed, and a file or device there is never replaced by a folder."""
    if out_dir.is_symlink():
        raise PtsbenchError(f"{out_dir} is a link (to {os.readlink(out_dir)}): a report is written only into a "
                            "folder of its own, never through a link", f"remove the link {out_dir} (ptsbench makes "
                            "the folder) and make the report again")
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise PtsbenchError(f"{out_dir} is not a folder: the report goes into a folder of that name",
                            f"move {out_dir} away and make the report again")


def render(report: Report, out_dir: Path, static: bool = True, dpi: int = DEFAULT_DPI,
           workbook_path: Path | None = None, images: Sequence[str] = ()) -> Path:
    """Write the report's files into out_dir: index.html and the workbook (`workbook_path`, by default
    out_dir/report.xlsx; a run's is its results.xlsx); with static, report.pdf, and figures/ in the `images`
    formats (none by default). Image files an earlier report left in figures/ are removed."""
    from ptsbench.report.core import html, workbook
    from ptsbench.store import remove_stale_temporaries

    images = tuple(images) if static else ()
    check_report_folder(out_dir)
    check_images_folder(report, out_dir, images)
    out_dir.mkdir(parents=True, exist_ok=True)
    for folder in (out_dir, out_dir / FIGURES_DIR):  # what a killed report left behind (not through a link)
        if not folder.is_symlink():
            remove_stale_temporaries(folder)
    workbook_path = workbook_path or out_dir / XLSX_NAME
    workbook.write_workbook(report, workbook_path)
    if static:
        write_static(report, out_dir, images, dpi)
    remove_older_images(report, out_dir, images)
    html.write_html(report, out_dir / HTML_NAME, static, os.path.relpath(workbook_path, out_dir), images)
    return out_dir


def build_report(run_dir: Path, static: bool = True, in_progress: str | None = None,
                 dpi: int = DEFAULT_DPI, workbook_only: bool = False, images: Sequence[str] = ()) -> Path:
    """RUN_DIR/report/ and the run's one workbook RUN_DIR/results.xlsx, from the store alone (with static, the
    figures' image files in the `images` formats, PNGs at `dpi`); returns the report directory. With workbook_only,
    only results.xlsx (what every run writes at its end) and returns its path."""
    from ptsbench.report.core import workbook
    from ptsbench.store import remove_stale_temporaries

    run_dir = Path(run_dir)
    try:
        report = load_report(run_dir, in_progress)
        remove_stale_temporaries(run_dir)  # a killed run's results.xlsx or manifest temporary
        if workbook_only:
            workbook.write_workbook(report, run_dir / RESULTS_XLSX)
            return run_dir / RESULTS_XLSX
        return render(report, run_dir / REPORT_DIR, static, dpi, run_dir / RESULTS_XLSX, images)
    except PtsbenchError:
        raise
    except Exception as error:
        raise report_error(run_dir, error) from error


def write_report(run_dir: Path, in_progress: str | None = None, static: bool | None = None,
                 workbook_only: bool = False, images: Sequence[str] = ()) -> Path:
    """Write (or rewrite) a run's report; safe to call during a run, after every round.

    `in_progress` says where the run is (e.g. "IOPS round 3 of at most 25"): the report is marked so. `static`
    (default: only when the run is finished) adds report.pdf, and the figures' image files in the `images`
    formats (png, svg; none by default), which take longer.
    With workbook_only, only the run's results.xlsx (returns its path).
    Every file is replaced atomically, so a reader never sees half of one. Raises PtsbenchError when the report
    cannot be made; the run's results are untouched either way.
    """
    return build_report(Path(run_dir), static=in_progress is None if static is None else static,
                        in_progress=in_progress, workbook_only=workbook_only, images=images)


def report_error(run_dir: Path, error: Exception) -> PtsbenchError:
    """Why a report could not be written, in one line: the OSError behind `error` (ENOSPC, EIO, EACCES) with its
    file, however deep a library hid it; else the error itself (a report bug must not end a benchmark)."""
    cause = os_error_in(error)
    if cause is not None:
        full = " (the disk is full)" if cause.errno == errno.ENOSPC else ""
        return PtsbenchError(f"cannot write the report of {run_dir}{full}: {os_error_text(cause)}",
                             f"the results are safe; free space or fix the folder, then `ptsbench report {run_dir}`")
    return PtsbenchError(f"cannot write the report of {run_dir}: {type(error).__name__}: {error}",
                         f"the results are safe; retry with `ptsbench report {run_dir}`")

