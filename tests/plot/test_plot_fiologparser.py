"""`ptsbench plot` against fio's own tools/fiologparser.py (shipped in Debian's fio package) on logs of one real fio
run: windowed, per-job, unequal-length and per-IO logs. Every interval both compute is equal; where they differ on
purpose, docs/plots.md says why (fiologparser.py stops at the shortest log; it reads per-IO lines as samples).
"""

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptsbench.fio import logs
from ptsbench.plot.series import build_run, summarize

FIOLOGPARSER = Path("/usr/share/doc/fio/fiologparser.py.gz")
INTERVAL_MS = 100
JOBS = """[global]
ioengine=null
size=64m
time_based
log_avg_msec=100
[win]
rw=randread
rate_iops=400
runtime=1
write_iops_log=win
write_bw_log=win
[pair]
rw=randwrite
rate_iops=300
numjobs=2
runtime=1
write_iops_log=pair
write_lat_log=pair
[short]
rw=randread
rate_iops=500
runtime=600ms
write_iops_log=uneq
[long]
rw=randread
rate_iops=500
runtime=1500ms
write_iops_log=uneq
[perio]
rw=randread
rate_iops=300
runtime=1
log_avg_msec=0
write_iops_log=perio
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:  # type: ignore[type-arg]
    """One fio run (about 1.5 s) writing every kind of log, and fiologparser.py unpacked next to it."""
    if not FIOLOGPARSER.is_file():
        pytest.skip("fio's fiologparser.py is not installed (Debian's fio package ships it)")
    folder = tmp_path_factory.mktemp("fiologparser")
    (folder / "jobs.fio").write_text(JOBS)
    done = subprocess.run(["fio", "--output-format=json", "jobs.fio"], cwd=folder, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    parser = folder / "fiologparser.py"
    with gzip.open(FIOLOGPARSER) as packed, open(parser, "wb") as unpacked:
        shutil.copyfileobj(packed, unpacked)
    return folder, parser, json.loads(done.stdout)


def fiologparser(parser: Path, paths: list[Path], mode: str) -> list[tuple[float, float]]:
    """(interval end ms, value) from fiologparser.py. It reads exactly four columns (fio 3 writes five): the rest
    are cut off first, the time stamps and values kept as fio wrote them."""
    cut = []
    for path in paths:
        four = path.with_name(f"four-{path.name}")
        four.write_text("".join(", ".join(line.split(", ")[:4]) + "\n" for line in path.read_text().splitlines()))
        cut.append(str(four))
    done = subprocess.run([sys.executable, str(parser), "-i", str(INTERVAL_MS), mode, *cut], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [(float(end), float(value)) for end, value in (line.split(", ") for line in done.stdout.splitlines())]


def ours(paths: list[Path], direction: str) -> list[tuple[float, float]]:
    """(interval end ms, value in the log's unit) of ptsbench plot's trace, re-binned to the same intervals."""
    run = build_run([logs.read_log(path) for path in paths], "t", INTERVAL_MS)
    trace = run.trace(direction)
    assert trace is not None
    scale = 1024.0 if run.kind == "bw" else 1.0
    return [(round(end * 1000, 6), value / scale) for end, value in zip(trace.time_s, trace.value, strict=True)]


def same(mine: float, theirs: float) -> bool:
    return abs(mine - theirs) <= 0.0005 + 1e-9 * abs(theirs)  # fiologparser prints three decimals


def test_windowed_and_per_job_logs_equal_fiologparser_in_every_interval(run: tuple[Path, Path, dict]) -> None:  # type: ignore[type-arg]
    folder, parser, _ = run
    cases = [  # (files, fiologparser mode, ptsbench direction)
        (sorted(folder.glob("win_iops.*.log")), "-s", "read"),
        (sorted(folder.glob("win_bw.*.log")), "-s", "read"),
        (sorted(folder.glob("pair_iops.*.log")), "-s", "write"),  # two jobs summed
        (sorted(folder.glob("pair_lat.*.log")), "-a", "write"),  # two jobs averaged
    ]
    for paths, mode, direction in cases:
        theirs = fiologparser(parser, paths, mode)
        mine = ours(paths, direction)
        shortest_ms = min(float(logs.read_log(path).time_ms.max()) for path in paths)
        compared = 0  # a busy host's fio may log a 1 s job in a few merged windows, not 10: at least one each
        for (end_ms, value), (their_end, their_value) in zip(mine, theirs, strict=False):
            if their_end < shortest_ms or end_ms == their_end:  # the same interval (theirs ends at the shortest)
                assert end_ms == their_end and same(value, their_value), (paths[0].name, end_ms, value, their_value)
                compared += 1
        assert compared >= 1, paths[0].name


def test_unequal_logs_go_on_to_the_longest_where_fiologparser_stops(run: tuple[Path, Path, dict]) -> None:  # type: ignore[type-arg]
    folder, parser, _ = run
    paths = sorted(folder.glob("uneq_iops.*.log"))
    ends = {path: float(logs.read_log(path).time_ms.max()) for path in paths}
    short, long = sorted(paths, key=ends.__getitem__)
    theirs = fiologparser(parser, paths, "-s")
    mine = ours(paths, "read")
    assert theirs[-1][0] == ends[short] and mine[-1][0] == ends[long] > ends[short] + 5 * INTERVAL_MS
    # while both ran: every interval equal to fiologparser's (of the short job's 600 ms a busy host may leave one
    # logged window before its last: CI beside the device labs did)
    both = [(mine_row, their_row) for mine_row, their_row in zip(mine, theirs, strict=False)
            if their_row[0] < ends[short]]
    assert len(both) >= 1 and all(m[0] == t[0] and same(m[1], t[1]) for m, t in both)
    # after the short job ended: the long job alone, as fiologparser says of the long log on its own
    alone = dict(fiologparser(parser, [long], "-s"))
    after = [(end, value) for end, value in mine if end > ends[short] + INTERVAL_MS]
    assert after and all(same(value, alone[end]) for end, value in after)


def test_per_io_logs_count_ios_per_whole_interval(run: tuple[Path, Path, dict]) -> None:  # type: ignore[type-arg]
    """fiologparser.py reads each line of a per-IO log as a sample over the time since the line before: its 'sums'
    are fractions of an interval, not rates. ptsbench counts the IOs completed in each whole interval: the counts
    are the log's lines per interval, they add up to fio's IO count but for a partial last interval left out, and the
    summary says so."""
    folder, parser, doc = run
    (path,) = sorted(folder.glob("perio_iops.*.log"))
    stamps = np.array([int(line.split(", ")[0]) for line in path.read_text().splitlines()])
    fio_ios = next(job for job in doc["jobs"] if job["jobname"] == "perio")["read"]["total_ios"]
    assert len(stamps) == fio_ios
    built = build_run([logs.read_log(path)], "perio", INTERVAL_MS)
    trace = built.trace("read")
    assert trace is not None
    counts = np.rint(trace.value * INTERVAL_MS / 1000).astype(int)
    whole = len(counts)
    assert counts.tolist() == [int(np.count_nonzero(stamps // INTERVAL_MS == k)) for k in range(whole)]
    left_out = int(np.count_nonzero(stamps >= whole * INTERVAL_MS))
    assert counts.sum() + left_out == fio_ios
    summary = next(row for row in summarize(built) if row.direction == "read")
    assert summary.count == whole and "100 ms intervals" in summary.over
    assert ("left out" in summary.over) == (stamps[-1] + 1 > whole * INTERVAL_MS)
    # the largest whole interval's: never the several-fold spike of the few-ms last one (rate_iops catches up after
    # a busy host's stall, so no bound from the rate)
    assert summary.max == pytest.approx(counts.max() * 1000 / INTERVAL_MS, rel=1e-9)
    theirs = [value for _, value in fiologparser(parser, [path], "-s")]
    assert max(theirs) <= 1.0 + 1e-3 < summary.mean / 10  # fiologparser: each IO's line as a sample of value 1
