"""The OpenMetrics endpoint: an HTTP server (the standard library's, in threads of its own) whose /metrics is made at
every scrape from the stored runs and the streams on the board (series.py). It listens on this machine's loopback
unless another address is asked for. A scrape only reads: a run it cannot read is left out of that scrape, never
stopped."""

import ipaddress
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ptsbench.errors import PtsbenchError
from ptsbench.metrics import board
from ptsbench.metrics.series import (
    ROUND,
    Line,
    PushedSeconds,
    Sample,
    SecondsCache,
    SeriesKey,
    StoredRun,
    device_labels,
    exposition,
    line_of,
    live_rounds,
    read_stored,
    run_dirs,
    stream_eta,
    stream_lines,
    stream_seconds,
)

LOOPBACK = "127.0.0.1"
EXPOSURE_WARNING = ("the metrics at {where} name this host's devices (model, serial) and runs to anyone who reaches "
                    "it; there is no authentication")


class MetricsError(PtsbenchError):
    """A --metrics address that cannot be served."""


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return self.host == "localhost" or ipaddress.ip_address(self.host).is_loopback

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}/metrics"


def parse_address(text: str) -> Address:
    """PORT (on the loopback address), HOST:PORT or [IPV6]:PORT; HOST an IP address or localhost."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") if host else LOOPBACK
    hint = "give PORT (served on 127.0.0.1), or ADDRESS:PORT to serve on another address, e.g. --metrics 9464"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise MetricsError(f"--metrics {text!r}: {port!r} is not a TCP port", hint)
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise MetricsError(f"--metrics {text!r}: {host!r} is not an IP address", hint) from None
    return Address(host, int(port))


@dataclass(frozen=True)
class Rendered:
    """A stored run read and written out once (until it changes): its samples' lines."""

    run: StoredRun
    lines: list[Line]


class RunsCollector:
    """The samples of run directories (`roots`) and, with `live`, of the runs this process runs (the board's run
    directories and live streams)."""

    def __init__(self, roots: Sequence[Path] = (), live: bool = False) -> None:
        self.roots = [Path(root).absolute() for root in roots]
        self.live = live
        self.folders: dict[Path, tuple[tuple[int, int], list[Path]]] = {}
        self.stored: dict[Path, tuple[tuple[int, int], Rendered]] = {}
        self.drops_seen: dict[Path, int] = {}
        self.seconds: SecondsCache = {}
        self.pushed: PushedSeconds = {}  # what the receiver took
        self.pending: PushedSeconds = {}  # what the last push_samples gave
        self.ended: list[board.Stream] = []  # streams ended whose last seconds the receiver did not take yet
        self.rounds_served: dict[SeriesKey, float] = {}  # the highest round served, per series
        self.lock = threading.Lock()  # scrapes may come at once

    def samples(self) -> list[Sample]:
        """Every sample now: each run's stored state, then the live streams' (a live sample replaces the stored one
        of the same series)."""
        return [line.sample for line in self._lines()]

    def push_samples(self) -> list[Sample]:
        """What a push sends: as samples(), but every second of the live streams (and of those ended since the
        previous push) not pushed yet, not only the last."""
        return [line.sample for line in self._lines(every_second=True)]

    def pushed_ok(self) -> None:
        """The receiver took what push_samples gave: the next push sends only newer seconds (else it sends them
        again)."""
        with self.lock:
            self.pushed, self.ended = self.pending, []

    def text(self) -> str:
        """The OpenMetrics answer of a scrape."""
        return exposition(self._lines())

    def _lines(self, every_second: bool = False) -> list[Line]:
        stored, live = self._read(every_second)
        keys = {line.key for line in live}
        lines = [line for rendered in stored for line in rendered.lines if line.key not in keys] + live
        return [self._round_never_back(line) for line in lines]

    def _round_never_back(self, line: Line) -> Line:
        """The round served never goes back: between the end of a round's fio (its live round gone) and its stored
        record, the last stored round is the one before it."""
        if line.sample.metric != ROUND:
            return line
        with self.lock:
            highest = max(self.rounds_served.get(line.key, line.sample.value), line.sample.value)
            self.rounds_served[line.key] = highest
        return line if line.sample.value == highest else line_of(replace(line.sample, value=highest))

    def _read(self, every_second: bool) -> tuple[list[Rendered], list[Line]]:
        with self.lock:
            roots = [*self.roots, *board.runs()] if self.live else self.roots
            stored = [rendered for root in dict.fromkeys(roots) for rendered in self._runs(root)]
            runs = {rendered.run.root: rendered.run for rendered in stored}
            streams = board.streams() if self.live else []

            def device(stream: board.Stream) -> dict[str, str]:
                return runs[stream.run_dir].device_of(stream) if stream.run_dir in runs else _device(stream)

            alive = {id(stream) for stream in streams}
            self.seconds = {key: kept for key, kept in self.seconds.items() if key[0] in alive}  # ended streams
            if every_second:  # what is pushed counts as such once the receiver took it (pushed_ok)
                self.ended += board.take_ended() if self.live else []
                pushed = {key: kept for key, kept in self.pushed.items()
                          if key[0] in alive | {id(stream) for stream in self.ended}}
                live = [line_of(sample) for stream in [*streams, *self.ended]
                        for sample in stream_seconds(stream, device(stream), pushed)]
                live += [line_of(sample) for stream in streams for sample in stream_eta(stream, device(stream))]
                self.pending = pushed
            else:
                live = [line for stream in streams for line in stream_lines(stream, device(stream), self.seconds)]
            rounds = live_rounds(streams, {root: run.device for root, run in runs.items()})
            return stored, live + [line_of(sample) for sample in rounds]

    def _runs(self, root: Path) -> list[Rendered]:
        """The stored runs of a root (a fleet: its parts), each read again when the board or its manifest moved."""
        found = []
        for folder in self._folders(root):
            try:
                key = (board.changes(), (folder / "manifest.json").stat().st_mtime_ns)
                kept = self.stored.get(folder)
                if kept is None or kept[0] != key:
                    run = read_stored(folder, self.drops_seen)
                    kept = self.stored[folder] = (key, Rendered(run, [line_of(sample) for sample in run.samples]))
                found.append(kept[1])
            except (OSError, PtsbenchError, KeyError, TypeError, ValueError):  # mid-write, damaged: next scrape
                continue
        return found

    def _folders(self, root: Path) -> list[Path]:
        try:
            key = (board.changes(), (root / "manifest.json").stat().st_mtime_ns)
            kept = self.folders.get(root)
            if kept is None or kept[0] != key:
                kept = self.folders[root] = (key, run_dirs(root))
            return kept[1]
        except (OSError, PtsbenchError):  # not there yet (the run is starting), or not a run: nothing of it
            return []


