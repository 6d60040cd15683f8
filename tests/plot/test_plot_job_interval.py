"""`ptsbench plot` without --interval uses the interval the job asked for (log_avg_msec, log_hist_msec), found in
fio's JSON output or job file beside the logs (or one folder up, as in a ptsbench case), and says where it came
from; logs given alone get the interval read off fio's drifting time stamps, and the output says so."""

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ptsbench.errors import PtsbenchError
from ptsbench.fio import logs
from ptsbench.fio.log_jobs import MAX_JSON_BYTES, JobOptions
from ptsbench.fio.log_merge import hist_step_ms
from ptsbench.plot import PlotOptions, make_plots
from ptsbench.plot.series import build_hist_run, build_run

# fio writes one_* beside its JSON output, logs/two_* one folder down (as a ptsbench case keeps them), each_* per IO;
# 2 s: several 250 ms windows a direction even where a busy host's fio merges some (the checks need two)
JOBS = """[global]
ioengine=null
rw=randrw
bs=4k
size=64m
time_based
runtime=2
rate_iops=2000,2000

[one]
log_avg_msec=250
log_hist_msec=500
write_bw_log=one
write_lat_log=one
write_hist_log=one

[two]
numjobs=2
log_avg_msec=250
write_iops_log=logs/two

[each]
runtime=300ms
rate_iops=500,500
write_iops_log=each
"""
FOUND = "interval 250 ms, from the job's log_avg_msec"
CliRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fio run's folder (its logs, fio.json and the job file), and a folder with a copy of its logs only."""
    run = tmp_path_factory.mktemp("plotint-run")
    (run / "logs").mkdir()
    (run / "jobs.fio").write_text(JOBS)
    subprocess.run(["fio", "jobs.fio", "--output-format=json", "--output=fio.json"], cwd=run, check=True,
                   capture_output=True, timeout=120)
    # in a folder of its own: one folder up is searched too, and pytest's shared base folder holds other tests' jobs
    loose = tmp_path_factory.mktemp("plotint-loose") / "copied"
    loose.mkdir()
    for path in [*run.glob("*.log"), *run.glob("logs/*.log")]:
        shutil.copy(path, loose / path.name)
    return run, loose


def _said(intervals: tuple[str, ...], run: str) -> str:
    """What the output says of one run's interval (its lines are 'RUN, RUN: SENTENCE')."""
    found = [said for line in intervals for labels, _, said in [line.partition(": ")] if run in labels.split(", ")]
    assert len(found) == 1, (run, intervals)
    return found[0]


def _area(paths: list[Path]) -> float:
    """IOs the windowed iops logs say were done: each sample's rate over the time since the one before."""
    total = 0.0
    for log in (logs.read_log(path) for path in paths):
        for d in np.unique(log.ddir).tolist():
            time_ms = log.time_ms[log.ddir == d].astype(np.float64)
            total += float(np.dot(log.value[log.ddir == d], np.diff(time_ms, prepend=0.0))) / 1000
    return total


