"""fio log readers: real logs written by fio (null engine) checked against fio's own JSON, hand-made logs for the
merge by time and for bad input, and random lines against a plain Python parser. Every test that reads a log runs
with both line parsers (the compiled one and the numpy one used where no C compiler was at hand), and the two are
compared on random damaged blocks."""

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ptsbench.fio import log_merge, log_reader, log_table, logs, numpy_parser
from ptsbench.fio._logparse import parse_lines
from ptsbench.fio.logs import LogError

READERS = ("compiled", "numpy")


@pytest.fixture(autouse=True, params=READERS)
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test once with each line parser (PTSBENCH_LOG_READER=numpy forces the numpy one)."""
    if request.param == "numpy":
        monkeypatch.setenv(log_reader.READER_ENV, "numpy")
    else:
        monkeypatch.delenv(log_reader.READER_ENV, raising=False)
    assert log_reader.reader_name().startswith("compiled" if request.param == "compiled" else "numpy")
    return str(request.param)

JOBS = """
[global]
ioengine=null
rw=randrw
bs=4k
numjobs=2

[win]
time_based
runtime=1
size=64m
rate_iops=10000,10000
log_avg_msec=100
write_bw_log=win
write_iops_log=win
write_lat_log=win

[io]
size=8m
log_offset=1
write_bw_log=io
write_lat_log=io

[pj0]
time_based
runtime=1
size=64m
rate_iops=5000,5000
per_job_logs=0
log_avg_msec=100
write_bw_log=pj0

[pj0io]
size=4m
per_job_logs=0
write_lat_log=pj0io

