"""Drops found in a stored case or PTS round: its seconds.json read back (fio/intervals.py SecondSamples), every job
and direction searched (find.py), each finding with its likely causes (causes.py) and a line for people; and the
--min-fraction limit (no second below FRACTION x the median)."""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptsbench.drops.rule import DropRule
from ptsbench.errors import StoreError
from ptsbench.pts.store import PTS_DIR
from ptsbench.store import read_json
from ptsbench.units import spoken_duration

if TYPE_CHECKING:
    from ptsbench.drops.find import Drop, Seconds
    from ptsbench.pts.store import PtsStore

SAMPLES_FILE = "seconds.json"  # as fio/intervals.py writes it


@dataclass(frozen=True)
class JobSeconds:
    """One stored job's per-second series per direction, and what it measured (a PTS cell, else the job)."""

    job: str
    label: str
    directions: Mapping[str, "Seconds"]


@dataclass(frozen=True)
class Finding:
    """A drop in one job's series, with what may explain it."""

    label: str
    job: str
    drop: "Drop"
    causes: tuple[str, ...]
    host: str = ""  # how the host was busy in its seconds, when nothing on the device explains it

    @property
    def host_limited(self) -> bool:
        return bool(self.host)

    @property
    def cause_text(self) -> str:
        from ptsbench.drops.causes import HOST_LIMITED, NO_CAUSE

        if self.host:
            return f"{HOST_LIMITED} ({self.host})"
        return "; ".join(self.causes) or NO_CAUSE

    def line(self) -> str:
        """The finding in one line: 'SEQ1M write: 2.1 GB/s for the first 11.5 GB, then 480 MB/s'."""
        drop = self.drop
        name = f"{self.label} {drop.direction}"
        before, during = level_text(drop.metric, drop.reference), level_text(drop.metric, drop.level)
        done = _decimal_bytes(drop.done_bytes)
        if drop.to_end:
            return (f"{name}: {before} for the first {done} ({spoken_duration(drop.start_s)}), then {during} "
                    f"({drop.fraction:.0%})")
        return (f"{name}: {before}, but {during} ({drop.fraction:.0%}) for {spoken_duration(drop.duration_s)} "
                f"from {spoken_duration(drop.start_s)} ({done} in)")


def level_text(metric: str, value: float) -> str:
    if metric == "bw":
        return f"{value / 1e9:,.2f} GB/s" if value >= 1e9 else f"{value / 1e6:,.1f} MB/s"
    if metric == "lat":
        return f"{value / 1e3:,.1f} µs latency"
    return f"{value:,.0f} IOPS"


def _decimal_bytes(size_bytes: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size_bytes >= scale:
            return f"{size_bytes / scale:,.1f} {unit}"
    return f"{int(size_bytes)} B"


def stored_rule(manifest: Mapping[str, Any]) -> tuple[DropRule, float | None]:
    """The rule and --min-fraction a run was started with, as its manifest keeps them (the defaults for runs made
    before they were kept)."""
    kept = manifest.get("drops")
    stored: Mapping[str, Any] = kept if isinstance(kept, dict) else {}
    minimum = stored.get("min_fraction")
    return (DropRule(float(stored.get("fraction") or 0.8), int(stored.get("seconds") or 3),
                     strict=stored.get("strict") is True),
            float(minimum) if isinstance(minimum, int | float) else None)


def stored_seconds(folder: Path, min_samples: int = 0) -> list[JobSeconds]:
    """The per-second series a case or round folder holds ([] when it has none: runs made before, or on hosts);
    jobs with fewer than `min_samples` samples are left out (numpy is imported only when one is left)."""
    path = folder / SAMPLES_FILE
    if not path.is_file():
        return []
    data = read_json(path)
    try:
        labels = data.get("labels") or {}
        version = data.get("fio_version")
        jobs = {job: columns for job, columns in data["jobs"].items()
                if len(columns.get("runtime_ms") or ()) >= min_samples}
        if not jobs:
            return []
        from ptsbench.drops.find import per_second

        return [JobSeconds(job, str(labels.get(job, job)), per_second(columns, version if isinstance(version, str)
                                                                      else None))
                for job, columns in jobs.items()]
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise StoreError(f"{path} is damaged: not per-second samples as ptsbench wrote them ({error})",
                         "restore it from a copy, or run it again") from error


def folder_findings(folder: Path, rule: DropRule, telemetry: Mapping[str, Any] | None = None) -> list[Finding]:
    """Every drop in a case or round folder, in job order then time; `telemetry`: the round's record (PTS)."""
    # a drop needs 2 x min_seconds known seconds, and a job's last sample is no whole second (find.py per_second)
    jobs = stored_seconds(folder, 2 * max(rule.min_seconds, 1) + 1)
    if not jobs:
        return []
    from ptsbench.drops.causes import host_limited, likely_causes
    from ptsbench.drops.find import find_drops

    found = []
    for job in jobs:
        for direction, series in job.directions.items():
            for drop in find_drops(series, direction, rule):
                causes = likely_causes(drop, series, telemetry)
                found.append(Finding(job.label, job.job, drop, tuple(causes), host_limited(drop, series, causes)))
    return found


@dataclass(frozen=True)
class LowSecond:
    """A job's worst second against the median of its seconds (IOPS), and how the host was busy in it ('' when it
    was not, or a device cause was recorded)."""

    label: str
    direction: str
    fraction: float
    at_s: float
    host: str = ""

    def line(self, limit: float) -> str:
        from ptsbench.drops.causes import HOST_LIMITED

        host = f"; {HOST_LIMITED} ({self.host})" if self.host else ""
        return (f"{self.label} {self.direction}: a second at {self.fraction:.0%} of the median IOPS "
                f"(at {spoken_duration(self.at_s)}), below the --min-fraction limit of {limit:.0%}{host}")


def below_min_fraction(folder: Path, limit: float, telemetry: Mapping[str, Any] | None = None) -> list[LowSecond]:
    """The jobs and directions of a folder with a second below `limit` x the median IOPS of their seconds: its
    worst second the host does not explain, else its worst second (host-limited)."""
    from ptsbench.drops.causes import host_busy, likely_causes_of_round
    from ptsbench.drops.find import lowest_second, seconds_against_median

    device = bool(likely_causes_of_round(telemetry))
    found = []
    for job in stored_seconds(folder):
        for direction, series in job.directions.items():
            lowest = lowest_second(series)
            if lowest is None or lowest[0] >= limit:
                continue
            low = [(share, end_s, "" if device else host_busy(series, index, index + 1))
                   for index, (share, end_s) in enumerate(seconds_against_median(series)) if share < limit]
            share, end_s, host = min(low, key=lambda second: (bool(second[2]), second[0]))
            found.append(LowSecond(job.label, direction, share, end_s, host))
    return found


@dataclass(frozen=True)
class StoredRound:
    """A stored PTS round: where it is, what to call it, its record (with the telemetry read around it)."""

    name: str
    folder: Path
    record: Mapping[str, Any]


def pts_rounds(pts: "PtsStore") -> list[StoredRound]:
    """Every stored round of a PTS run, phase by phase (in folder order), round by round."""
    phases = sorted(path.name for path in (pts.root / PTS_DIR).glob("*") if path.is_dir())
    return [StoredRound(f"{key} round {record['round']}", pts.round_dir(key, int(record["round"])), record)
            for key in phases for record in pts.finished_rounds(key)]
