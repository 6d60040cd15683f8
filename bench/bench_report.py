"""Benchmark (issue 4): time to write the full report (HTML, PDF, xlsx, figures) of a stored PTS run with all four
tests at 25 rounds each (the full enterprise matrix, a synthetic store in the engine's format, made by the tests'
own builder); goal < 10 s, index.html < 10 MB. Also the live (in-progress) rewrite, which runs after every round.
With --run-dir, a stored run instead (e.g. the one scripts/demo.sh made: goal < 3 CPU-s, index.html < 1.5 MB).
The size of index.html is printed beside that of plotly's full bundle, which the page carried before.
With --phases, also the CPU time of each part of the report, written one after the other in this process after the
timed reports (imports done, store loaded): xlsx, HTML, PDF, the figures' PNG files, their SVG files.

    .venv/bin/python bench/bench_report.py [--repeat N] [--run-dir RUN_DIR] [--phases]
"""

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ptsbench.report.build import build_report, write_report  # noqa: E402
from test_report_pts import stored_pts_run  # noqa: E402  (the synthetic 25-round store the report tests use)


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (the figure workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def phases(run_dir: Path | None) -> None:
    """The CPU seconds of each part of a report, one after the other in this process."""
    from ptsbench.report.build import load_report
    from ptsbench.report.core import html, pdf, workbook
    from ptsbench.report.core.draw_mpl import DEFAULT_DPI, import_matplotlib, write_figure_files

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        run_dir = run_dir if run_dir is not None else stored_pts_run(out / "run")
        times: dict[str, float] = {}
        started = time.process_time()

        def lap(name: str) -> None:
            nonlocal started
            now = time.process_time()
            times[name], started = now - started, now

        import_matplotlib()
        report = load_report(run_dir)
        started = time.process_time()
        workbook.write_workbook(report, out / "report.xlsx")
        lap("xlsx")
        html.write_html(report, out / "index.html", static=True)
        lap("HTML")
        pdf.write_pdf(report, out / "report.pdf")
        lap("PDF")
        figures = report.figures()
        for suffix in ("png", "svg"):
            for figure in figures:
                write_figure_files(figure, out, report.provenance, DEFAULT_DPI, formats=(suffix,))
            lap(f"{len(figures)} figures' {suffix.upper()} (each drawn too)")
    print("CPU seconds by part, one after the other: " + ", ".join(f"{name} {s:.2f}" for name, s in times.items())
          + f"; sum {sum(times.values()):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="reports to time (the median is printed)")
    parser.add_argument("--run-dir", type=Path, help="a stored run to report on (a copy is used)")
    parser.add_argument("--phases", action="store_true", help="also the CPU time of each part of the report")
    args = parser.parse_args()
    full, cpu, live = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        if args.run_dir is not None:
            run_dir = Path(folder) / "run"
            shutil.copytree(args.run_dir, run_dir, ignore=shutil.ignore_patterns("report"))
        else:
            run_dir = stored_pts_run(Path(folder) / "run")
        for _ in range(args.repeat):
            started, cpu_before = time.perf_counter(), _cpu_s()
            out = build_report(run_dir)
            full.append(time.perf_counter() - started)
            cpu.append(_cpu_s() - cpu_before)
            started = time.perf_counter()
            write_report(run_dir, in_progress="IOPS round 25 of at most 25")
            live.append(time.perf_counter() - started)
        size_mb = (out / "index.html").stat().st_size / 1e6
        figures = len(list((out / "figures").glob("*.png")))
    full_s = statistics.median(full)
    print(f"full report (HTML, PDF, xlsx, {figures} figures as PNG+SVG): median {full_s:.1f} s of {args.repeat} "
          f"({min(full):.1f}..{max(full):.1f}), {statistics.median(cpu):.1f} CPU-s; goal < 10 s: "
          f"{'met' if full_s < 10 else 'MISSED'}; goal < 3 CPU-s (a demo run): "
          f"{'met' if statistics.median(cpu) < 3 else 'MISSED'}")
    from plotly.offline import get_plotlyjs

    print(f"index.html {size_mb:.2f} MB; plotly's full bundle alone {len(get_plotlyjs()) / 1e6:.2f} MB; goal < 1.5 MB: "
          f"{'met' if size_mb < 1.5 else 'MISSED'}")
    print(f"live rewrite (HTML + xlsx): median {statistics.median(live):.2f} s")
    if args.phases:
        phases(args.run_dir)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
