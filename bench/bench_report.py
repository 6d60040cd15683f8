"""Benchmark (issues 4 and 27): the CPU and wall time of `ptsbench report` (HTML, PDF, xlsx) of a stored PTS run
with all four tests at 25 rounds each (the full enterprise matrix, a synthetic store in the engine's format, made by
the tests' own builder); goal < 10 s, index.html < 10 MB. Each report runs as its own process, as a user starts it;
interleaved with it, the same report with every figure's image files (`--images png --images svg`), whose extra
cost is printed apart. Also the live (in-progress) rewrite, which runs after every round.
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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "report"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ptsbench.report.build import write_report  # noqa: E402
from test_report_pts import stored_pts_run  # noqa: E402  (the synthetic 25-round store the report tests use)


def _children_cpu_s() -> float:
    """CPU seconds of this process's finished children (each report and its figure workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def _report(run_dir: Path, *options: str) -> tuple[float, float]:
    """`ptsbench report RUN_DIR [options]` as its own process: its wall and CPU seconds."""
    started, cpu_before = time.perf_counter(), _children_cpu_s()
    subprocess.run([sys.executable, "-m", "ptsbench", "report", str(run_dir), *options], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu_s() - cpu_before


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
    import compileall

    import ptsbench as package

    # as an install leaves it: PYTHONDONTWRITEBYTECODE (set on some machines) would recompile every module per report
    compileall.compile_dir(Path(package.__file__).parent, quiet=1)
    wall, cpu, images_cpu, live = [], [], [], []
    with tempfile.TemporaryDirectory() as folder:
        if args.run_dir is not None:
            run_dir = Path(folder) / "run"
            shutil.copytree(args.run_dir, run_dir, ignore=shutil.ignore_patterns("report"))
        else:
            run_dir = stored_pts_run(Path(folder) / "run")
        for _ in range(args.repeat):
            wall_s, cpu_s = _report(run_dir)
            wall.append(wall_s)
            cpu.append(cpu_s)
            size_mb = (run_dir / "report" / "index.html").stat().st_size / 1e6
            images_cpu.append(_report(run_dir, "--images", "png", "--images", "svg")[1])
            figures = len(list((run_dir / "report" / "figures").glob("*.png")))
            started = time.perf_counter()
            write_report(run_dir, in_progress="IOPS round 25 of at most 25")
            live.append(time.perf_counter() - started)
    wall_s, cpu_s, with_images_s = statistics.median(wall), statistics.median(cpu), statistics.median(images_cpu)
    print(f"report (HTML, PDF, xlsx; `ptsbench report RUN_DIR`): median {wall_s:.1f} s of {args.repeat} "
          f"({min(wall):.1f}..{max(wall):.1f}), {cpu_s:.2f} CPU-s ({min(cpu):.2f}..{max(cpu):.2f}); goal < 10 s: "
          f"{'met' if wall_s < 10 else 'MISSED'}; goal < 3 CPU-s (a demo run): {'met' if cpu_s < 3 else 'MISSED'}")
    print(f"with --images png --images svg ({figures} figures as PNG and SVG): median {with_images_s:.2f} CPU-s, "
          f"the images {with_images_s - cpu_s:.2f} CPU-s of it")
    from plotly.offline import get_plotlyjs

    print(f"index.html {size_mb:.2f} MB; plotly's full bundle alone {len(get_plotlyjs()) / 1e6:.2f} MB; goal < 1.5 MB: "
          f"{'met' if size_mb < 1.5 else 'MISSED'}")
    print(f"live rewrite (HTML + xlsx): median {statistics.median(live):.2f} s")
    if args.phases:
        phases(args.run_dir)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end")

if __name__ == "__main__":
    main()
