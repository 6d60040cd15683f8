"""PTS round overhead: idle gaps between cells, ptsbench's own CPU share, and wall time against planned cell time.

1. Gaps: one demo-profile IOPS round (the job file the engine runs, on a scratch file) with per-millisecond latency
   logs stamped in epoch time; a cell starts at its first log entry and ends at its last (over all its threads).
   The gap is the next cell's start minus this cell's end. The hand-off ways in the same run, in turn: stonewalled
   jobs in one fio process (fio's scheduler); the chain local rounds use (fio/chain.py), whose next fio is started
   ahead by what fio's start-up took lately (twice the second slowest of the last 8, at least 1 s); and the chain
   with the lead fixed at 1 s (chain-1s, before issue 46), with the start-ups measured on the way. Goals: the
   chain's median no worse than the stonewall's at any load, and <= 30 ms on a quiet machine. --load N adds N busy
   loops (tests/hostload.py) for this part.
   Peak memory: a round of --memory-cells cells at TC4/QD32 with 1 MiB blocks (null engine), both ways; the sum of
   the proportional set size (Pss) of every fio process of the round, sampled every 50 ms.
2. CPU share and wall time: the engine runs the demo profile's IOPS test (purge, preconditioning, rounds); each
   stored round keeps ptsbench's own CPU time (not fio's) and its wall time. Goal: CPU < 2 % of one core.
   Overhead = rounds' wall time against the sum of their planned cell times, measured with the demo's short cells
   and projected to 60 s cells from the measured fixed cost per cell and per round. Goal: <= 1 % with 60 s cells.

3. --compare-start N: the rounds of 2. run N times with each way of starting fio, alternating: the compiled
   launcher (Python starts it with vfork; fio/lifetime.py) and a fork with a preexec_fn (the way without a C
   compiler, and before); ptsbench's CPU per cell of each, and their ratio.
4. --project: the rounds of 2. again with cells 3 x as long; ptsbench's CPU per cell split into a fixed part (fio's
   start, its final document, the stored files) and a part per second (fio's status document every second), and
   its share of a core projected to PTS's 60 s cells (issue 27's goal for 56-cell rounds: under 0.5 %).

Run from the repository root (about 1-2 minutes with the defaults):
  .venv/bin/python bench/bench_pts.py
  .venv/bin/python bench/bench_pts.py --cell-time 2 --rounds 3 --dir /mnt/scratch --memory-cells 56
  .venv/bin/python bench/bench_pts.py --cell-time 1 --reps 3 --rounds 0 --load 8        # hand-offs under load
  .venv/bin/python bench/bench_pts.py --profile enterprise --cell-time 0.1 --reps 0   # 56-cell rounds
  .venv/bin/python bench/bench_pts.py --profile enterprise --cell-time 0.1 --reps 0 --rounds 1 --compare-start 2
  .venv/bin/python bench/bench_pts.py --profile enterprise --cell-time 1 --reps 0 --rounds 1 --project
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line sets it (cli/__init__.py main)
from ptsbench.device.target import Target  # noqa: E402
from ptsbench.fio import lifetime  # noqa: E402 (after the line above, as numpy reads it at its import)
from ptsbench.fio.chain import LEAD, START_AHEAD_S, ChainJob, StartAhead, gate_options, run_chain  # noqa: E402
from ptsbench.fio.jobs import render_job_file  # noqa: E402
from ptsbench.fio.lifetime import fio_pids  # noqa: E402
from ptsbench.fio.runner import probe_engine, run_fio  # noqa: E402
from ptsbench.pts.engine import QuietReporter, run  # noqa: E402
from ptsbench.pts.plan import Plan, make_plan, round_job  # noqa: E402
from ptsbench.pts.settings import make_settings  # noqa: E402
from ptsbench.pts.start import RunStart, create_run, target_info  # noqa: E402

GAP_GOAL_MS = 10.0
QUIET_GAP_GOAL_MS = 30.0  # issue 46: chained hand-offs on a quiet machine
HANDOFF_GOAL_MS = 30.0
CPU_GOAL = 0.02
CELL_CPU_GOAL = 0.005  # issue 27: harness CPU under 0.5 % of a core for 56-cell rounds
OVERHEAD_GOAL = 0.01
PTS_CELL_S = 60.0
SIZE_BYTES = 256 * 1024**2


def demo_plan(folder: Path, cell_s: float, rounds: int, profile: str = "demo") -> tuple[Plan, Target]:
    path = str(folder / "scratch.dat")
    target = Target(path, "file", SIZE_BYTES, path)
    engine, _ = probe_engine(str(folder))
    overrides = {"iops": {"round_time_s": cell_s, "max_rounds": rounds}}
    settings = make_settings(profile, "2.0", ("iops",), overrides)
    return make_plan(settings, target_info(target, {"logical_sector_bytes": 512}, engine, SIZE_BYTES)), target


def with_logs(text: str, log_dir: Path) -> tuple[str, list[str]]:
    """The round's job file with epoch-stamped 1 ms latency logs per job (PREFIX_lat.N.log per thread)."""
    from ptsbench.fio.jobs import parse_job_text

    sections = parse_job_text(text, "round")
    global_options = {k: v for k, v in sections[0].options.items() if k not in ("stonewall", "rw", "rwmixread", "bs",
                                                                              "numjobs", "iodepth", "offset", "size",
                                                                              "time_based", "runtime",
                                                                              "exec_prerun", "exec_postrun")}
    jobs = []
    for section in sections:
        own = {k: v for k, v in section.options.items() if k not in global_options or global_options[k] != v}
        own.update({"write_lat_log": str(log_dir / section.name), "log_avg_msec": "1", "log_unix_epoch": "1"})
        jobs.append((section.name, own))
    return render_job_file(global_options, jobs), [section.name for section in sections]


