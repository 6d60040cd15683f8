"""`ptsbench plot` on fio JSON output: plain fio files of a QD series, folders compared, client/server output with
host filters, a settings file; charts written as PNG / SVG and checked in headless chromium."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from ptsbench.report.cases.sweep import best_lines, bound_table
from ptsbench.report.cases.sweep_charts import Point, bucket_shares, distinct
from test_hosts import Servers, hosts_arg
from test_hosts import servers as servers  # noqa: PLC0414 - the fixture
from test_report_browser import Browser, assert_clean_report_page, image_colors
from test_report_browser import browser as browser  # noqa: PLC0414 - the fixture


def plain_fio(path: Path, iodepth: int, output_format: str = "json", *extra: str) -> dict:  # type: ignore[type-arg]
    """Plain fio (no ptsbench) writing its JSON output file, as a user of fio-plot runs it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["fio", f"--name=qd{iodepth}", "--ioengine=null", "--size=256M", "--rw=randread", "--bs=4k",
                    f"--iodepth={iodepth}", "--runtime=300ms", "--time_based", f"--output-format={output_format}",
                    f"--output={path}", *extra], check=True, capture_output=True)
    doc: dict = json.loads(path.read_text())  # type: ignore[type-arg]
    return doc


def plot(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("plot", *args, timeout=180)


def table_rows(stdout: str) -> list[dict[str, str]]:
    """The rows of the table printed (piped: at its natural width), by column name; the columns every row shares,
    said once above the header as 'name: value', are in every row too."""
    lines = stdout.splitlines()
    rule = next(index for index, line in enumerate(lines) if line.startswith("─"))
    shared = dict(line.split(": ", 1) for line in lines[1:rule - 1] if ": " in line)
    header = re.split(r"\s{2,}", lines[rule - 1].strip())
    rows = []
    for line in lines[rule + 1:]:
        if not line.strip() or line.startswith(("wrote ", "note: ")):
            break
        rows.append({**shared, **dict(zip(header, re.split(r"\s{2,}", line.strip()), strict=True))})
    return rows


LATENCY_OFF = ("--disable_lat=1", "--disable_clat=1", "--disable_slat=1")  # fio measures no latency at all

# fio-plot's chart, as the page draws it: its axes' titles, and every trace's name, axis and values
IOPS_LATENCY_JS = """JSON.stringify((() => {
  const plot = document.getElementById('plot-fio-randread-4k-read-by-qd-nj1-iops-latency');
  return {y: plot._fullLayout.yaxis.title.text, y2: plot._fullLayout.yaxis2.title.text,
          y2ticks: plot.querySelectorAll('.y2tick text').length,
          lines: plot.querySelectorAll('.scatterlayer .trace path.js-line').length,
          traces: plot._fullData.map(trace => [trace.name, trace.type, trace.yaxis, Array.from(trace.y)])};
})())"""


def test_plain_fio_json_of_a_qd_series_draws_the_bar_charts(tmp_path: Path, browser: Browser) -> None:
    """Three real fio runs (null engine, QD 1, 2 and 16; at QD 2 fio measures no latency): the bar charts, and
    fio-plot's IOPS bars with latency lines on a second axis, whose lines have no point at QD 2."""
    docs = {qd: plain_fio(tmp_path / "runs" / f"qd{qd}.json", qd, "json", *(LATENCY_OFF if qd == 2 else ()))
            for qd in (1, 2, 16)}
    out = tmp_path / "charts"
    done = plot(*sorted(str(path) for path in (tmp_path / "runs").glob("qd*.json")), "--out", str(out), "--format",
                "png", "--format", "svg", "--format", "html", "--title", "null engine", "--max-iops", "2e7")
    assert done.returncode == 0, done.stderr
    # the numbers on the terminal are fio's, and plain fio's percentiles are completion latency (clat)
    rows = table_rows(done.stdout)
    assert [row["QD"] for row in rows] == ["1", "2", "16"] and "clat p99 (µs)" in done.stdout  # as numbers, not names
    for row, qd in zip(rows, (1, 2, 16), strict=True):
        raw = docs[qd]["jobs"][0]["read"]
        assert float(row["IOPS"].replace(",", "")) == round(raw["iops"], 1)
    for name in ("iops", "lat"):
        png = out / f"fio-randread-4k-read-by-qd-nj1-{name}.png"
        svg = (out / f"fio-randread-4k-read-by-qd-nj1-{name}.svg").read_text()
        colors, ink = image_colors(png.read_bytes())
        assert colors > 10 and ink > 0.02
        assert "null engine: randread 4k, read, numjobs 1" in svg and re.search(r">\s*16\s*<", svg)
    svg = (out / "fio-randread-4k-read-by-qd-nj1-iops-latency.svg").read_text()
    assert ">IOPS<" in svg and "completion latency (clat) (µs)" in svg  # both axes, each with its unit
    page = browser.open_page(out / "index.html", script=IOPS_LATENCY_JS)
    figures = len(list(out.glob("*.svg")))
    assert figures >= 4
    assert_clean_report_page(page, figures)
    assert "QD at which" not in page.text and "best" in page.text and "clat p99" in page.text
    chart = page.script_result
    assert (chart["y"], chart["y2"]) == ("IOPS", "completion latency (clat) (µs)") and chart["y2ticks"] >= 2
    read = {qd: doc["jobs"][0]["read"] for qd, doc in docs.items()}
    assert chart["traces"][0] == ["IOPS", "bar", "y", [pytest.approx(read[qd]["iops"]) for qd in (1, 2, 16)]]
    mean = [None if qd == 2 else pytest.approx(read[qd]["clat_ns"]["mean"] / 1000) for qd in (1, 2, 16)]
    p99 = [None if qd == 2 else pytest.approx(read[qd]["clat_ns"]["percentile"]["99.000000"] / 1000)
           for qd in (1, 2, 16)]
    assert chart["traces"][1:] == [["mean completion latency (clat)", "scatter", "y2", mean],
                                   ["p99 completion latency (clat)", "scatter", "y2", p99]]
    assert chart["lines"] == 4  # each line in two pieces: nothing drawn across QD 2, where fio measured nothing


def test_folders_compared_one_colour_each_and_a_settings_file(tmp_path: Path) -> None:
    for device in ("ssd-a", "ssd-b"):
        for qd in (1, 8):
            plain_fio(tmp_path / device / f"qd{qd}.json", qd, "json+", "--lat_percentiles=1")
    settings = tmp_path / "style.toml"
    settings.write_text('[plot]\ncolors = ["teal", "#aa3377"]\nsubtitle = "team style"\nshow_data = true\n'
                        'charts = "qd,histogram"\ndpi = 60\n')
    out = tmp_path / "charts"
    done = plot("--json", str(tmp_path / "ssd-a"), str(tmp_path / "ssd-b"), "--settings", str(settings), "--out",
                str(out), "--format", "svg", "--dpi", "50")
    assert done.returncode == 0, done.stderr
    assert {row["source"] for row in table_rows(done.stdout)} == {"ssd-a", "ssd-b"}
    iops = (out / "fio-randread-4k-read-by-qd-nj1-iops.svg").read_text()
    assert "team style" in iops and "ssd-a" in iops and "ssd-b" in iops  # subtitle; a legend entry per folder
    assert "#008080" in iops and "#aa3377" in iops  # teal and the second colour, from the settings file
    assert (out / "fio-randread-4k-read-ssd-a-nj1-hist.svg").is_file()  # json+ bins: a histogram per source
    assert not list(out.glob("*3d*")) and not list(out.glob("*.png"))
    bad = tmp_path / "bad.toml"
    bad.write_text("max_iop = 5\n")
    refused = plot("--json", str(tmp_path / "ssd-a"), "--settings", str(bad), "--out", str(out))
    assert refused.returncode == 2 and "unknown option 'max_iop'" in refused.stderr


def test_client_server_output_is_split_by_host_and_filtered(tmp_path: Path, servers: Servers) -> None:
    hosts = servers(2)
    job = tmp_path / "qd.fio"
    job.write_text("[global]\nioengine=null\nsize=256M\ntime_based\nruntime=300ms\nrw=randread\n\n[qd1]\niodepth=1\n\n"
                   "[qd4]\nstonewall\niodepth=4\n")
    output = tmp_path / "clients.json"
    argv = ["fio", "--output-format=json", f"--output={output}"]
    for host in hosts:
        argv += [f"--client={host.fio_arg}", str(job)]
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    both = plot(str(output), "--out", str(tmp_path / "both"), "--format", "svg")
    assert both.returncode == 0, both.stderr
    assert {row["source"] for row in table_rows(both.stdout)} == {f"on {host.name}" for host in hosts}, \
        hosts_arg(hosts)
    one = plot(str(output), "--out", str(tmp_path / "one"), "--format", "svg", "--exclude-hosts", hosts[1].name)
    assert one.returncode == 0, one.stderr
    assert {row["source"] for row in table_rows(one.stdout)} == {f"on {hosts[0].name}"}


def test_not_fio_output_is_one_error_line(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    done = plot(str(other), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and done.stderr.startswith("ptsbench: error: no fio results in")
    assert "Traceback" not in done.stderr
    folder = plot(str(tmp_path), "--out", str(tmp_path / "out"))  # a folder of JSON without --json: say so
    assert folder.returncode == 2 and folder.stderr.endswith("add --json to draw fio's JSON output as bar charts\n")


def point(source: str, iodepth: int, p99_ns: float, iops: float = 1000.0, label: str = "", filename: str = ""
          ) -> Point:
    return Point(source=source, rw="randread", bs="4k", rwmixread=None, iodepth=iodepth, numjobs=1,
                 direction="read", iops=iops, bw_bytes=iops * 4096, lat_mean_ns=p99_ns / 2,
                 percentiles_ns={"99": p99_ns}, label=label, filename=filename)


def test_headline_names_the_first_queue_depth_over_the_bound() -> None:
    points = [point("a", 1, 200_000, 5000), point("a", 2, 900_000, 9000), point("a", 4, 1_400_000, 9500),
              point("a", 8, 800_000, 9600)]
    table, lines = bound_table(points, "99", 1000.0)
    assert table.rows == (("a", "randread 4k, read", 1, 2, 9000.0, 4, 1400.0),)  # 8 is back within: not counted
    assert lines == ["randread 4k, read, numjobs 1: p99 exceeds 1,000 µs at queue depth 4 (1,400 µs); at 2 it was "
                     "within (9,000.0 IOPS)."]
    assert best_lines(points) == ["randread 4k, read: best 9,600.0 IOPS at queue depth 8, numjobs 1."]
    _table, never = bound_table(points, "99", 5000.0)
    assert never == ["randread 4k, read, numjobs 1: p99 stays within 5,000 µs up to the highest queue depth run, 8 "
                     "(800.00 µs)."]


def test_histogram_shares_and_runs_told_apart() -> None:
    shares = bucket_shares({900: 1, 1000: 1, 1500: 2, 4_000_000: 4})
    assert shares == {1000: 25.0, 2000: 25.0, 5_000_000: 50.0}
    same = [point("", 1, 1000, label="x/qd1", filename="/dev/a"), point("", 1, 1000, label="y/qd1",
                                                                        filename="/dev/b")]
    assert [p.source for p in distinct(same)] == ["/dev/a", "/dev/b"]
    unnamed = [point("", 1, 1000, label="x/qd1"), point("", 1, 1000, label="y/qd1")]
    assert [p.source for p in distinct(unnamed)] == ["x/qd1", "y/qd1"]


def test_compared_runs_bars_get_a_colour_each() -> None:
    from ptsbench.report.cases.sweep_charts import ChartOptions, sweep_figures
    from ptsbench.report.compare import compare_figure

    one = [point("", qd, 1000.0 * qd) for qd in (1, 2)]
    figure = next(f for f in sweep_figures(one, ChartOptions(charts=("qd",)), "sweep", "") if f.key.endswith("-lat"))
    merged = compare_figure([figure, figure], ["A", "B"])[0]
    assert [s.name for s in merged.series] == ["A: mean", "A: p99", "B: mean", "B: p99"]
    assert len({s.color for s in merged.series}) == 4


def test_log_charts_take_line_width_markers_and_colours(tmp_path: Path) -> None:
    # 2 s of 100 ms windows: a busy host's fio merges windows, and a line of too few values is not drawn
    subprocess.run(["fio", "--name=job", "--ioengine=null", "--size=256M", "--rw=randread", "--runtime=2",
                    "--rate_iops=1000", "--time_based", f"--write_iops_log={tmp_path / 'job'}", "--log_avg_msec=100"],
                   check=True, capture_output=True, cwd=tmp_path)
    out = tmp_path / "charts"
    done = plot(str(tmp_path / "job_iops.1.log"), "--out", str(out), "--format", "svg", "--line-width", "3.5",
                "--markers", "--colors", "#aa3377")
    assert done.returncode == 0, done.stderr
    svg = next(out.glob("*.svg")).read_text()
    assert "stroke: #aa3377" in svg and "stroke-width: 3.5" in svg and "<use " in svg  # markers are <use> marks


def test_runs_of_several_block_sizes_get_mb_s_against_block_size(tmp_path: Path) -> None:
    for bs in ("64k", "4k"):
        subprocess.run(["fio", f"--name=b{bs}", "--ioengine=null", "--size=256M", "--rw=read", f"--bs={bs}",
                        "--runtime=200ms", "--time_based", "--output-format=json", f"--output={tmp_path / bs}.json"],
                       check=True, capture_output=True)
    done = plot(str(tmp_path / "64k.json"), str(tmp_path / "4k.json"), "--out", str(tmp_path / "out"), "--format",
                "svg", "--charts", "bs")
    assert done.returncode == 0, done.stderr
    svg = (tmp_path / "out" / "fio-read-read-by-bs-qd1-nj1-mbs.svg").read_text()
    assert "block size" in svg and svg.index(">4k<") < svg.index(">64k<")  # in size order, not the order given
    assert len(list((tmp_path / "out").glob("*.svg"))) == 1


def test_a_percentile_fio_did_not_report_is_said_not_silently_dropped(tmp_path: Path) -> None:
    """--percentile 42 (the former name of --lat-percentile): fio's JSON has no p42, so the latency charts lack it;
    the user is told which ones exist."""
    runs = [str(tmp_path / f"qd{qd}.json") for qd in (1, 2)]
    doc = plain_fio(Path(runs[0]), 1)
    plain_fio(Path(runs[1]), 2)
    reported = sorted((f"{float(key):g}" for key in doc["jobs"][0]["read"]["clat_ns"]["percentile"]), key=float)
    done = plot(*runs, "--out", str(tmp_path / "charts"), "--format", "svg", "--charts", "qd", "--percentile", "42")
    assert done.returncode == 0, done.stderr
    assert (f"ptsbench: note: fio reported no p42 in these files, so no chart shows it; --lat-percentile takes one fio "
            f"reported: {', '.join(reported)}\n") in done.stderr
    assert "p42" not in (tmp_path / "charts" / "fio-randread-4k-read-by-qd-nj1-lat.svg").read_text()
    quiet = plot(*runs, "--out", str(tmp_path / "charts99"), "--format", "svg", "--charts", "qd")
    assert quiet.returncode == 0 and "reported no p" not in quiet.stderr, quiet.stderr
    # the latency bound has sweep's name and form (a duration with its unit); --latency-bound is its former name
    bound = plot(*runs, "--out", str(tmp_path / "charts-bound"), "--format", "svg", "--charts", "qd", "--lat-bound",
                 "50us")
    assert bound.returncode == 0, bound.stderr
    bare = plot(*runs, "--out", str(tmp_path / "charts-bare"), "--latency-bound", "500")
    assert bare.returncode == 2 and "--lat-bound '500' is not a duration with a unit" in bare.stderr


def test_damaged_fio_json_is_left_out_with_a_note_never_a_traceback(tmp_path: Path) -> None:
    """Files with fio's keys but not its shapes (options that are lists or text, jobs that are not maps) beside a
    real fio output are left out and named; alone, they are one line saying there are no results."""
    plain_fio(tmp_path / "real.json", 1)
    damaged = {"global.json": {"global options": [1], "jobs": [{"jobname": "one"}]},
               "options.json": {"jobs": [{"jobname": "one", "job options": "zz"}]},
               "values.json": {"jobs": [{"jobname": "one", "job options": {"filename": 5}, "read": [1]}]}}
    alone = tmp_path / "alone"
    alone.mkdir()
    for name, shapes in damaged.items():
        for folder in (tmp_path, alone):
            (folder / name).write_text(json.dumps({"fio version": "fio-3.33", **shapes}))
    done = plot(str(tmp_path / "real.json"), *(str(tmp_path / name) for name in damaged), "--json", "--out",
                str(tmp_path / "out"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    for name in damaged:
        assert name in done.stderr
    refused = plot(str(alone), "--json", "--out", str(tmp_path / "out-alone"))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith(f"ptsbench: error: no fio results in {alone}")
    assert len(refused.stderr.strip().splitlines()) == 1


def test_runs_told_apart_named_as_fio_output_with_device_and_version(tmp_path: Path) -> None:
    """plot --json of one folder of fio runs that differ in workload only: 'IOPS per run' labels each bar by what
    differs (the shared path said once on the axis), one bar per slot; files named fio-*, not sweep-*; the footer
    names fio's version and the disk fio saw (disk_util) from the output itself; --log-scale puts IOPS on a log
    axis."""
    from ptsbench.plot.fiojson import JsonPlotOptions, read_points
    from ptsbench.report.cases.sweep_charts import ChartOptions, sweep_figures

    runs = tmp_path / "results" / "cases"
    runs.mkdir(parents=True)
    docs = []
    for name, rw in (("a", "randread"), ("b", "randwrite")):
        subprocess.run(["fio", f"--name={name}", "--ioengine=psync", f"--filename={tmp_path / 'scratch.dat'}",
                        "--size=8M", f"--rw={rw}", "--bs=4k", "--runtime=200ms", "--time_based",
                        "--output-format=json", f"--output={runs / name}.json"], check=True, capture_output=True)
        docs.append(json.loads((runs / f"{name}.json").read_text()))
    points, _notes, version, devices = read_points([str(tmp_path / "results")], JsonPlotOptions())
    figure = next(f for f in sweep_figures(points, ChartOptions(charts=("runs",)), "fio", "")
                  if f.key == "fio-runs-iops")
    labels = [label for _, label in figure.x_ticks]
    assert len(set(labels)) == len(labels) == 2 and all("cases" not in label for label in labels)
    assert [len(series.x) for series in figure.series] == [2]  # one series, a bar in every slot
    assert version == docs[0]["fio version"]
    disks = [disk["name"] for doc in docs for disk in doc.get("disk_util") or []]
    assert devices == ", ".join(dict.fromkeys(f"/dev/{name}" for name in disks))
    out = tmp_path / "charts"
    done = plot("--json", str(tmp_path / "results"), "--out", str(out), "--format", "svg", "--charts", "runs",
                "--log-scale")
    assert done.returncode == 0, done.stderr
    names = sorted(path.name for path in out.glob("*.svg"))
    assert names and all(name.startswith("fio-") for name in names)
    svg = (out / "fio-runs-iops.svg").read_text()
    assert f"fio {version.removeprefix('fio-')}" in svg and (not disks or f"/dev/{disks[0]}" in svg)
    assert all(f">{label}<" in svg or label.split()[0] in svg for label in labels)
    logged = next(f for f in sweep_figures(points, ChartOptions(charts=("runs",), log_scale=True), "fio", "")
                  if f.key == "fio-runs-iops")
    assert logged.y_log and not figure.y_log


def test_runs_nothing_tells_apart_are_rows_each_and_charted_once(tmp_path: Path) -> None:
    """One job repeated in one file (three sections of the same options): every run is a row of the table, the
    charts draw the first, and a note says how many they left out."""
    job = tmp_path / "three.fio"
    job.write_text("[global]\nioengine=null\nsize=256M\nrw=randread\nbs=4k\niodepth=4\nruntime=300ms\n"
                   "time_based\n[j0]\n[j1]\n[j2]\n")
    subprocess.run(["fio", str(job), "--output-format=json", f"--output={tmp_path / 'three.json'}"], check=True,
                   capture_output=True)
    done = plot(str(tmp_path / "three.json"), "--out", str(tmp_path / "charts"))
    assert done.returncode == 0, done.stderr
    assert len(table_rows(done.stdout)) == 3
    assert "2 run(s) repeat an earlier one's" in done.stderr, done.stderr
