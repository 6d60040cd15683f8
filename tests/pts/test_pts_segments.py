"""The client profile's segmented active range, checked on what fio really did: a tiny client round on a file,
with fio's per-IO log (log_offset) giving the offset of every IO. Random cells touch exactly the 2,048 segments and
nothing outside them; sequential cells write whole segments in order, each thread its own share, and carry on at
the segment the previous round reached."""

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from ptsbench.fio.runner import fio_binary
from ptsbench.pts.plan import PhasePlan, Plan, SeqStart, TargetInfo, make_plan, round_job
from ptsbench.pts.settings import RunChoices, make_settings

SIZE = 64 * 1024**2  # 2,048 strides of 32 KiB, each holding a 24 KiB segment (75 %)


def client_plan(path: Path, **overrides: object) -> Plan:
    # 2 s: on a busy CI machine a 1 s round once wrote 157 IOs, too few to cover 2,048 segments (idle: ~15,000)
    tests = {"lat": {"block_sizes": (4096,), "mixes": (0,), "round_time_s": 2.0},
             "tp": {"block_sizes": (8192,), "round_time_s": 1.0, **overrides}}
    settings = make_settings("client", "2.0", ("tp", "lat"), tests, RunChoices(lat_histogram_s=0))
    return make_plan(settings, TargetInfo(str(path), "file", SIZE, 512, 512, "psync"))


def run_logged(tmp_path: Path, plan: Plan, phase: PhasePlan, starts: dict[str, SeqStart] | None = None,
               ) -> list[list[int]]:
    """Run the phase's round job with a per-IO latency log; each fio job's IO offsets, in issue order."""
    text = round_job(plan, phase, seed=7, seq_starts=starts).text
    prefix = tmp_path / "io"
    text = text.replace("[global]\n", f"[global]\nwrite_lat_log={prefix}\nlog_offset=1\n", 1)
    (tmp_path / "job.fio").write_text(text)
    done = subprocess.run([fio_binary(), str(tmp_path / "job.fio"), "--output-format=json"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    logs = sorted(tmp_path.glob("io_lat.*.log"), key=lambda p: int(p.name.split(".")[1]))
    return [[int(line.split(",")[4]) for line in log.read_text().splitlines()] for log in logs]


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "target.dat"
    with open(path, "wb") as handle:
        handle.truncate(SIZE)
    return path


def test_random_client_cell_touches_exactly_the_2048_segments(tmp_path: Path, target: Path) -> None:
    plan = client_plan(target)
    segments = plan.segments
    assert segments is not None and (segments.count, segments.stride_bytes, segments.size_bytes) == (
        2048, 32 * 1024, 24 * 1024)
    assert plan.active_range_bytes == 2048 * 24 * 1024
    (offsets,) = run_logged(tmp_path, plan, plan.phase("lat"))
    assert len(offsets) >= 2048, "the round is too short to say anything"
    assert all(offset % segments.stride_bytes + 4096 <= segments.size_bytes for offset in offsets)  # inside one
    touched = {offset // segments.stride_bytes for offset in offsets}
    assert touched == set(range(2048))  # every segment, and none beyond the last
    # one IO per segment per pass: the IOs are spread evenly over the segments
    counts = [0] * 2048
    for offset in offsets:
        counts[offset // segments.stride_bytes] += 1
    assert max(counts) - min(counts) <= 1
    # random within each segment: more than one offset in a segment when it was visited more than once
    if min(counts) > 3:
        assert len(set(offsets)) > 2048


def test_sequential_client_cell_writes_whole_segments_each_thread_its_share(tmp_path: Path, target: Path) -> None:
    plan = client_plan(target, numjobs=2)
    segments = plan.segments
    assert segments is not None
    phase = plan.phase("tp-8k")
    write = phase.cells[1]
    assert write.read_pct == 0 and write.numjobs == 2
    only_write = replace(phase, cells=(write,))
    (tmp_path / "fresh").mkdir()
    first, second = run_logged(tmp_path / "fresh", plan, only_write)
    for thread, offsets in enumerate((first, second)):
        share = range(thread * 1024, (thread + 1) * 1024)
        assert all(offset % segments.stride_bytes + 8192 <= segments.size_bytes for offset in offsets)
        assert {offset // segments.stride_bytes for offset in offsets} <= set(share)
        # in order through the thread's segments, block after block, once (never into the next thread's share)
        expected = [segment * segments.stride_bytes + block * 8192 for segment in share for block in range(3)]
        assert offsets == expected[:len(offsets)]
    # the next round carries on at the start of the segment where the stream stopped (mid-segment: 100.5 segments)
    start = SeqStart(100 * segments.size_bytes + 8192, None)
    (tmp_path / "next").mkdir()
    part_a_first, part_a_second, *_part_b = run_logged(tmp_path / "next", plan, only_write, {write.name: start})
    assert part_a_first[:3] == [100 * segments.stride_bytes + block * 8192 for block in range(3)]
    assert part_a_second[0] == (1024 + 100) * segments.stride_bytes
    assert max(part_a_first) < 1024 * segments.stride_bytes  # part a ends at the thread's last segment
    job = round_job(plan, only_write, 1, {write.name: start})
    assert job.seq_starts[write.name] == 100 * segments.size_bytes
