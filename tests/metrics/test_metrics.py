"""--metrics and `ptsbench metrics`: a real Prometheus scrapes a real fio run, and what it keeps is what the run
stored, second by second; stored runs served again; the line protocol pushed into a real InfluxDB."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import run_cli
from ptsbench.drops.find import per_second
from ptsbench.drops.stored import stored_seconds
from ptsbench.metrics.serve import MetricsError, parse_address
from receivers import get_json, influxdb, prometheus

# 100 IOPS: an IO every 10 ms, which fio sleeps through; a shorter wait than its nanosleep's measured granularity
# (milliseconds on a loaded host) it spins through, so a null job held to 5,000 IOPS kept a CPU busy under load
NULL_JOB = """[null]
ioengine=null
size=1g
rw=randread
bs=4k
rate_iops=100
time_based=1
runtime={runtime}
"""
ENOUGH_SECONDS = 5  # per-second samples Prometheus must have kept before the run is stopped
WAIT_S = 300.0  # for them: many times the few seconds it takes on an idle machine


class Started:
    """`ptsbench ARGS` in a session of its own, its stderr read as it comes (so it never blocks on a full pipe)."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "ptsbench", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def url(self) -> str:
        """The address it said it serves on."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            found = [m[1] for line in list(self.lines) if (m := re.search(r"metrics at (http://\S+)", line))]
            if found:
                return found[0]
            assert self.process.poll() is None, "".join(self.lines)
            time.sleep(0.05)
        raise AssertionError("it never said where it serves")

    def stop(self) -> str:
        """Ctrl-C, as a terminal sends it (to the whole group), and wait for the end; its stderr."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        self.process.communicate(timeout=WAIT_S)
        self.reader.join(WAIT_S)
        return "".join(self.lines)


def prometheus_samples(url: str, metric: str) -> list[tuple[dict[str, str], list[tuple[float, str]]]]:
    answer = get_json(f"{url}/api/v1/query", query=f"{metric}[1h]")
    assert answer["status"] == "success", answer
    return [(series["metric"], [(float(t), v) for t, v in series["values"]]) for series in answer["data"]["result"]]


SERVED = {"ptsbench_second_iops": ("iops", 1.0), "ptsbench_second_bandwidth_bytes_per_second": ("bw", 1.0),
          "ptsbench_second_latency_mean_seconds": ("lat", 1e9)}  # series -> stored metric, its unit in the store


def assert_served_as_stored(folder: Path, job: str, direction: str, stamp: int, served: float, metric: str) -> None:
    """A second served live (its status document's Unix ms, its value of `metric` in the served unit) is one the run
    stored: per_second's last counted second over the samples stored up to some later one (what a scrape saw), and,
    where the whole stored series counts it too (and it is not the job's first, whose span the whole series knows
    better), that stored second, exactly. (A scrape sees the samples in so far: later intervals can change which
    ones count, docs/metrics.md.)"""
    data = json.loads((folder / "seconds.json").read_text())
    columns, version = data["jobs"][job], data.get("fio_version")
    key, scale = SERVED[metric]
    index = columns["status_unix_ms"].index(stamp)
    possible = []
    for count in range(index + 2, len(columns["runtime_ms"]) + 1):
        prefix = {name: values[:count] for name, values in columns.items()}
        seconds = per_second(prefix, version, running=True).get(direction)
        if seconds is not None and seconds.sample is not None and len(seconds.sample) and seconds.sample[-1] == index:
            possible.append(float(seconds.values[key][-1]) / scale)
    assert served in possible, (job, direction, stamp, served, possible)
    whole = per_second(columns, version)[direction]
    assert whole.sample is not None
    if index > 0 and index in whole.sample:  # the same second, to the last bit: a job stopped by Ctrl-C has its
        # IOPS from counts in the whole series and from bytes over the IO size while it ran, over the same span
        # (an ulp apart while spans were differences of quotients: 99.99999999999997 served, 100.0 stored)
        stored = float(whole.values[key][list(whole.sample).index(index)]) / scale
        assert served == stored, (job, direction, stamp, served, stored)