def cell_span_ms(log_dir: Path, job: str) -> tuple[int, int]:
    """(first, last) epoch ms over every thread's total-latency log of one job."""
    starts, ends = [], []
    for path in log_dir.glob(f"{job}_lat.*.log"):
        lines = path.read_text().splitlines()
        if lines:
            starts.append(int(lines[0].split(",")[0]))
            ends.append(int(lines[-1].split(",")[0]))
    return min(starts), max(ends)


class FixedLead(StartAhead):
    """The lead before issue 46: START_AHEAD_S whatever fio's start-ups took (they are still measured)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen_s: list[float] = []

    def observe(self, startup_s: float) -> None:
        self.seen_s.append(startup_s)

    def lead_s(self) -> float:
        return START_AHEAD_S


FIXED_LEAD = FixedLead()


def measure_gaps(folder: Path, cell_s: float, way: str) -> tuple[list[float], list[float], list[float]]:
    """Gaps between the cells of one demo IOPS round from fio's logs, and (chained) as the relay saw them and the
    gated fio processes' start-ups (s)."""
    chained = way != "stonewall"
    plan, _ = demo_plan(folder, cell_s, 1)
    phase = plan.phase("iops")
    log_dir = folder / "logs"
    log_dir.mkdir()
    job = round_job(plan, phase, seed=1, chained=chained)
    text, jobs = with_logs(job.text, log_dir)
    job_path = folder / "round.fio"
    job_path.write_text(text)
    seen: list[float] = []
    startups_s: list[float] = []
    if chained:
        threads = {cell.name: cell.numjobs for cell in phase.cells}
        ran = run_chain(job_path, [ChainJob(name, threads[cell], cell_s) for name, cell in job.jobs], folder=folder,
                        lead=FIXED_LEAD if way == "chain-1s" else LEAD)
        failed = [outcome.error_line() for outcome in ran.outcomes if not outcome.ok]
        if failed or len(ran.outcomes) < len(jobs):
            raise SystemExit(f"fio failed: {failed or ran.notes}")
        seen = [gap for gap in ran.gaps_ms() if gap is not None]
        startups_s = list(ran.startups_s.values())
    else:
        outcome = run_fio(job_path, json_path=folder / "round.json", stderr_path=folder / "round.stderr")
        if not outcome.ok:
            raise SystemExit(f"fio failed: {outcome.error_line()}")
    spans = [cell_span_ms(log_dir, job) for job in jobs]
    gaps = [float(next_start - end) for (_, end), (next_start, _) in zip(spans, spans[1:], strict=False)]
    return gaps, seen, startups_s


