"""Per-interval latency derived from fio's cumulative status documents."""

from pathlib import Path

from ptsbench.fio.intervals import LatencyIntervals


def status(runtime_ms: int, *threads: tuple[int, float]) -> dict:  # type: ignore[type-arg]
    """A status document of job 'j' with one entry per thread: (read IOs so far, their mean latency so far)."""
    return {"jobs": [{"jobname": "j", "job_runtime": runtime_ms, "read": {"lat_ns": {"N": n, "mean": mean}},
                      "write": {"lat_ns": {"N": 0, "mean": 0.0}}} for n, mean in threads]}


def test_interval_means_are_exact(tmp_path: Path) -> None:
    intervals = LatencyIntervals({"j": tmp_path / "j"})
    intervals.add(status(1000, (10, 100.0), (10, 300.0)))  # 20 IOs, 4000 ns in all
    intervals.add(status(2000, (30, 200.0), (10, 300.0)))  # +20 IOs, +5000 ns
    intervals.add(status(3000, (30, 200.0), (10, 300.0)))  # no IO in this interval: no line
    intervals.add(status(4000, (40, 175.0), (20, 250.0)))  # +20 IOs: 7000 + 5000 - 9000 ns
    intervals.close()
    lines = (tmp_path / "j_lat.log").read_text().splitlines()
    assert lines == ["1000, 200, 0, 0, 0", "2000, 250, 0, 0, 0", "4000, 150, 0, 0, 0"]


def test_jobs_without_a_prefix_are_ignored(tmp_path: Path) -> None:
    intervals = LatencyIntervals({})
    intervals.add(status(1000, (10, 100.0)))
    intervals.close()
    assert not list(tmp_path.iterdir())