def test_the_jobs_interval_from_fio_json_beside_the_logs(folders: tuple[Path, Path], tmp_path: Path) -> None:
    run, _ = folders
    result = make_plots([str(run)], PlotOptions(out_dir=tmp_path))
    json_path = run / "fio.json"
    for label in ("one bw", "one lat", "one clat", "two iops"):  # two: its logs/ folder one down, as in a ptsbench case
        assert _said(result.intervals, label) == f"{FOUND} ({json_path})"
    assert _said(result.intervals, "one hist") == f"interval 500 ms, from the job's log_hist_msec ({json_path})"
    per_io = _said(result.intervals, "each iops")  # no log_avg_msec: a line per IO, never called averaged
    assert "a line per IO (no log_avg_msec)" in per_io and "from the job" not in per_io
    over = {(row.run, row.kind): row.over for row in result.summaries}
    assert over["one", "bw"].startswith("250 ms windows") and over["one", "lat"].startswith("250 ms windows")
    assert over["two", "iops"].startswith("250 ms intervals")
    assert "window" not in over["each", "iops"] and "averag" not in per_io + over["each", "iops"]
    # the histogram log's IOs against the IOs fio counted for the job (its JSON output beside it)
    counted = {entry["jobname"]: entry for entry in json.loads(json_path.read_text())["jobs"]}["one"]
    hist = logs.read_hist_log(run / "one_clat_hist.1.log")
    for number, direction in logs.DDIR_NAMES.items():
        logged = int(hist.counts[hist.ddir == number].sum())
        if logged:
            total = counted[direction]["total_ios"]
            row = next(r for r in result.summaries if (r.run, r.kind, r.direction) == ("one", "hist", direction))
            assert row.count == logged and 0 < logged <= total
            assert f"the log holds {logged:,} of the {total:,} IOs fio counted ({logged / total:.1%}, fio.json)" \
                in row.over
    # fio's windows drift from the 250 ms asked: the label gives their real lengths (each but the last, partial)
    bw_log = logs.read_log(run / "one_bw.1.log")
    lengths_ms = np.concatenate([np.diff(bw_log.time_ms[bw_log.ddir == d].astype(np.float64), prepend=0.0)[:-1]
                                 for d in np.unique(bw_log.ddir).tolist()])
    if lengths_ms.min() != lengths_ms.max():  # as they mostly are
        assert f"(as fio wrote them: {lengths_ms.min():,.0f} to {lengths_ms.max():,.0f} ms" in over["one", "bw"]
    elif lengths_ms.min() != 250:  # a loaded host stretched them alike (CI: two of 414 ms)
        assert f"(as fio wrote them: {lengths_ms.min():,.0f} ms each" in over["one", "bw"]
    else:
        assert "as fio wrote them" not in over["one", "bw"]


def test_the_numbers_are_the_logs_at_the_jobs_interval(folders: tuple[Path, Path]) -> None:
    """One job's samples as fio wrote them; two jobs merged on the job's 250 ms grid, every IO kept; histogram lines
    each in their own 500 ms interval."""
    run, _ = folders
    jobs = JobOptions()
    bw_log = logs.read_log(run / "one_bw.1.log")
    asked = jobs.asked(run / "one_bw.1.log", "bw")
    assert (asked.interval_ms, asked.source) == (250, run / "fio.json")
    one = build_run([bw_log], "one", asked=asked)
    for number, direction in logs.DDIR_NAMES.items():
        trace, chosen = one.trace(direction), bw_log.ddir == number
        if chosen.any():
            assert trace is not None and trace.value.tolist() == (bw_log.value[chosen] * 1024.0).tolist()
            assert trace.time_s.tolist() == (bw_log.time_ms[chosen] / 1000).tolist()
    paths = sorted((run / "logs").glob("two_iops.*.log"))
    two = build_run([logs.read_log(path) for path in paths], "two", asked=jobs.asked(paths[0], "iops"))
    total = two.trace("total")
    assert total is not None and total.start_s is not None and len(paths) == 2
    assert np.diff(total.start_s).tolist() == [0.25] * (len(total.start_s) - 1)
    assert float(np.dot(total.value, total.time_s - total.start_s)) == pytest.approx(_area(paths), rel=1e-9)
    hist_path = run / "one_clat_hist.1.log"
    hist = logs.read_hist_log(hist_path)
    percentiles = build_hist_run([hist], "one", (50.0,), asked=jobs.asked(hist_path, "hist"))
    for line in percentiles.lines:
        chosen = hist.ddir == {name: number for number, name in logs.DDIR_NAMES.items()}[line.direction]
        # every IO kept, each in its 500 ms interval (a busy host's fio may log two lines within one interval: they
        # are that interval's together)
        assert (line.end_ms % 500 == 0).all() and len(line.samples) <= int(chosen.sum())
        assert int(line.samples.sum()) == int(hist.counts[chosen].sum())


