"""`ptsbench plot`'s drawing worker (plot/draw.py ChartWriter, report/core/draw_mpl.py DrawWorker): the same files
as drawing in-process, one error line when it fails, and no process left behind when the plot fails or is
interrupted. The worker is made to fail or hang by a stand-in matplotlib package put first on its PYTHONPATH (real
matplotlib does not fail on demand); the plot process itself never imports matplotlib when the worker draws."""

import os
import signal
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from ptsbench.plot.draw import WORKER_ENV, use_worker

CliRunner = Callable[..., subprocess.CompletedProcess[str]]

JOB = """
[lat]
ioengine=null
rw=randrw
bs=4k
size=8m
write_lat_log=lat
per_job_logs=0
"""


@pytest.fixture(scope="module")
def lat_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("worker-logs")
    (folder / "jobs.fio").write_text(JOB)
    subprocess.run(["fio", "jobs.fio"], cwd=folder, check=True, capture_output=True, timeout=60)
    return folder / "lat_lat.log"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_worker_writes_the_same_files_as_in_process(lat_log: Path, cli: CliRunner, tmp_path: Path) -> None:
    runs = {}
    for worker in ("1", "0"):
        out = tmp_path / f"worker-{worker}"
        done = cli("plot", str(lat_log), "--out", str(out), "--format", "png", "--format", "svg",
                   env={WORKER_ENV: worker})
        assert done.returncode == 0, done.stderr
        runs[worker] = (out, done.stdout)
    (with_worker, shown), (in_process, shown_in_process) = runs["1"], runs["0"]
    names = sorted(path.name for path in with_worker.iterdir())
    assert names == sorted(path.name for path in in_process.iterdir()) == ["lat_lat.png", "lat_lat.svg", "summary.csv"]
    png, png_in_process = with_worker / "lat_lat.png", in_process / "lat_lat.png"
    assert _png_size(png) == _png_size(png_in_process) == (1200, 600)
    assert png.read_bytes() == png_in_process.read_bytes()  # the same drawing, pixel for pixel
    svg, svg_in_process = (folder / "lat_lat.svg" for folder in (with_worker, in_process))
    for text in (svg.read_text(), svg_in_process.read_text()):
        assert text.lstrip().startswith("<?xml") and "<svg" in text and text.rstrip().endswith("</svg>")
    # matplotlib names an SVG's clip paths and markers at random: the sizes match, the names differ
    assert svg.stat().st_size == svg_in_process.stat().st_size
    assert (with_worker / "summary.csv").read_bytes() == (in_process / "summary.csv").read_bytes()
    assert shown.replace(str(with_worker), "OUT") == shown_in_process.replace(str(in_process), "OUT")


def _stand_in(tmp_path: Path, body: str) -> dict[str, str]:
    """Environment putting a stand-in matplotlib first on the path, and a mark to find the processes that got it."""
    package = tmp_path / "stand-in" / "matplotlib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(body)
    return {"PYTHONPATH": os.pathsep.join([str(package.parent), os.environ.get("PYTHONPATH", "")]),
            "PTSBENCH_TEST_MARK": uuid.uuid4().hex, WORKER_ENV: "1"}


def _marked(mark: str) -> list[int]:
    """The running processes whose environment holds the mark (zombies have none left)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile, or not ours
                pass
    return found


def test_failing_worker_gives_one_line_and_leaves_no_process(lat_log: Path, cli: CliRunner, tmp_path: Path) -> None:
    env = _stand_in(tmp_path, "raise ImportError('stand-in matplotlib, broken on purpose')\n")
    done = cli("plot", str(lat_log), "--out", str(tmp_path / "out"), "--format", "png", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "ptsbench: error: drawing the charts failed: ImportError: stand-in matplotlib, broken on purpose: "
        f"retry with {WORKER_ENV}=0 to draw them in the ptsbench process itself"]
    assert not _marked(env["PTSBENCH_TEST_MARK"])


def test_failed_or_interrupted_plot_stops_its_worker(lat_log: Path, cli: CliRunner, tmp_path: Path) -> None:
    """A worker that would never end (its matplotlib import hangs) is stopped when the plot fails before handing it
    work (a bad log line) and when the plot is interrupted while waiting for it."""
    started = tmp_path / "started"
    env = _stand_in(tmp_path, f"import time\nopen({str(started)!r}, 'w').close()\ntime.sleep(120)\n")
    bad = tmp_path / "bad_lat.log"
    bad.write_text("1, 20, 0, 4096, 0\n<html>\n")
    done = cli("plot", str(bad), "--out", str(tmp_path / "out"), env=env, timeout=60)
    assert done.returncode == 2 and "not a fio log line" in done.stderr
    assert not _marked(env["PTSBENCH_TEST_MARK"])

    plot = subprocess.Popen([sys.executable, "-m", "ptsbench", "plot", str(lat_log), "--out", str(tmp_path / "out")],
                            env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the worker never started"
    assert len(_marked(env["PTSBENCH_TEST_MARK"])) == 2  # the plot and its worker
    time.sleep(0.5)  # the plot reads the log and waits for the worker
    plot.send_signal(signal.SIGINT)
    _, stderr = plot.communicate(timeout=30)
    assert plot.returncode == 130 and stderr.strip() == "ptsbench: error: interrupted"
    assert not _marked(env["PTSBENCH_TEST_MARK"])


def test_worker_only_with_matplotlib_formats_and_a_free_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKER_ENV, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.4, 0.0, 0.0))
    assert use_worker(("png",)) and use_worker(("html", "svg"))
    assert not use_worker(("html",))
    monkeypatch.setattr(os, "getloadavg", lambda: (1.6, 0.0, 0.0))  # both CPUs busy: in-process is faster
    assert not use_worker(("png",))
    monkeypatch.setenv(WORKER_ENV, "1")
    assert use_worker(("png",)) and not use_worker(("html",))
    monkeypatch.setenv(WORKER_ENV, "0")
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert not use_worker(("png",))
    monkeypatch.delenv(WORKER_ENV)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not use_worker(("png",))
