"""A stored run's headline values, by name, from the store alone: what gates judge and the catalog indexes.

Names follow the run's own tables. PTS: "TEST: WORKLOAD METRIC" for each tracked workload at steady state (a phase
tracking nothing: its first two cells), e.g. "IOPS: rnd 4k 0/100 iops". Case runs and sweeps: "CASE/JOB DIRECTION
METRIC" for every job and direction (with "@HOST" after the job on hosts), e.g. "null/null read p99.99". METRIC is
`iops`, `MB/s`, `mean` (latency) or a percentile `p99.99`. Values are kept in stored units: IOPS, bytes/s, ns.

Each value carries the noise measured for it, in the same unit, or None when nothing measured it: for PTS the
steady-state window's data excursion (max - min over the window's rounds); for case runs with --repeat the spread
(max - min) of the repetitions; a case that ran once has no measured noise.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ptsbench.report.cases.tables import RESULT_PERCENTILES

QUANTITIES = ("iops", "mbs", "lat")  # what a value measures: IOPS, bandwidth (bytes/s), latency (ns)
HIGHER_IS_BETTER = {"iops": True, "mbs": True, "lat": False}
STORED_UNITS = {"iops": "IOPS", "mbs": "bytes/s", "lat": "ns"}  # the unit each quantity's values are kept in


@dataclass(frozen=True)
class Value:
    """One headline value of a run."""

    name: str
    quantity: str  # one of QUANTITIES
    value: float  # IOPS, bytes/s or ns
    noise: float | None  # same unit; None when unknown
    noise_source: str  # where the noise comes from, or why it is unknown


def metric_quantity(metric: str) -> str | None:
    """The quantity a metric token names ('iops', 'MB/s', 'mean', 'p99.99'), None for anything else."""
    token = metric.lower()
    if token == "iops":
        return "iops"
    if token == "mb/s":
        return "mbs"
    if token == "mean" or (token.startswith("p") and token[1:] in RESULT_PERCENTILES):
        return "lat"
    return None


def _percentile_metrics(percentiles_ns: Mapping[str, Any]) -> list[tuple[str, str, float]]:
    return [(f"p{key}", "lat", float(percentiles_ns[key])) for key in RESULT_PERCENTILES if key in percentiles_ns]


def _spread(numbers: Sequence[float]) -> float | None:
    return max(numbers) - min(numbers) if len(numbers) > 1 else None


# --- PTS --------------------------------------------------------------------------------------------------------

def _round_number(cell: Mapping[str, Any], metric: str) -> float | None:
    """A round cell's value of a metric as named in values(): top-level numbers, percentiles from its total."""
    if metric.startswith("p"):
        found = ((cell.get("total") or {}).get("lat_percentiles_ns") or {}).get(metric[1:])
    else:
        found = cell.get({"iops": "iops", "MB/s": "bw_bytes", "mean": "lat_mean_ns"}[metric])
    return None if found is None else float(found)


def pts_values(views: Iterable[Any]) -> list[Value]:
    """Every finished phase's tracked workloads at steady state (window averages), with their window's excursion."""
    values: list[Value] = []
    for view in views:
        if view.result is None or not view.rounds:
            continue
        window = view.values()
        cells = list(dict.fromkeys(t["cell"] for t in view.plan["tracked"])) or \
            [cell["name"] for cell in view.plan["cells"][:2]]
        rounds = view.window_rounds()
        span = view.result["window_rounds"]
        source = f"steady-state window data excursion (rounds {span[0]}-{span[-1]})" if span else "no window"
        for cell in cells:
            found = window.get(cell)
            if not found:
                continue
            metrics = [("iops", "iops", found.get("iops")), ("MB/s", "mbs", found.get("bw_bytes")),
                       ("mean", "lat", found.get("lat_mean_ns")),
                       *_percentile_metrics(found.get("lat_percentiles_ns") or {})]
            for metric, quantity, number in metrics:
                if number is None:
                    continue
                per_round = [n for r in rounds if cell in r["cells"]
                             if (n := _round_number(r["cells"][cell], metric)) is not None]
                noise = _spread(per_round)
                values.append(Value(f"{view.plan['title']}: {cell} {metric}", quantity, float(number), noise,
                                    source if noise is not None else "unknown: one round in the window"))
    return values


# --- case runs and sweeps -----------------------------------------------------------------------------------------

def case_values(rows: Iterable[Any]) -> list[Value]:
    """Every job and direction of a case run or sweep (ResultRow-like rows); failed rows have no values. A case run
    with --repeat gives each value once: the mean of its repetitions, their spread (max - min) as its noise."""
    from ptsbench.report.fleet_members import base_case_name

    samples: dict[tuple[str, str], tuple[str, list[float]]] = {}
    for row in rows:
        if row.iops is None or row.direction not in ("read", "write", "total"):
            continue
        case = base_case_name(row.case, getattr(row, "repetition", 0))
        prefix = f"{case}/{row.job}{f'@{row.host}' if row.host else ''} {row.direction}"
        metrics = [("iops", "iops", row.iops), ("MB/s", "mbs", row.bw_bytes), ("mean", "lat", row.lat_mean_ns),
                   *_percentile_metrics(row.lat_percentiles_ns)]
        for metric, quantity, number in metrics:
            if number is not None:
                samples.setdefault((f"{prefix} {metric}", quantity), (quantity, []))[1].append(float(number))
    values = []
    for (name, quantity), (_quantity, numbers) in samples.items():
        noise = _spread(numbers)
        values.append(Value(name, quantity, sum(numbers) / len(numbers), noise,
                            f"spread of {len(numbers)} repetitions (--repeat)" if noise is not None
                            else "unknown: the case ran once (--repeat gives its spread)"))
    return values


def run_values(store: Any) -> list[Value]:
    """The headline values of a run directory (RunStore), whatever its kind."""
    if store.kind == "pts":
        from ptsbench.report.pts.views import load_context

        return pts_values(load_context(store)[1])
    from ptsbench.case_records import load_records
    from ptsbench.report.cases.tables import result_rows

    return case_values(result_rows(load_records(store)))