def test_logs_alone_get_the_interval_of_their_time_stamps_and_say_so(folders: tuple[Path, Path],
                                                                    tmp_path: Path) -> None:
    _, loose = folders
    result = make_plots([str(loose)], PlotOptions(out_dir=tmp_path, pattern="one_(bw|clat_hist)"))
    why = "no fio JSON output or job file beside the log, nor one folder up"
    step_ms = float(np.median(np.diff(np.unique(logs.read_log(loose / "one_bw.1.log").time_ms.astype(np.int64)))))
    assert _said(result.intervals, "one bw") == (f"interval about {round(step_ms)} ms, inferred from the time "
                                                 f"stamps: the job's log_avg_msec was not found ({why})")
    hist_ms = hist_step_ms([logs.read_hist_log(loose / "one_clat_hist.1.log")])
    assert _said(result.intervals, "one hist") == (f"interval about {round(hist_ms)} ms, inferred from the time "
                                                   f"stamps: the job's log_hist_msec was not found ({why})")
    over = {(row.run, row.kind): row.over for row in result.summaries}
    assert over["one", "bw"].startswith(f"about {round(step_ms)} ms windows")
    assert "fio's own IO count not found beside the log (its JSON output): coverage unknown" in over["one", "hist"]


def test_job_option_and_interval_option(folders: tuple[Path, Path], cli: CliRunner, tmp_path: Path) -> None:
    """--job names the job the logs came from; --interval wins over it; a --job that is no job is one line."""
    run, loose = folders
    done = cli("plot", str(loose), "--kind", "bw", "--job", str(run / "jobs.fio"), "--out", str(tmp_path / "a"))
    assert done.returncode == 0, done.stderr
    assert f"note: one bw: {FOUND} ({run / 'jobs.fio'})" in " ".join(done.stdout.split())
    result = make_plots([str(loose)], PlotOptions(out_dir=tmp_path / "b", kind="bw", interval_ms=1000,
                                                  job_files=(run / "fio.json",)))
    assert result.intervals == ("one bw: interval 1000 ms, from --interval",)
    assert {row.over for row in result.summaries} == {"1000 ms intervals"}
    bad = cli("plot", str(loose), "--job", str(loose / "one_bw.1.log"), "--out", str(tmp_path / "c"))
    assert bad.returncode == 2 and bad.stderr.strip() == (
        f"ptsbench: error: --job {loose / 'one_bw.1.log'}: not a fio job file or fio JSON output with jobs: name the "
        "job file fio ran, or the JSON output it printed (--output-format=json)")


def test_jobs_that_disagree_set_none_or_write_elsewhere(tmp_path: Path) -> None:
    """The interval is the job's only when the job found writes this log and says one thing."""
    (tmp_path / "w_bw.log").write_text("100, 10, 0, 0, 0\n200, 20, 0, 0, 0\n300, 30, 0, 0, 0\n")
    (tmp_path / "a.fio").write_text("[w]\nwrite_bw_log=w\nlog_avg_msec=100\n")
    (tmp_path / "b.fio").write_text("[global]\nlog_avg_msec=200\n[w]\nwrite_bw_log\n")  # bare: named after the job
    asked = JobOptions().asked(tmp_path / "w_bw.log", "bw")
    assert asked.interval_ms is None
    assert asked.missing == (f"the jobs writing the log disagree (100 in {tmp_path / 'a.fio'}, "
                             f"200 in {tmp_path / 'b.fio'})")
    (tmp_path / "b.fio").write_text("[w]\nwrite_bw_log=w\n")
    (tmp_path / "a.fio").unlink()
    run = build_run([logs.read_log(tmp_path / "w_bw.log")], "w", asked=JobOptions().asked(tmp_path / "w_bw.log", "bw"))
    assert run.interval == ("interval about 100 ms, inferred from the time stamps: the job's log_avg_msec was not "
                            f"found (the job in {tmp_path / 'b.fio'} sets none)")
    (tmp_path / "sub").mkdir()
    (tmp_path / "w_bw.log").rename(tmp_path / "sub" / "w_bw.log")  # b.fio one folder up writes w, not sub/w
    asked = JobOptions().asked(tmp_path / "sub" / "w_bw.log", "bw")
    assert asked.missing == f"no job in {tmp_path / 'b.fio'} writes w_bw logs"
    with pytest.raises(PtsbenchError, match="--job .*nothere.fio: no such file"):
        JobOptions((tmp_path / "nothere.fio",))


