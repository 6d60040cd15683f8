"""`ptsbench plot`: charts from real fio logs (PNG, SVG, HTML), the 3D view, reductions and series by hand, and
bad input as a user meets it."""

import csv
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ptsbench.errors import PtsbenchError
from ptsbench.fio import logs
from ptsbench.plot import PlotOptions, make_plots, series, summary_notes, summary_rows
from ptsbench.plot.charts import LineOptions, run_chart, surface_chart, value_axis
from ptsbench.plot.reduce import linear_trend, minmax_per_column, window_mean
from ptsbench.plot.series import build_run, summarize

JOBS = """
[global]
ioengine=null
rw=randrw
bs=4k

[win]
numjobs=2
time_based
runtime=1
size=64m
rate_iops=5000,5000
log_avg_msec=100
write_bw_log=win
write_iops_log=win
write_lat_log=win

[io]
numjobs=2
per_job_logs=0
size=4m
write_lat_log=io
write_bw_log=io

[hist]
time_based
runtime=1
size=64m
write_hist_log=hist
log_hist_msec=100
"""

MIXES = "".join(f"""
[m{bs}_{mix}]
bs={bs}
rwmixread={mix}
size={64 if bs == '16k' else 16}m
write_iops_log=m{bs}_{mix}
per_job_logs=0
""" for bs in ("4k", "16k") for mix in (25, 75))

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def _fio(folder: Path, text: str) -> list[dict[str, Any]]:
    (folder / "jobs.fio").write_text(text)
    subprocess.run(["fio", "jobs.fio", "--output-format=json", "--output=out.json"], cwd=folder, check=True,
                   capture_output=True, timeout=120)
    jobs: list[dict[str, Any]] = json.loads((folder / "out.json").read_text())["jobs"]
    return jobs


@pytest.fixture(scope="module")
def fio_logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("plot-logs")
    return folder, _fio(folder, JOBS)


def test_plot_command_in_every_format(fio_logs: tuple[Path, list[dict[str, Any]]], cli: CliRunner,
                                      tmp_path: Path) -> None:
    folder, _ = fio_logs
    out = tmp_path / "charts"
    done = cli("plot", str(folder), "--kind", "bw", "--out", str(out), "--format", "png", "--format", "svg",
               "--format", "html", "--smooth", "0.2", "--trend")
    assert done.returncode == 0, done.stderr
    for stem in ("win_bw", "io_bw"):
        png, svg, html = (out / f"{stem}.{suffix}" for suffix in ("png", "svg", "html"))
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000, stem
        text = svg.read_text()
        assert text.lstrip().startswith("<?xml") and "<svg" in text and "Time (s)" in text, stem
        assert "mean over 0.2 s" in text and "trend" in text, stem
        page = html.read_text()
        assert html.stat().st_size > 1_000_000, stem  # plotly.js inside: works offline
        assert '<script src="http' not in page and "Plotly.newPlot" in page, stem
        assert str(png) in done.stdout
    assert "Summary of the values drawn" in done.stdout and "win" in done.stdout


