"""fio log reading: ptsbench's two readers against numpy.loadtxt on the same 10-million-line latency log, and the
whole `ptsbench plot` of that log (start-up, read, summary, reduce, draw a PNG) against loadtxt merely loading it.

The log is written by fio's null engine without log_avg_msec, so every IO is a line (10,000,000 4 KiB random reads
and writes, about 15-30 s). Each measurement then runs in a fresh Python process, so its peak memory is its own; they
alternate, their order rotating every round:
  ptsbench        ptsbench.fio.logs.read_log(path)                     (the compiled C parser)
  ptsbench-numpy  the same with PTSBENCH_LOG_READER=numpy              (the parser of installs without a compiler)
  loadtxt         numpy.loadtxt(path, delimiter=",")                   (the usual call; float64)
  loadtxt-int     numpy.loadtxt(path, delimiter=",", dtype=numpy.int64) (its fastest form)
  plot            `python -m ptsbench plot LOG --out TMP`, end to end (the whole process: its wall time, its CPU
                  time and peak RSS from wait4)
  loadtxt-process `python -c "numpy.loadtxt(LOG, delimiter=',')"`, the whole process measured as plot is (its peer
                  in issue 46: plot's CPU at most this process's)
  plot-baseline   with --baseline-src DIR: the same plot of another checkout's src/ (PYTHONPATH=DIR), e.g. main's
                  from `git archive`, for a before / after in the same run
With --floors, the plot's pieces each in a fresh process, measured as plot is, each adding one step to the last:
  floor-python    `python -c pass`
  floor-numpy     and `import numpy`
  floor-mpl-package and `import matplotlib`, the package alone (the GC off, as ptsbench imports it): rcParams and
                  their validators, colours and colormaps, no figure, axes or canvas
  floor-mpl       and matplotlib's figure and Agg canvas, as ptsbench imports them (import_matplotlib)
  floor-draw      and the plot's own chart of this log (its Figure, pickled by the bench beforehand: the min/max per
                  pixel column already taken) drawn and written as the PNG: no reading, no ptsbench CLI, no table
  floor-read      numpy and ptsbench's reader alone: `read_log(LOG)` (no matplotlib)
  floor-no-draw   the whole `ptsbench plot LOG` with its charts' files written empty (ChartWriter.write replaced):
                  everything plot does but import matplotlib and draw (CLI, read, statistics, reduction, table)
floor-draw is what any plot of the log drawn by matplotlib in a fresh process costs at least.
ptsbench's modules are byte-compiled first (as pip installs them). For the readers time is the wall time of the read
alone (and its CPU time); memory is the peak RSS (VmHWM) minus the RSS just before the read (after the imports).
Medians are compared; goals: the C reader at least 3 x faster than loadtxt with at most half its peak memory; the
numpy reader at least as fast as loadtxt (both forms) with no more memory; the whole plot faster than loadtxt-int's
read alone. The machine's load average is printed before and after: on a busy machine wall times measure the others.

Run from the repository root (about 3-5 minutes):
  .venv/bin/python bench/bench_logs.py
  .venv/bin/python bench/bench_logs.py --rounds 5 --log /tmp/bench_lat.log   # reuse (or keep) the log there
  .venv/bin/python bench/bench_logs.py --rounds 7 --lines 1000000 --log /tmp/bench_1m_lat.log \
      --baseline-src /tmp/main/src    # the plot of 1 M lines against the loadtxt process, and main's plot
"""

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINES = 10_000_000
# reader -> (baseline, least speed-up, largest memory share) it is held to
GOALS = {"ptsbench": (("loadtxt", 3.0, 0.5), ("loadtxt-int", 0.0, 0.5)),
         "ptsbench-numpy": (("loadtxt", 1.0, 1.0), ("loadtxt-int", 1.0, 1.0))}