def test_hostile_job_files_are_one_line_or_skipped_with_a_note(folders: tuple[Path, Path], cli: CliRunner,
                                                                tmp_path: Path) -> None:
    """--job naming a FIFO, /dev/zero, a link loop, or a fio JSON document of the wrong shapes is one line (no wait,
    no traceback); beside the logs, such files are not read and the note names them; a huge JSON output is not
    read whole."""
    _, loose = folders
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "loop.fio").symlink_to(tmp_path / "loop.fio")
    damaged = {"jobs.json": [1, 2], "global.json": {"global options": [1], "jobs": [{"jobname": "one"}]},
               "options.json": {"jobs": [{"jobname": "one", "job options": {"write_bw_log": 5, "log_avg_msec": [1]}}]}}
    for name, shapes in damaged.items():
        (tmp_path / name).write_text(json.dumps({"fio version": "fio-3.33", **(shapes if isinstance(shapes, dict)
                                                                               else {"jobs": shapes})}))
    lines = {"fifo.json": "not a regular file", "/dev/zero": "not a regular file",
             "loop.fio": "cannot read it: Too many levels of symbolic links", "jobs.json": "not a fio job file",
             "global.json": "", "options.json": ""}  # the last two name job "one", with no options to read
    for name, said in lines.items():
        job = tmp_path / name if not name.startswith("/") else Path(name)
        out = tmp_path / f"out-{name.strip('/')}"
        done = cli("plot", str(loose / "one_bw.1.log"), "--job", str(job), "--out", str(out), timeout=60)
        assert "Traceback" not in done.stderr, done.stderr
        if said:
            assert done.returncode == 2 and done.stderr.startswith(f"ptsbench: error: --job {job}: {said}")
            assert len(done.stderr.strip().splitlines()) == 1
        else:
            assert done.returncode == 0 and "inferred from the time stamps" in done.stdout, done.stderr
    for named in (tmp_path / "fifo.json", Path("/dev/zero"), tmp_path / "loop.fio"):  # as logs or JSON to plot
        done = cli("plot", str(named), *(["--json"] if named.suffix == ".json" else []), "--out",
                   str(tmp_path / "out-plot"), timeout=60)
        why = "cannot read it: Too many levels" if named.suffix == ".fio" else "not a regular file or folder"
        assert done.returncode != 0 and done.stderr.startswith(f"ptsbench: error: {named}: {why}"), done.stderr
    logs_folder = tmp_path / "beside"
    logs_folder.mkdir()
    shutil.copy(loose / "one_bw.1.log", logs_folder)
    for name in ("fifo.json", "loop.fio", *damaged):
        os.rename(tmp_path / name, logs_folder / name)
    for name, size_bytes in (("huge.json", MAX_JSON_BYTES + 1), ("huge.fio", 16 * 1024 * 1024 + 1)):
        with open(logs_folder / name, "wb") as huge:  # sparse: no disk used
            huge.truncate(size_bytes)
    (logs_folder / "include.fio").write_text(f"include {logs_folder / 'fifo.json'}\n[one]\nwrite_bw_log=other\n")
    result = make_plots([str(logs_folder)], PlotOptions(out_dir=tmp_path / "beside-out", kind="bw"))
    said = _said(result.intervals, "one bw")
    assert "inferred from the time stamps" in said and f"{logs_folder / 'huge.json'} (larger than 256 MiB)" in said
    assert f"{logs_folder / 'fifo.json'} (not a regular file)" in said
    assert f"{logs_folder / 'huge.fio'} (larger than 16 MiB)" in said