@pytest.mark.slow
def test_prometheus_keeps_the_seconds_the_run_stores(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=3600))  # stopped by Ctrl-C once Prometheus has enough seconds
    run_dir = tmp_path / "run"
    run = Started("run", str(job), "--out", str(run_dir), "--metrics", "0")
    try:
        served = run.url()
        assert served.startswith("http://127.0.0.1:")  # the loopback address unless another is asked for
        with prometheus(tmp_path / "prometheus", served.removeprefix("http://").removesuffix("/metrics")) as url:
            deadline = time.monotonic() + WAIT_S
            while True:
                kept = prometheus_samples(url, "ptsbench_second_iops")
                if kept and len(kept[0][1]) >= ENOUGH_SECONDS:
                    break
                assert run.process.poll() is None, run.stop()
                assert time.monotonic() < deadline, "Prometheus kept too few seconds"
                time.sleep(0.5)
            said = run.stop()
            kept = {metric: prometheus_samples(url, metric) for metric in SERVED}
            status = prometheus_samples(url, "ptsbench_run_status")
    finally:
        said = run.stop()
    assert run.process.returncode == 130, said
    case_dir = next((run_dir / "cases").glob("*-null"))
    stamps = json.loads((case_dir / "seconds.json").read_text())["jobs"]["null"]["status_unix_ms"]
    for metric, series in kept.items():
        assert len(series) == 1  # one job, one direction: one series
        labels, values = series[0]
        assert (labels["test"], labels["workload"], labels["direction"]) == ("null", "null", "read")
        assert len({t for t, _ in values}) >= ENOUGH_SECONDS
        for time_s, value in values:  # each sample Prometheus kept is a stored second of the same moment, exactly
            stamp = next((ms for ms in stamps if abs(ms - time_s * 1000) <= 1), None)  # the exposition's seconds
            assert stamp is not None, (metric, time_s, stamps)
            assert_served_as_stored(case_dir, "null", "read", stamp, float(value), metric)
    by_status = {labels["status"]: [value for _t, value in values] for labels, values in status}
    assert "1" in by_status["running"] and "1" not in by_status["done"] + by_status["failed"]


