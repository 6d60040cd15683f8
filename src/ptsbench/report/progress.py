"""Live progress on stderr: one bar per fio case with elapsed time, ETA, and current IOPS and MB/s."""

from collections.abc import Callable
from typing import Any

from ptsbench.cases import Case, CaseRecord
from ptsbench.fio.runner import FioStatus
from ptsbench.units import format_duration


class TerminalProgress:
    """rich progress bars on stderr; stdout stays clean for results."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
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

        def on_status(status: FioStatus) -> None:
            eta_s = status.eta_s if status.eta_s is not None else (
                max(expected_s - status.elapsed_s, 0) if expected_s else None)
            job = f"{status.running_job}: " if status.running_job else ""
            self.progress.update(
                task, completed=min(status.elapsed_s, expected_s) if expected_s else None,
                eta=format_duration(eta_s) if eta_s is not None else "?",
                rate=f"{job}{status.iops:,.0f} IOPS {status.bw_bytes / 1e6:,.1f} MB/s",
            )

        return on_status

    def finish(self, case: Case, record: CaseRecord) -> None:
        task = self.tasks[case.index]
        total = self.progress.tasks[task].total
        done = "done" if record.status == "ok" else f"[red]FAILED[/red] {record.message}"
        self.progress.update(task, completed=total if total else 1, total=total or 1, eta="0:00", rate=done)
