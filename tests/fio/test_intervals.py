"""Per-interval latency derived from fio's cumulative status documents."""

import json
from pathlib import Path

from conftest import fio_status_documents, until_enough
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


DELAYED = """[global]
ioengine=null
size=1g
time_based=1
runtime=2
rw=randread
bs=4k
rate_iops=500
[now]
[later]
startdelay=2
"""


def test_a_thread_not_started_yet_leaves_no_sample_behind(tmp_path: Path) -> None:
    """fio reports a thread before its start with a runtime that does not belong to its IO: a job with startdelay
    counts the delay, then its clock begins again (its runtime goes back); a thread not created yet reads as running
    since its clock's zero, the host's uptime (an FTL lab round's seconds.json began at 190 s and kept none of the
    round's own seconds). Either way each job's series is its own seconds, to the IOs of fio's last status."""
    from ptsbench.fio.intervals import SecondSamples

    def entry(doc: dict, name: str) -> dict:  # type: ignore[type-arg]
        return next(e for e in doc["jobs"] if e["jobname"] == name)

    def ios(doc: dict, name: str) -> int:  # type: ignore[type-arg]
        return int(entry(doc, name)["read"]["lat_ns"]["N"])

    job = tmp_path / "delayed.fio"
    job.write_text(DELAYED)
    # a busy host's fio may write no status document after the delayed job began
    status = until_enough(lambda: fio_status_documents(job)[:-1],  # the last is the final document
                          lambda status: bool(status) and ios(status[-1], "later") > 0)
    assert status and ios(status[-1], "later") > 0, len(status)

    # as a thread not created yet reads (fio's clock since its zero: here 190 s), before the first document
    early = json.loads(json.dumps(status[0]))
    for name in ("now", "later"):
        entry(early, name)["job_runtime"] = 190_355
    # as CI caught it: the delayed job's first 2 IOs in a document whose runtime still held its 2 s delay (2,096 ms),
    # its clock begun again in the next
    caught = json.loads(json.dumps(status[-1]))  # fio's elapsed there covers the 2,096 ms
    entry(caught, "later")["job_runtime"] = 2_096
    entry(caught, "later")["read"]["lat_ns"]["N"] = 2
    for fed in (status, [early, *status], [caught, *status]):
        samples = SecondSamples()
        for doc in fed:
            samples.add(doc)
        stored = samples.as_dict()["jobs"]
        for name in ("now", "later"):
            runtimes = stored[name]["runtime_ms"]
            assert runtimes == sorted(set(runtimes)) and runtimes[-1] <= 1000 * entry(status[-1], name)["elapsed"]
            assert stored[name].get("read_ios", [0])[-1] == ios(status[-1], name) > 0, (name, runtimes)