def test_stored_run_served_and_pushed(tmp_path: Path) -> None:
    """`ptsbench metrics RUN_DIR` serves a finished run (status, drops, the catalog's values); --push sends the same
    samples into a real InfluxDB, which gives them back."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    from ptsbench.catalog.values import run_values
    from ptsbench.store import RunStore

    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=3))
    run_dir = tmp_path / "run"
    made = run_cli("run", str(job), "--out", str(run_dir), timeout=WAIT_S)
    assert made.returncode == 0, made.stderr
    served = Started("metrics", str(run_dir), "--metrics", "0")
    try:
        with urllib.request.urlopen(served.url(), timeout=30) as response:
            text = response.read().decode()
    finally:
        served.stop()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    status = {s.labels["status"]: s.value for s in families["ptsbench_run_status"].samples}
    assert status == {"running": 0, "done": 1, "failed": 0, "interrupted": 0}
    assert [s.value for s in families["ptsbench_drops_found"].samples] == [0]
    values = {s.labels["name"]: s.value for s in families["ptsbench_value"].samples}
    assert values == {v.name: v.value for v in run_values(RunStore.open(run_dir))}
    with influxdb(tmp_path / "influxdb") as url:
        pushed = run_cli("metrics", str(run_dir), "--push",
                         f"{url}/write?db=ptsbench", timeout=WAIT_S)
        assert pushed.returncode == 0, pushed.stderr
        answer = get_json(f"{url}/query", db="ptsbench", q='SELECT "value" FROM "ptsbench_value" GROUP BY "name"')
    back = {series["tags"]["name"]: series["values"][0][1] for series in answer["results"][0]["series"]}
    assert back == values


@pytest.mark.parametrize("text", ["host", "1.2.3.4:99999", "example.com:80", ":x"])
def test_bad_address_is_one_line_before_any_io(tmp_path: Path, text: str) -> None:
    with pytest.raises(MetricsError):
        parse_address(text)
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=1))
    said = run_cli("run", str(job), "--out", str(tmp_path / "run"),
                   "--metrics", text, timeout=WAIT_S)
    assert said.returncode != 0
    assert said.stderr.count("\n") == 1 and "--metrics" in said.stderr and "Traceback" not in said.stderr
    assert not (tmp_path / "run").exists()


def test_addresses() -> None:
    assert parse_address("9464") == parse_address("127.0.0.1:9464")
    assert parse_address("9464").loopback and parse_address("[::1]:9464").loopback
    assert not parse_address("0.0.0.0:9464").loopback
    assert parse_address("[::]:0").url(8000) == "http://[::]:8000/metrics"


@pytest.mark.slow
def test_pts_rounds_served_live_are_the_stored_ones(tmp_path: Path) -> None:
    """A PTS run's live seconds are its rounds' stored seconds (each cell's, by its name), and the round and steady
    state served once it is stored are those of its last round; killed in its second round and resumed with
    --metrics, it serves on, its round never going back."""
    from ptsbench.metrics.serve import RunsCollector

    run_dir = tmp_path / "run"
    rounds = run_dir / "pts" / "iops" / "rounds"
    seen: dict[tuple[str, str, str, int], float] = {}  # (round, cell, direction, document ms) -> IOPS
    p99s: dict[tuple[str, str, str, int], float] = {}  # the same -> p99 latency (s)
    served_rounds: list[float] = []  # ptsbench_round, scrape after scrape, of the resumed run

    def watch(run: Started, until: Callable[[], bool], resumed: bool) -> None:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families

        url = run.url()
        while run.process.poll() is None and not until():
            try:
                with urllib.request.urlopen(url, timeout=30) as response:
                    text = response.read().decode()
            except OSError:  # the run ended between the check and the scrape
                break
            for family in text_string_to_metric_families(text):
                for sample in family.samples:
                    labels = sample.labels
                    if sample.name == "ptsbench_round" and resumed:
                        served_rounds.append(sample.value)
                    if sample.name in ("ptsbench_second_iops", "ptsbench_second_latency_p99_seconds") and (
                            resumed or labels["round"] == "1"):  # (round 2 runs again after the kill)
                        assert labels["test"] == "iops"
                        (seen if sample.name == "ptsbench_second_iops" else p99s)[
                            (labels["round"], labels["workload"], labels["direction"],
                             sample.timestamp.sec * 1000 + sample.timestamp.nsec // 1_000_000)] = sample.value
            time.sleep(0.2)

    run = Started("pts", "--profile", "demo", "--size", "16M", "--tests", "iops", "--out", str(run_dir),
                  "--metrics", "0")
    try:
        watch(run, lambda: (rounds / "002" / "job.fio").exists(), resumed=False)
        os.kill(run.process.pid, signal.SIGKILL)
    finally:
        run.stop()
    assert (rounds / "001" / "round.json").is_file() and not (rounds / "002" / "round.json").exists()
    run = Started("resume", str(run_dir), "--metrics", "0")
    try:
        watch(run, lambda: False, resumed=True)
        run.process.wait(WAIT_S)  # (its endpoint ends a moment before it does)
    finally:
        said = run.stop()
    assert run.process.returncode == 0, said
    # from the stored round 1 on (never less), the rounds after it, and never back
    assert served_rounds and served_rounds[0] >= 1 and max(served_rounds) > 1 and served_rounds == sorted(served_rounds)
    assert seen  # every second scraped is compared below (a busy host may give a scrape or two per round)
    for (number, cell, direction, stamp), value in seen.items():
        folder = rounds / f"{int(number):03d}"
        job = next(job for job in stored_seconds(folder) if job.label == cell)
        assert_served_as_stored(folder, job.job, direction, stamp, value, "ptsbench_second_iops")
    assert p99s  # watched: the round's cells read fio's latency bins, and the run stores each second's p99
    for (number, cell, direction, stamp), value in p99s.items():
        folder = rounds / f"{int(number):03d}"
        columns = json.loads((folder / "seconds.json").read_text())["jobs"]
        job = next(job for job in stored_seconds(folder) if job.label == cell)
        stored = columns[job.job]
        assert value == stored[f"{direction}_lat_p99_ns"][stored["status_unix_ms"].index(stamp)] / 1e9
    last = json.loads(sorted(rounds.glob("*/round.json"))[-1].read_text())
    served = {(s.metric.name, s.labels.get("test")): s.value for s in RunsCollector([run_dir]).samples()}
    assert served[("ptsbench_round", "iops")] == last["round"]
    assert served[("ptsbench_steady_state", "iops")] == float(last["steady"]["steady"])
    status = {s.labels["status"]: s.value for s in RunsCollector([run_dir]).samples()
              if s.metric.name == "ptsbench_run_status"}
    assert status == {"running": 0, "done": 1, "failed": 0, "interrupted": 0}


def test_a_run_it_cannot_read_is_left_out_of_the_scrape(tmp_path: Path) -> None:
    """A damaged run directory (a manifest cut short) and one not made yet are left out of the answer; the other
    runs are still served, and the endpoint answers only /metrics."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    from ptsbench.metrics.serve import Address, RunsCollector, Server

    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=1))
    good, damaged = tmp_path / "good", tmp_path / "damaged"
    for run_dir in (good, damaged):
        made = run_cli("run", str(job), "--out", str(run_dir), timeout=WAIT_S)
        assert made.returncode == 0, made.stderr
    manifest = damaged / "manifest.json"
    manifest.write_text(manifest.read_text()[:100])
    server = Server(Address("127.0.0.1", 0), RunsCollector([good, damaged, tmp_path / "not-yet"]))
    try:
        with urllib.request.urlopen(server.url, timeout=30) as response:
            text = response.read().decode()
            assert response.headers["Content-Type"].startswith("application/openmetrics-text")
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(server.url.removesuffix("/metrics") + "/other", timeout=30)
        assert missing.value.code == 404
    finally:
        server.stop()
    runs = {sample.labels["run"] for family in text_string_to_metric_families(text)
            if family.name == "ptsbench_run_status" for sample in family.samples}
    assert runs == {"good"}


