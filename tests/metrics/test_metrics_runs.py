"""--metrics on the runs that make several series at once or come back: a run on several targets gives each target its
own labelled series, live and stored; a killed sweep resumed with --metrics and --metrics-push goes on serving, and
pushes into a real Prometheus through remote write the seconds it stores, its counters never going back."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import run_cli
from receivers import prometheus
from test_metrics import WAIT_S, Started, assert_served_as_stored, prometheus_samples


def scrape(url: str) -> list[tuple[str, dict[str, str], float]]:
    """The samples of one answer: (series, labels, value)."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    with urllib.request.urlopen(url, timeout=30) as response:
        text = response.read().decode()
    return [(sample.name, sample.labels, sample.value) for family in text_string_to_metric_families(text)
            for sample in family.samples]


@pytest.mark.slow
def test_several_targets_give_distinct_labelled_series(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text("[null]\nioengine=null\nsize=1m\nrw=randread\nbs=4k\nrate_iops=100\ntime_based=1\n"
                   "runtime=3600\n")  # stopped by Ctrl-C once both targets are served
    targets = [str(tmp_path / "a.dat"), str(tmp_path / "b.dat")]
    run_dir = tmp_path / "run"
    run = Started("run", str(job), "--target", targets[0], "--target", targets[1], "--parallel", "--out",
                  str(run_dir), "--metrics", "0")
    live: dict[str, dict[str, str]] = {}  # device -> the labels of its per-second IOPS
    try:
        url, deadline = run.url(), time.monotonic() + WAIT_S
        while len(live) < 2:
            assert run.process.poll() is None and time.monotonic() < deadline, run.stop()
            live.update({labels["device"]: labels for name, labels, _ in scrape(url)
                         if name == "ptsbench_second_iops"})
            time.sleep(0.2)
    finally:
        said = run.stop()
    assert run.process.returncode == 130, said
    assert sorted(live) == targets
    assert live[targets[0]]["test"] != live[targets[1]]["test"]  # each case its own
    assert all(labels["test"].endswith(Path(device).name.replace(".", "_").replace("_dat", ".dat"))
               for device, labels in live.items())
    # stored: each case's drops are labelled with the target it measured, not the run's first
    from ptsbench.metrics.serve import RunsCollector

    drops = {(s.labels["device"], s.labels["test"]) for s in RunsCollector([run_dir]).samples()
             if s.metric.name == "ptsbench_drops_found"}
    assert drops == {(device, labels["test"]) for device, labels in live.items()}
    # a finished run's headline values too: each labelled with the target of the case it names
    job.write_text(job.read_text().replace("runtime=3600", "runtime=1"))
    done = run_cli("run", str(job), "--target", targets[0], "--target",
                   targets[1], "--parallel", "--out", str(tmp_path / "done"), timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    values = [s for s in RunsCollector([tmp_path / "done"]).samples() if s.metric.name == "ptsbench_value"]
    assert {s.labels["device"] for s in values} == set(targets)
    for sample in values:
        assert sample.labels["name"].split("/")[0] == live[sample.labels["device"]]["test"], sample.labels


@pytest.mark.slow
def test_a_resumed_sweep_keeps_serving_and_pushing(tmp_path: Path) -> None:
    """A sweep killed after its first cell, resumed with --metrics and --metrics-push to a Prometheus remote-write
    receiver: the endpoint serves the stored cell and the new ones' seconds, no counter goes back from one scrape to
    the next, and Prometheus keeps the pushed seconds equal to the stored ones, and the run's end."""
    run_dir = tmp_path / "sweep"
    argv = [sys.executable, "-m", "ptsbench", "sweep", str(tmp_path / "null.dat"), "--ioengine", "null", "--size",
            "16M", "--runtime", "4", "--rw", "randread,randwrite,read", "--iodepth", "1", "--numjobs", "1", "--set",
            "rate_iops=100", "--out", str(run_dir)]  # an IO every 10 ms, which fio sleeps through
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + WAIT_S
    while not list((run_dir / "cases").glob("002-*/job.fio")):  # the first cell stored, the second begun
        assert process.poll() is None and time.monotonic() < deadline, "the sweep ended before it could be killed"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    first = next((run_dir / "cases").glob("001-*")).name.split("-", 1)[1]
    with prometheus(tmp_path / "prometheus", None) as receiver:
        resumed = Started("resume", str(run_dir), "--metrics", "0", "--metrics-push", f"{receiver}/api/v1/write")
        scrapes: list[list[tuple[str, dict[str, str], float]]] = []
        try:
            url = resumed.url()
            while resumed.process.poll() is None:
                try:
                    scrapes.append(scrape(url))
                except OSError:  # the run ended between the check and the scrape
                    break
                time.sleep(0.3)
            resumed.process.wait(WAIT_S)
        finally:
            said = resumed.stop()
        assert resumed.process.returncode == 0 and "warning:" not in said, said
        pushed = prometheus_samples(receiver, "ptsbench_second_iops")
        pushed_p99 = prometheus_samples(receiver, "ptsbench_second_latency_p99_seconds")
        status = prometheus_samples(receiver, "ptsbench_run_status")
        pushed_drops = prometheus_samples(receiver, "ptsbench_drops_found")
    assert any((name, labels.get("status"), value) == ("ptsbench_run_status", "running", 1.0)
               for answer in scrapes for name, labels, value in answer)
    assert any(name == "ptsbench_second_iops" for answer in scrapes for name, _, _ in answer)  # new cells, live
    drops_before: dict[str, float] = {}
    served = [answer for answer in scrapes if any(name == "ptsbench_run_status" for name, _, _ in answer)]
    assert served and served[-1] is scrapes[-1]  # (before the run dir is read again, the endpoint has nothing)
    for answer in served:  # the stored cell is served with the run from the first on; no count goes back or vanishes
        drops = {labels["test"]: value for name, labels, value in answer if name == "ptsbench_drops_found"}
        assert first in drops
        assert drops.keys() >= drops_before.keys() and all(drops[k] >= v for k, v in drops_before.items())
        drops_before = drops
    assert pushed, "no per-second sample was pushed while the resumed sweep ran"
    for labels, values in pushed:  # each pushed second is the stored second of the same moment, exactly
        case_dir = next((run_dir / "cases").glob(f"*-{labels['test']}"))
        for time_s, value in values:
            assert_served_as_stored(case_dir, labels["workload"], labels["direction"], round(time_s * 1000),
                                    float(value), "ptsbench_second_iops")
    assert pushed_p99  # watched: the cells read fio's bins; each second's p99 is the one stored beside it
    for labels, values in pushed_p99:
        case_dir = next((run_dir / "cases").glob(f"*-{labels['test']}"))
        columns = json.loads((case_dir / "seconds.json").read_text())["jobs"][labels["workload"]]
        for time_s, value in values:
            index = columns["status_unix_ms"].index(round(time_s * 1000))
            assert float(value) == columns[f"{labels['direction']}_lat_p99_ns"][index] / 1e9, (labels, time_s)
    last_status = {labels["status"]: values[-1][1] for labels, values in status}
    assert last_status["done"] == "1" and last_status["running"] == "0"
    assert {labels["test"] for labels, _ in pushed_drops} == {path.name.split("-", 1)[1] for path in
                                                              (run_dir / "cases").iterdir()}
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "done"


def test_the_push_url_says_the_format_and_a_missing_package_is_one_line(tmp_path: Path) -> None:
    from ptsbench.metrics.remote_write import is_remote_write

    for url in ("http://p:9090/api/v1/write", "http://mimir/api/v1/push", "https://t:19291/api/v1/receive/"):
        assert is_remote_write(url), url
    for url in ("http://influx:8086/write?db=x", "http://influx:8086/api/v2/write?org=o&bucket=b",
                "http://vm:8428/write", "http://host/api/v1/write/other"):
        assert not is_remote_write(url), url
    # without cramjam (hidden from this one command: a folder that shadows it with a module that fails to import)
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "cramjam.py").write_text("raise ImportError('hidden by the test', name='cramjam')\n")
    job = tmp_path / "null.fio"
    job.write_text("[null]\nioengine=null\nsize=1m\nrw=read\nbs=4k\nruntime=1\n")
    said = subprocess.run([sys.executable, "-m", "ptsbench", "run", str(job), "--out", str(tmp_path / "run"),
                           "--metrics-push", "http://127.0.0.1:9/api/v1/write"], capture_output=True, text=True,
                          timeout=WAIT_S, env={**os.environ, "PYTHONPATH": str(shadow)})
    assert said.returncode != 0 and said.stderr.count("\n") == 1, said.stderr
    assert "needs cramjam" in said.stderr and "pip install 'ptsbench[remote-write]'" in said.stderr
    assert not (tmp_path / "run").exists()
