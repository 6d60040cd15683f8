"""A stored run's headline values, by name, from the store alone: what gates judge and the catalog indexes.

Names follow the run's own tables. PTS: "TEST: WORKLOAD METRIC" for each tracked workload at steady state (a phase
tracking nothing: its first two cells), e.g. "IOPS: rnd 4k 0/100 iops". Case runs and sweeps: "CASE/JOB DIRECTION
METRIC" for every job and direction (with "@HOST" after the job on hosts), e.g. "null/null read p99.99". METRIC is
`iops`, `MB/s`, `mean` or `max` (latency) or a percentile `p99.99`. Values are kept in stored units: IOPS, bytes/s, ns.

Each latency percentile carries its evidence: the IOs behind it (`samples`) and the IOs slower than it (`beyond`),
counted in fio's json+ bins where the run stored them, else from the count and the percentile (fio/output.py). A
percentile with fewer than MIN_TAIL_IOS IOs beyond it is not measured: it is the slowest of a handful of IOs.

Each value carries the noise measured for it, in the same unit, or None when nothing measured it: for PTS the
steady-state window's data excursion (max - min over the window's rounds); for case runs with --repeat the spread
(max - min) of the repetitions; a case that ran once has no measured noise.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ptsbench.fio.output import MIN_TAIL_IOS

QUANTITIES = ("iops", "mbs", "lat")  # what a value measures: IOPS, bandwidth (bytes/s), latency (ns)
HIGHER_IS_BETTER = {"iops": True, "mbs": True, "lat": False}
STORED_UNITS = {"iops": "IOPS", "mbs": "bytes/s", "lat": "ns"}  # the unit each quantity's values are kept in
_PERCENTILE_RE = re.compile(r"^p(\d{1,2}(?:\.\d+)?)$")


@dataclass(frozen=True)
class Value:
    """One headline value of a run."""

    name: str
    quantity: str  # one of QUANTITIES
    value: float  # IOPS, bytes/s or ns
    noise: float | None  # same unit; None when unknown
    noise_source: str  # where the noise comes from, or why it is unknown
    samples: int | None = None  # a percentile's IOs behind it; None: not a percentile, or not stored
    beyond: int | None = None  # a percentile's IOs slower than it; None: not a percentile, or not stored

    @property
    def percentile(self) -> bool:
        return _PERCENTILE_RE.match(self.name.split()[-1].lower()) is not None

    def measured(self, min_tail_ios: int = MIN_TAIL_IOS) -> bool:
        """False for a percentile with fewer than `min_tail_ios` IOs beyond it, or whose evidence is not stored."""
        return not self.percentile or (self.beyond is not None and self.beyond >= min_tail_ios)

    def evidence(self) -> str:
        """'2,000 IOs, 0 beyond' for a percentile; '' for other values."""
        if not self.percentile:
            return ""
        if self.samples is None or self.beyond is None:
            return "IOs behind it not stored"
        return f"{self.samples:,} IOs, {self.beyond:,} beyond"


def metric_quantity(metric: str) -> str | None:
    """The quantity a metric token names ('iops', 'MB/s', 'mean', 'p99.99'), None for anything else."""
    token = metric.lower()
    if token == "iops":
        return "iops"
    if token == "mb/s":
        return "mbs"
    found = _PERCENTILE_RE.match(token)
    if token in ("mean", "max") or (found and 0 < float(found.group(1)) < 100):
        return "lat"
    return None


def names_match(metric: str, name: str) -> bool:
    """Whether a gate's METRIC names a value: its words end the value's name. Its first word may be a whole word of
    the name or, of a case run's "CASE/JOB@HOST", the job alone or the job with its host: `randread read iops` names
    "a-randread@dev_loop19/randread read iops" (a PTS name's "0/100" is a mix, never split)."""
    wanted, words = metric.lower().split(), name.lower().split()
    if not wanted or len(wanted) > len(words) or words[len(words) - len(wanted) + 1:] != wanted[1:]:
        return False
    head = words[-len(wanted)]
    if ": " in name or head != words[0]:  # PTS "TEST: WORKLOAD METRIC", or not the CASE/JOB word
        return wanted[0] == head
    job = head.rsplit("/", 1)[-1]
    return wanted[0] in (head, job, job.split("@", 1)[0])


def nearest_names(metric: str, names: Iterable[str], count: int = 3) -> list[str]:
    """The value names closest to a METRIC that names none (difflib's ratio on the name's last words), best
    first."""
    import difflib

    wanted = " ".join(metric.lower().split())
    size = len(wanted.split())
    scores: dict[str, float] = {}
    for name in dict.fromkeys(names):
        tail = " ".join(name.lower().split()[-size:])
        scores[name] = max(difflib.SequenceMatcher(None, wanted, text).ratio()
                           for text in (tail, tail.rsplit("/", 1)[-1], name.lower()))
    best = sorted(scores, key=lambda name: (-scores[name], name))[:count]
    return [name for name in best if scores[name] >= 0.5]


Metric = tuple[str, str, float | None, int | None, int | None]  # metric, quantity, value, samples, beyond


def _percentile_metrics(percentiles_ns: Mapping[str, Any], samples: int | None,
                        beyond: Mapping[str, int] | None) -> list[Metric]:
    """Every stored percentile (in numeric order) with its evidence: `beyond` as stored, or from the count alone."""
    from ptsbench.fio.output import beyond_by_count

    metrics: list[Metric] = []
    for key in sorted(percentiles_ns, key=float):
        past = (beyond or {}).get(key)
        if past is None and beyond is None and samples:
            past = beyond_by_count(key, samples)
        metrics.append((f"p{key}", "lat", float(percentiles_ns[key]), samples, past))
    return metrics


def _spread(numbers: Sequence[float]) -> float | None:
    return max(numbers) - min(numbers) if len(numbers) > 1 else None


# --- PTS --------------------------------------------------------------------------------------------------------

def _round_number(cell: Mapping[str, Any], metric: str) -> float | None:
    """A round cell's value of a metric as named in values(): top-level numbers, percentiles from its total."""
    if metric.startswith("p"):
        found = ((cell.get("total") or {}).get("lat_percentiles_ns") or {}).get(metric[1:])
    else:
        found = cell.get({"iops": "iops", "MB/s": "bw_bytes", "mean": "lat_mean_ns", "max": "lat_max_ns"}[metric])
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
            metrics: list[Metric] = [
                ("iops", "iops", found.get("iops"), None, None), ("MB/s", "mbs", found.get("bw_bytes"), None, None),
                ("mean", "lat", found.get("lat_mean_ns"), None, None),
                ("max", "lat", found.get("lat_max_ns"), None, None),
                *_percentile_metrics(found.get("lat_percentiles_ns") or {}, found.get("lat_n"),
                                     found.get("lat_beyond") if found.get("lat_n") else {})]
            for metric, quantity, number, samples, beyond in metrics:
                if number is None:
                    continue
                per_round = [n for r in rounds if cell in r["cells"]
                             if (n := _round_number(r["cells"][cell], metric)) is not None]
                noise = _spread(per_round)
                values.append(Value(f"{view.plan['title']}: {cell} {metric}", quantity, float(number), noise,
                                    source if noise is not None else "unknown: one round in the window",
                                    samples, beyond))
    return values


# --- case runs and sweeps -----------------------------------------------------------------------------------------

def case_values(rows: Iterable[Any]) -> list[Value]:
    """Every job and direction of a case run or sweep (ResultRow-like rows); failed rows have no values. A case run
    with --repeat gives each value once: the mean of its repetitions, their spread (max - min) as its noise."""
    from ptsbench.confidence import base_case_name

    samples: dict[tuple[str, str], tuple[str, list[float]]] = {}
    evidence: dict[str, list[tuple[int | None, int | None]]] = {}
    for row in rows:
        if row.iops is None or row.direction not in ("read", "write", "total"):
            continue
        case = base_case_name(row.case, getattr(row, "repetition", 0))
        prefix = f"{case}/{row.job}{f'@{row.host}' if row.host else ''} {row.direction}"
        metrics: list[Metric] = [
            ("iops", "iops", row.iops, None, None), ("MB/s", "mbs", row.bw_bytes, None, None),
            ("mean", "lat", row.lat_mean_ns, None, None), ("max", "lat", getattr(row, "lat_max_ns", None), None, None),
            *_percentile_metrics(row.lat_percentiles_ns, getattr(row, "lat_n", None), getattr(row, "lat_beyond", None))]
        for metric, quantity, number, ios, beyond in metrics:
            if number is not None:
                samples.setdefault((f"{prefix} {metric}", quantity), (quantity, []))[1].append(float(number))
                evidence.setdefault(f"{prefix} {metric}", []).append((ios, beyond))
    values = []
    for (name, quantity), (_quantity, numbers) in samples.items():
        noise = _spread(numbers)
        values.append(Value(name, quantity, sum(numbers) / len(numbers), noise,
                            f"spread of {len(numbers)} repetitions (--repeat)" if noise is not None
                            else "unknown: the case ran once (--repeat gives its spread)", *_weakest(evidence[name])))
    return values


def _weakest(evidence: Sequence[tuple[int | None, int | None]]) -> tuple[int | None, int | None]:
    """The evidence of a mean of repetitions' values: its weakest repetition's (a mean of guesses is no
    measurement); unknown when any repetition's is."""
    if any(ios is None or beyond is None for ios, beyond in evidence):
        return None, None
    return min(ios or 0 for ios, _ in evidence), min(beyond or 0 for _, beyond in evidence)


def run_capacity_bytes(store: Any) -> int | None:
    """The capacity the run measured (RunStore): a PTS run's target size, a case run's first target's; None when
    it names none (a job file's own files, the null engine)."""
    manifest = store.manifest
    if store.kind == "pts":
        found = (manifest.get("target_info") or {}).get("size_bytes")
    else:
        found = ((manifest.get("targets") or [{}])[0] or {}).get("size_bytes")
    return int(found) if found else None


def run_values(store: Any) -> list[Value]:
    """The headline values of a run directory (RunStore), whatever its kind."""
    if store.kind == "pts":
        from ptsbench.report.pts.views import load_context

        return pts_values(load_context(store)[1])
    from ptsbench.cases.records import load_records
    from ptsbench.report.cases.tables import result_rows

    return case_values(result_rows(load_records(store)))
