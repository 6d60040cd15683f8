"""Metrics pushed to a store labs already run, the same samples the endpoint serves (series.py): a Prometheus
remote-write request (remote_write.py) to a URL whose path is a remote-write receiver's (Prometheus'
`/api/v1/write`, Mimir's `/api/v1/push`, Thanos' `/api/v1/receive`), else InfluxDB line protocol POSTed to it
(InfluxDB 1.x `/write?db=NAME`, 2.x `/api/v2/write?...`, Telegraf's http listener, VictoriaMetrics' `/write`), one
line per sample: `ptsbench_second_iops,device=...,test=... value=1234 TIME_NS`. Pushing never stops a run: a failed
push is said once and tried again at the next."""

import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager

from ptsbench.errors import PtsbenchError
from ptsbench.metrics import board
from ptsbench.metrics.series import Sample
from ptsbench.metrics.serve import RunsCollector

PUSH_INTERVAL_S = 10.0
TIMEOUT_S = 10.0


def _escaped(text: str, specials: str) -> str:
    for char in "\\" + specials:
        text = text.replace(char, "\\" + char)
    return text.replace("\n", "\\n")


def line_protocol(samples: Iterable[Sample], now_ms: int) -> str:
    """One line per sample; a tag with an empty value is left out (line protocol has none), and so is a value that is
    not a finite number (line protocol has none either; one would make the receiver refuse the whole push)."""
    lines = []
    for sample in samples:
        if not math.isfinite(sample.value):
            continue
        tags = "".join(f",{_escaped(key, ', =')}={_escaped(value, ', =')}"
                       for key, value in sorted(sample.labels.items()) if value)
        time_ns = (sample.time_ms if sample.time_ms is not None else now_ms) * 1_000_000
        lines.append(f"{_escaped(sample.metric.name, ', ')}{tags} value={float(sample.value)!r} {time_ns}")
    return "".join(line + "\n" for line in lines)


def post(url: str, body: bytes, headers: Mapping[str, str]) -> None:
    """POST `body`; PtsbenchError saying why when the receiver does not take it."""
    request = urllib.request.Request(url, body, method="POST", headers=dict(headers))
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            response.read()
    except urllib.error.HTTPError as error:  # the receiver's own words say why (a remote-write receiver's do)
        said = error.read().decode(errors="replace").strip().splitlines()
        raise PtsbenchError(f"push to {url} failed: {error}{': ' + said[0] if said else ''}",
                            "check the URL and that the receiver takes this format") from error
    except (OSError, ValueError) as error:  # URLError is an OSError
        raise PtsbenchError(f"push to {url} failed: {error}", "check the URL and that the receiver runs") from error


def check_url(url: str, option: str) -> None:
    """PtsbenchError for a URL that is not http:// or https://, or a remote-write one without the packages it needs
    (before any IO)."""
    from ptsbench.metrics.remote_write import check_installed, is_remote_write

    if not url.startswith(("http://", "https://")):
        raise PtsbenchError(f"{option} {url!r} is not an http:// or https:// URL",
                            f"e.g. {option} 'http://influx:8086/write?db=ptsbench' or "
                            f"'http://prometheus:9090/api/v1/write'")
    if is_remote_write(url):
        check_installed(option)


def push_once(url: str, collector: RunsCollector) -> int:
    """Push every sample now, in the format the URL asks for; the number of samples pushed."""
    from ptsbench.metrics.remote_write import HEADERS, is_remote_write, write_request

    samples, now_ms = collector.push_samples(), time.time_ns() // 1_000_000
    if is_remote_write(url):
        body = write_request(samples, now_ms)
        if body:
            post(url, body, HEADERS)
        count = len(samples) if body else 0
    else:
        text = line_protocol(samples, now_ms)
        if text:
            post(url, text.encode(), {"Content-Type": "text/plain; charset=utf-8"})
        count = text.count("\n")
    collector.pushed_ok()
    return count


@contextmanager
def pushing(url: str | None, collector: RunsCollector, say: Callable[[str], None]) -> Iterator[None]:
    """Push every PUSH_INTERVAL_S while the block runs, and once at its end (nothing when `url` is None)."""
    if url is None:
        yield
        return
    check_url(url, "--metrics-push")
    board.keep_ended()
    stop = threading.Event()
    failed = [False]

    def once() -> None:
        try:
            push_once(url, collector)
            failed[0] = False
        except Exception as error:  # whatever happens, the run goes on
            if not failed[0]:
                say(f"warning: {error}; the run goes on, pushes are tried again")
            failed[0] = True

    def loop() -> None:
        while not stop.wait(PUSH_INTERVAL_S):
            once()

    thread = threading.Thread(target=loop, name="ptsbench-metrics-push", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        once()
