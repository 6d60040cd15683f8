"""A PTS run's store read for the report: the context every section reads (manifest, plan, per-host views), the
phases' cells, block-size x mix matrices and steady-state determinations, and the tracked metrics' units.

Views are pts/phases.py PhaseViews: a phase's plan entry, its finished rounds and its result (None while running).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SPEC_NAMES = {"2.0": "SNIA PTS 2.0.2", "1.1": "SNIA PTS-E 1.1"}
# metric -> (unit, factor from the stored value, number kind)
METRIC_UNITS: dict[str, tuple[str, float, str]] = {
    "iops": ("IOPS", 1.0, "iops"),
    "bw_bytes": ("MB/s", 1e-6, "mbs"),
    "lat_mean_ns": ("µs", 1e-3, "us"),
    "lat_max_ns": ("µs", 1e-3, "us"),
}
METRIC_NAMES = {"iops": "IOPS", "bw_bytes": "throughput", "lat_mean_ns": "mean latency", "lat_max_ns": "max latency"}


def metric_axis(metric: str) -> str:
    """Axis label of a tracked metric with its unit: 'IOPS', 'throughput (MB/s)', 'mean latency (µs)'."""
    from ptsbench.report.core.style import axis_label

    unit = METRIC_UNITS.get(metric, ("", 1.0, ""))[0]
    name = METRIC_NAMES.get(metric, metric)
    return name if name == unit else axis_label(name, unit)


@dataclass(frozen=True)
class PtsContext:
    """What every PTS section reads: the manifest, the plan, and the store for per-phase files."""

    manifest: Mapping[str, Any]
    plan: Mapping[str, Any]
    pts: Any  # PtsStore
    hosts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # run on hosts: host -> phase key -> view

    @property
    def capacity_bytes(self) -> int:
        return int(self.manifest["target_info"]["size_bytes"])


def slug(*parts: str) -> str:
    """A key for tables, figures and sections: lower case, '-' for anything but letters, digits, - and _."""
    text = "-".join(parts).lower()
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-")


def scaled(value: Any, factor: float) -> float | None:
    """A stored number in the unit shown (None stays None)."""
    return None if value is None else float(value) * factor


def bs_label(bs_bytes: int) -> str:
    """A block size as people write it: 4k, 128k, 1m."""
    from ptsbench.units import format_bs

    return format_bs(int(bs_bytes))


def cells_of(view: Any) -> list[dict[str, Any]]:
    """A phase's cells as planned."""
    return list(view.plan["cells"])


def axes_of(view: Any) -> tuple[list[int], list[int]]:
    """Block sizes and mixes (read %) of a phase, in the order the spec runs them."""
    sizes, mixes = view.axes()
    return sizes, mixes


def matrix_of(view: Any, value_of: Any) -> list[list[float | None]]:
    """rows: block sizes, columns: mixes; value_of(cell values dict) -> number or None."""
    sizes, mixes = axes_of(view)
    values = view.values()
    by_key = {(c["bs_bytes"], c["read_pct"]): values.get(c["name"]) for c in cells_of(view)}
    return [[value_of(by_key[(bs, mix)]) if by_key.get((bs, mix)) else None for mix in mixes] for bs in sizes]


def mix_of(cell: Mapping[str, Any]) -> str:
    """A cell's read/write mix: '70/30'."""
    from ptsbench.pts.cells import mix_label

    return mix_label(int(cell["read_pct"]))


def determination_of(view: Any) -> dict[str, Any]:
    """Tracked variable -> its steady-state determination: the phase's final one, or after the latest round."""
    if view.result is not None:
        return dict(view.result.get("determination") or {})
    if view.rounds:
        return dict((view.rounds[-1].get("steady") or {}).get("variables") or {})
    return {}


def tracked_metric(view: Any, label: str, determined: Mapping[str, Any] | None) -> str:
    """A tracked variable's metric: as determined (a run on hosts labels it "HOST CELL METRIC"), else the plan's."""
    if determined and determined.get("metric"):
        return str(determined["metric"])
    tracked = next((t for t in view.plan["tracked"] if f"{t['cell']} {t['metric']}" == label), None)
    return str(tracked["metric"]) if tracked else "iops"


def phase_metric(view: Any) -> str:
    """The metric a phase is judged on: its first tracked variable's, else IOPS."""
    return str(view.plan["tracked"][0]["metric"]) if view.plan["tracked"] else "iops"


def metric_unit(metric: str) -> tuple[str, float, str]:
    """(unit, factor from the stored value, number kind) of a tracked metric; an unknown one is shown as stored."""
    return METRIC_UNITS.get(metric, (metric, 1.0, "number"))


def load_context(store: Any) -> tuple["PtsContext", list[Any]]:
    """The context of a `ptsbench pts` directory's sections and its phases' views (all hosts together)."""
    from ptsbench.pts.phases import load_views
    from ptsbench.pts.store import PtsStore
    from ptsbench.store import read_json

    pts = PtsStore(store)
    hosts = [str(host["host"]) for host in store.manifest.get("hosts") or ()]
    context = PtsContext(store.manifest, read_json(store.root / "plan.json"), pts,
                         {host: {view.key: view for view in load_views(pts, host)} for host in hosts})
    return context, list(load_views(pts))


def span(numbers: Sequence[int]) -> str:
    """Round numbers as 'first-last'; '-' for none."""
    return f"{numbers[0]}-{numbers[-1]}" if numbers else "-"


def duration_label(ns: float, micro: str = "us") -> str:
    """A bucket edge as people read it: '200 us', '1 ms' (micro: how microseconds are spelled, 'us' or 'µs')."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), (micro, 1e3)):
        if ns >= scale:
            return f"{ns / scale:g} {unit}"
    return f"{ns:g} ns"


def bucket_labels(edges_ns: Sequence[float], micro: str = "us") -> list[str]:
    """'1 us - 2 us' per bucket, the last one open-ended ('>= 10 s')."""
    return [f"{duration_label(low, micro)} - {duration_label(edges_ns[index + 1], micro)}"
            if index + 1 < len(edges_ns) else f">= {duration_label(low, micro)}" for index, low in enumerate(edges_ns)]


def throttled_text(telemetry: Any, unknown: str) -> str:
    """A phase's throttling (pts/phases.py PhaseTelemetry): 'rounds 3,4', 'no', or `unknown` when the device never
    said."""
    if telemetry.throttled_rounds:
        return "rounds " + ",".join(map(str, telemetry.throttled_rounds))
    return "no" if telemetry.throttling_known else unknown
