"""The exporter's last second, worked out from new samples only (metrics/seconds.py), equals drops/find.py's
per_second over the whole series after every status document of a real fio run; the per-second p99 comes from the
difference of fio's cumulative latency bins, and there is none for a second in which no IO completed."""

import json
import math
from pathlib import Path
from typing import Any

import pytest

from conftest import fio_status_documents, until_enough
from ptsbench.drops.find import per_second
from ptsbench.fio.intervals import P99_COLUMN, SecondSamples, interval_p99_ns
from ptsbench.metrics import seconds as last_second
from ptsbench.metrics.seconds import LastSecond

# the module's tests share one fio run (its fixture): on one pytest worker, so that it runs once
pytestmark = pytest.mark.xdist_group("metrics-seconds")
# status documents of the 16 s run the tests need at least: fio holds its status back while a job thinks, so the
# sparse job's 3 s of thinking space them about 3 s apart (an idle host gives 5 or 6; a 7 s run gave 3, always)
MIN_DOCUMENTS = 5
# three jobs at once: one IO size, several sizes (IOPS from the IO counts), and one IO every 3 s (seconds with none);
# 100 IOPS, an IO every 10 ms, which fio sleeps through (a shorter wait it spins through on a loaded host)
JOBS = """[global]
ioengine=null
size=1g
time_based=1
runtime=16
lat_percentiles=1
[one-size]
rw=randread
bs=4k
rate_iops=100
[sizes]
rw=randrw
bsrange=4k-64k
rate_iops=100
[sparse]
rw=randread
bs=4k
thinktime=3s
"""


