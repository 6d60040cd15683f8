"""capture, characterise and replay on real parts: fio's IO on loop devices traced by the kernel's block tracer,
its statistics checked against fio's own JSON and blkparse, replays checked against the capture."""

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import attached_loop, run_cli
from test_report_browser import Browser, assert_clean_report_page, shared_browser

# The kernel's block tracer is one per host: under pytest-xdist these tests share one worker, one at a time
# (scripts/test.sh runs --dist loadgroup)
pytestmark = pytest.mark.xdist_group("block-tracer")

READ_BS = 4096
WRITE_BS = 16384
TRACER_LOCK = "/run/ptsbench-tests-block-tracer.lock"


@pytest.fixture(autouse=True)
def _the_tracer_to_one_suite() -> Iterator[None]:
    """The tracer to one test suite of this host at a time, too (two suites on one machine, as on a shared CI host:
    else one suite's capture finds the other's trace and is refused, rightly): a lock held for each test, as root
    (as a user, the tests that trace skip)."""
    if os.geteuid() != 0:
        yield
        return
    with open(TRACER_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _fio_workload(device: str, out_json: Path) -> list[str]:
    """A known workload: random reads of 4 KiB and writes of 16 KiB, direct, queue depth 4."""
    return ["fio", "--name=known", f"--filename={device}", "--rw=randrw", f"--bs={READ_BS},{WRITE_BS}",
            "--direct=1", "--ioengine=libaio", "--iodepth=4", "--size=32M", "--io_size=4M", "--output-format=json",
            f"--output={out_json}"]


def _fio_counts(path: Path) -> dict[str, tuple[int, int]]:
    job = json.loads(path.read_text())["jobs"][0]
    return {name: (job[name]["total_ios"], job[name]["io_bytes"]) for name in ("read", "write")}


@pytest.fixture
def captured(tmp_path: Path) -> tuple[Path, dict[str, tuple[int, int]]]:
    """A capture run directory of the known workload on a loop device, and fio's own counts of it."""
    if os.geteuid() != 0:
        pytest.skip("capturing needs root")
    with attached_loop(str(tmp_path)) as device:
        run_dir = tmp_path / "capture"
        done = run_cli("capture", device, "--out", str(run_dir), "--", *_fio_workload(device, tmp_path / "fio.json"))
        assert done.returncode == 0, done.stderr
    return run_dir, _fio_counts(tmp_path / "fio.json")


def _main_process(run_dir: Path) -> dict:  # type: ignore[type-arg]
    """The characterisation of the IOs of the process that queued the most of them: the workload's fio job, not
    udev probing the device meanwhile."""
    found = json.loads((run_dir / "characterisation.json").read_text())
    done = run_cli("characterise", str(run_dir), "--pid", str(found["processes"][0]["pid"]), "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_capture_recovers_fio_workload(captured: tuple[Path, dict[str, tuple[int, int]]]) -> None:
    run_dir, fio = captured
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["kind"] == "capture" and manifest["status"] == "done"
    assert manifest["dropped_events"] == 0
    found = _main_process(run_dir)  # the whole trace may also hold udev's probes of the new device
    for name, size in (("read", READ_BS), ("write", WRITE_BS)):
        ios, io_bytes = fio[name]
        assert found["directions"][name]["io_count"] == ios
        assert found["directions"][name]["bytes"] == io_bytes
        assert found["directions"][name]["sizes"] == [[size, ios]]
    assert found["read_fraction"] == pytest.approx(fio["read"][0] / (fio["read"][0] + fio["write"][0]))
    assert {(stream["direction"], stream["size_bytes"]) for stream in found["streams"]} == {("read", READ_BS),
                                                                                            ("write", WRITE_BS)}
    assert sum(stream["io_count"] for stream in found["streams"]) == fio["read"][0] + fio["write"][0]
    whole = json.loads((run_dir / "characterisation.json").read_text())
    assert whole["outstanding"]["max"] >= 1
    assert whole["processes"][0]["io_count"] == fio["read"][0] + fio["write"][0]
    assert manifest["io_count"] >= fio["read"][0] + fio["write"][0]


def test_parser_agrees_with_blkparse(captured: tuple[Path, dict[str, tuple[int, int]]]) -> None:
    """The numpy reader counts the same queued IOs per direction as blkparse's text output of the same file."""
    run_dir, _fio = captured
    with open(run_dir / "trace.blktrace", "rb") as trace:
        text = subprocess.run(["blkparse", "-i", "-"], stdin=trace, capture_output=True, text=True, check=True).stdout
    queued = {"R": 0, "W": 0}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 8 and fields[5] == "Q" and fields[7].isdigit() and fields[8] == "+":
            queued[fields[6][0]] += 1
    found = json.loads(run_cli("characterise", str(run_dir / "trace.blktrace"), "--format", "json").stdout)
    assert (found["directions"]["read"]["io_count"], found["directions"]["write"]["io_count"]) == (queued["R"],
                                                                                                   queued["W"])


def _judged_same(run_dir: Path, trace: dict) -> dict:  # type: ignore[type-arg]
    """replay.json of a replay of `trace` (its characterisation's directions): the same IO count in every
    direction, and fio's bytes short only by the IOs it issued and did not reap (its IO count less its latency
    samples; the capture ran at queue depth 4), each between the direction's smallest and largest IO."""
    comparison = json.loads((run_dir / "replay.json").read_text())
    assert comparison["verdict"] == "same", comparison
    fio = {part["direction"]: part for record in (run_dir / "cases").glob("*/result.json")
           for part in json.loads(record.read_text())["jobs"][0]["directions"]}
    for row in comparison["rows"]:
        name = row["direction"]
        sizes = [size for size, _count in trace[name]["sizes"]]
        assert (row["trace_ios"], row["trace_bytes"]) == (trace[name]["io_count"], trace[name]["bytes"])
        assert row["replay_ios"] == row["trace_ios"] == fio[name]["total_ios"]
        left = comparison["unreaped"][name]
        assert left["ios"] == fio[name]["total_ios"] - fio[name]["lat"]["n"] and 0 <= left["ios"] <= 4
        assert left["bytes"] == row["trace_bytes"] - row["replay_bytes"] == row["trace_bytes"] - fio[name]["io_bytes"]
        assert min(sizes) * left["ios"] <= left["bytes"] <= max(sizes) * left["ios"]
        assert (left["bytes"] == 0) == (left["ios"] == 0)
    return comparison  # type: ignore[no-any-return]


def test_replay_on_file_issues_the_trace(captured: tuple[Path, dict[str, tuple[int, int]]], tmp_path: Path,
                                         sprandom_fio: str) -> None:
    """Two replays of the capture, by the system's fio and a newer one (sprandom_fio), each judged the same as the
    trace: fio's byte counts fall short by the IOs in flight when the log ran out (it reaps none after), which the
    comparison says instead of calling the replay different. Then `compare` of the two targets on the same trace."""
    run_dir, fio = captured
    target = tmp_path / "replayed.dat"
    done = run_cli("replay", str(run_dir), str(target), "--no-stall", "--format", "json", "--out",
                   str(tmp_path / "replay"))
    assert done.returncode == 0, done.stderr
    whole = json.loads((run_dir / "characterisation.json").read_text())["directions"]
    table = {row["direction"]: row for row in json.loads(done.stdout) if row["job"] == "replay"}  # a normal run's
    assert {name: table[name]["lat_n"] for name in whole} == {  # results: IOPS, latency, percentiles per direction
        part["direction"]: part["lat"]["n"] for record in (tmp_path / "replay" / "cases").glob("*/result.json")
        for part in json.loads(record.read_text())["jobs"][0]["directions"] if part["direction"] in whole}
    assert all(table[name]["iops"] > 0 and table[name]["lat_p99_ns"] > 0 for name in whole)
    # the trace sets the directions and sizes, not the job's rw and bs (fio's defaults, read and 4k, would be shown)
    assert {(row["rw"], row["bs"]) for row in table.values()} == {("replay", "as logged")}
    assert all(whole[name]["io_count"] >= fio[name][0] for name in fio)
    comparison = _judged_same(tmp_path / "replay", whole)
    assert comparison["pace"] == "as fast as possible" and "DIFFERENT" not in done.stderr
    assert all(f"{name}: trace {whole[name]['io_count']:,} IOs" in done.stderr for name in whole)
    # two targets on the same trace, side by side; the second replay by the newer fio, at the captured pace
    again = run_cli("replay", str(run_dir), str(tmp_path / "second.dat"), "--out", str(tmp_path / "replay2"),
                    env={"PTSBENCH_FIO": sprandom_fio})
    assert again.returncode == 0, again.stderr
    newer = subprocess.run([sprandom_fio, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert json.loads((tmp_path / "replay2" / "manifest.json").read_text())["fio_version"] == newer
    paced = _judged_same(tmp_path / "replay2", whole)
    assert paced["pace"] == "as captured" and paced["paced_duration_s"] == paced["trace_duration_s"] > 0
    assert comparison["paced_duration_s"] is None and "of the paced duration" in again.stderr
    compared = run_cli("compare", str(tmp_path / "replay"), str(tmp_path / "replay2"), "--out", str(tmp_path / "cmp"))
    assert compared.returncode == 0, compared.stderr
    assert "replay" in compared.stdout and (tmp_path / "cmp" / "index.html").is_file()


def test_replay_of_one_process_issues_exactly_fios_ios(captured: tuple[Path, dict[str, tuple[int, int]]],
                                                       tmp_path: Path) -> None:
    """replay --pid: the workload's process alone (no udev probes): fio's replay, at 4 times the captured pace,
    issues exactly the IOs of the fio run that was captured, direction by direction."""
    run_dir, fio = captured
    pid = json.loads((run_dir / "characterisation.json").read_text())["processes"][0]["pid"]
    done = run_cli("replay", str(run_dir), str(tmp_path / "one.dat"), "--pid", str(pid), "--rate-percent", "400",
                   "--out", str(tmp_path / "one"))
    assert done.returncode == 0, done.stderr
    assert "replay_time_scale=400" in (tmp_path / "one" / "replay.fio").read_text().split()  # 4 x the captured pace
    comparison = json.loads((tmp_path / "one" / "replay.json").read_text())
    assert comparison["pace"] == "scaled to 400 %"
    assert comparison["paced_duration_s"] == pytest.approx(comparison["trace_duration_s"] / 4)
    rows = comparison["rows"]
    assert {row["direction"]: (row["trace_ios"], row["replay_ios"]) for row in rows} == {
        name: (fio[name][0], fio[name][0]) for name in fio}
    kept = json.loads((tmp_path / "one" / "characterisation.json").read_text())
    assert kept["directions"]["read"]["sizes"] == [[READ_BS, fio["read"][0]]]
    assert kept["directions"]["write"]["sizes"] == [[WRITE_BS, fio["write"][0]]]


def test_replay_on_device_matches_capture(captured: tuple[Path, dict[str, tuple[int, int]]], tmp_path: Path) -> None:
    """A replay onto another loop device, itself captured: the same IOs, size by size and direction by direction."""
    run_dir, fio = captured
    original = _main_process(run_dir)
    assert {name: part["io_count"] for name, part in original["directions"].items()} == {
        name: fio[name][0] for name in fio}
    folder = tmp_path / "second"
    folder.mkdir()
    with attached_loop(str(folder)) as device:
        again = tmp_path / "recapture"
        replay = [sys.executable, "-m", "ptsbench", "replay", str(run_dir), device, "--destructive", "--no-stall",
                  "--out", str(tmp_path / "replay-dev")]
        done = run_cli("capture", device, "--out", str(again), "--", *replay)
        assert done.returncode == 0, done.stderr
    replayed = _main_process(again)
    assert replayed["directions"] == original["directions"]
    assert replayed["locality"]["low_bytes"] == original["locality"]["low_bytes"]
    assert replayed["locality"]["high_bytes"] == original["locality"]["high_bytes"]


def test_replay_refuses_device_without_destructive(captured: tuple[Path, dict[str, tuple[int, int]]],
                                                   tmp_path: Path) -> None:
    run_dir, _fio = captured
    folder = tmp_path / "guarded"
    folder.mkdir()
    with attached_loop(str(folder)) as device:
        with open(device, "rb") as handle:
            before = hashlib.sha256(handle.read()).hexdigest()
        done = run_cli("replay", str(run_dir), device, "--out", str(tmp_path / "refused"))
        with open(device, "rb") as handle:
            after = hashlib.sha256(handle.read()).hexdigest()
    assert done.returncode != 0
    assert "--destructive" in done.stderr and "Traceback" not in done.stderr
    assert before == after
    assert not (tmp_path / "refused").exists()  # a refused replay leaves nothing behind


def test_iolog_v3_characterised(tmp_path: Path) -> None:
    """fio's own IO log (write_iolog, version 3) read back: the counts and sizes fio reports."""
    data, log, out = tmp_path / "data.dat", tmp_path / "app.iolog", tmp_path / "fio.json"
    subprocess.run(["fio", "--name=app", f"--filename={data}", "--size=8M", "--rw=randrw", f"--bs={READ_BS},"
                    f"{WRITE_BS}", "--io_size=2M", f"--write_iolog={log}", "--ioengine=psync", "--output-format=json",
                    f"--output={out}"], check=True, capture_output=True)
    fio = _fio_counts(out)
    done = run_cli("characterise", str(log), "--format", "json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["source"] == "fio iolog v3"
    assert found["directions"]["read"]["sizes"] == [[READ_BS, fio["read"][0]]]
    assert found["directions"]["write"]["sizes"] == [[WRITE_BS, fio["write"][0]]]
    before = hashlib.sha256(data.read_bytes()).hexdigest()
    target = tmp_path / "replay.dat"
    done = run_cli("replay", str(log), str(target), "--no-stall", "--ioengine", "psync", "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "r" / "replay.json").read_text())["rows"]
    assert {row["direction"]: row["replay_ios"] for row in rows} == {name: fio[name][0] for name in fio}
    assert hashlib.sha256(data.read_bytes()).hexdigest() == before  # the file the log names is not touched


def test_iolog_that_unlinks_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim.dat"
    victim.write_bytes(b"x" * 8192)
    log = tmp_path / "evil.iolog"
    log.write_text(f"fio version 2 iolog\n{victim} add\n{victim} open\n{victim} read 0 4096\n{victim} unlink\n")
    done = run_cli("replay", str(log), str(tmp_path / "new.dat"), "--out", str(tmp_path / "r"))
    assert done.returncode != 0
    assert "line 5" in done.stderr and "Traceback" not in done.stderr
    assert victim.read_bytes() == b"x" * 8192 and not (tmp_path / "new.dat").exists()
    # the same log in a user's job file: the guard sees the unlink and refuses without --destructive --allow-mounted
    job = tmp_path / "replay.fio"
    job.write_text(f"[r]\nread_iolog={log}\nreplay_redirect={tmp_path / 'other.dat'}\n")
    done = run_cli("run", str(job), "--out", str(tmp_path / "run"))
    assert done.returncode != 0 and "--allow-mounted" in done.stderr
    assert victim.exists()
    # a log that is a FIFO is never opened by the guard (the read would block): refused the same way
    os.mkfifo(tmp_path / "fifo.iolog")
    job.write_text(f"[r]\nread_iolog={tmp_path / 'fifo.iolog'}\nreplay_redirect={tmp_path / 'other.dat'}\n")
    done = run_cli("run", str(job), "--out", str(tmp_path / "run2"), timeout=120)
    assert done.returncode != 0 and "not a regular file" in done.stderr


def test_capture_needs_root_and_a_block_device(tmp_path: Path) -> None:
    plain = tmp_path / "plain.dat"
    plain.write_bytes(b"")
    done = run_cli("capture", str(plain), "--duration", "1")
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1
    assert ("root" in done.stderr) if os.geteuid() != 0 else ("not a block device" in done.stderr)


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


def test_capture_report(captured: tuple[Path, dict[str, tuple[int, int]]], browser: Browser) -> None:
    """The capture's report, from its run directory alone: the sizes table, the streams and the heat map."""
    run_dir, fio = captured
    done = run_cli("report", str(run_dir))
    assert done.returncode == 0, done.stderr
    text = subprocess.run(["pdftotext", "-layout", str(run_dir / "report" / "report.pdf"), "-"], capture_output=True,
                          text=True, check=True).stdout
    assert "IO sizes by direction" in text and "LBA heat map" in text and "Top IO streams" in text
    assert f"{fio['write'][0]:,}" in text
    html = (run_dir / "report" / "index.html").read_text()
    assert "lba_heat" in html and "workload_mix" in html
    # in a real browser: no errors, no network, the three figures drawn (sizes, mix over time, heat map)
    assert_clean_report_page(browser.open_page(run_dir / "report" / "index.html", shoot_plots=True), 3)


# the reads' limit (a cgroup's block throttle): 3 s a round, the same each round; a round of 1 s read 150-220 IOPS on
# a loaded host (CI), where a stall of a few hundred ms took a fifth of it, and 15 rounds never held a steady window
ROUND_READS = 600
ROUND_IOPS = 200


def test_replay_steady_resumes_after_kill_9_to_a_steady_verdict(loop_device: str, tmp_path: Path) -> None:
    """replay --steady on a loop device whose reads a cgroup holds to 200 IOPS: the target preconditioned (twice
    its size written, as fio counts), then rounds of the whole trace; ptsbench killed with SIGKILL in round 3 leaves
    no fio behind, and `ptsbench resume` keeps the stored cases byte for byte and runs rounds until the PTS
    criterion holds: steady.json is the judge's verdict on every stored round (no earlier window was steady), and
    the report says it."""
    from ptsbench.fio.lifetime import fio_pids
    from ptsbench.workload.steady import judge
    from test_drops import Throttle

    log = _reads_log(tmp_path / "reads.iolog", ROUND_READS)
    out = tmp_path / "steady"
    throttle = Throttle(loop_device)
    try:
        throttle.read_iops(ROUND_IOPS)
        process = subprocess.Popen(
            [sys.executable, "-m", "ptsbench", "replay", str(log), loop_device, "--destructive", "--no-stall",
             "--steady", "--max-rounds", "25", "--out", str(out)], stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, preexec_fn=throttle.enter)
        deadline = time.monotonic() + 300
        while not (out / "cases" / "004-replay-r3" / "job.fio").exists():  # rounds 1 and 2 stored, 3 begun
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[1]
            time.sleep(0.02)
        process.kill()
        process.communicate()
        kept = {path: path.read_bytes() for path in (out / "cases").glob("*/result.json")}
        assert len(kept) >= 3  # the preconditioning and rounds 1 and 2
        while fio_pids(out):  # the killed ptsbench's fio ends with it (parent-death signal)
            assert time.monotonic() < deadline, fio_pids(out)
            time.sleep(0.1)
        assert json.loads((out / "manifest.json").read_text())["status"] == "running"
        resumed = subprocess.run([sys.executable, "-m", "ptsbench", "resume", str(out), "--destructive"],
                                 capture_output=True, text=True, timeout=300, preexec_fn=throttle.enter, check=False)
        assert resumed.returncode == 0, resumed.stderr
    finally:
        throttle.remove()
    assert all(path.read_bytes() == data for path, data in kept.items())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "done"
    assert manifest["cases"] == sorted(entry.name for entry in (out / "cases").iterdir())
    results = [json.loads((out / "cases" / name / "result.json").read_text()) for name in manifest["cases"]]
    assert [result["status"] for result in results] == ["ok"] * len(results)
    fill = results[0]["jobs"][0]["directions"]
    written = sum(part["io_bytes"] for part in fill if part["direction"] == "write")
    assert written == 2 * 64 * 2**20  # twice the loop device's size
    rounds = [result["jobs"] for result in results[1:]]
    assert all([part["total_ios"] for job in jobs for part in job["directions"] if part["direction"] == "read"] ==
               [ROUND_READS] for jobs in rounds)  # the whole trace, each round
    purges = json.loads((out / "purge.json").read_text())
    assert [(purge["method"], purge["ok"], purge["commands"]) for purge in purges] == [
        ("blkdiscard", True, [f"blkdiscard --force {loop_device}"])]  # one purge: the preconditioning ran once
    found = json.loads((out / "steady.json").read_text())
    assert found == {**judge(rounds, True, purges[-1]), "precondition_written_bytes": written}
    assert found["steady"] and found["window"][-1] == len(rounds)
    assert not any(judge(rounds[:count])["steady"] for count in range(5, len(rounds)))  # stopped at the first
    assert "RWSW steady state" in resumed.stderr and f"steady in rounds {found['window'][0]}-" in resumed.stderr
    done = run_cli("report", str(out))
    assert done.returncode == 0, done.stderr
    text = subprocess.run(["pdftotext", "-layout", str(out / "report" / "report.pdf"), "-"], capture_output=True,
                          text=True, check=True).stdout
    assert "Steady state (PTS criterion" in text and "Preconditioned before round" in text and "deviations" in text
    flat = " ".join(text.split())
    assert "purge method blkdiscard: discarded all of" in flat and "The replay issued the trace's IOs" in flat


def _reads_log(path: Path, count: int) -> Path:
    """An fio IO log of `count` random 4 KiB reads over 32 MiB."""
    path.write_text("fio version 2 iolog\n/dev/app add\n/dev/app open\n" + "".join(
        f"/dev/app read {(number * 7919 % 8192) * 4096} 4096\n" for number in range(count)) + "/dev/app close\n")
    return path


def test_replay_steady_killed_while_preconditioning_resumes(loop_device: str, tmp_path: Path) -> None:
    """replay --steady on a loop device: purged first as `ptsbench pts` purges (a discard: data put on the device
    before reads back as zeros once the preconditioning has begun), then preconditioned with writes a cgroup holds
    to 8 MiB/s. ptsbench killed with SIGKILL while fio preconditions leaves no fio and no preconditioning counted
    as done; `ptsbench resume` purges and preconditions again (one whole pass of twice the target counted, not the
    cut one too), then runs the rounds; steady.json names the discard as the purge and its deviation."""
    from ptsbench.fio.lifetime import fio_pids
    from ptsbench.workload.rounds import purge_attempts
    from ptsbench.workload.steady import NO_PTS_PURGE, judge
    from test_drops import Throttle

    last_mib = 63 * 2**20  # the loop device's last MiB, which the throttled preconditioning reaches last
    with open(loop_device, "r+b") as device:
        device.seek(last_mib)
        device.write(b"m" * 2**20)
        device.flush()
        os.fsync(device.fileno())
    out = tmp_path / "steady"
    throttle = Throttle(loop_device)
    try:
        throttle.write_bps(8 * 2**20)
        process = subprocess.Popen(
            [sys.executable, "-m", "ptsbench", "replay", str(_reads_log(tmp_path / "reads.iolog", 20)), loop_device,
             "--destructive", "--no-stall", "--steady", "--max-rounds", "5", "--out", str(out)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=throttle.enter)
        deadline = time.monotonic() + 300
        while not ((out / "cases" / "001-precondition" / "job.fio").exists() and fio_pids(out)):
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[1]
            time.sleep(0.02)
        with open(loop_device, "rb") as device:
            device.seek(last_mib)
            assert device.read(2**20) == bytes(2**20)  # purged before the preconditioning began
        process.kill()
        process.communicate()
        while fio_pids(out):  # the killed ptsbench's fio ends with it (parent-death signal)
            assert time.monotonic() < deadline, fio_pids(out)
            time.sleep(0.1)
    finally:
        throttle.remove()
    assert json.loads((out / "manifest.json").read_text())["status"] == "running"
    cut = out / "cases" / "001-precondition" / "result.json"
    assert not cut.exists() or json.loads(cut.read_text())["status"] != "ok"  # not counted as done
    assert [entry.name for entry in (out / "cases").iterdir()] == ["001-precondition"]
    assert [purge["method"] for purge in purge_attempts(out)] == ["blkdiscard"]
    resumed = run_cli("resume", str(out), "--destructive")
    assert resumed.returncode == 0, resumed.stderr
    assert f"purging {loop_device} before the preconditioning" in resumed.stderr
    purges = purge_attempts(out)
    assert [(purge["method"], purge["ok"]) for purge in purges] == [("blkdiscard", True)] * 2
    assert purges[0]["finished_utc"] <= purges[1]["started_utc"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "done"
    assert manifest["cases"] == ["001-precondition", *(f"{n + 1:03d}-replay-r{n}" for n in range(1, 6))]
    results = [json.loads((out / "cases" / name / "result.json").read_text()) for name in manifest["cases"]]
    assert [result["status"] for result in results] == ["ok"] * 6
    written = sum(part["io_bytes"] for part in results[0]["jobs"][0]["directions"] if part["direction"] == "write")
    assert written == 2 * 64 * 2**20  # the resumed pass alone, whole
    rounds = [result["jobs"] for result in results[1:]]
    assert all([part["total_ios"] for job in jobs for part in job["directions"] if part["direction"] == "read"] ==
               [20] for jobs in rounds)
    found = json.loads((out / "steady.json").read_text())
    assert found == {**judge(rounds, True, purges[-1]), "precondition_written_bytes": written}
    assert found["purge"] == purges[-1] and found["deviations"][0] == f"{NO_PTS_PURGE}: {purges[-1]['message']}"


def test_replay_steady_without_preconditioning(tmp_path: Path) -> None:
    """replay --steady --no-precondition, end to end on a new file: no purge, no preconditioning case, the rounds
    alone; the run records the deviation (steady.json, the terminal) and no preconditioned bytes."""
    from ptsbench.workload.steady import NOT_PRECONDITIONED

    out = tmp_path / "steady"
    done = run_cli("replay", str(_reads_log(tmp_path / "reads.iolog", 20)), str(tmp_path / "target.dat"), "--steady",
                   "--no-precondition", "--no-stall", "--max-rounds", "5", "--out", str(out))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["workload"]["precondition"] is False and manifest["status"] == "done"
    assert manifest["cases"] == [f"{n:03d}-replay-r{n}" for n in range(1, 6)]
    assert sorted(entry.name for entry in (out / "cases").iterdir()) == manifest["cases"]
    assert not (out / "precondition.fio").exists() and not (out / "purge.json").exists()
    assert "purging" not in done.stderr and NOT_PRECONDITIONED in done.stderr
    found = json.loads((out / "steady.json").read_text())
    assert found["preconditioned"] is False and found["purge"] is None and found["rounds"] == 5
    assert found["deviations"][0] == NOT_PRECONDITIONED and "precondition_written_bytes" not in found


def test_steady_verdict_names_what_preceded_the_rounds(tmp_path: Path) -> None:
    """The purge's deviation as it was: none after a PTS purge, the purge's words after a discard or none (a file
    cannot be purged: purge_target on a file records that), a missing purge named; --no-precondition names both."""
    from ptsbench.workload.rounds import purge_attempts, purge_target
    from ptsbench.workload.steady import NO_PTS_PURGE, NOT_PRECONDITIONED, NOT_PURGED, judge

    target = tmp_path / "target.dat"
    target.write_bytes(b"u" * 4096)
    attempt = purge_target(tmp_path, str(target), False)
    assert purge_attempts(tmp_path) == [attempt] and attempt["method"] == "none" and attempt["is_deviation"]
    assert target.read_bytes() == b"u" * 4096
    assert judge([], True, attempt)["deviations"][0] == f"{NO_PTS_PURGE}: no purge of {target}: a file cannot be purged"
    sanitized = {**attempt, "method": "nvme-sanitize", "is_deviation": False, "message": "NVMe sanitize done"}
    assert not any("purge" in text for text in judge([], True, sanitized)["deviations"])
    assert judge([], True, sanitized)["purge"] == sanitized
    assert judge([], True)["deviations"][0] == NOT_PURGED and NOT_PRECONDITIONED not in judge([], True)["deviations"]
    assert judge([], False, attempt)["deviations"][0] == NOT_PRECONDITIONED
    assert judge([], False)["preconditioned"] is False and judge([], False, attempt)["purge"] is None


def _record(time_ns: int, sector: int, size: int, action: int, payload: bytes = b"") -> bytes:
    import struct

    return struct.pack("<IIQQIIIIIHH", 0x65617407, 0, time_ns, sector, size, action, 42, 7 << 20, 0, 0,
                       len(payload)) + payload


@pytest.mark.parametrize("payload", [b"", b"\0" * 8, b"abcde", b"\x07tae\x07tae"])
def test_blktrace_records_with_any_payload(tmp_path: Path, payload: bytes) -> None:
    """Records of 48 bytes, with word payloads, with payloads that leave later records unaligned, and with the magic
    word inside a payload: each read as written (a payload-carrying record of any length cannot be made to order
    by the kernel, so these records are written here)."""
    from ptsbench.workload.blktrace import read_blktrace

    queue_read, queue_write, unplug = 1 | (0x11 << 16), 1 | (0x12 << 16), 10 | (0x01 << 16)  # event | category
    records = []
    for index in range(50):
        records.append(_record(1000 * index, 8 * index, 4096, queue_read if index % 3 else queue_write))
        records.append(_record(1000 * index + 1, 0, 0, unplug, payload))
    path = tmp_path / "made.blktrace"
    path.write_bytes(b"".join(records))
    events = read_blktrace(path)
    assert events.event_count == 100
    assert list(events.offset_bytes) == [8 * 512 * index for index in range(50)]
    assert list(events.direction) == [0 if index % 3 else 1 for index in range(50)]
    assert set(events.size_bytes) == {4096} and list(events.time_ns) == [1000 * index for index in range(50)]
    path.write_bytes(b"".join(records)[:-3])
    done = run_cli("characterise", str(path))
    assert done.returncode != 0 and "Traceback" not in done.stderr and "damaged" in done.stderr


def test_replay_onto_missing_dev_name_is_refused(tmp_path: Path) -> None:
    """A typo under /dev is never made into a file; a refused replay leaves no run directory behind."""
    log = tmp_path / "app.iolog"
    log.write_text(f"fio version 2 iolog\n{tmp_path / 'a'} add\n{tmp_path / 'a'} open\n{tmp_path / 'a'} write 0 4096\n")
    missing = "/dev/ptsbench-no-such-device"
    done = run_cli("replay", str(log), missing, "--out", str(tmp_path / "r"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert not os.path.exists(missing) and not (tmp_path / "r").exists()


def test_capture_for_a_duration_puts_tracefs_back(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("capturing needs root")
    tracing = Path("/sys/kernel/tracing")
    with attached_loop(str(tmp_path)) as device:
        before = (tracing / "trace_options").read_text() if (tracing / "trace_options").exists() else None
        done = run_cli("capture", device, "--duration", "1", "--out", str(tmp_path / "idle"))
        assert done.returncode == 0, done.stderr
        disk = os.path.basename(os.path.realpath(device))
        assert Path(f"/sys/block/{disk}/trace/enable").read_text().strip() == "0"
        missing = run_cli("capture", device, "--out", str(tmp_path / "none"), "--", "no-such-program-x")
        assert missing.returncode != 0 and "no such program" in missing.stderr
        assert not (tmp_path / "none").exists()
    manifest = json.loads((tmp_path / "idle" / "manifest.json").read_text())
    assert manifest["duration_s"] >= 1 and manifest["status"] == "done" and manifest["dropped_events"] == 0
    assert (tracing / "current_tracer").read_text().strip() == "nop"
    if before is not None:
        assert (tracing / "trace_options").read_text() == before
    found = json.loads((tmp_path / "idle" / "characterisation.json").read_text())
    assert found["event_count"] == manifest["event_count"]
    again = run_cli("capture", device, "--duration", "1", "--out", str(tmp_path / "idle"))
    assert again.returncode != 0 and "already holds a run" in again.stderr  # never over a stored trace


def test_replay_onto_users_file_needs_destructive(tmp_path: Path) -> None:
    data, log = tmp_path / "data.dat", tmp_path / "app.iolog"
    subprocess.run(["fio", "--name=app", f"--filename={data}", "--size=1M", "--rw=randwrite", "--bs=4k",
                    "--io_size=64k", f"--write_iolog={log}", "--ioengine=psync", "--output=/dev/null"], check=True,
                   capture_output=True)
    users = tmp_path / "users.dat"
    users.write_bytes(b"u" * (1 << 20))
    done = run_cli("replay", str(log), str(users), "--no-stall", "--ioengine", "psync", "--out", str(tmp_path / "r"))
    assert done.returncode != 0 and "--destructive" in done.stderr and "Traceback" not in done.stderr
    assert users.read_bytes() == b"u" * (1 << 20) and not (tmp_path / "r").exists()
    done = run_cli("replay", str(log), str(users), "--no-stall", "--ioengine", "psync", "--destructive", "--out",
                   str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    assert users.read_bytes() != b"u" * (1 << 20)  # the replay's 16 writes reached it


def test_sequential_stream(tmp_path: Path) -> None:
    """RWSW's IO streams tell sequential from random access: fio's sequential 128k writes are one sequential stream
    (all but the first IO, which follows none)."""
    log = tmp_path / "seq.iolog"
    subprocess.run(["fio", "--name=seq", f"--filename={tmp_path / 'seq.dat'}", "--size=4M", "--rw=write",
                    "--bs=128k", f"--write_iolog={log}", "--ioengine=psync", "--output=/dev/null"], check=True,
                   capture_output=True)
    found = json.loads(run_cli("characterise", str(log), "--format", "json").stdout)
    assert [(s["direction"], s["size_bytes"], s["access"], s["io_count"]) for s in found["streams"]] == [
        ("write", 131072, "sequential", 31), ("write", 131072, "random", 1)]
    assert found["locality"]["sequential_fraction"] == pytest.approx(31 / 32)


def test_show_capture_and_older_characterisation(captured: tuple[Path, dict[str, tuple[int, int]]]) -> None:
    """`show` prints a capture's characterisation; one of another version is made again from the stored trace."""
    run_dir, _fio = captured
    stored = run_dir / "characterisation.json"
    current = json.loads(stored.read_text())
    stored.write_text(json.dumps({key: value for key, value in current.items() if key != "version"}))
    done = run_cli("show", str(run_dir), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == current == json.loads(stored.read_text())
    table = run_cli("show", str(run_dir))
    assert table.returncode == 0 and f"{current['io_count']:,} IOs" in table.stdout


def test_sigterm_ends_a_capture_cleanly(tmp_path: Path) -> None:
    """SIGTERM mid-capture: the trace so far is kept, the run marked interrupted, tracefs and the device's trace
    switch put back (so the next capture starts)."""
    import signal
    import time

    from conftest import start_cli

    if os.geteuid() != 0:
        pytest.skip("capturing needs root")
    with attached_loop(str(tmp_path)) as device:
        disk = os.path.basename(os.path.realpath(device))
        switch = Path(f"/sys/block/{disk}/trace/enable")
        process = start_cli("capture", device, "--duration", "600", "--out", str(tmp_path / "cut"))
        deadline = time.monotonic() + 120  # the tracer is on once the device's switch reads 1
        while switch.read_text().strip() != "1":
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) != 0
        assert switch.read_text().strip() == "0"
        assert Path("/sys/kernel/tracing/current_tracer").read_text().strip() == "nop"
        manifest = json.loads((tmp_path / "cut" / "manifest.json").read_text())
        assert manifest["status"] == "interrupted" and (tmp_path / "cut" / "trace.blktrace").is_file()
        again = run_cli("capture", device, "--duration", "1", "--out", str(tmp_path / "next"))
        assert again.returncode == 0, again.stderr
