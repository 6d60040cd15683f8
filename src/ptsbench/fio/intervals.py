"""Per-interval mean total latency, derived exactly from fio's cumulative status documents.

fio's own `write_lat_log` reads the clock and updates a running mean for every IO, which costs up to 20 % of the IOPS
of a fast device (bench/README.md). fio's status documents already carry, per job and direction, the number of IOs
(lat_ns.N) and their mean latency so far; between two documents the interval's mean is
(mean2 * N2 - mean1 * N1) / (N2 - N1): exact, at no cost to fio. The lines are written in fio's own log format
(time_ms, value, direction, block size 0, priority 0) to PREFIX_lat.log, with time_ms the job's own runtime.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ptsbench.fio.output import DIRECTIONS, job_entries

DIRECTION_CODES = {"read": 0, "write": 1, "trim": 2}


def _totals(doc: Mapping[str, Any]) -> dict[str, tuple[int, dict[str, tuple[int, float]]]]:
    """Job name -> (its runtime in ms, direction -> (IOs, sum of their latencies in ns)), threads added up."""
    totals: dict[str, tuple[int, dict[str, tuple[int, float]]]] = {}
    for entry in job_entries(doc):
        runtime_ms, directions = totals.get(entry.get("jobname", ""), (0, {}))
        for direction in DIRECTIONS:
            lat = (entry.get(direction) or {}).get("lat_ns") or {}
            count, total_ns = directions.get(direction, (0, 0.0))
            ios = int(lat.get("N", 0))
            directions[direction] = (count + ios, total_ns + float(lat.get("mean", 0.0)) * ios)
        totals[entry.get("jobname", "")] = (max(runtime_ms, int(entry.get("job_runtime", 0))), directions)
    return totals


class LatencyIntervals:
    """Feed it every status document; it appends one line per job, direction and interval with IO."""

    def __init__(self, prefixes: Mapping[str, Path]) -> None:
        self.prefixes = prefixes  # job name -> log path prefix (as write_*_log would take it)
        self.previous: dict[str, tuple[int, dict[str, tuple[int, float]]]] = {}
        self.files: dict[str, IO[str]] = {}

    def add(self, doc: Mapping[str, Any]) -> None:
        for name, (runtime_ms, directions) in _totals(doc).items():
            if name not in self.prefixes:
                continue
            _, before = self.previous.get(name, (0, {}))
            for direction, (count, total_ns) in directions.items():
                old_count, old_total_ns = before.get(direction, (0, 0.0))
                if count > old_count:
                    mean_ns = (total_ns - old_total_ns) / (count - old_count)
                    self._file(name).write(f"{runtime_ms}, {round(mean_ns)}, {DIRECTION_CODES[direction]}, 0, 0\n")
            self.previous[name] = (runtime_ms, directions)

    def _file(self, name: str) -> IO[str]:
        if name not in self.files:
            self.files[name] = open(f"{self.prefixes[name]}_lat.log", "w")  # noqa: SIM115 (closed in close())
        return self.files[name]

    def close(self) -> None:
        for handle in self.files.values():
            handle.close()