@pytest.mark.slow
def test_push_during_a_run_into_influxdb(tmp_path: Path) -> None:
    """--metrics-push sends the live seconds while the run goes (every 10 s) and the run's end: InfluxDB gives back
    the stored seconds, at their own times, and the final status."""
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=13))  # one push while it runs (at 10 s), one at the end
    run_dir = tmp_path / "run"
    with influxdb(tmp_path / "influxdb") as url:
        made = run_cli("run", str(job), "--out", str(run_dir),
                       "--metrics-push", f"{url}/write?db=ptsbench", timeout=WAIT_S)
        assert made.returncode == 0 and "warning:" not in made.stderr, made.stderr
        seconds = get_json(f"{url}/query", db="ptsbench", epoch="ms",
                           q='SELECT "value" FROM "ptsbench_second_iops"')["results"][0]["series"][0]["values"]
        status = get_json(f"{url}/query", db="ptsbench", q='SELECT last("value") FROM "ptsbench_run_status" '
                          'GROUP BY "status"')["results"][0]["series"]
    assert seconds
    for stamp, value in seconds:
        assert_served_as_stored(next((run_dir / "cases").glob("*-null")), "null", "read", stamp, value,
                                "ptsbench_second_iops")
    assert {series["tags"]["status"]: series["values"][0][1] for series in status}["done"] == 1


def test_a_failed_push_is_said_once_and_the_run_goes_on(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=1))
    made = run_cli("run", str(job), "--out", str(tmp_path / "run"),
                   "--metrics-push", "http://127.0.0.1:1/write?db=ptsbench", timeout=WAIT_S)
    assert made.returncode == 0, made.stderr
    assert made.stderr.count("push to http://127.0.0.1:1/write?db=ptsbench failed") == 1
    assert (tmp_path / "run" / "manifest.json").is_file()