def cpu_load(hogs: int):  # type: ignore[no-untyped-def]
    """`hogs` busy loops (tests/hostload.py) for a block; none when 0."""
    if not hogs:
        return contextlib.nullcontext()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from hostload import loaded_host

    return loaded_host(cpu_hogs=hogs)


def peak_memory_bytes(folder: Path, cells: int, cell_s: float, chained: bool) -> int:
    """Peak summed Pss of the fio processes running a round of `cells` TC4/QD32 1 MiB null-engine cells (writes:
    fio fills their buffers, so they are resident)."""
    jobs = [(f"c{index:02d}", {"rw": "randwrite", "bs": "1m", "numjobs": "4", "iodepth": "32",
                               "runtime": f"{round(cell_s * 1000)}ms",
                               **(gate_options(index, cells * cell_s) if chained else {"stonewall": None})})
            for index in range(cells)]
    job_path = folder / "memory.fio"
    job_path.write_text(render_job_file({"ioengine": "null", "size": "64g", "time_based": None}, jobs))
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            total = 0
            for pid in fio_pids(folder):
                try:
                    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
                except OSError:
                    continue
                total += sum(int(line.split()[1]) * 1024 for line in rollup.splitlines() if line.startswith("Pss:"))
            peak[0] = max(peak[0], total)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        if chained:
            run_chain(job_path, [ChainJob(name, 4, cell_s) for name, _ in jobs], folder=folder)
        else:
            run_fio(job_path, json_path=folder / "memory.json", stderr_path=folder / "memory.stderr")
    finally:
        done.set()
        sampler.join()
    return peak[0]


def measure_rounds(folder: Path, cell_s: float, rounds: int, profile: str) -> dict[str, float]:
    plan, target = demo_plan(folder, cell_s, rounds, profile)
    store, plan = create_run(folder / "run", plan.settings, plan.target, {},
                             RunStart(ioengine_note=plan.target.ioengine))
    started = time.monotonic()
    run(store, target, destructive=False, reporter=QuietReporter())
    run_wall_s = time.monotonic() - started
    records = store.finished_rounds("iops")
    phase = plan.phase("iops")
    pre = json.loads((store.precondition_dir("iops") / "result.json").read_text())
    rounds_wall_s = sum(r["wall_s"] for r in records)
    planned_s = phase.round_s * len(records)
    cells = len(phase.cells) * len(records)
    return {
        "rounds": len(records),
        "cells": cells,
        "cpu_share": sum(r["ptsbench_cpu_s"] for r in records) / rounds_wall_s,
        "cpu_per_cell_s": sum(r["ptsbench_cpu_s"] for r in records) / cells,
        "rounds_wall_s": rounds_wall_s,
        "planned_s": planned_s,
        "run_wall_s": run_wall_s,
        "precondition_s": pre["runtime_ms"] / 1000,
        "fixed_per_cell_s": (rounds_wall_s - planned_s) / cells,
        "handoff_ms": statistics.median(gap for r in records for gap in r["handoff"]["gaps_ms"] if gap is not None),
    }


def compare_start(folder: Path, cell_s: float, rounds: int, profile: str, reps: int) -> None:
    """The rounds with each way of starting fio, alternating; ptsbench's CPU per cell of each and their ratio."""
    if lifetime.launcher() is None:
        raise SystemExit("the compiled launcher was not built: install ptsbench with a C compiler first")
    per_cell_ms: dict[str, list[float]] = {"launcher": [], "fork": []}
    for rep in range(reps):
        for way in (("launcher", "fork") if rep % 2 == 0 else ("fork", "launcher")):
            os.environ[lifetime.START_ENV] = way
            try:
                (folder / f"start-{way}-{rep}").mkdir()
                measured = measure_rounds(folder / f"start-{way}-{rep}", cell_s, rounds, profile)
            finally:
                del os.environ[lifetime.START_ENV]
            per_cell_ms[way].append(1000 * measured["cpu_per_cell_s"])
    for way, values in per_cell_ms.items():
        print(f"ptsbench CPU per cell, fio started by {way}: median {statistics.median(values):.2f} ms "
              f"({', '.join(f'{value:.2f}' for value in values)})")
    ratio = statistics.median(per_cell_ms["launcher"]) / statistics.median(per_cell_ms["fork"])
    print(f"launcher / fork: {ratio:.2f}")