def test_plot_folder_of_every_kind(fio_logs: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    folder, _ = fio_logs
    result = make_plots([str(folder)], PlotOptions(out_dir=tmp_path))
    assert any("slat" in note and "empty" in note for note in result.notes)  # a null engine logs no slat
    names = {path.name for path in result.files}
    assert names - {"io_bw.png"} == {f"{stem}.png" for stem in ("win_bw", "win_iops", "win_lat", "win_clat", "io_lat",
                                                                 "io_clat", "hist_hist")} | {"summary.csv"}
    # io's 2,048 IOs are logged within a few milliseconds (on an idle host all in the first): their bandwidth over time
    # is a chart, or, when fio's log holds one or two times, a note saying why there is none
    said = [note for note in result.notes if note.startswith("io: bandwidth: not charted, at most ")]
    assert ("io_bw.png" in names) != bool(said), result.notes
    for path in result.files:
        assert path.stat().st_size > (100 if path.suffix == ".csv" else 20_000), path
    rows = list(csv.DictReader((tmp_path / "summary.csv").open()))
    assert {(row["run"], row["kind"], row["direction"]) for row in rows} >= {
        ("win", "bw", "read"), ("win", "bw", "write"), ("win", "bw", "total"), ("io", "lat", "total"),
        ("hist", "hist", "read"), ("hist", "hist", "write")}
    # percentile columns say what they are of; a window's mean latency is no IO's, so those stay empty
    by_key = {(row["run"], row["kind"], row["direction"]): row for row in rows}
    window_lat, io_lat = by_key["win", "lat", "read"], by_key["io", "lat", "total"]
    window_bw = by_key["win", "bw", "read"]
    assert window_lat["percentiles_of"] == "" and window_lat["p50"] == window_lat["p99.9"] == ""
    assert window_lat["mean"] != "" and "mean latencies" in window_lat["over"]
    assert io_lat["percentiles_of"] == "IOs" and float(io_lat["p50"]) > 0
    assert window_bw["percentiles_of"] == "the windows' values" and float(window_bw["p50"]) > 0


def test_per_io_rows_count_every_io(fio_logs: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    folder, jobs = fio_logs
    result = make_plots([str(folder / "io_lat.log")], PlotOptions(out_dir=tmp_path))
    total = {row.direction: row for row in result.summaries}
    io_jobs = [job for job in jobs if job["jobname"] == "io"]
    assert total["read"].count == sum(job["read"]["total_ios"] for job in io_jobs)
    assert total["total"].count == sum(job["read"]["total_ios"] + job["write"]["total_ios"] for job in io_jobs)
    assert total["read"].min == min(job["read"]["lat_ns"]["min"] for job in io_jobs)
    assert total["write"].max == max(job["write"]["lat_ns"]["max"] for job in io_jobs)
    every = logs.read_log(folder / "io_lat.log").value  # the total's statistics (made from its directions' counts)
    assert [value for _, value in total["total"].percentiles] == np.percentile(every, (50, 90, 99, 99.9)).tolist()
    assert total["total"].mean == pytest.approx(float(every.mean()), rel=1e-12)
    assert total["total"].stddev == pytest.approx(float(every.std()), rel=1e-9)


def test_per_io_directions_split_in_chunks_keep_every_io(fio_logs: tuple[Path, list[dict[str, Any]]],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Per-IO traces are split by direction a chunk at a time: with small chunks every direction still holds its IOs
    in order, and so does the data written so far."""
    monkeypatch.setattr(series, "_SPLIT_CHUNK", 300)
    folder, _ = fio_logs
    log = logs.read_log(folder / "io_lat.log")
    assert log.lines > 1000  # several chunks
    run = build_run([log], "io", need_written=True)
    # two jobs append to one log (per_job_logs=0): on a busy machine their lines can interleave out of time order,
    # and the IOs are taken in time order (stable), as the merge does
    order = np.argsort(log.time_ms, kind="stable")
    time_ms, value, ddir = log.time_ms[order], log.value[order], log.ddir[order]
    written = np.cumsum(np.where(ddir == 1, log.bs_bytes[order], 0))
    for direction, number in (("read", 0), ("write", 1)):
        trace = run.trace(direction)
        assert trace is not None
        chosen = ddir == number
        assert trace.time.tolist() == time_ms[chosen].tolist()
        assert trace.value.tolist() == value[chosen].tolist()
        assert trace.written_bytes is not None and trace.written_bytes.tolist() == written[chosen].tolist()


def test_compare_and_data_written(fio_logs: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    folder, jobs = fio_logs
    options = PlotOptions(out_dir=tmp_path, compare=True, x_axis="written", labels=("one", "two"),
                          formats=("png", "html"), title="Two runs")
    result = make_plots([str(folder / "win_bw.*.log"), str(folder / "io_bw.log")], options)
    assert {path.name for path in result.files} == {"compare_bw.png", "compare_bw.html", "summary.csv"}
    assert "Two runs" in (tmp_path / "compare_bw.html").read_text()
    paths = sorted(folder.glob("win_bw.*.log"))
    run = build_run([logs.read_log(p) for p in paths], "win", need_written=True)
    write = run.trace("write")
    assert write is not None and write.written_bytes is not None
    assert (np.diff(write.written_bytes) >= 0).all()
    # The axis ends at every byte the logs account for: each write window's KiB/s times its length, read from the
    # files here (the first window starts at 0). Exact whatever the load: not fio's total times a share of the
    # runtime, which assumed a steady rate and failed on a loaded machine, where fio falls behind and catches up.
    logged = 0.0
    for path in paths:
        rows = np.loadtxt(path, delimiter=",", usecols=(0, 1, 2), dtype=np.int64, ndmin=2)
        rows = rows[rows[:, 2] == 1]
        logged += float(np.sum(rows[:, 1] * 1024 * np.diff(rows[:, 0], prepend=0) / 1000))
    assert write.written_bytes[-1] == pytest.approx(logged, rel=1e-9)
    # and the logs hold what fio wrote, in the same unit: a busy host makes fio log a late window at its planned
    # time with the rate of the time it really covered (CI: 1.38 x fio's bytes), so the bound catches unit mistakes
    # (1,000 x and more), as tests/fio/test_logs.py's does
    fio_bytes = sum(job["write"]["io_bytes"] for job in jobs if job["jobname"] == "win")
    assert fio_bytes / 10 <= logged <= 10 * fio_bytes, (logged, fio_bytes)


def test_three_d_view_over_block_size_and_mix(tmp_path: Path) -> None:
    jobs = _fio(tmp_path, "[global]\nioengine=null\nrw=randrw\n" + MIXES)
    runs = [build_run([logs.read_log(tmp_path / f"m{bs}_{mix}_iops.log")], f"{bs} {mix}")
            for bs in ("4k", "16k") for mix in (25, 75)]
    chart = surface_chart(runs, bars=False, provenance="p", key="3d_iops", title=None)
    surface = chart.grid
    assert surface is not None and chart.kind == "surface"
    assert surface.x_labels == ("4k", "16k")
    mixes = [int(label.split("%")[0]) for label in surface.y_labels]
    assert mixes == [25, 75]
    by_name = {job["jobname"]: job for job in jobs}
    divisor, _ = value_axis("iops", max(run.mean_total or 0.0 for run in runs))
    for column, bs in enumerate(("4k", "16k")):
        for row, mix in enumerate((25, 75)):
            job, run = by_name[f"m{bs}_{mix}"], runs[column * 2 + row]
            ios = job["read"]["total_ios"] + job["write"]["total_ios"]
            assert len(logs.read_log(tmp_path / f"m{bs}_{mix}_iops.log").value) == ios  # one line per IO
            assert run.read_share == job["read"]["total_ios"] / ios
            assert surface.z[row][column] == pytest.approx((run.mean_total or 0.0) / divisor, rel=1e-12)
    result = make_plots([str(tmp_path / "m*_iops.log")], PlotOptions(out_dir=tmp_path / "out", three_d=True,
                                                                       bars=True, formats=("png", "html")))
    assert (tmp_path / "out" / "3d_iops.png").stat().st_size > 20_000
    assert '"type":"mesh3d"' in (tmp_path / "out" / "3d_iops.html").read_text()
    assert len(result.summaries) == 12  # 4 runs x read, write, total


# --- reductions and series by hand ------------------------------------------------------------------------------


def test_minmax_keeps_every_spike() -> None:
    x = np.arange(1_000_000, dtype=np.float64)
    y = np.ones(1_000_000)
    y[123_457] = 50.0  # one IO out of a million
    y[900_001] = 0.0
    reduced = minmax_per_column(x, y, 1000)
    assert reduced is not None
    middle, low, high = reduced
    assert len(middle) == 1000 and high.max() == 50.0 and low.min() == 0.0
    assert middle[int(np.argmax(high))] == pytest.approx(123_500, abs=500)
    assert minmax_per_column(x[:900], y[:900], 1000) is None  # few points: drawn as they are


def test_window_mean_and_trend_by_hand() -> None:
    x = np.array([0.0, 1.0, 2.0, 3.0, 10.0])
    y = np.array([1.0, 2.0, 3.0, 4.0, 100.0])
    assert window_mean(x, y, np.array([1.0, 10.0, 6.0]), 2.0).tolist()[:2] == [2.0, 100.0]
    assert np.isnan(window_mean(x, y, np.array([6.0]), 2.0)[0])
    assert linear_trend(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 5.0])) == pytest.approx((2.0, 1.0))


def test_per_io_rates_by_hand(tmp_path: Path) -> None:
    """IOs completing at 0, 0, 1 and 3 ms (reads of 4 KiB, one 8 KiB write at 1 ms), in 2 ms intervals:
    [0, 2): 3 IOs -> 1500 IO/s, 16 KiB -> 8,192,000 B/s; [2, 4) ends at the last IO (3 ms + 1): 1 IO in 2 ms."""
    text = "0, 10, 0, 4096, 0\n0, 10, 0, 4096, 0\n1, 10, 1, 8192, 0\n3, 10, 0, 4096, 0\n"
    (tmp_path / "h_iops.log").write_text(text)
    (tmp_path / "h_bw.log").write_text(text)
    iops = build_run([logs.read_log(tmp_path / "h_iops.log")], "h", interval_ms=2)
    total = iops.trace("total")
    assert total is not None and total.time_s.tolist() == [0.002, 0.004] and total.value.tolist() == [1500.0, 500.0]
    read = iops.trace("read")
    assert read is not None and read.value.tolist() == [1000.0, 500.0]
    bw = build_run([logs.read_log(tmp_path / "h_bw.log")], "h", interval_ms=2, need_written=True)
    bw_total = bw.trace("total")
    assert bw_total is not None and bw_total.value.tolist() == [16384 / 0.002, 4096 / 0.002]
    assert bw_total.written_bytes is not None and bw_total.written_bytes.tolist() == [8192, 8192]
    assert bw.bs_bytes == 4096 and bw.read_share == 0.75


def test_windowed_single_job_total_and_summary(tmp_path: Path) -> None:
    path = tmp_path / "w_bw.1.log"
    path.write_text("100, 10, 0, 0, 0\n100, 30, 1, 0, 0\n200, 20, 0, 0, 0\n200, 40, 1, 0, 0\n")
    run = build_run([logs.read_log(path)], "w")
    total = run.trace("total")
    assert total is not None and total.value.tolist() == [40 * 1024.0, 60 * 1024.0]  # KiB/s to B/s
    assert run.read_share == pytest.approx(30 / 100)
    rows = {row.direction: row for row in summarize(run)}
    assert (rows["write"].min, rows["write"].max, rows["write"].mean) == (30 * 1024.0, 40 * 1024.0, 35 * 1024.0)
    chart = run_chart(run, LineOptions(trend=True), "provenance", "k")
    names = [line.name for line in chart.series]
    assert names[0] == "total" and names[2:4] == ["read", "read trend (+102 kB/s per s)"]


# --- what a user sees when something is wrong ---------------------------------------------------------------------


def test_bad_logs_give_one_line(cli: CliRunner, tmp_path: Path) -> None:
    empty = tmp_path / "e_bw.1.log"
    empty.write_text("")
    done = cli("plot", str(empty), "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"ptsbench: error: {empty}: empty file, no fio log lines: fio leaves a log " \
                                  "empty when the job logged nothing of that kind (e.g. slat with a sync engine)"
    bad = tmp_path / "g_lat.log"
    bad.write_text("1, 20, 0, 4096, 0\n2, 30, 1, 4096, 0\n<html>\n3, 40, 0, 4096, 0\n")
    done = cli("plot", str(bad), "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert f"{bad}: line 3: not a fio log line: '<html>'" in done.stderr and "--skip-bad-lines" in done.stderr
    done = cli("plot", str(bad), "--out", str(tmp_path / "o"), "--skip-bad-lines")
    assert done.returncode == 0, done.stderr
    assert f"{bad}: skipped 1 bad line(s) (line 3)" in done.stderr
    assert (tmp_path / "o" / "g_lat.png").is_file()
    done = cli("plot", str(tmp_path / "nothing*.log"))
    assert done.returncode == 2 and "no file matches" in done.stderr


def test_help_does_not_load_numpy() -> None:
    code = "import sys, ptsbench.cli, ptsbench.cli.plot; print('numpy' in sys.modules, 'matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_runs_grouped_by_job_host_and_pattern(tmp_path: Path) -> None:
    from ptsbench.plot.sources import find_runs

    line = "100, 10, 0, 0, 0\n"
    for name in ("c_bw.1.log.hostA", "c_bw.2.log.hostA", "c_bw.1.log.hostB", "c_iops.1.log.hostA", "notes.log"):
        (tmp_path / name).write_text(line)
    found = find_runs([str(tmp_path)])
    assert [(run.label, run.kind, len(run.paths)) for run in found.runs] == [
        ("c@hostA", "bw", 2), ("c@hostB", "bw", 1), ("c@hostA", "iops", 1)]
    per_job = find_runs([str(tmp_path)], kind="bw", per_job=True)
    assert [run.label for run in per_job.runs] == ["c.1@hostA", "c.1@hostB", "c.2@hostA"]  # by file name
    picked = find_runs([str(tmp_path / "*.log*")], pattern=r"hostB$")
    assert [run.label for run in picked.runs] == ["c@hostB"]
    assert any("notes.log" in note for note in find_runs([str(tmp_path / "*")]).left_out)


def test_wall_clock_time_stamps_start_at_zero(tmp_path: Path) -> None:
    """log_unix_epoch logs: milliseconds since 1970, drawn from the first one on."""
    start = 1_763_680_000_000
    path = tmp_path / "u_bw.1.log"
    path.write_text("".join(f"{start + 500 * i}, 100, 0, 0, 0\n" for i in range(1, 5)))
    second = tmp_path / "u_bw.2.log"
    second.write_text("".join(f"{start + 500 * i + 20}, 100, 0, 0, 0\n" for i in range(1, 5)))
    run = build_run([logs.read_log(path), logs.read_log(second)], "u")
    read = run.trace("read")
    # to the end of the longer log: its last 20 ms alone (the other has ended) in a partial interval
    assert read is not None and read.time_s.tolist() == [0.5, 1.0, 1.5, 2.0, 2.02]
    assert read.value[1:4].tolist() == [200 * 1024.0] * 3 and read.value[4] == 100 * 1024.0
    assert "time since 2025-11-20" in run.note


def test_summary_holds_only_the_directions_drawn(fio_logs: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    """--dir read draws reads only: the summary of 'the values drawn' (terminal and summary.csv) has no write or
    total rows either."""
    folder, _ = fio_logs
    result = make_plots([str(folder / "win_iops.*.log"), str(folder / "hist_clat_hist.*.log")],
                        PlotOptions(out_dir=tmp_path, directions=("read",)))
    assert {row.direction for row in result.summaries} == {"read"}
    assert {row["direction"] for row in csv.DictReader((tmp_path / "summary.csv").open())} == {"read"}


def test_help_shows_no_empty_range() -> None:
    """--smooth and --interval refuse nan and inf only: their help shows no range (click printed 'x<=None')."""
    from click.testing import CliRunner

    from ptsbench.cli import cli

    done = CliRunner().invoke(cli, ["plot", "--help"], terminal_width=200)
    assert done.exit_code == 0 and "--smooth SECONDS" in done.output
    assert "None" not in done.output


def test_matplotlib_is_imported_without_its_setter_docs() -> None:
    """import_matplotlib skips matplotlib's inspection of every artist class for the signature and the property
    listing of its set() (a third of its import time): if a matplotlib release stops generating them that way this
    fails, rather than the saving quietly going away. set() works as before, aliases included. The import's objects
    are left out of later garbage collections."""
    code = ("import gc, json; from ptsbench.plot.draw import import_matplotlib; import_matplotlib(); "
            "from matplotlib.lines import Line2D; from matplotlib.artist import Artist; "
            "line = Line2D([0, 1], [2, 3]); line.set(lw=3, color='teal'); "
            "print(json.dumps([line.get_linewidth(), line.get_color(), "
            "[(c.set.__doc__ or '').partition('Supported properties are')[2] for c in (Line2D, Artist)], "
            "[hasattr(c.set, '__signature__') for c in (Line2D, Artist)]]));"
            "print(gc.isenabled(), gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    found, collector = done.stdout.splitlines()
    width, color, (line_doc, artist_doc), (line_signature, artist_signature) = json.loads(found)
    enabled, frozen = collector.split()
    assert enabled == "True" and int(frozen) > 50_000  # the import's objects frozen, the collector on again
    assert (width, color) == (3, "teal")  # set() with an alias
    assert not line_doc.strip() and not line_signature  # Line2D's was made after the patch: nothing listed
    assert "alpha: " in artist_doc and artist_signature  # Artist's own was made before it: the check can fail


@pytest.mark.parametrize("preset", [None, "3"])
def test_cli_numpy_settings_unless_told(preset: str | None) -> None:
    """OpenBLAS threads spin after numpy's import (CPU the plot needs): the CLI asks for one; and for no transparent
    huge pages (slower first touch on the VM measured). A user's own values stay."""
    code = ("import os, sys; from ptsbench import cli; sys.argv = ['ptsbench', '--version']; cli.main(); "
            "import numpy; print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['NUMPY_MADVISE_HUGEPAGE'], "
            "len(os.listdir('/proc/self/task')))")
    env = {key: value for key, value in os.environ.items()
           if key not in ("OPENBLAS_NUM_THREADS", "NUMPY_MADVISE_HUGEPAGE")}
    if preset:
        env.update(OPENBLAS_NUM_THREADS=preset, NUMPY_MADVISE_HUGEPAGE="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    threads_setting, huge_pages, threads = done.stdout.split()[-3:]
    assert (threads_setting, huge_pages) == ((preset, "1") if preset else ("1", "0"))
    if preset is None:
        assert threads == "1"  # numpy started no BLAS threads of its own


def test_summary_of_averaged_latency_logs_says_they_are_window_means(
        fio_logs: tuple[Path, list[dict[str, Any]]], cli: CliRunner, tmp_path: Path) -> None:
    """Latency logs averaged per window (log_avg_msec) hold window means: their percentile columns stay empty and a
    note says why; per-IO logs keep their percentiles."""
    folder, _ = fio_logs
    done = cli("plot", str(folder / "win_clat.1.log"), str(folder / "io_clat.log"), "--compare", "--out",
               str(tmp_path / "charts"))
    assert done.returncode == 0, done.stderr
    result = make_plots([str(folder / "win_clat.1.log")], PlotOptions(out_dir=tmp_path / "a"))
    headers, rows = summary_rows(result.summaries)
    percentile_columns = [index for index, header in enumerate(headers) if header.startswith("p")]
    assert rows and all(row[index] == "" for row in rows for index in percentile_columns)
    assert all(row[headers.index("count")].endswith((" window", " windows")) for row in rows), rows
    assert any(note.endswith("windows (their mean latencies)") or "ms windows (as fio wrote them" in note
               for note in summary_notes(result.summaries)), summary_notes(result.summaries)
    assert "percentiles are left empty" in summary_notes(result.summaries)[-1]
    per_io = make_plots([str(folder / "io_clat.log")], PlotOptions(out_dir=tmp_path / "b"))
    headers, rows = summary_rows(per_io.summaries)
    assert all(row[index] for row in rows for index in percentile_columns) and not summary_notes(per_io.summaries)
    assert "percentiles are left empty" in " ".join(done.stdout.split())


def test_a_label_per_folder_names_each_folders_runs(fio_logs: tuple[Path, list[dict[str, Any]]],
                                                     tmp_path: Path) -> None:
    folder, _ = fio_logs
    for name in ("before", "after"):
        (tmp_path / name).mkdir()
        for path in folder.glob("win_iops.*.log"):
            (tmp_path / name / path.name).write_bytes(path.read_bytes())
        (tmp_path / name / "io_lat.log").write_bytes((folder / "io_lat.log").read_bytes())
    result = make_plots([str(tmp_path / "before"), str(tmp_path / "after")],
                        PlotOptions(out_dir=tmp_path / "charts", compare=True, labels=("A", "B")))
    runs = {row.run for row in result.summaries}
    assert runs == {"A: win", "A: io", "B: win", "B: io"}, runs
    with pytest.raises(PtsbenchError, match="3 labels for 4 runs .* from 2 inputs"):
        make_plots([str(tmp_path / "before"), str(tmp_path / "after")],
                   PlotOptions(out_dir=tmp_path / "c2", compare=True, labels=("A", "B", "C")))


def test_a_log_of_two_windows_is_said_not_charted(tmp_path: Path) -> None:
    """An IOPS log of two 1 s windows per direction, as fio writes one for a 2 s job (a real fio run may log a
    window more or less on a busy host, so the log is written here): a chart would be an almost empty plot (one
    window: a line of one point, not drawn at all). No file is written for it; a note names the chart and why, and
    the summary holds the values."""
    (tmp_path / "short_iops.1.log").write_text("1000, 3104863, 0, 0, 0\n1000, 3103569, 1, 0, 0\n"
                                               "2000, 3100021, 0, 0, 0\n2000, 3098764, 1, 0, 0\n")
    result = make_plots([str(tmp_path)], PlotOptions(out_dir=tmp_path / "charts"))
    assert [path.name for path in result.files] == ["summary.csv"]
    assert "short: iops: not charted, at most 2 values per line, too few to show a course (the summary holds them)" \
        in result.notes
    means = {row.direction: (row.count, row.mean) for row in result.summaries}
    assert means["read"] == (2, pytest.approx((3104863 + 3100021) / 2))
    assert means["write"] == (2, pytest.approx((3103569 + 3098764) / 2))
    (tmp_path / "short_iops.1.log").write_text("1000, 3104863, 0, 0, 0\n2000, 3100021, 0, 0, 0\n"
                                               "3000, 3100021, 0, 0, 0\n")
    assert [path.name for path in make_plots([str(tmp_path)], PlotOptions(out_dir=tmp_path / "charts")).files] == [
        "short_iops.png", "summary.csv"]  # three windows: a course, drawn