def test_another_address_only_when_asked_and_with_a_warning(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=1))
    made = run_cli("run", str(job), "--out", str(tmp_path / "run"),
                   "--metrics", "0", timeout=WAIT_S)
    assert made.returncode == 0 and "warning:" not in made.stderr, made.stderr
    served = Started("metrics", str(tmp_path / "run"), "--metrics", "0.0.0.0:0")
    try:
        url = served.url()
        port = url.rsplit(":", 1)[1].removesuffix("/metrics")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
            assert b"ptsbench_run_status" in response.read()
    finally:
        said = served.stop()
    assert url.startswith("http://0.0.0.0:")
    assert "warning: the metrics at" in said and "no authentication" in said


def test_a_port_in_use_is_one_line_before_any_io(tmp_path: Path) -> None:
    import socket

    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=1))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        said = run_cli("run", str(job), "--out", str(tmp_path / "run"),
                       "--metrics", str(port), timeout=WAIT_S)
    assert said.returncode != 0 and said.stderr.count("\n") == 1, said.stderr
    assert f"--metrics 127.0.0.1:{port}: cannot listen there" in said.stderr
    assert not (tmp_path / "run").exists()


def test_a_push_url_not_http_is_one_line_before_any_io(tmp_path: Path) -> None:
    job = tmp_path / "null.fio"
    job.write_text(NULL_JOB.format(runtime=1))
    said = run_cli("run", str(job), "--out", str(tmp_path / "run"),
                   "--metrics-push", "ftp://influx/write", timeout=WAIT_S)
    assert said.returncode != 0 and said.stderr.count("\n") == 1, said.stderr
    assert "--metrics-push 'ftp://influx/write' is not an http:// or https:// URL" in said.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_fleet_folder_serves_each_device(tmp_path: Path) -> None:
    """`ptsbench metrics FLEET_DIR` (the collector it serves) gives each device of a fleet its own series, with its
    own last round and steady state."""
    from ptsbench.metrics.serve import RunsCollector

    targets = [str(tmp_path / "a.dat"), str(tmp_path / "b.dat")]
    run_dir = tmp_path / "fleet"
    # one cell per round (the demo's latency matrix has nine): each device's series, not the matrix, is the point
    made = run_cli("pts", *targets, "--profile", "demo", "--size", "16M",
                   "--tests", "lat", "--round-time", "0.2", "--mixes", "lat=100,0", "--block-sizes", "lat=4k",
                   "--out", str(run_dir), timeout=WAIT_S * 4)
    assert made.returncode == 0, made.stderr
    served = RunsCollector([run_dir]).samples()
    rounds = {(s.labels["device"], s.labels["test"]): s.value for s in served if s.metric.name == "ptsbench_round"}
    assert rounds.keys() == {(target, phase) for target in targets for phase in ("lat", "lat-histogram")}
    for folder in (run_dir / "devices").iterdir():
        device = json.loads((folder / "manifest.json").read_text())["target"]["path"]
        last = json.loads(sorted((folder / "pts" / "lat" / "rounds").glob("*/round.json"))[-1].read_text())
        assert rounds[(device, "lat")] == last["round"]
        steady = [s.value for s in served if s.metric.name == "ptsbench_steady_state"
                  and (s.labels["device"], s.labels["test"]) == (device, "lat")]
        assert steady == [float(last["steady"]["steady"])]


def test_line_protocol_escapes_and_leaves_out_what_it_cannot_say() -> None:
    from ptsbench.metrics.push import line_protocol
    from ptsbench.metrics.series import SECOND_IOPS, WAF, Sample

    body = line_protocol([Sample(WAF, {"device": "/dev/x"}, float("nan")),
                          Sample(SECOND_IOPS, {"device": "/dev/x", "model": "", "workload": "rnd 4k 0/100",
                                               "odd": "a,b=c"}, 12.5, 1796534339860)], 1)
    assert body == ("ptsbench_second_iops,device=/dev/x,odd=a\\,b\\=c,workload=rnd\\ 4k\\ 0/100 value=12.5 "
                    "1796534339860000000\n")
