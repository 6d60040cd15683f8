"""Real receivers of ptsbench's metrics, started by the tests on the loopback address and stopped on every exit
path (bound to the test process's life too: the parent-death signal of fio/lifetime.py): Debian's Prometheus (a
scraper, or a remote-write receiver) and InfluxDB 1.x."""

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ptsbench.fio.lifetime import start_bound

START_TIMEOUT_S = 120.0  # many times the idle start-up of either server (about a second)


def listening_ports(pid: int) -> list[int]:
    """The TCP ports a process listens on, from /proc: a server started on port 0 says so nowhere else that a test
    can read without a race."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            found = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(fd))
            if found:
                inodes.add(found[1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@contextlib.contextmanager
def server(argv: list[str], log: Path, ready: Callable[[str], bool]) -> Iterator[str]:
    """Start a server, wait for its port and for `ready(base_url)`; yield the base URL; stop it at the end."""
    with open(log, "wb") as out:
        process = start_bound(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert process.poll() is None, f"{argv[0]} ended: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"{argv[0]} did not start: {log.read_text()[-2000:]}"
            found = [url for port in listening_ports(process.pid) if ready(url := f"http://127.0.0.1:{port}")]
            if found:
                break
            time.sleep(0.1)
        yield found[0]
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def get_json(url: str, **params: str) -> Any:
    with urllib.request.urlopen(f"{url}?{urllib.parse.urlencode(params)}", timeout=30) as response:
        return json.loads(response.read())


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status < 300)
    except OSError:
        return False


@contextlib.contextmanager
def prometheus(folder: Path, target: str | None, interval: str = "500ms") -> Iterator[str]:
    """Prometheus scraping `target` (HOST:PORT) every `interval`, or (None) scraping nothing and receiving remote
    write at /api/v1/write; yields its base URL."""
    if shutil.which("prometheus") is None:
        pytest.fail("prometheus is not installed: scripts/install.sh --test installs it")
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "prometheus.yml"
    config.write_text(f"global:\n  scrape_interval: {interval}\n  scrape_timeout: {interval}\n" + (
        f"scrape_configs:\n  - job_name: ptsbench\n    static_configs:\n      - targets: ['{target}']\n"
        if target else ""))
    argv = ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
            "--web.listen-address=127.0.0.1:0", *([] if target else ["--web.enable-remote-write-receiver"])]
    with server(argv, folder / "prometheus.log", lambda url: _answers(f"{url}/-/ready")) as url:
        yield url


@contextlib.contextmanager
def influxdb(folder: Path) -> Iterator[str]:
    """InfluxDB 1.x with a database `ptsbench`, on the loopback address; yields its base URL."""
    if shutil.which("influxd") is None:
        pytest.fail("influxd is not installed: scripts/install.sh --test installs it")
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "influxdb.conf"
    config.write_text(
        "reporting-disabled = true\nbind-address = \"127.0.0.1:0\"\n"
        f"[meta]\n  dir = \"{folder / 'meta'}\"\n"
        f"[data]\n  dir = \"{folder / 'data'}\"\n  wal-dir = \"{folder / 'wal'}\"\n  query-log-enabled = false\n"
        "[http]\n  bind-address = \"127.0.0.1:0\"\n  log-enabled = false\n")
    with server(["influxd", "-config", str(config)], folder / "influxd.log",
                lambda url: _answers(f"{url}/ping")) as url:
        request = urllib.request.Request(f"{url}/query", urllib.parse.urlencode(
            {"q": "CREATE DATABASE ptsbench"}).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
        yield url
