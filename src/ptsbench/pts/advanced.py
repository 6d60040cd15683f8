"""Analysis of the advanced PTS tests, pure functions on measurements (no fio, no store):

- CBW / DIRTH / ECW operating points (`select_operating_points`), with these exact rules:
  * MaxIOPS: among the cells whose mean (total) latency is under the limit (strictly < 5 ms), the highest IOPS;
  * MinIOPS: the TC1/QD1 cell, whatever its latency;
  * MidIOPS: among the same under-the-limit cells, the one whose IOPS is nearest to the middle,
    (MaxIOPS + MinIOPS) / 2, by absolute difference.
  Ties (equal IOPS, or equally near the middle) go to the lower total outstanding IO (TC x QD), then the lower TC:
  the lighter load reaching the same rate. With no cell under the limit, MaxIOPS and MidIOPS are None.
- demand variation (IOPS against QD, one series per TC) and demand intensity (mean latency against IOPS, one series
  per TC, points in QD order);
- XSR recovery time: minutes from the start of the third access group until its throughput is back at the first
  group's average (the first sample at or above it; a sample counts at its end);
- HIR: mean IOPS of the write bursts of each wait state (IO-weighted: all IOs over all burst time) against the
  steady-state baseline, and IOPS against time across all wait states;
- response-time histograms from fio's json+ latency bins: counts per bucket, percentiles with fio's own method
  (fio/output.py's percentiles_from_bins), mean and maximum as fio measured them.
"""

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ptsbench.errors import PtsbenchError
from ptsbench.fio.output import LatencySummary, percentiles_from_bins

LATENCY_LIMIT_NS = 5_000_000.0  # MaxIOPS / MidIOPS: mean response time under 5 ms
HISTOGRAM_PERCENTILES = ("99", "99.9", "99.99", "99.999")
# Bucket edges of a response-time histogram: 0, then 1-2-5 steps from 1 us to 10 s (the last bucket is open-ended).
HISTOGRAM_EDGES_NS: tuple[int, ...] = (0, *(step * 10**power for power in range(3, 10) for step in (1, 2, 5)), 10**10)


# ---------------------------------------------------------------------------------------------------------------
# demand intensity: cells, operating points, series


@dataclass(frozen=True)
class DemandCell:
    """One TC x QD cell of a demand-intensity round: TC is fio numjobs, QD is fio iodepth (per thread)."""

    name: str
    tc: int
    qd: int
    iops: float
    lat_mean_ns: float

    @property
    def toio(self) -> int:
        """Total outstanding IO."""
        return self.tc * self.qd


def demand_cells(specs: Iterable[Mapping[str, Any]], values: Mapping[str, Mapping[str, Any]],
                 names: Iterable[str] | None = None) -> list[DemandCell]:
    """DemandCells from cell descriptions (name, numjobs, iodepth: plan.json cells or round.json cells) and their
    values by name (iops, lat_mean_ns: a round's cells or a phase's window averages); `names` keeps only those."""
    wanted = set(names) if names is not None else None
    cells = []
    for spec in specs:
        name = str(spec["name"])
        if (wanted is not None and name not in wanted) or name not in values:
            continue
        value = values[name]
        cells.append(DemandCell(name, int(spec["numjobs"]), int(spec["iodepth"]), float(value["iops"]),
                                float(value["lat_mean_ns"])))
    return cells


@dataclass(frozen=True)
class OperatingPoints:
    """MaxIOPS, MidIOPS and MinIOPS of a demand-intensity test, and the numbers they were chosen by."""

    max: DemandCell | None
    mid: DemandCell | None
    min: DemandCell
    middle_iops: float | None  # (MaxIOPS + MinIOPS) / 2, what MidIOPS is nearest to
    limit_ns: float

    def depths(self) -> dict[str, tuple[int, int]]:
        """{'max': (TC, QD), ...} for the points that exist (what operating_point_phases takes)."""
        chosen = {"max": self.max, "mid": self.mid, "min": self.min}
        return {point: (cell.tc, cell.qd) for point, cell in chosen.items() if cell is not None}