[hist]
time_based
runtime=1
size=64m
write_hist_log=hist
log_hist_msec=100
"""


@pytest.fixture(scope="module")
def fio_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """One fio run (about 1 s) writing windowed, per-IO, per_job_logs=0 and histogram logs, with json+ output."""
    folder = tmp_path_factory.mktemp("fio-logs")
    (folder / "jobs.fio").write_text(JOBS)
    subprocess.run(["fio", "jobs.fio", "--output-format=json+", "--output=out.json"], cwd=folder, check=True,
                   capture_output=True, timeout=120)
    return folder, json.loads((folder / "out.json").read_text())["jobs"]


def _jobs(jobs: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [job for job in jobs if job["jobname"] == name]


def _files(folder: Path, pattern: str) -> list[Path]:
    found = sorted(folder.glob(pattern), key=lambda p: logs.parse_log_name(p).job or 0)  # type: ignore[union-attr]
    assert found, pattern
    return found


# --- real fio logs ----------------------------------------------------------------------------------------------


def test_per_io_lat_log_holds_every_io_as_fio_counted_it(fio_run: tuple[Path, list[dict[str, Any]]]) -> None:
    folder, jobs = fio_run
    for path, job in zip(_files(folder, "io_lat.*.log"), _jobs(jobs, "io"), strict=True):
        log = logs.read_log(path)
        assert log.layout == ("time_ms", "value", "ddir", "bs_bytes", "offset_bytes", "prio")  # log_offset=1
        assert not log.windowed
        for ddir, name in ((0, "read"), (1, "write")):
            values = log.value[log.ddir == ddir].astype(np.float64)
            assert len(values) == job[name]["total_ios"]
            assert values.min() == job[name]["lat_ns"]["min"]
            assert values.max() == job[name]["lat_ns"]["max"]
            assert values.mean() == pytest.approx(job[name]["lat_ns"]["mean"], rel=1e-6)
        assert (log.bs_bytes == 4096).all()
        assert int(log.bs_bytes.astype(np.int64).sum()) == job["read"]["io_bytes"] + job["write"]["io_bytes"]
        offsets = log.columns["offset_bytes"].astype(np.int64)
        assert (offsets % 4096 == 0).all() and offsets.max() < 8 * 1024 * 1024


def test_windowed_bw_and_iops_logs_agree_and_stay_within_fio_totals(fio_run: tuple[Path, list[dict[str, Any]]]) -> None:
    """A job's bandwidth and IOPS logs read as one: in each window both logged, the bandwidth is the IOPS times the
    block size (fio rounds each on its own); summed over their windows (value x window length) each holds about the
    IO fio counted: no unit slipped (KiB for bytes, ms for s: x1000 or more). Only within a factor of 10 either way:
    on a busy host fio logs a late 100 ms window at its planned time with the rate of the time it really spanned (CI
    saw 1.29 and 1.58 x fio's bytes), rate_iops catches up after a stall, and fio logs no partial last window."""
    folder, jobs = fio_run
    pairs = zip(_files(folder, "win_bw.*.log"), _files(folder, "win_iops.*.log"), _jobs(jobs, "win"), strict=True)
    for bw_path, iops_path, job in pairs:
        bw, iops = logs.read_log(bw_path), logs.read_log(iops_path)
        assert bw.windowed and bw.layout[:4] == ("time_ms", "value", "ddir", "bs_bytes") == iops.layout[:4]
        for ddir, name in ((0, "read"), (1, "write")):
            bw_time, iops_time = bw.time_ms[bw.ddir == ddir], iops.time_ms[iops.ddir == ddir]
            bw_values = bw.value[bw.ddir == ddir].astype(np.float64) * 1024  # KiB/s (a small integer type)
            bw_bytes_s = dict(zip(bw_time.tolist(), bw_values.tolist(), strict=True))
            both = [(bw_bytes_s[at], count * 4096) for at, count in
                    zip(iops_time.tolist(), iops.value[iops.ddir == ddir].tolist(), strict=True) if at in bw_bytes_s]
            # fio reckons each over its own moments: single windows of a busy host's runs were 1.4 % and 11 % apart
            # (each within 25 %: a unit slipped would be 1000 x); the closest within 0.5 % (KiB/s read as kB/s would
            # be 2.4 % off in every window); a busy host's fio logs few windows (CI beside the labs: 2 that both
            # logs hold, so a median could be half an 11 % window), and one is enough to compare
            ratios = [a / b for a, b in both if b]
            assert len(both) >= 1 and all(a == pytest.approx(b, rel=0.25) for a, b in both), (bw_path, name)
            assert min(abs(ratio - 1) for ratio in ratios) <= 0.005, (bw_path, name, ratios)
            for log, scale, total in ((bw, 1024, "io_bytes"), (iops, 1, "total_ios")):
                time_ms = log.time_ms[log.ddir == ddir].astype(np.float64)
                value = log.value[log.ddir == ddir].astype(np.float64) * scale
                amount = float(np.sum(value * np.diff(time_ms, prepend=0.0) / 1000.0))
                assert job[name][total] / 10 <= amount <= job[name][total] * 10, (log, name, amount, job[name][total])


def test_per_job_logs_0_holds_each_job_in_turn(fio_run: tuple[Path, list[dict[str, Any]]]) -> None:
    folder, jobs = fio_run
    windowed = logs.read_log(folder / "pj0_bw.log")
    assert len(windowed.segments()) == 2  # job 2's samples follow job 1's, time starting again
    per_io = logs.read_log(folder / "pj0io_lat.log")
    assert per_io.lines == sum(job["read"]["total_ios"] + job["write"]["total_ios"] for job in _jobs(jobs, "pj0io"))
    events = log_merge.merge_events([per_io])
    assert (np.diff(events.time_ms.astype(np.int64)) >= 0).all()
    assert sorted(events.value.tolist()) == sorted(per_io.value.tolist())


def test_merged_jobs_add_up_to_both_jobs(fio_run: tuple[Path, list[dict[str, Any]]]) -> None:
    folder, jobs = fio_run
    for pattern in ("win_bw.*.log", "pj0_bw.log"):
        read = [logs.read_log(p) for p in _files(folder, pattern)]
        merged = log_merge.merge_windowed(read, 100.0, "sum")
        for series, ddir in zip(merged, (0, 1), strict=True):
            # to the end of the longest job: the merged rates hold every logged byte of both jobs, none lost
            amount = float(np.sum(series.value * (series.end_ms - series.start_ms)))
            logged = 0.0
            for log in read:
                for part in log.segments():
                    chosen = log.ddir[part] == ddir
                    time_ms = log.time_ms[part][chosen].astype(np.float64)
                    logged += float(np.sum(log.value[part][chosen] * np.diff(time_ms, prepend=0.0)))
            assert amount == pytest.approx(logged, rel=1e-9), (pattern, ddir)
    assert jobs


def test_hist_log_bins_are_fios_json_plus_bins(fio_run: tuple[Path, list[dict[str, Any]]]) -> None:
    """Every bin value is fio's plat_idx_to_val: the json+ keys; counts never exceed fio's totals."""
    folder, jobs = fio_run
    values = logs.plat_idx_to_val(np.arange(1856))
    for path, job in zip(_files(folder, "hist_clat_hist.*.log"), _jobs(jobs, "hist"), strict=True):
        hist = logs.read_hist_log(path)
        assert hist.counts.shape[1] == 1856 and hist.coarseness == 0
        assert (hist.bin_values_ns == values).all()
        logged = 0
        for ddir, name in ((0, "read"), (1, "write")):
            bins = {int(k): v for k, v in job[name]["clat_ns"]["bins"].items()}
            assert set(bins) <= set(values.tolist())
            counts = hist.counts[hist.ddir == ddir].sum(axis=0)
            for index in np.flatnonzero(counts):
                assert counts[index] <= bins[int(values[index])]
            logged += int(counts.sum())
        assert logged >= 0.5 * (job["read"]["total_ios"] + job["write"]["total_ios"])


def test_hist_percentiles_over_time(fio_run: tuple[Path, list[dict[str, Any]]]) -> None:
    folder, _ = fio_run
    hists = [logs.read_hist_log(p) for p in _files(folder, "hist_clat_hist.*.log")]
    lines = log_merge.hist_percentiles(hists, (50.0, 99.0, 99.9))
    assert {line.direction for line in lines} == {"read", "write"}
    for line in lines:
        # a line per logged interval, in time order: about 10 for the 1 s run, 3 in CI on a loaded host
        assert len(line.end_ms) >= 1 and (np.diff(line.end_ms) > 0).all()
        p50, p99, p999 = (line.percentiles_ns[p] for p in (50.0, 99.0, 99.9))
        assert (line.min_ns <= p50).all() and (p50 <= p99).all() and (p99 <= p999).all()
        assert (p999 <= line.max_ns).all()


# --- fio's bins, by hand ----------------------------------------------------------------------------------------


def test_plat_idx_to_val_as_fio_computes_it() -> None:
    # below 128 the index is the value; then groups of 64 bins, each twice as wide as the previous group's
    assert logs.plat_idx_to_val(np.array([0, 1, 127])).tolist() == [0, 1, 127]
    assert int(logs.plat_idx_to_val(128)) == 128 + 1  # error_bits 1: base 128 + 0.5 * 2
    assert int(logs.plat_idx_to_val(191)) == 128 + 127  # k 63: base 128 + 63.5 * 2
    assert int(logs.plat_idx_to_val(192)) == 256 + 2  # error_bits 2: base 256 + 0.5 * 4
    assert int(logs.plat_idx_to_val(1855)) == 2**33 + int(63.5 * 2**27)  # the last bin of 29 groups


def test_hist_coarseness_from_the_bin_count(tmp_path: Path) -> None:
    path = tmp_path / "x_clat_hist.1.log"
    path.write_text("100, 0, 4096, " + ", ".join(["0"] * 927) + ", 3\n")  # 1856 / 2 bins: coarseness 1
    hist = logs.read_hist_log(path)
    assert hist.coarseness == 1
    lower, upper = 2**33 + 62 * 2**27, 2**33 + 64 * 2**27  # bins 1854 and 1855 merged
    assert hist.bin_values_ns[-1] == (lower + upper) / 2


def test_fio_percentiles_by_hand() -> None:
    # 1 and 3 IOs in two bins: p25 reaches the first bin's count exactly, p25.1 needs the second
    values, counts = np.array([100.0, 150.0, 200.0]), np.array([1, 0, 3])
    result = log_merge.fio_percentiles([0.0, 25.0, 25.1, 50.0, 100.0], values, counts)
    assert result.tolist() == [100.0, 100.0, 200.0, 200.0, 200.0]


def test_fio_percentiles_equal_fio_json_percentiles(tmp_path: Path) -> None:
    """fio's rule on the json+ bins gives fio's own percentiles exactly (fiologparser_hist.py's interpolation
    between bins would not: it lands between them)."""
    subprocess.run(["fio", "--name=p", "--ioengine=null", "--size=64m", "--rw=randrw", "--bs=4k", "--time_based",
                    "--runtime=500ms", "--numjobs=2", "--group_reporting", "--output-format=json+",
                    f"--output={tmp_path / 'out.json'}"], check=True, capture_output=True, timeout=120)
    jobs = json.loads((tmp_path / "out.json").read_text())["jobs"]
    checked = 0
    for job in jobs:
        for direction in ("read", "write"):
            clat = job[direction]["clat_ns"]
            if not clat.get("bins"):
                continue
            bins = sorted((int(value), count) for value, count in clat["bins"].items())
            assert sum(count for _, count in bins) == clat["N"]  # the bins hold every IO fio's percentiles count
            wanted = {float(p): value for p, value in clat["percentile"].items()}
            found = log_merge.fio_percentiles(list(wanted), np.array([v for v, _ in bins], dtype=np.float64),
                                              np.array([c for _, c in bins]))
            assert found.tolist() == [float(value) for value in wanted.values()]
            checked += 1
    assert checked >= 2


# --- merging by time, by hand -----------------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_merge_by_time_weights_overlaps_like_fiologparser(tmp_path: Path) -> None:
    """Job 1 logs at 1000 and 2000 ms, job 2 at 500, 1500 and 2500 ms (each sample covers the time since the
    previous one). Per 1000 ms interval, job 2 contributes the overlap-weighted mean of its samples:
      [0, 1000):    job 1: 100; job 2: (50 x 500 + 150 x 500) / 1000 = 100        -> 200
      [1000, 2000): job 1: 200; job 2: (150 x 500 + 250 x 500) / 1000 = 200       -> 400
      [2000, 2500): job 1 has ended (0); job 2: 250                                 -> 250
    The intervals go on to 2500 ms, the longest job's last sample (fiologparser.py stops at 2000, the shortest's);
    averaged (latency), an interval counts only the jobs that ran in it."""
    one = _write(tmp_path / "m_bw.1.log", "1000, 100, 0, 0, 0\n2000, 200, 0, 0, 0\n")
    two = _write(tmp_path / "m_bw.2.log", "500, 50, 0, 0, 0\n1500, 150, 0, 0, 0\n2500, 250, 0, 0, 0\n")
    merged = log_merge.merge_windowed([logs.read_log(one), logs.read_log(two)], 1000.0, "sum")
    assert len(merged) == 1 and merged[0].ddir == 0
    assert merged[0].start_ms.tolist() == [0.0, 1000.0, 2000.0]
    assert merged[0].end_ms.tolist() == [1000.0, 2000.0, 2500.0]
    assert merged[0].value.tolist() == [200.0, 400.0, 250.0]
    by_line = [100 + 50, 200 + 150]  # what merging by line index would say
    assert merged[0].value.tolist()[:2] != by_line
    mean = log_merge.merge_windowed([logs.read_log(one), logs.read_log(two)], 1000.0, "mean")
    assert mean[0].value.tolist() == [100.0, 200.0, 250.0]


def test_merge_by_time_partial_interval_and_directions(tmp_path: Path) -> None:
    """A 400 ms interval grid over samples at 1000 ms: [0,400) and [400,800) take 100, [800,1000) takes the rest;
    reads and writes are merged separately."""
    path = _write(tmp_path / "d_iops.log", "1000, 100, 0, 0, 0\n1000, 30, 1, 0, 0\n")
    read, write = log_merge.merge_windowed([logs.read_log(path)], 400.0)
    assert read.end_ms.tolist() == [400.0, 800.0, 1000.0]
    assert read.value.tolist() == [100.0, 100.0, 100.0]
    assert (write.ddir, write.value.tolist()) == (1, [30.0, 30.0, 30.0])


# --- layouts ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "layout", "expected"), [
    ("1000, 5, 0, 4096\n", ("time_ms", "value", "ddir", "bs_bytes"), [1000, 5, 0, 4096]),
    ("1000, 5, 9, 1, 0, 0\n", ("time_ms", "value", "value_max", "ddir", "bs_bytes", "prio"), [1000, 5, 9, 1, 0, 0]),
    ("7, 80, 1, 4096, 8192, 0\n", ("time_ms", "value", "ddir", "bs_bytes", "offset_bytes", "prio"),
     [7, 80, 1, 4096, 8192, 0]),
    ("7, 80, 1, 4096, 0x2001, 123456\n", ("time_ms", "value", "ddir", "bs_bytes", "prio", "issue_time"),
     [7, 80, 1, 4096, 0x2001, 123456]),
    ("7, 80, 90, 1, 4096, 8192, 0x0001\n",
     ("time_ms", "value", "value_max", "ddir", "bs_bytes", "offset_bytes", "prio"), [7, 80, 90, 1, 4096, 8192, 1]),
    ("7,80,1,4096,0\r\n", ("time_ms", "value", "ddir", "bs_bytes", "prio"), [7, 80, 1, 4096, 0]),
])
def test_layouts_fio_writes(tmp_path: Path, text: str, layout: tuple[str, ...], expected: list[int]) -> None:
    log = logs.read_log(_write(tmp_path / "a_lat.log", text * 3))
    assert log.layout == layout
    assert [int(log.columns[name][1]) for name in layout] == expected


