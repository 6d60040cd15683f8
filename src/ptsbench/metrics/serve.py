"""The OpenMetrics endpoint: an HTTP server (prometheus_client's) whose /metrics is made at every scrape from the
stored runs and the streams on the board (series.py). It listens on this machine's loopback unless another address
is asked for. A scrape only reads: a run it cannot read is left out of that scrape, never stopped."""

import ipaddress
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptsbench.errors import PtsbenchError
from ptsbench.metrics import board
from ptsbench.metrics.series import Sample, StoredRun, device_labels, live_rounds, read_stored, run_dirs, stream_samples

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


class RunsCollector:
    """prometheus_client's collector over run directories (`roots`, and those the board names) and live streams."""

    def __init__(self, roots: Sequence[Path] = ()) -> None:
        self.roots = [Path(root).absolute() for root in roots]
        self.stored: dict[Path, tuple[tuple[int, int], StoredRun]] = {}
        self.drops_seen: dict[Path, int] = {}
        self.lock = threading.Lock()  # scrapes may come at once

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import Metric

        families: dict[str, Any] = {}
        seen: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
        samples = self.samples()
        for sample in samples:  # a later sample of the same series replaces an earlier one (live over stored)
            seen[(sample.metric.name, tuple(sorted(sample.labels.items())))] = id(sample)
        for sample in samples:
            if seen[(sample.metric.name, tuple(sorted(sample.labels.items())))] != id(sample):
                continue
            family = families.get(sample.metric.name)
            if family is None:
                family = families[sample.metric.name] = Metric(sample.metric.name, sample.metric.help, "gauge")
            family.add_sample(sample.metric.name, dict(sample.labels), sample.value, sample.time_s)
        yield from families.values()

    def samples(self) -> list[Sample]:
        """Every sample now: each run's stored state, then the live streams' last seconds."""
        with self.lock:
            found: list[Sample] = []
            devices: dict[Path, dict[str, str]] = {}
            for root in dict.fromkeys([*self.roots, *board.runs()]):
                for run in self._runs(root):
                    devices[run.root] = run.device
                    found.extend(run.samples)
            streams = board.streams()
            for stream in streams:
                found.extend(stream_samples(stream, devices.get(stream.run_dir) or _device(stream.run_dir)))
            found.extend(live_rounds(streams, devices))
            return found

    def _runs(self, root: Path) -> list[StoredRun]:
        """The stored runs of a root (a fleet: its parts), re-read when the board or its manifest moved."""
        try:
            folders = run_dirs(root)
        except (OSError, PtsbenchError):  # not there yet (the run is starting), or not a run: nothing of it
            return []
        found = []
        for folder in folders:
            try:
                key = (board.changes(), (folder / "manifest.json").stat().st_mtime_ns)
                kept = self.stored.get(folder)
                if kept is None or kept[0] != key:
                    kept = self.stored[folder] = (key, read_stored(folder, self.drops_seen))
                found.append(kept[1])
            except (OSError, PtsbenchError, KeyError, TypeError, ValueError):  # mid-write, damaged: next scrape
                continue
        return found


def _device(run_dir: Path) -> dict[str, str]:
    from ptsbench.store import RunStore

    try:
        return device_labels(RunStore.open(run_dir).manifest)
    except (OSError, PtsbenchError):
        return {}


class Server:
    """A running endpoint; `stop` ends it."""

    def __init__(self, address: Address, collector: RunsCollector) -> None:
        from prometheus_client import CollectorRegistry, start_http_server

        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        try:
            self.httpd, self.thread = start_http_server(address.port, address.host, self.registry)
        except OSError as error:
            raise MetricsError(f"--metrics {address.host}:{address.port}: cannot listen there ({error.strerror})",
                               "give a free port (0 lets the system choose one)") from error
        self.url = address.url(self.httpd.server_port)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def serving(address: Address | None, roots: Iterable[Path] = ()) -> Iterator[Server | None]:
    """Serve the runs while the block runs (nothing when `address` is None)."""
    if address is None:
        yield None
        return
    server = Server(address, RunsCollector(list(roots)))
    try:
        yield server
    finally:
        server.stop()


def serve_forever(server: Server) -> None:
    """Until Ctrl-C (the caller stops the server)."""
    try:
        while server.thread.is_alive():
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