def _lighter_first(cell: DemandCell) -> tuple[int, int]:
    return cell.toio, cell.tc


def select_operating_points(cells: Sequence[DemandCell], limit_ns: float = LATENCY_LIMIT_NS) -> OperatingPoints:
    """Choose MaxIOPS, MidIOPS and MinIOPS by the rules in the module docstring."""
    minimum = next((cell for cell in cells if (cell.tc, cell.qd) == (1, 1)), None)
    if minimum is None:
        raise PtsbenchError("no TC1/QD1 cell among the measurements", "MinIOPS is TC1/QD1: keep it in the sweep")
    under = [cell for cell in cells if cell.lat_mean_ns < limit_ns]
    if not under:
        return OperatingPoints(None, None, minimum, None, limit_ns)
    maximum = min(under, key=lambda cell: (-cell.iops, *_lighter_first(cell)))
    middle = (maximum.iops + minimum.iops) / 2
    mid = min(under, key=lambda cell: (abs(cell.iops - middle), *_lighter_first(cell)))
    return OperatingPoints(maximum, mid, minimum, middle, limit_ns)


def demand_variation(cells: Sequence[DemandCell]) -> dict[int, list[tuple[int, float]]]:
    """IOPS against QD, one series per TC (highest TC first), points in increasing QD."""
    series: dict[int, list[tuple[int, float]]] = {}
    for cell in sorted(cells, key=lambda c: (-c.tc, c.qd)):
        series.setdefault(cell.tc, []).append((cell.qd, cell.iops))
    return series


def demand_intensity(cells: Sequence[DemandCell]) -> dict[int, list[tuple[float, float]]]:
    """(IOPS, mean latency ns) per TC (highest TC first), points in increasing QD: the demand intensity curves."""
    series: dict[int, list[tuple[float, float]]] = {}
    for cell in sorted(cells, key=lambda c: (-c.tc, c.qd)):
        series.setdefault(cell.tc, []).append((cell.iops, cell.lat_mean_ns))
    return series


# ---------------------------------------------------------------------------------------------------------------
# XSR


@dataclass(frozen=True)
class XsrRecovery:
    """How long the third access group took to get back to the first group's average throughput."""

    baseline_bw_bytes: float  # the first group's average throughput (bytes/s)
    recovered_sample: int | None  # 0-based index of the first third-group sample at or above the baseline
    recovery_s: float | None  # from the start of the third group to the end of that sample; None: never

    @property
    def recovery_min(self) -> float | None:
        return None if self.recovery_s is None else self.recovery_s / 60


def xsr_recovery(group1_bw_bytes: Sequence[float], group3_bw_bytes: Sequence[float], sample_s: float = 60.0,
                 group3_ends_s: Sequence[float] | None = None) -> XsrRecovery:
    """Recovery time of XSR. Samples are throughputs (bytes/s) of back-to-back intervals of `sample_s`; give
    `group3_ends_s` (seconds from the group's start to each sample's end) when the measured times are known."""
    if not group1_bw_bytes or not group3_bw_bytes:
        raise PtsbenchError("XSR recovery needs samples of the first and third groups", "run all three groups")
    ends = list(group3_ends_s) if group3_ends_s is not None else [(k + 1) * sample_s
                                                                   for k in range(len(group3_bw_bytes))]
    if len(ends) != len(group3_bw_bytes):
        raise PtsbenchError("one end time per third-group sample is needed", f"got {len(ends)} for "
                            f"{len(group3_bw_bytes)} samples")
    baseline = sum(group1_bw_bytes) / len(group1_bw_bytes)
    for index, bw in enumerate(group3_bw_bytes):
        if bw >= baseline:
            return XsrRecovery(baseline, index, ends[index])
    return XsrRecovery(baseline, None, None)


# ---------------------------------------------------------------------------------------------------------------
# HIR