READERS = ("ptsbench", "ptsbench-numpy", "loadtxt", "loadtxt-int")
MEASURES = (*READERS, "plot", "loadtxt-process")
LOADTXT_PROCESS = "import sys, numpy; numpy.loadtxt(sys.argv[1], delimiter=',')"
UNSTACKED = ("floor-read", "floor-no-draw")  # floors that do not add a step to the one before
FLOORS = {  # piece -> the program it runs (argv[1]: the log, argv[2]: the pickled Figure), see --floors
    "floor-python": "pass",
    "floor-numpy": "import numpy",
    "floor-mpl-package": "import gc, numpy; gc.disable(); import matplotlib",
    "floor-mpl": "import numpy; from ptsbench.report.core.draw_mpl import import_matplotlib; import_matplotlib()",
    "floor-draw": "import sys, pickle, tempfile, pathlib, numpy\n"
                  "from ptsbench.report.core.draw_mpl import import_matplotlib, write_figure_files\n"
                  "import_matplotlib()\n"
                  "figure, dpi, size_in = pickle.loads(pathlib.Path(sys.argv[2]).read_bytes())\n"
                  "with tempfile.TemporaryDirectory() as out:\n"
                  "    write_figure_files(figure, pathlib.Path(out), '', dpi, ('png',), size_in)",
    "floor-read": "import sys, numpy; from ptsbench.fio.logs import read_log; read_log(sys.argv[1])",
    "floor-no-draw": "import os, sys, tempfile\n"  # the environment ptsbench's main sets before numpy loads:
                     "os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')\n"
                     "os.environ.setdefault('NUMPY_MADVISE_HUGEPAGE', '0')\n"
                     "import ptsbench.plot.draw as draw\n"
                     "def write(self, figure):\n"
                     "    self.directory.mkdir(parents=True, exist_ok=True)\n"
                     "    (self.directory / f'{figure.key}.png').write_bytes(b'')\n"
                     "    return [self.directory / f'{figure.key}.png']\n"
                     "draw.ChartWriter.write = write\n"
                     "from ptsbench.cli import main\n"
                     "with tempfile.TemporaryDirectory() as out:\n"
                     "    sys.argv = ['ptsbench', 'plot', sys.argv[1], '--out', out + '/plots']\n"
                     "    main()",
}


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure(reader: str, path: str) -> None:
    """Child process: read the log once and print wall s, CPU s, peak memory above the start, and the line count."""
    if reader == "ptsbench-numpy":
        os.environ["PTSBENCH_LOG_READER"] = "numpy"
    import numpy as np

    from ptsbench.fio import log_reader, logs

    before_kib = _status_kib("VmRSS")
    wall, cpu, system = time.perf_counter(), time.process_time(), os.times().system
    if reader.startswith("ptsbench"):
        lines = logs.read_log(path).lines
    elif reader == "loadtxt":
        lines = len(np.loadtxt(path, delimiter=","))
    else:
        lines = len(np.loadtxt(path, delimiter=",", dtype=np.int64))
    wall, cpu, system = time.perf_counter() - wall, time.process_time() - cpu, os.times().system - system
    peak_bytes = (_status_kib("VmHWM") - before_kib) * 1024
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "system_s": system, "peak_bytes": peak_bytes, "lines": lines,
                      "reader": log_reader.reader_name() if reader.startswith("ptsbench") else reader}))


def make_log(path: Path, lines: int) -> None:
    """A per-IO latency log of `lines` IOs (null engine, 4 KiB random reads and writes, one job)."""
    folder, prefix = path.parent, path.name.removesuffix("_lat.log")
    if path.name != f"{prefix}_lat.log":
        raise SystemExit(f"--log must end in _lat.log (fio names it PREFIX_lat.log): {path}")
    folder.mkdir(parents=True, exist_ok=True)
    command = ["fio", "--name=bench", "--ioengine=null", "--rw=randrw", "--bs=4k", f"--size={lines * 4}k",
               f"--write_lat_log={prefix}", "--per_job_logs=0", "--disable_clat=1", "--disable_slat=1",
               "--output-format=json", "--output=fio.json"]
    print(f"writing {lines:,} lines with: {' '.join(command)}", flush=True)
    subprocess.run(command, cwd=folder, check=True, capture_output=True)