def _device(stream: board.Stream) -> dict[str, str]:
    """The labels of a stream whose run is not read yet (its manifest is being written)."""
    from ptsbench.store import RunStore

    try:
        return device_labels(RunStore.open(stream.run_dir).manifest, stream.labels.get("device"))
    except (OSError, PtsbenchError):
        return {}


CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"


class _Handler(BaseHTTPRequestHandler):
    collector: RunsCollector  # set on the subclass each Server makes
    # keep-alive, as Prometheus scrapes: a scrape is then one request on an open connection, not a new connection and
    # thread each (bench/README.md); a connection idle this long is closed
    protocol_version = "HTTP/1.1"
    timeout = 300
    disable_nagle_algorithm = True  # the body follows the headers at once, not after the client's delayed ACK

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.split("?")[0] != "/metrics":
            self._answer(404, "text/plain; charset=utf-8", "ptsbench serves /metrics only\n")
            return
        try:
            text = self.collector.text()
        except Exception as error:  # this scrape fails; the run and the next scrape do not
            self._answer(500, "text/plain; charset=utf-8", f"ptsbench: this scrape failed: {error!r}\n")
            return
        self._answer(200, CONTENT_TYPE, text)

    def _answer(self, status: int, content_type: str, text: str) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
        pass  # stderr belongs to the run's progress


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    address_family = socket.AF_INET


class _HttpServer6(_HttpServer):
    address_family = socket.AF_INET6


class Server:
    """A running endpoint (its own threads); `stop` ends it."""

    def __init__(self, address: Address, collector: RunsCollector) -> None:
        handler = type("Handler", (_Handler,), {"collector": collector})
        host = LOOPBACK if address.host == "localhost" else address.host
        kind = _HttpServer6 if ":" in host else _HttpServer
        try:
            self.httpd = kind((host, address.port), handler)
        except OSError as error:
            raise MetricsError(f"--metrics {address.host}:{address.port}: cannot listen there ({error.strerror})",
                               "give a free port (0 lets the system choose one)") from error
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="ptsbench-metrics", daemon=True)
        self.thread.start()
        self.url = address.url(self.httpd.server_address[1])

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def serve_forever(server: Server) -> None:
    """Until Ctrl-C (the caller stops the server)."""
    try:
        while server.thread.is_alive():
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