def test_client_server_and_hist_names() -> None:
    name = logs.parse_log_name("/r/test_bw.2.log.127.0.0.1")
    assert name == logs.LogName("/r/test", "bw", 2, "127.0.0.1")
    assert logs.parse_log_name("x_clat_hist.3.log") == logs.LogName("x", "hist", 3, None)
    assert logs.parse_log_name("my_lat_run_lat.log") == logs.LogName("my_lat_run", "lat", None, None)
    assert logs.parse_log_name("notes.txt") is None


# --- the fast parser against a plain one ------------------------------------------------------------------------


def _random_lines(count: int, seed: int, spaced: str = ", ") -> tuple[str, list[list[int]]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        rows.append([rng.randrange(10 ** rng.randint(1, 12)), rng.randrange(10 ** rng.randint(1, 19)),
                     rng.randrange(3), rng.choice([512, 4096, 131072, 1048576]), rng.randrange(2)])
    return "".join(spaced.join(map(str, row)) + "\n" for row in rows), rows


@pytest.mark.parametrize(("separator", "block_bytes", "lines"),
                         [(", ", 4096, 3000), (",", 4096, 3000), (", ", 24, 300)])
def test_fast_parser_agrees_with_int(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, separator: str,
                                     block_bytes: int, lines: int) -> None:
    """Many blocks: lines cross block edges and the reused block buffers go round many times, threads in use; with
    24-byte blocks most lines are longer than a block."""
    monkeypatch.setattr(log_table, "_BLOCK_BYTES", block_bytes)
    text, rows = _random_lines(lines, seed=len(separator), spaced=separator)
    log = logs.read_log(_write(tmp_path / "r_lat.log", text))
    table = np.array(rows, dtype=np.uint64)
    for index, name in enumerate(log.layout):
        assert (log.columns[name].astype(np.uint64) == table[:, index]).all(), name


@pytest.mark.parametrize(("text", "hex_columns", "expected"), [
    (b"9999999999999999999, 0x00ff\n", (0, 1), [[9999999999999999999], [255]]),
    (b"18446744073709551615, 1\n", (0, 0), None),  # 20 digits: more than a fio log holds, even below 2**64
    (b"1, 0xffffffffffffffff\n", (0, 1), [[1], [2**64 - 1]]),
    (b"1, 0x1ffffffffffffffff\n", (0, 1), None),
    (b"1, 0x00FF\n", (0, 1), None),  # fio prints lower case
    (b"1, 255\n", (0, 1), None),  # a decimal where the first line had a hex number
    (b"1, 0x\n", (0, 1), None),
    (b"1, 2", (0, 0), None),  # no newline
    (b"1, 2\n3", (0, 0), None),  # the last line without one
    (b"", (0, 0), None),
    (b"1, 0\n", (0, 1), None),  # a hex field cut short by the last newline
    (b"1,\n", (0, 0), None),
    (b"1,2\n12345678901234567,0\n", (0, 0), [[1, 12345678901234567], [2, 0]]),
])
def test_parser_limits(text: bytes, hex_columns: tuple[int, ...], expected: list[list[int]] | None,
                       reader: str) -> None:
    hex_at = tuple(index for index, flag in enumerate(hex_columns) if flag)
    if reader == "compiled":
        out = np.zeros((len(hex_columns), 4), np.uint64)
        lines = parse_lines(text, bytes(hex_columns), out)
        assert lines == -1 if expected is None else out[:, :lines].tolist() == expected
    else:
        columns = numpy_parser.parse_block(text, len(hex_columns), hex_at)
        assert columns is None if expected is None else [column.tolist() for column in columns] == expected


def test_compiled_parser_stops_at_its_capacity() -> None:
    out = np.zeros((2, 1), np.uint64)
    assert parse_lines(b"1,2\n3,4\n", bytes(2), out) == -1
    with pytest.raises(ValueError):
        parse_lines(b"1,2\n", bytes(2), np.zeros(3, np.uint64))


_NOISE = [b",", b", ", b" ", b"\n", b"0x", b"a", b"f", b"A", b"x", b"-", b"\t", b"9" * 12, b"\r", b"", b"0"]


def _damaged_block(rng: random.Random, count: int, hex_at: int | None) -> bytes:
    """A few fio-like lines, then a few random edits: most blocks end up malformed, some stay well formed."""
    lines = []
    for _ in range(rng.randint(1, 6)):
        fields = [f"0x{rng.randrange(16 ** rng.randint(1, 16)):0{rng.randint(1, 4)}x}" if index == hex_at
                  else str(rng.randrange(10 ** rng.randint(1, 20))) for index in range(count)]
        lines.append(rng.choice([", ", ","]).join(fields))
    text = bytearray(("\n".join(lines) + "\n").encode())
    for _ in range(rng.randint(0, 2)):
        at = rng.randrange(len(text) + 1)
        text[at:at + rng.randint(0, 2)] = rng.choice(_NOISE)
    return bytes(text)


def test_both_parsers_accept_and_read_the_same_lines() -> None:
    """The numpy parser refuses exactly the blocks the compiled one refuses and reads the same numbers from the rest
    (the line-by-line check and its messages are shared, so this makes their errors the same too)."""
    rng = random.Random(17)
    agreed = {True: 0, False: 0}
    for _ in range(4000):
        count = rng.choice([4, 5, 6, 12])
        hex_at = rng.choice([None, count - 1]) if count < 8 else None
        hex_columns = () if hex_at is None else (hex_at,)
        block = _damaged_block(rng, count, hex_at)
        compiled = log_table._parse_block(block, count, hex_columns, log_table._Slot())
        numpy_columns = numpy_parser.parse_block(block, count, hex_columns)
        assert (compiled is None) == (numpy_columns is None), block
        if compiled is not None and numpy_columns is not None:
            assert [c.tolist() for c in compiled] == [c.tolist() for c in numpy_columns], block
        agreed[compiled is not None] += 1
    assert agreed[True] > 300 and agreed[False] > 300  # both outcomes were really compared


# --- bad input --------------------------------------------------------------------------------------------------


def _error(path: Path, **kwargs: Any) -> str:
    with pytest.raises(LogError) as raised:
        logs.read_any(path, **kwargs)
    return str(raised.value)


def test_empty_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "e_bw.1.log", "")
    assert f"{path}: empty file" in _error(path)