def project(cell_s: float, short: dict[str, float], longer: dict[str, float]) -> None:
    """ptsbench's CPU per cell as a fixed part and a part per second of the cell (fio's status document every
    second, the watchdogs), from rounds of cell_s and 3 x cell_s; its share of a core projected to PTS's cells."""
    per_s = (longer["cpu_per_cell_s"] - short["cpu_per_cell_s"]) / (2 * cell_s)
    fixed_cpu_s = short["cpu_per_cell_s"] - per_s * cell_s
    wall_s = max(short["fixed_per_cell_s"], 0.0)  # a cell's wall time beyond its planned time
    share = (fixed_cpu_s + per_s * PTS_CELL_S) / (PTS_CELL_S + wall_s)
    print(f"ptsbench CPU per cell {1000 * longer['cpu_per_cell_s']:.2f} ms with {3 * cell_s:g} s cells: "
          f"{1000 * fixed_cpu_s:.2f} ms per cell + {1000 * per_s:.2f} ms per second of it")
    print(f"  -> with {PTS_CELL_S:.0f} s cells {100 * share:.3f} % of one core   goal < {100 * CELL_CPU_GOAL:.1f} %: "
          f"{'met' if share < CELL_CPU_GOAL else 'NOT met'}")


def print_gaps(gaps_ms: dict[str, list[float]], relay_ms: dict[str, list[float]],
               startups_s: dict[str, list[float]], load: list[float]) -> None:
    """The hand-off gaps of each way, fio's start-ups, and the goals."""
    for way, gaps in gaps_ms.items():
        high = sorted(gaps)[int(0.9 * (len(gaps) - 1))]
        relay = f"; relay median {statistics.median(relay_ms[way]):.1f} ms" if relay_ms[way] else ""
        startups = (f"; fio start-up median {statistics.median(startups_s[way]):.2f} s, max "
                    f"{max(startups_s[way]):.2f} s" if startups_s[way] else "")
        print(f"cell hand-off gap, {way} (demo IOPS round, {len(gaps)} gaps from fio's 1 ms logs): median "
              f"{statistics.median(gaps):.0f} ms, 90th percentile {high:.0f} ms, max {max(gaps):.0f} ms{relay}"
              f"{startups}")
    print(f"lead at the end {LEAD.lead_s():.2f} s; load average {min(load):.1f}-{max(load):.1f}")
    chain, stonewall = statistics.median(gaps_ms["chain"]), statistics.median(gaps_ms["stonewall"])
    quiet = max(load) < (os.cpu_count() or 1)
    quiet_text = (f"{'met' if chain <= QUIET_GAP_GOAL_MS else 'NOT met'}" if quiet else
                  f"not measured (load average {max(load):.1f} on {os.cpu_count()} CPUs; {chain:.0f} ms at this load)")
    print(f"goal: chain no worse than stonewall: {'met' if chain <= stonewall else 'NOT met'} ({chain:.0f} ms "
          f"against {stonewall:.0f} ms; the 1 s lead of before: {statistics.median(gaps_ms['chain-1s']):.0f} ms); "
          f"<= {QUIET_GAP_GOAL_MS:.0f} ms on a quiet machine: {quiet_text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cell-time", type=float, default=0.5, help="seconds per cell (demo: 0.5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds for the CPU and wall-time part")
    parser.add_argument("--dir", type=Path, default=None, help="folder for the scratch file (default: a temp dir)")
    parser.add_argument("--reps", type=int, default=2, help="rounds of each hand-off way for the gaps")
    parser.add_argument("--load", type=int, default=0, metavar="N", help="N busy loops while the gaps are measured")
    parser.add_argument("--memory-cells", type=int, default=0, help="cells of the peak-memory round (0: skip)")
    parser.add_argument("--profile", default="demo",
                        help="profile of the CPU and wall-time part (enterprise: 56-cell IOPS rounds)")
    parser.add_argument("--compare-start", type=int, default=0, metavar="N",
                        help="also run the rounds N times with each way of starting fio (launcher, fork)")
    parser.add_argument("--project", action="store_true",
                        help="also run the rounds with cells 3 x as long, to project ptsbench's CPU to 60 s cells")
    args = parser.parse_args()
    ways = ["stonewall", "chain", "chain-1s"]
    gaps_ms: dict[str, list[float]] = {way: [] for way in ways}
    relay_ms: dict[str, list[float]] = {way: [] for way in ways}
    startups_s: dict[str, list[float]] = {way: [] for way in ways}
    memory: dict[str, int] = {}
    load: list[float] = []
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-pts-") as scratch:
        folder = Path(scratch)
        with cpu_load(args.load):
            for rep in range(args.reps):  # the ways rotate, a different one first every repetition
                for way in ways[rep % 3:] + ways[:rep % 3]:
                    (folder / f"gaps-{way}-{rep}").mkdir()
                    gaps, seen, startups = measure_gaps(folder / f"gaps-{way}-{rep}", args.cell_time, way)
                    gaps_ms[way] += gaps
                    relay_ms[way] += seen
                    startups_s[way] += startups
                    load.append(os.getloadavg()[0])
        if args.memory_cells:
            for way in ("stonewall", "chain"):
                (folder / f"memory-{way}").mkdir()
                memory[way] = peak_memory_bytes(folder / f"memory-{way}", args.memory_cells, 1.0, way == "chain")
        if args.reps:
            print_gaps(gaps_ms, relay_ms, startups_s, load)
        if not args.rounds:
            return
        (folder / "rounds").mkdir()
        measured = measure_rounds(folder / "rounds", args.cell_time, args.rounds, args.profile)
        longer = {}
        if args.project:
            (folder / "longer").mkdir()
            longer = measure_rounds(folder / "longer", 3 * args.cell_time, args.rounds, args.profile)
        if args.compare_start:
            compare_start(folder, args.cell_time, args.rounds, args.profile, args.compare_start)
    for way, peak in memory.items():
        print(f"peak fio memory (Pss), {args.memory_cells} cells TC4/QD32 1 MiB, {way}: {peak / 1024**2:,.0f} MiB")
    print(f"hand-off by the store proxy in the engine's rounds (round.json): median {measured['handoff_ms']:.1f} ms"
          f"   goal <= {HANDOFF_GOAL_MS:.0f} ms: {'met' if measured['handoff_ms'] <= HANDOFF_GOAL_MS else 'NOT met'}")
    share = measured["cpu_share"]
    print(f"ptsbench CPU during rounds: {100 * share:.2f} % of one core   goal < {100 * CPU_GOAL:.0f} %: "
          f"{'met' if share < CPU_GOAL else 'NOT met'}")
    print(f"ptsbench CPU per cell {1000 * measured['cpu_per_cell_s']:.2f} ms with {args.cell_time:g} s cells")
    if longer:
        project(args.cell_time, measured, longer)
    overhead = measured["rounds_wall_s"] / measured["planned_s"] - 1
    per_cell = measured["fixed_per_cell_s"]
    projected = per_cell / PTS_CELL_S
    print(f"{measured['rounds']:.0f} {args.profile} rounds, {measured['cells']:.0f} cells of {args.cell_time:g} s: "
          "rounds took "
          f"{measured['rounds_wall_s']:.2f} s for {measured['planned_s']:.2f} s planned (+{100 * overhead:.1f} %); "
          f"whole run {measured['run_wall_s']:.2f} s incl. {measured['precondition_s']:.2f} s preconditioning")
    print(f"fixed cost {1000 * per_cell:.0f} ms per cell (fio start-up shared by the round's cells) -> with "
          f"{PTS_CELL_S:.0f} s cells: +{100 * projected:.2f} %   goal <= {100 * OVERHEAD_GOAL:.0f} %: "
          f"{'met' if projected <= OVERHEAD_GOAL else 'NOT met'}")


if __name__ == "__main__":
    main()
