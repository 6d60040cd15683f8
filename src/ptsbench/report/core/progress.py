"""Live progress on stderr: one bar per fio case with elapsed time, ETA, and current IOPS and MB/s."""

from collections.abc import Callable, Sequence
from typing import Any

from ptsbench.cases.plan import Case
from ptsbench.cases.records import CaseRecord
from ptsbench.fio.runner import FioStatus
from ptsbench.units import format_duration


class TerminalProgress:
    """rich progress bars on stderr; stdout stays clean for results."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)  # piped to a log: lines whole, not wrapped at a width no terminal gave
        self.console = console if console.is_terminal else Console(stderr=True, soft_wrap=True)
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            TextColumn("{task.fields[rate]}"),
            console=self.console,
            transient=False,
        )
        self.tasks: dict[int, Any] = {}

    def __enter__(self) -> "TerminalProgress":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, case: Case) -> Callable[[FioStatus], None]:
        expected_s = case.expected_s
        task = self.progress.add_task(case.name, total=expected_s, eta="?", rate="starting fio")
        self.tasks[case.index] = task

        seen_io = [False]

        def on_status(status: FioStatus) -> None:
            # the plan's time left while it lasts (it only goes down); fio's own ETA, which jumps as fio lays files
            # out and starts jobs, once the plan is used up or when there is none (size-based jobs)
            planned_left_s = expected_s - status.elapsed_s if expected_s else 0.0
            eta_s = planned_left_s if planned_left_s > 0 else status.eta_s
            job = f"{status.running_job}: " if status.running_job else ""
            seen_io[0] = seen_io[0] or status.iops > 0 or status.bw_bytes > 0
            rate = f"{job}{status.iops:,.0f} IOPS {status.bw_bytes / 1e6:,.1f} MB/s" if seen_io[0] else \
                f"{job}no IO yet: fio lays out its files (or starts its jobs)"
            self.progress.update(
                task, completed=min(status.elapsed_s, expected_s) if expected_s else None,
                eta=format_duration(eta_s) if eta_s is not None else "?", rate=rate,
            )

        return on_status

    def finish(self, case: Case, record: CaseRecord) -> None:
        task = self.tasks[case.index]
        total = self.progress.tasks[task].total
        done = "done" if record.status == "ok" else f"[red]FAILED[/red] {record.message}"
        self.progress.update(task, completed=total if total else 1, total=total or 1, eta="0:00", rate=done)


class SweepProgress(TerminalProgress):
    """A sweep's progress: one line for the whole sweep (cells done, time left by the plan) and a bar for the cell
    running now; a finished cell leaves one line with what fio measured."""

    def __init__(self, cases: Sequence[Case], done: int) -> None:
        super().__init__()
        self.count = len(cases) + done
        self.done = done
        self.remaining_s = {case.index: case.expected_s or 0.0 for case in cases}
        self.overall: Any = None
        self.extra_s: list[float] = []  # per finished cell: its wall time beyond its planned time (fio start-up)
        self.started = 0.0

    def __enter__(self) -> "SweepProgress":
        super().__enter__()
        total = sum(self.remaining_s.values())  # planned fio time; the ETA adds the start-up time seen per cell
        self.overall = self.progress.add_task(self._title(), total=total or None, eta=format_duration(total),
                                              rate="")
        return self

    def _title(self) -> str:
        return f"sweep: {self.done} of {self.count} cells done"

    def _update(self, left_s: float, cells_left: int) -> None:
        """Time left by the plan, plus the start-up time the cells so far took beyond their plan, per cell left."""
        total = self.progress.tasks[self.overall].total or 0
        extra_s = sum(self.extra_s) / len(self.extra_s) * cells_left if self.extra_s else 0.0
        self.progress.update(self.overall, description=self._title(), completed=max(total - left_s, 0),
                             eta=format_duration(left_s + extra_s))

    def start(self, case: Case) -> Callable[[FioStatus], None]:
        import time

        cell = super().start(case)
        expected_s = self.remaining_s.get(case.index, 0.0)
        others_s = sum(self.remaining_s.values()) - expected_s
        self.started = time.monotonic()

        def on_status(status: FioStatus) -> None:
            cell(status)
            self._update(others_s + max(expected_s - status.elapsed_s, 0.0), len(self.remaining_s) - 1)

        return on_status

    def finish(self, case: Case, record: CaseRecord) -> None:
        import time

        self.progress.remove_task(self.tasks.pop(case.index))
        planned_s = self.remaining_s.pop(case.index, 0.0)
        self.extra_s.append(max(time.monotonic() - self.started - planned_s, 0.0))
        self.done += 1
        self._update(sum(self.remaining_s.values()), len(self.remaining_s))
        iops = sum(direction["iops"] for job in record.jobs for direction in job["directions"]
                   if direction["direction"] in ("read", "write", "trim"))
        said = f"{iops:,.0f} IOPS" if record.status == "ok" else f"[red]FAILED[/red] {record.message}"
        self.console.print(f"cell {case.index} {case.name}: {said}", highlight=False)
