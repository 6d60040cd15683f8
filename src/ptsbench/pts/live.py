"""Live progress of a PTS run on stderr: test, round and cell with the ETA to the maximum round count, and after
every round the steady-state status (rounds in the window, measured data and slope excursion against the limits)
and the device temperature, with a warning when the device throttled during the round."""

from collections.abc import Mapping
from typing import Any

from ptsbench.catalog.monitor_host import round_disagreements
from ptsbench.fio.runner import FioStatus
from ptsbench.pts.engine import Progress, Reporter
from ptsbench.units import format_duration


def steady_line(record: Mapping[str, Any]) -> str:
    """The steady-state status after one round, as one line."""
    steady = record.get("steady") or {}
    variables = steady.get("variables") or {}
    if not variables:
        wsat = record.get("wsat")
        if wsat:
            return f"written {wsat['written_bytes'] / 1e6:,.1f} MB in {wsat['io_time_s']:,.1f} s of IO"
        return ""
    if "rounds_needed" in steady:
        return f"steady state: {steady['rounds_needed']} more round(s) before the first 5-round window"
    window = steady["window_rounds"]
    parts = []
    for label, v in variables.items():
        mean = v["average"] or 1.0
        parts.append(
            f"{label}: data {100 * v['data_excursion'] / abs(mean):.1f}% (<=20%), "
            f"slope {100 * v['slope_excursion'] / abs(mean):.1f}% (<=10%) {'ok' if v['steady'] else 'not yet'}"
        )
    verdict = "STEADY" if steady["steady"] else "not steady"
    return f"window {window[0]}-{window[-1]}: {verdict}; " + "; ".join(parts)


def telemetry_line(record: Mapping[str, Any]) -> str:
    """Device temperature at the round's end, whether it throttled, set a new critical warning or logged new errors,
    whether its C3h latency monitor and the host's latencies differ, and its write amplification, when the device
    says ('' otherwise)."""
    change = (record.get("telemetry") or {}).get("change") or {}
    parts = []
    if change.get("temperature_end_c") is not None:
        parts.append(f"device {change['temperature_end_c']} C")
    if change.get("throttled"):
        parts.append("THERMAL THROTTLING during the round")
    if change.get("critical_warning_new"):
        parts.append("NEW CRITICAL WARNING: " + ", ".join(change["critical_warning_new"]))
    new_errors = max(len(change.get("error_log_new") or []), change.get("error_log_entries") or 0)
    if new_errors:
        parts.append(f"{new_errors:,} NEW ERROR LOG ENTRIES")
    said = round_disagreements(record)  # the drive's C3h latency monitor against the host's latencies
    if any(said.values()):
        parts.append("C3h LATENCY MONITOR AND HOST DIFFER (see the report)")
    waf = change.get("waf") or {}
    if waf.get("ratio") is not None:
        parts.append(f"write amplification {waf['ratio']:.2f} ({waf['source']})")
    elif waf.get("source"):
        parts.append(f"write amplification: none ({waf['note']})")
    return ", ".join(parts)


def hir_line(record: Mapping[str, Any]) -> str:
    """A HIR wait state's round: its bursts' IO-weighted mean IOPS and the recovery writes' IOPS."""
    from ptsbench.pts.advanced import Burst, mean_iops

    cells = record["cells"].values()
    bursts = [Burst(c["total"]["total_ios"], c["total"]["runtime_ms"]) for c in cells
              if c.get("role") == "burst" and c["total"]]
    recovery = [c["iops"] for c in cells if c.get("role") == "recovery"]
    text = f"{len(bursts)} bursts {mean_iops(bursts):,.0f} IOPS"
    return text + (f", recovery {recovery[0]:,.0f} IOPS" if recovery else "")


SHOWN_CELLS = 4  # cells named after a round of a phase without tracked variables (HIR has 361)


def cell_value(record: Mapping[str, Any], cell: str, metric: str) -> str:
    value = float(record["cells"][cell][metric])
    if metric == "bw_bytes":
        return f"{value / 1e6:,.1f} MB/s"
    if metric.startswith("lat"):
        return f"{value / 1e3:,.1f} us"
    return f"{value:,.0f} IOPS"