def pickle_figure(log: str, out: str) -> None:
    """Child process: the Figure `ptsbench plot LOG` draws, pickled into `out` (drawn by floor-draw)."""
    import pickle
    import tempfile

    from ptsbench.plot import PlotOptions, make_plots
    from ptsbench.plot.draw import DPI, HEIGHT_IN, WIDTH_IN, ChartWriter, styled

    figures = []
    ChartWriter.write = lambda self, figure: figures.append(styled(figure, self.look)) or []  # type: ignore
    with tempfile.TemporaryDirectory() as folder:
        make_plots([log], PlotOptions(out_dir=Path(folder)))
    Path(out).write_bytes(pickle.dumps((figures[0], DPI, (WIDTH_IN, HEIGHT_IN))))  # as ChartWriter draws it


def run_reader(reader: str, path: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--measure", reader, str(path)], capture_output=True,
                          text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def time_plot(path: Path, loadtxt: bool = False, source: Path | None = None, program: str | None = None,
              figure: Path | None = None) -> dict[str, float]:
    """Wall time of `ptsbench plot LOG` (a fresh process: start-up, read, summary, reduce, draw the PNG; ptsbench
    from `source` when given), or with `loadtxt` of a process that only loads the log with numpy.loadtxt, or of
    `python -c program LOG figure` (a piece of the plot: FLOORS)."""
    with tempfile.TemporaryDirectory() as out:
        argv = ([sys.executable, "-c", LOADTXT_PROCESS, str(path)] if loadtxt
                else [sys.executable, "-c", program, str(path), str(figure)] if program
                else [sys.executable, "-m", "ptsbench", "plot", str(path), "--out", out])
        env = {**os.environ, "PYTHONPATH": str(source)} if source else None
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode or not (loadtxt or program or any(Path(out).glob("*.png"))):
            raise SystemExit(f"{argv[2]} failed (exit {process.returncode}) or wrote no PNG")
    return {"wall_s": elapsed, "cpu_s": usage.ru_utime + usage.ru_stime, "system_s": usage.ru_stime,
            "peak_bytes": usage.ru_maxrss * 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, help="latency log to use; written there first when missing")
    parser.add_argument("--lines", type=int, default=LINES, help="lines of the log to write (default 10,000,000)")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each (default 3)")
    parser.add_argument("--baseline-src", type=Path, help="also time the plot of ptsbench from this src/ folder")
    parser.add_argument("--floors", action="store_true", help="also time the plot's pieces (python, numpy, "
                        "matplotlib, drawing the chart, reading the log) each in a fresh process")
    parser.add_argument("--pickle-figure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    if args.pickle_figure:
        pickle_figure(*args.pickle_figure)
        return
    # as an installed wheel has them: under PYTHONDONTWRITEBYTECODE every start would compile all of ptsbench again
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "src" / "ptsbench", quiet=1)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.log or Path(scratch) / "bench_lat.log"
        if not path.is_file():
            make_log(path, args.lines)
        size_mb = path.stat().st_size / 1e6
        print(f"log: {path} ({size_mb:,.0f} MB); load average before: {os.getloadavg()[0]:.1f}", flush=True)
        measures = (*MEASURES, *(("plot-baseline",) if args.baseline_src else ()), *(FLOORS if args.floors else ()))
        figure = Path(scratch) / "figure.pickle"
        if args.floors:
            subprocess.run([sys.executable, __file__, "--pickle-figure", str(path), str(figure)], check=True)
        results: dict[str, list[dict[str, float]]] = {name: [] for name in measures}
        for round_number in range(args.rounds):
            shift = round_number % len(measures)
            for name in measures[shift:] + measures[:shift]:
                last = (time_plot(path, program=FLOORS[name], figure=figure) if name in FLOORS
                        else time_plot(path, name == "loadtxt-process", args.baseline_src if name == "plot-baseline"
                                       else None) if name in ("plot", "loadtxt-process", "plot-baseline")
                        else run_reader(name, path))
                results[name].append(last)
                print(f"  round {round_number + 1} {name:<14} {last['wall_s']:6.2f} s wall, {last['cpu_s']:6.2f} s "
                      f"CPU ({last['system_s']:4.2f} system), {last['peak_bytes'] / 2**20:6.0f} MiB peak", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.1f}\n")
    lines = {int(result["lines"]) for name in READERS for result in results[name]}
    if len(lines) != 1:
        raise SystemExit(f"the readers disagree on the line count: {sorted(lines)}")
    if results["ptsbench-numpy"][0]["reader"] == results["ptsbench"][0]["reader"]:
        raise SystemExit("the numpy reader was not used: check PTSBENCH_LOG_READER in ptsbench/fio/log_reader.py")
    median = {name: {key: statistics.median(r[key] for r in runs) for key in runs[0] if key != "reader"}
              for name, runs in results.items()}
    print(f"{lines.pop():,} lines, medians of {args.rounds} each:")
    print(f"{'reader':<15} {'wall s':>7} {'CPU s':>7} {'system':>7} {'peak MiB':>9}")
    for reader in READERS:
        m = median[reader]
        print(f"{reader:<15} {m['wall_s']:7.2f} {m['cpu_s']:7.2f} {m['system_s']:7.2f} {m['peak_bytes'] / 2**20:9.0f}")
    for reader, goals in GOALS.items():
        ours = median[reader]
        for baseline, speed_goal, memory_goal in goals:
            speed = median[baseline]["wall_s"] / ours["wall_s"]
            cpu = median[baseline]["cpu_s"] / ours["cpu_s"]
            memory = ours["peak_bytes"] / median[baseline]["peak_bytes"]
            speed_text = f"goal >= {speed_goal:g}: {'met' if speed >= speed_goal else 'NOT met'}" if speed_goal \
                else "no goal"
            print(f"{reader} vs {baseline:<11}: {speed:4.1f} x faster (wall; {speed_text}), {cpu:4.1f} x less CPU, "
                  f"{memory:4.2f} x the peak memory (goal <= {memory_goal:g}: "
                  f"{'met' if memory <= memory_goal else 'NOT met'})")
    plot, loadtxt_int = median["plot"], median["loadtxt-int"]
    ratio = loadtxt_int["wall_s"] / plot["wall_s"]
    print(f"ptsbench plot end to end (the whole process): {plot['wall_s']:.2f} s wall, {plot['cpu_s']:.2f} s CPU "
          f"({plot['system_s']:.2f} system), "
          f"{plot['peak_bytes'] / 2**20:.0f} MiB peak RSS; loadtxt-int's read alone / plot = {ratio:.2f} wall "
          f"(goal > 1: {'met' if ratio > 1 else 'NOT met'}), {loadtxt_int['cpu_s'] / plot['cpu_s']:.2f} CPU")
    process = median["loadtxt-process"]
    share = plot["cpu_s"] / process["cpu_s"]
    print(f"plot / a whole loadtxt process (python, numpy, loadtxt of the log: {process['cpu_s']:.2f} CPU-s, "
          f"{process['wall_s']:.2f} s wall): {share:.2f} x its CPU (goal <= 1: {'met' if share <= 1 else 'NOT met'})")
    if args.baseline_src:
        baseline = median["plot-baseline"]
        pairs = ", ".join(f"{ours['cpu_s'] / theirs['cpu_s']:.2f}"
                          for ours, theirs in zip(results["plot"], results["plot-baseline"], strict=True))
        print(f"plot of {args.baseline_src}: {baseline['cpu_s']:.2f} CPU-s, "
              f"{baseline['cpu_s'] / process['cpu_s']:.2f} x the loadtxt process; this plot / that one: "
              f"{plot['cpu_s'] / baseline['cpu_s']:.3f} (CPU, medians; per round: {pairs})")
    if args.floors:
        print(f"the plot's pieces, each a fresh process (CPU-s, medians; against the loadtxt process's "
              f"{process['cpu_s']:.3f}):")
        before = 0.0
        for name in FLOORS:
            cpu = median[name]["cpu_s"]
            step = f"+{cpu - before:.3f}" if name not in ("floor-python", *UNSTACKED) else ""
            print(f"  {name:<17} {cpu:.3f} {step:>7}  ({cpu / process['cpu_s']:.2f} x the loadtxt process)")
            before = cpu if name not in UNSTACKED else before
        print(f"  floor-read over floor-numpy: +{median['floor-read']['cpu_s'] - median['floor-numpy']['cpu_s']:.3f}"
              f"; the whole plot over floor-draw: +{plot['cpu_s'] - median['floor-draw']['cpu_s']:.3f}"
              f"; over floor-no-draw (matplotlib's import and drawing): "
              f"+{plot['cpu_s'] - median['floor-no-draw']['cpu_s']:.3f}")

if __name__ == "__main__":
    main()