def test_not_a_fio_log(tmp_path: Path) -> None:
    path = _write(tmp_path / "o_bw.log", '{"fio version": "fio-3.33"}\n')
    assert f"{path}: line 1: not a fio log line" in _error(path)
    binary = tmp_path / "b_lat.log"
    binary.write_bytes(b"\x00\x01\x02\x03 not text")
    assert "binary" in _error(binary)
    two_columns = _write(tmp_path / "c_lat.log", "1, 2\n")
    assert "line 1" in _error(two_columns) and "2 columns" in _error(two_columns)


def test_columns_of_one_value_cost_no_memory_and_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A column holding one value (block size, priority) is kept as that value; one that changes after many blocks
    of the same value has every value in place."""
    monkeypatch.setattr(log_table, "_BLOCK_BYTES", 4096)
    lines = [f"{n // 10}, {n % 977}, {n % 2}, 4096, {1 if n >= 2500 else 0}\n" for n in range(3000)]
    log = logs.read_log(_write(tmp_path / "c_lat.log", "".join(lines)))
    assert log.bs_bytes.tolist() == [4096] * 3000 and log.bs_bytes.dtype == np.uint16
    assert not log.bs_bytes.flags.writeable and log.bs_bytes.strides == (0,)  # one value, not 3000
    assert log.columns["prio"].tolist() == [0] * 2500 + [1] * 500  # one value for 2500 lines, then another
    assert log.value.tolist() == [n % 977 for n in range(3000)]


def test_garbage_line_named_with_its_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_table, "_BLOCK_BYTES", 4096)
    text, _ = _random_lines(2000, seed=7)
    lines = text.splitlines(keepends=True)
    lines[1499] = "1500, oops, 0, 4096, 0\n"
    path = _write(tmp_path / "g_lat.log", "".join(lines))
    message = _error(path)
    assert f"{path}: line 1500: not a fio log line" in message and "oops" in message
    log = logs.read_log(path, skip_bad_lines=True)
    assert log.lines == 1999 and log.skipped_count == 1 and log.skipped_lines == (1500,)


@pytest.mark.parametrize("bad", ["1, 2, 0, 4096\n", "1, 2,, 4096, 0\n", "1, 2, 0, 4096, 0 \n", "1,  2, 0, 4096, 0\n",
                                 "1, 2, 0, 4096, 0, 7\n", "1, -2, 0, 4096, 0\n", "1, 2\t, 0, 4096, 0\n"])
def test_malformed_lines_are_refused(tmp_path: Path, bad: str) -> None:
    path = _write(tmp_path / "m_lat.log", "1, 2, 0, 4096, 0\n" + bad + "3, 4, 1, 4096, 0\n")
    assert f"{path}: line 2:" in _error(path)
    assert logs.read_log(path, skip_bad_lines=True).value.tolist() == [2, 4]


def test_truncated_last_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "t_lat.log", "1, 2, 0, 4096, 0\n3, 4, 1, 40")
    assert f"{path}: line 2: truncated last line" in _error(path)
    assert logs.read_log(path, skip_bad_lines=True).lines == 1
    complete = _write(tmp_path / "u_lat.log", "1, 2, 0, 4096, 0\n3, 4, 1, 4096, 0")  # only the newline missing
    assert logs.read_log(complete).lines == 2


def test_compressed_log_and_unknown_name(tmp_path: Path) -> None:
    packed = tmp_path / "z_lat.log"
    packed.write_bytes(b"\x78\x9c" + b"\x00" * 20)
    assert "--inflate-log" in _error(packed)
    unnamed = _write(tmp_path / "data.csv", "1, 2, 0, 4096, 0\n")
    assert "--kind" in _error(unnamed)
    assert logs.read_log(unnamed, kind="lat").lines == 1


def test_all_lines_bad_even_when_skipping(tmp_path: Path) -> None:
    path = _write(tmp_path / "n_lat.log", "1, 2, 0, 4096, 0\n" + "junk\n" * 3)
    log = logs.read_log(path, skip_bad_lines=True)
    assert (log.lines, log.skipped_count, log.skipped_lines) == (1, 3, (2, 3, 4))
    only_junk = _write(tmp_path / "j_lat.log", "junk\n")
    assert "no fio log line" in _error(only_junk, skip_bad_lines=True)


def test_column_names_given_by_the_user(tmp_path: Path) -> None:
    path = _write(tmp_path / "k_iops.log", "1000, 1, 2, 1, 0, 0\n")  # mean 1, max 2 IOPS: fits two layouts
    assert logs.read_log(path).layout[2] == "ddir"  # the more common log_offset layout is taken first
    given = ("time_ms", "value", "value_max", "ddir", "bs_bytes", "prio")
    log = logs.read_log(path, layout=given)
    assert log.layout == given and int(log.ddir[0]) == 1 and int(log.columns["value_max"][0]) == 2
    with pytest.raises(LogError, match="do not fit its 6 columns"):
        logs.read_log(path, layout=("time_ms", "value", "ddir", "bs_bytes"))


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    path = _write(tmp_path / "s_lat.log", "1, 2, 0, 4096, 0\n\n3, 4, 1, 4096, 0\n\n")
    log = logs.read_log(path)
    assert log.value.tolist() == [2, 4] and log.skipped_count == 0


def test_unbuilt_parser_falls_back_to_numpy(tmp_path: Path) -> None:
    """An install without a C compiler has no _logparse: plot reads with numpy and info says so."""
    path = _write(tmp_path / "u_lat.log", "1, 2, 0, 4096, 0\n3, 5, 1, 4096, 0\n")
    unbuilt = "import sys; sys.modules['ptsbench.fio._logparse'] = None; from ptsbench.cli import main; "
    out = tmp_path / "plots"  # plot --out writes only into a folder of its own, not the one holding the log
    plot = unbuilt + f"sys.argv = ['ptsbench', 'plot', {str(path)!r}, '--out', {str(out)!r}]; main()"
    done = subprocess.run([sys.executable, "-c", plot], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (out / "summary.csv").read_text().splitlines()[1].startswith("u,lat,read,ns,1,IOs,IOs,2.0,")
    info = unbuilt + f"sys.argv = ['ptsbench', 'info', {str(tmp_path)!r}, '--json']; main()"
    done = subprocess.run([sys.executable, "-c", info], capture_output=True, text=True)
    assert json.loads(done.stdout)["ptsbench"]["fio_log_reader"] == "numpy (the compiled C parser was not built)"
