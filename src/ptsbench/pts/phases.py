"""A PTS phase as stored, read back for tables and reports: its plan entry, finished rounds and result, and the
values they show (window averages when finished, else the latest round's)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ptsbench.device.waf import combined_ratio
from ptsbench.pts.store import PtsStore, host_phase_result, host_round
from ptsbench.store import read_json


@dataclass(frozen=True)
class PhaseView:
    """A phase as stored: its plan entry, finished rounds, summary (None while running), and the values shown."""

    plan: Mapping[str, Any]
    rounds: list[dict[str, Any]]
    result: dict[str, Any] | None

    @property
    def key(self) -> str:
        return str(self.plan["key"])

    def values(self) -> dict[str, Any]:
        """Per cell: the window averages when finished, else the latest round's values."""
        if self.result is not None:
            window: dict[str, Any] = self.result["window"]
            return window
        if not self.rounds:
            return {}
        cells = self.rounds[-1]["cells"]
        return {name: {**cell, "read_iops": (cell["read"] or {}).get("iops"),
                       "write_iops": (cell["write"] or {}).get("iops"),
                       "read_bw_bytes": (cell["read"] or {}).get("bw_bytes"),
                       "write_bw_bytes": (cell["write"] or {}).get("bw_bytes"),
                       "lat_percentiles_ns": (cell["total"] or {}).get("lat_percentiles_ns", {})}
                for name, cell in cells.items()}

    def source(self, how: str = "average over") -> str:
        """Where the phase's values come from: `how` (e.g. "maximum over") its measurement window's rounds."""
        if self.result is not None:
            window = self.result["window_rounds"]
            span = "no window" if not window else f"round {window[0]}" if len(window) == 1 else \
                f"rounds {window[0]}-{window[-1]}"
            throttled = self.throttled_window_rounds()
            marked = f"; THERMAL THROTTLING in window round(s) {', '.join(map(str, throttled))}" if throttled else ""
            return f"{how} {span}; {self.result['stop_reason']}{marked}"
        if self.rounds:
            return f"NOT FINISHED: latest round {len(self.rounds)} shown, not a measurement window"
        return "not started"

    def axes(self) -> tuple[list[int], list[int]]:
        """Block sizes and mixes (read %) of the phase's cells, in the order the spec runs them."""
        cells = self.plan["cells"]
        return list(dict.fromkeys(c["bs_bytes"] for c in cells)), list(dict.fromkeys(c["read_pct"] for c in cells))

    def window_rounds(self) -> list[dict[str, Any]]:
        """The rounds the shown values come from: the measurement window when finished, else the latest round."""
        if self.result is not None:
            numbers = set(self.result["window_rounds"])
            return [r for r in self.rounds if int(r["round"]) in numbers]
        return self.rounds[-1:]

    def throttled_window_rounds(self) -> list[int]:
        """The measurement window's rounds during which the drive throttled (its thermal counters rose): marked
        wherever the window's values or its steady state are shown, never silently part of it."""
        if self.result is None:
            return []
        numbers = set(self.result["window_rounds"])
        return [int(r["round"]) for r in self.rounds if int(r["round"]) in numbers
                and ((r.get("telemetry") or {}).get("change") or {}).get("throttled")]

    def cpu_pct(self, cell: str) -> float | None:
        """fio's CPU use (usr + sys %) of a cell, averaged over the window rounds that ran it."""
        found = [r["cells"][cell] for r in self.window_rounds() if cell in r["cells"]]
        return sum(c["usr_cpu"] + c["sys_cpu"] for c in found) / len(found) if found else None


def load_views(pts: PtsStore, host: str | None = None) -> list[PhaseView]:
    """Every phase as stored; for a run on hosts, `host` None: all hosts together, else as that host saw it."""
    plan = read_json(pts.root / "plan.json")
    views = [PhaseView(p, pts.finished_rounds(p["key"]), pts.phase_result(p["key"])) for p in plan["phases"]]
    if host is None:
        return views
    return [PhaseView(view.plan, [host_round(r, host) for r in view.rounds],
                      None if view.result is None else host_phase_result(view.result, host)) for view in views]


def xsr_samples(view: PhaseView) -> tuple[list[float], list[float]]:
    """One XSR group's throughput samples (bytes/s, one per round) and each sample's end in seconds from the
    group's start (the rounds' wall times added up)."""
    bandwidths = [float(next(iter(r["cells"].values()))["bw_bytes"]) for r in view.rounds]
    ends, elapsed = [], 0.0
    for record in view.rounds:
        elapsed += float(record["wall_s"])
        ends.append(elapsed)
    return bandwidths, ends


@dataclass(frozen=True)
class PhaseTelemetry:
    """A phase's telemetry over its rounds, as stored (None: nothing known): what the report's telemetry table and
    the terminal's both show."""

    rounds: int
    min_temperature_c: float | None
    max_temperature_c: float | None
    throttled_rounds: tuple[int, ...]
    throttling_known: bool  # the device said whether it throttled, in some round
    media_errors: int | None  # the increase over the phase
    written_bytes: float | None  # device data written over the phase
    busy_mean_pct: float | None  # host CPU busy during the rounds
    busy_max_pct: float | None
    waf: float | None  # media bytes over host bytes over the phase's rounds (device/waf.py)
    waf_source: str | None  # the log the media bytes came from


def phase_telemetry(view: PhaseView) -> PhaseTelemetry | None:
    """A phase's telemetry summed up over its rounds; None when its rounds have none (runs made before telemetry)."""
    records = [(int(r["round"]), r["telemetry"]) for r in view.rounds if r.get("telemetry")]
    if not records:
        return None
    changes = [t["change"] for _, t in records]
    temperatures = [v for c in changes for k in ("temperature_start_c", "temperature_end_c")
                    if (v := c.get(k)) is not None]
    errors = [v for c in changes if (v := c.get("media_errors")) is not None]
    written = [v for c in changes if (v := c.get("data_written_bytes")) is not None]
    busy = [float(v) for _, t in records if (v := (t.get("cpu") or {}).get("busy_pct")) is not None]
    waf, waf_source = combined_ratio([c["waf"] for c in changes if c.get("waf")])
    return PhaseTelemetry(
        len(records), min(temperatures, default=None), max(temperatures, default=None),
        tuple(number for number, t in records if t["change"].get("throttled")),
        any(c.get("throttled") is not None for c in changes),
        sum(errors) if errors else None, sum(written) if written else None,
        sum(busy) / len(busy) if busy else None, max(busy, default=None), waf, waf_source)