@dataclass(frozen=True)
class Burst:
    """One measured stretch of writes: fio's total IOs and runtime."""

    ios: int
    runtime_ms: float

    @property
    def iops(self) -> float:
        return self.ios * 1000 / self.runtime_ms if self.runtime_ms else 0.0


@dataclass(frozen=True)
class HirRow:
    """One wait state: mean IOPS of its bursts against the steady-state baseline."""

    wait_s: float
    bursts: int
    mean_iops: float
    baseline_iops: float

    @property
    def ratio(self) -> float:
        """Mean burst IOPS / baseline: above 1 means the idle time let the drive recover."""
        return self.mean_iops / self.baseline_iops if self.baseline_iops else 0.0


def mean_iops(bursts: Sequence[Burst]) -> float:
    """IO-weighted mean: all IOs over all burst time (not the mean of per-burst rates)."""
    runtime_ms = sum(burst.runtime_ms for burst in bursts)
    return sum(burst.ios for burst in bursts) * 1000 / runtime_ms if runtime_ms else 0.0


def hir_summary(baseline_iops: float, bursts_by_wait: Mapping[float, Sequence[Burst]]) -> list[HirRow]:
    """One row per wait state, shortest wait first."""
    return [HirRow(wait, len(bursts), mean_iops(bursts), baseline_iops)
            for wait, bursts in sorted(bursts_by_wait.items())]


@dataclass(frozen=True)
class HirWaitState:
    """The measurements of one wait state: its bursts in order, then its recovery writes."""

    wait_s: float
    bursts: tuple[Burst, ...]
    recovery: Burst | None
    recovery_s: float


def hir_timeline(wait_states: Sequence[HirWaitState], burst_s: float) -> list[tuple[float, float, float, str]]:
    """IOPS against time across all wait states run back to back: (start s, IOPS, wait s, 'burst'|'recovery'),
    burst k of a wait state W starting k x (burst_s + W) after the wait state began, the recovery after the last
    burst's idle time (the schedule of advanced_specs.hir_phases)."""
    points: list[tuple[float, float, float, str]] = []
    offset_s = 0.0
    for state in wait_states:
        period_s = burst_s + state.wait_s
        points.extend((offset_s + k * period_s, burst.iops, state.wait_s, "burst")
                      for k, burst in enumerate(state.bursts))
        recovery_start_s = offset_s + len(state.bursts) * period_s
        if state.recovery is not None:
            points.append((recovery_start_s, state.recovery.iops, state.wait_s, "recovery"))
        offset_s = recovery_start_s + state.recovery_s
    return points


# ---------------------------------------------------------------------------------------------------------------
# response-time histograms


@dataclass(frozen=True)
class ResponseHistogram:
    """A response-time histogram: counts[i] IOs with latency in [edges_ns[i], edges_ns[i + 1]) (the last bucket
    has no upper edge), with fio's percentiles, mean and maximum."""

    edges_ns: tuple[int, ...]
    counts: tuple[int, ...]
    n: int
    mean_ns: float | None  # None where fio measured no latency
    max_ns: float | None
    percentiles_ns: dict[str, float]


def response_histogram(lat: LatencySummary, edges_ns: Sequence[int] = HISTOGRAM_EDGES_NS,
                       wanted: Sequence[str] = HISTOGRAM_PERCENTILES) -> ResponseHistogram:
    """Bucket fio's json+ latency bins (value ns -> count) by `edges_ns` (ascending, first 0)."""
    edges = tuple(edges_ns)
    if not edges or edges[0] != 0 or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise PtsbenchError("histogram edges must start at 0 and increase", f"got {edges[:5]}...")
    counts = [0] * len(edges)
    for value, count in lat.bins.items():
        counts[bisect_right(edges, value) - 1] += count
    return ResponseHistogram(edges, tuple(counts), sum(counts), lat.mean_ns, lat.max_ns,
                             percentiles_from_bins(lat.bins, wanted))