class LiveReporter:
    """Shows progress with rich on stderr."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)  # piped to a log: lines whole, not wrapped at a width no terminal gave
        self.console = console if console.is_terminal else Console(stderr=True, soft_wrap=True)
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
            TextColumn("{task.fields[detail]}"), console=self.console, transient=True,
            # as report/core/progress.py: no layout ten times a second for a log that shows none of it
            auto_refresh=self.console.is_terminal, refresh_per_second=2,
        )
        self.task: Any = None
        self.cells_seen: list[str] = []

    def __enter__(self) -> "LiveReporter":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def event(self, text: str) -> None:
        self.console.print(text, highlight=False)

    def round_started(self, progress: Progress) -> None:
        phase = progress.phase
        self.cells_seen = []
        step = f"round {progress.round_number}/{phase.max_rounds}" if progress.round_number else "preconditioning"
        description = f"[{progress.phase_index + 1}/{progress.phase_count}] {phase.phase.title} {step}"
        eta = f"ETA to max rounds {format_duration(progress.eta_to_max_s)}"
        if self.task is not None:
            self.progress.remove_task(self.task)
        self.task = self.progress.add_task(description, total=len(phase.cells) if progress.round_number else None,
                                           detail=eta)

    def fio_status(self, progress: Progress, cell: str | None, status: FioStatus) -> None:
        if not progress.round_number:
            fio_eta = format_duration(status.eta_s) if status.eta_s is not None else "?"
            detail = f"{status.bw_bytes / 1e6:,.1f} MB/s, fio ETA {fio_eta}; then rounds"
            self.progress.update(self.task, detail=detail)
            return
        if cell and cell not in self.cells_seen:
            self.cells_seen.append(cell)
        done = max(len(self.cells_seen) - 1, 0)
        eta = format_duration(max(progress.eta_to_max_s - status.elapsed_s, 0))
        detail = f"{cell or '...'}: {status.iops:,.0f} IOPS {status.bw_bytes / 1e6:,.1f} MB/s; ETA to max rounds {eta}"
        self.progress.update(self.task, completed=done, detail=detail)

    def round_finished(self, progress: Progress, record: Mapping[str, Any]) -> None:
        phase = progress.phase
        shown = [(t.cell, t.metric) for t in phase.phase.tracked] or [(c.name, "iops") for c in phase.cells]
        tracked = ", ".join(f"{cell} {cell_value(record, cell, metric)}" for cell, metric in shown[:SHOWN_CELLS])
        if phase.phase.role == "wait-state":
            tracked = hir_line(record)
        elif len(shown) > SHOWN_CELLS:
            tracked += f" and {len(shown) - SHOWN_CELLS} more cells"
        line = f"{phase.phase.title} round {record['round']}: {tracked}".rstrip(": ")
        status = "; ".join(filter(None, [steady_line(record), telemetry_line(record)]))
        self.console.print(f"{line}; {status}" if status else line, highlight=False)


class MarkOnLayout:
    """A run's reporter that also marks the target file fio makes as this run's (device/userfile.py) at fio's first
    status, when fio has laid it out: a run killed after that resumes on it, and on no file put there instead."""

    def __init__(self, shown: Reporter, paths: list[str], run_token: str | None) -> None:
        self.shown, self.paths, self.run_token = shown, paths, run_token

    def event(self, text: str) -> None:
        self.shown.event(text)

    def round_started(self, progress: Progress) -> None:
        self.shown.round_started(progress)

    def fio_status(self, progress: Progress, cell: str | None, status: FioStatus) -> None:
        if self.paths:
            from ptsbench.device.userfile import mark_made

            mark_made(self.paths, self.run_token)
            self.paths = []
        self.shown.fio_status(progress, cell, status)

    def round_finished(self, progress: Progress, record: Mapping[str, Any]) -> None:
        self.shown.round_finished(progress, record)