@pytest.fixture(scope="module")
def fio_documents(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """fio's status documents (json+, with their bins) of one run of JOBS. A host so busy that fio's status thread
    wrote fewer than MIN_DOCUMENTS (CI once got 3 in a 7 s run's 10 s, with the device labs' QEMU, a PTS run and the
    suite beside it) gives too few to test with: fio runs again, up to three times."""
    job = tmp_path_factory.mktemp("seconds") / "jobs.fio"
    job.write_text(JOBS)
    docs = until_enough(lambda: fio_status_documents(job), lambda docs: len(docs) - 1 >= MIN_DOCUMENTS)
    return docs[:-1]  # the last is the final document


def after_a_reset(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents again, as fio gives them when it resets a job's counters (ramp_time): its runtime goes on, its
    IO counts begin again."""
    shift_ms = max(entry["job_runtime"] for entry in docs[-1]["jobs"])
    again = json.loads(json.dumps(docs))
    for doc in again:
        for entry in doc["jobs"]:
            entry["job_runtime"] += shift_ms
            entry["elapsed"] += math.ceil(shift_ms / 1000)  # fio's own time since it began goes on too
        doc["timestamp_ms"] += shift_ms
    return docs + again


def _same(a: float | None, b: float) -> bool:
    return (a is None and math.isnan(b)) or a == b


@pytest.mark.parametrize("window", [last_second.WINDOW, 3])  # 3: fewer samples kept than the series has
def test_last_second_is_per_seconds_last_after_every_document(fio_documents: list[dict[str, Any]], window: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(last_second, "WINDOW", window)
    docs = after_a_reset(fio_documents)
    for version in (None, "fio-3.42"):  # the bytes read with the runtime, or with the IO counts (fio 3.42 on)
        samples, last = SecondSamples(), {}
        compared = 0
        for doc in docs:
            samples.add(doc)
            if version:
                samples.fio_version = version
            for job in samples.counts():
                kept = last.setdefault(job, LastSecond())
                kept.read(samples, job)
                served = kept.last(samples.fio_version)
                whole = {direction: seconds for direction, seconds in
                         per_second(samples.job_columns(job), samples.fio_version, running=True).items()
                         if len(seconds.end_s)}
                assert served.keys() == whole.keys(), (job, served, whole)
                for direction, second in served.items():
                    values = whole[direction].values
                    assert second.iops == values["iops"][-1] and second.bw == values["bw"][-1], (job, direction)
                    assert _same(second.lat_ns, float(values["lat"][-1])), (job, direction)
                    p99 = samples.job_columns(job).get(P99_COLUMN.format(direction=direction)) or []
                    index = int(whole[direction].sample[-1]) if whole[direction].sample is not None else -1
                    assert second.p99_ns == (p99[index] if 0 <= index < len(p99) else None), (job, direction)
                    compared += 1
        assert compared >= 4
        assert window == last_second.WINDOW or max(kept.dropped for kept in last.values()) > 0
    assert samples.generations == {job: 1 for job in samples.counts()}  # each series began again, and was followed


def held_still(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents with a second in which no IO completed after the first: the first document again, 1 ms later
    on every clock. (A real one comes only by chance: fio holds its status documents back while a job thinks, up to
    the thinktime's length, so on a busy host each of the sparse job's seconds held one IO.)"""
    still = json.loads(json.dumps(docs[0]))
    for entry in still["jobs"]:
        entry["job_runtime"] += 1
    still["timestamp_ms"] += 1
    return [docs[0], still, *docs[1:]]


def test_p99_of_each_second_from_fios_bins(fio_documents: list[dict[str, Any]]) -> None:
    docs = held_still(fio_documents)
    samples = SecondSamples()
    for doc in docs:
        samples.add(doc)
    columns = {job: samples.job_columns(job) for job in samples.counts()}
    # the first second's p99 is fio's own p99 of its first document (nothing came before it)
    first = next(doc for doc in docs if any(e["jobname"] == "sizes" and e["read"]["lat_ns"]["N"] for e in doc["jobs"]))
    entry = next(e for e in first["jobs"] if e["jobname"] == "sizes")
    assert interval_p99_ns({}, entry["read"]["lat_ns"]["bins"]) == entry["read"]["lat_ns"]["percentile"]["99.000000"]
    sparse = columns["sparse"]
    ios = sparse["read_ios"]
    p99 = sparse[P99_COLUMN.format(direction="read")]
    assert len(p99) == len(ios)
    done = [after - before for before, after in zip([0, *ios], ios, strict=False)]
    assert [value is None for value in p99] == [count == 0 for count in done]  # no IO completed: no p99
    assert done[1] == 0 and any(count > 0 for count in done)
    # a second read without bins (an unwatched run's documents) has none, and nothing else changes
    plain = SecondSamples()
    for doc in docs:
        plain.add(json.loads(json.dumps(doc).replace('"bins"', '"no_bins"')))
    assert all(not any(key.endswith("_p99_ns") for key in plain.job_columns(job)) for job in plain.counts())


def test_a_refused_push_is_sent_again_with_the_newer_seconds(fio_documents: list[dict[str, Any]],
                                                             tmp_path: Path) -> None:
    """Every second goes out once the receiver takes it: a push that failed is sent again, with the seconds that came
    since, into a real InfluxDB; after that push no second is sent again."""
    from ptsbench.errors import PtsbenchError
    from ptsbench.metrics import board
    from ptsbench.metrics.push import push_once
    from ptsbench.metrics.serve import RunsCollector
    from receivers import get_json, influxdb

    samples = SecondSamples()
    collector = RunsCollector(live=True)
    with board.publish(board.Stream(tmp_path / "not-stored", {"test": "t"}, samples, {})):
        added = 0  # fio's documents up to the first whole second of IO (the second or, on a busy host, a later one)
        while not [s for s in collector.push_samples() if s.metric.name == "ptsbench_second_iops"]:
            assert added < len(fio_documents) - 1, "no second of IO before fio's last document"
            samples.add(fio_documents[added])
            added += 1
        with pytest.raises(PtsbenchError):
            push_once("http://127.0.0.1:1/write?db=ptsbench", collector)
        for doc in fio_documents[added:]:
            samples.add(doc)
        with influxdb(tmp_path / "influxdb") as url:
            push_once(f"{url}/write?db=ptsbench", collector)
            answer = get_json(f"{url}/query", db="ptsbench", epoch="ms",
                              q='SELECT "value" FROM "ptsbench_second_iops" GROUP BY "workload", "direction"')
        assert not [s for s in collector.push_samples() if s.metric.name == "ptsbench_second_iops"]
    kept = {(series["tags"]["workload"], series["tags"]["direction"]): dict(map(tuple, series["values"]))
            for series in answer["results"][0]["series"]}
    for job in samples.counts():
        columns = samples.job_columns(job)
        for direction, seconds in per_second(columns, samples.fio_version, running=True).items():
            assert seconds.sample is not None
            stamps = [columns["status_unix_ms"][int(index)] for index in seconds.sample]
            assert kept[(job, direction)] == dict(zip(stamps, map(float, seconds.values["iops"]), strict=True))
