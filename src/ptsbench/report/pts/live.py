"""The live report: rewritten in the background after stored rounds of a PTS run.

The rewrite runs on a thread of its own so the next round starts at once (idle time between rounds would let the
device garbage-collect and flatter it). Only one rewrite runs at a time; a round that ends meanwhile asks for one
more, with the newest position. Every report file is replaced atomically, so a reader never sees half of one.

A rewrite draws every round so far, so it costs more as a test goes on (write saturation runs up to 1,440 rounds).
Each round therefore earns the CPU time of the cheapest rewrite so far, and a rewrite waits until the rounds since
the last one have earned what that one took: early on that is every round, later every few rounds, and the CPU the
live report takes from the run per round stays the same from the first round to the last.
"""

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptsbench.errors import PtsbenchError

if TYPE_CHECKING:
    from ptsbench.fio.runner import FioStatus
    from ptsbench.pts.engine import Progress, Reporter


class RewriteBudget:
    """When the live report is rewritten: each finished round earns the CPU time of the cheapest rewrite so far, and
    a rewrite is due once the rounds since the last one have earned what that one took."""

    def __init__(self) -> None:
        self.cheapest_s: float | None = None
        self.last_s = 0.0  # CPU time of the last rewrite
        self.earned_s = 0.0  # earned since the last rewrite was due

    def round_finished(self) -> bool:
        """A round is stored: True when the report is to be rewritten now."""
        self.earned_s += self.cheapest_s or 0.0
        if self.earned_s < self.last_s:
            return False
        self.earned_s -= self.last_s
        return True

    def rewritten(self, cpu_s: float) -> None:
        """A rewrite took `cpu_s` of CPU time."""
        self.last_s = cpu_s
        self.cheapest_s = cpu_s if self.cheapest_s is None else min(self.cheapest_s, cpu_s)


class BackgroundReport:
    """A PTS progress reporter that passes everything on to `shown` and rewrites the report after the rounds
    RewriteBudget allows (every round until rewrites grow dearer)."""

    def __init__(self, run_dir: Path, shown: "Reporter") -> None:
        self.run_dir = run_dir
        self.shown = shown
        self.lock = threading.Lock()
        self.pending: str | None = None
        self.thread: threading.Thread | None = None
        self.errors: list[str] = []
        self.budget = RewriteBudget()

    def __enter__(self) -> "BackgroundReport":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def event(self, text: str) -> None:
        self.shown.event(text)

    def round_started(self, progress: "Progress") -> None:
        self.shown.round_started(progress)

    def fio_status(self, progress: "Progress", cell: str | None, status: "FioStatus") -> None:
        self.shown.fio_status(progress, cell, status)

    def round_finished(self, progress: "Progress", record: Mapping[str, Any]) -> None:
        self.shown.round_finished(progress, record)
        with self.lock:
            due = self.budget.round_finished()
        if due:
            phase = progress.phase
            self.request(f"{phase.phase.title} round {record['round']} of at most {phase.max_rounds}")

    def request(self, position: str) -> None:
        """Ask for a rewrite marked "in progress" at `position`; returns at once."""
        with self.lock:
            self.pending = position
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._work, name="live-report", daemon=True)
                self.thread.start()

    def _work(self) -> None:
        from ptsbench.report.build import write_report

        while True:
            with self.lock:
                position, self.pending = self.pending, None
            if position is None:
                return
            started_s = time.thread_time()
            try:
                write_report(self.run_dir, in_progress=position)
            except PtsbenchError as error:  # the run goes on; say so once
                if not self.errors:
                    self.shown.event(f"live report not updated: {error}")
                self.errors.append(str(error))
            with self.lock:
                self.budget.rewritten(time.thread_time() - started_s)

    def close(self) -> None:
        """Wait for the rewrite under way (the final report is written after it)."""
        thread = self.thread
        if thread is not None:
            thread.join()
