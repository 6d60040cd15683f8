"""Per-round cost of a long PTS test: write saturation (up to 1,440 rounds) run by the engine with the live report
`ptsbench pts` keeps, on fio's null engine with short rounds, so hundreds of rounds take minutes.

The CPU time of this process (the engine and the live report's thread, not fio) between the ends of consecutive
rounds is summed over the first and the last 100 rounds. Two runs, one after the other: the live report as ptsbench
rewrites it (report/pts/live.py RewriteBudget), and as a baseline the same with a rewrite after every round (what
ptsbench did before). Goal: the last 100 rounds cost what the first 100 did.

Run from the repository root (about 5-10 minutes with the defaults):
  .venv/bin/python bench/bench_rounds.py
  .venv/bin/python bench/bench_rounds.py --rounds 500 --round-time 0.1
"""

import argparse
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ptsbench.device.target import Target
from ptsbench.pts.engine import Progress, QuietReporter, run
from ptsbench.pts.plan import make_plan
from ptsbench.pts.settings import RunChoices, make_settings
from ptsbench.pts.start import RunStart, create_run, target_info
from ptsbench.report.pts.live import BackgroundReport, RewriteBudget

SIZE_BYTES = 64 * 1024**2
WINDOW = 100


class EveryRound(RewriteBudget):
    """The baseline: a rewrite after every round."""

    def round_finished(self) -> bool:
        return True


class RoundEnds(QuietReporter):
    """Records this process's CPU time at the end of every round."""

    def __init__(self) -> None:
        self.cpu_s: list[float] = []

    def round_finished(self, progress: Progress, record: Mapping[str, Any]) -> None:
        self.cpu_s.append(time.process_time())


def wsat_rounds(folder: Path, rounds: int, round_s: float, every_round: bool) -> list[float]:
    """CPU seconds of each round after the first (end to end), write saturation on the null engine."""
    path = str(folder / "null.dat")
    target = Target(path, "file", SIZE_BYTES, path)
    settings = make_settings("demo", "2.0", ("wsat",), {"wsat": {"round_time_s": round_s}},
                             RunChoices(wsat_capacity_multiple=1e9, wsat_max_time_s=rounds * round_s))
    plan = make_plan(settings, target_info(target, {"logical_sector_bytes": 512}, "null", SIZE_BYTES))
    store, plan = create_run(folder / "run", plan.settings, plan.target, {}, RunStart(ioengine_note="null"))
    ends = RoundEnds()
    with BackgroundReport(store.root, ends) as reporter:
        if every_round:
            reporter.budget = EveryRound()
        run(store, target, destructive=False, reporter=reporter)
    return [later - earlier for earlier, later in zip(ends.cpu_s, ends.cpu_s[1:], strict=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=250, help=f"rounds per run (at least {2 * WINDOW + 1})")
    parser.add_argument("--round-time", type=float, default=0.05, help="seconds of IO per round (default 0.05)")
    args = parser.parse_args()
    if args.rounds <= 2 * WINDOW:
        parser.error(f"--rounds must be over {2 * WINDOW}")
    results = {}
    for label, every_round in (("live report (RewriteBudget)", False), ("baseline: rewrite every round", True)):
        with tempfile.TemporaryDirectory(prefix="bench-rounds-") as folder:
            per_round = wsat_rounds(Path(folder), args.rounds, args.round_time, every_round)
        results[label] = (sum(per_round[:WINDOW]), sum(per_round[-WINDOW:]), len(per_round) + 1)
    print(f"write saturation, null engine, {args.round_time:g} s rounds; CPU of ptsbench's process (engine and live "
          "report) per round")
    for label, (first_s, last_s, rounds) in results.items():
        print(f"  {label:32s} {rounds} rounds: first {WINDOW} {1000 * first_s / WINDOW:6.1f} ms/round, last {WINDOW} "
              f"{1000 * last_s / WINDOW:6.1f} ms/round, last / first {last_s / first_s:.2f}")
    (first_s, last_s, _), (base_first_s, base_last_s, _) = results.values()
    print(f"  last {WINDOW} rounds against the baseline's: {last_s / base_last_s:.2f}; goal: last / first <= 1.1: "
          f"{'met' if last_s / first_s <= 1.1 else 'NOT met'}")


if __name__ == "__main__":
    main()
