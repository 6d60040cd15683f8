"""`ptsbench pts --hosts`: the PTS engine on real fio servers on 127.0.0.1 and 127.0.0.2, rounds in lockstep,
per-host results and steady state, the all-hosts aggregate, a server killed mid-round, then resume.

On one machine every host's "same path" is the same file: both servers run their jobs on one test file in the
test's folder (fine for fio; the numbers are then two hosts sharing one disk)."""

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from ptsbench.device.target import TESTFILE_NAME
from ptsbench.hosts.server import kill_tree, process_tree
from test_hosts import Servers, fio_percentile, hosts_arg
from test_hosts import servers as servers  # noqa: PLC0414 - the fixture

SMALL = ["--profile", "demo", "--spec", "1.1", "--tests", "iops", "--block-sizes", "iops=4k", "--size", "16M"]


def rounds_of(run_dir: Path, phase: str = "iops") -> list[dict[str, Any]]:
    return [json.loads(path.read_text())
            for path in sorted(run_dir.glob(f"pts/{phase}/rounds/[0-9][0-9][0-9]/round.json"))]


def host_entries(round_dir: Path, jobs: list[str]) -> dict[str, list[dict[str, Any]]]:
    """fio's own entries of a cell's jobs in the round's fio.json, by host."""
    doc = json.loads((round_dir / "fio.json").read_text())
    found: dict[str, list[dict[str, Any]]] = {}
    for entry in doc["client_stats"]:
        if entry["jobname"] in jobs:
            found.setdefault(entry["hostname"], []).append(entry)
    return found


def group_iops(parts: list[dict[str, Any]]) -> float:
    """fio's own IOPS of one entry; of several, fio's group arithmetic: all IOs over the longest runtime."""
    used = [part for part in parts if part["total_ios"]]
    if len(used) == 1:
        return float(used[0]["iops"])
    return 1000 * sum(part["total_ios"] for part in used) / max(part["runtime"] for part in used)


def check_round(run_dir: Path, record: dict[str, Any], hosts: list[str]) -> None:
    """Per host: fio's numbers (several entries of a cell: fio's group arithmetic, IOs over the longest runtime);
    all hosts: the same group arithmetic over every host's entries, percentiles those of every host's merged bins. (A
    sequential cell a host ran in two parts, -a and -b, has its rates over both parts' runtime: counts are checked.)"""
    folder = run_dir / "pts" / record["phase"] / "rounds" / f"{record['round']:03d}"
    command = (folder / "command.txt").read_text()
    assert all(f"--client={host}," in command for host in hosts) and command.count("/usr/bin/fio") <= 1
    assert sorted(record["hosts"]) == sorted(hosts)
    for name, cell in record["cells"].items():
        entries = host_entries(folder, cell["jobs"])
        assert sorted(entries) == sorted(hosts)  # one fio process ran the round on both hosts
        used = [d for d in ("read", "write") if cell[d]]
        whole = not any(job.endswith(("-a", "-b")) for job in cell["jobs"])
        for host in hosts:
            mine = record["hosts"][host]["cells"][name]
            for direction in used:
                for count in ("io_bytes", "total_ios"):
                    assert mine[direction][count] == sum(e[direction][count] for e in entries[host])
                if whole:
                    assert mine[direction]["iops"] == group_iops([e[direction] for e in entries[host]])
        every = [e[d] for h in hosts for e in entries[h] for d in used]
        if whole:
            assert cell["iops"] == pytest.approx(group_iops(every), rel=1e-12)
        for direction in used:
            parts = [e[direction] for h in hosts for e in entries[h] if e[direction]["total_ios"]]
            assert cell[direction]["io_bytes"] == sum(part["io_bytes"] for part in parts)
            if whole:
                assert cell[direction]["bw_bytes"] == 1000 * cell[direction]["io_bytes"] // max(
                    part["runtime"] for part in parts)
        merged: dict[int, int] = {}
        for host_parts in entries.values():
            for entry in host_parts:
                for direction in used:
                    for value, count in entry[direction]["lat_ns"]["bins"].items():
                        merged[int(value)] = merged.get(int(value), 0) + count
        for percent in ("50", "99", "99.9"):
            assert cell["total"]["lat_percentiles_ns"][percent] == fio_percentile(merged, float(percent))


def test_pts_on_two_hosts_lockstep_per_host_and_aggregate(tmp_path: Path, servers: Servers) -> None:
    hosts = servers(2)
    folder = tmp_path / "data"
    folder.mkdir()
    run_dir = tmp_path / "run"
    done = run_cli("pts", str(folder), "--hosts", hosts_arg(hosts), *SMALL, "--mixes", "iops=0,65",
                   "--round-time", "0.3", "--out", str(run_dir))
    assert done.returncode == 0, done.stderr
    names = [host.name for host in hosts]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert [h["host"] for h in manifest["hosts"]] == names
    assert manifest["target_info"]["path"] == str(folder / TESTFILE_NAME)
    assert any("purge: none (remote hosts)" in r for r in manifest["compliance"]["reasons"])
    precondition = json.loads((run_dir / "pts/iops/precondition/result.json").read_text())
    assert sorted(precondition["hosts"]) == names and all(v > 0 for v in precondition["hosts"].values())
    rounds = rounds_of(run_dir)
    assert len(rounds) == 5
    for record in rounds:
        check_round(run_dir, record, names)
        assert record["handoff"]["way"] == "stonewall" and record["handoff"]["gaps_ms"] is None
        per_host = [record["hosts"][h]["steady"]["steady"] for h in names]
        assert record["steady"]["steady"] == (None if None in per_host else all(per_host))
    last = rounds[-1]
    assert sorted(v["host"] for v in last["steady"]["variables"].values()) == names
    for host in names:  # each host judged on its own numbers
        value = last["hosts"][host]["steady"]["variables"]["rnd 4k 0/100 iops"]
        assert value["values"] == [r["hosts"][host]["cells"]["rnd 4k 0/100"]["iops"] for r in rounds]
    phase = json.loads((run_dir / "pts/iops/phase.json").read_text())
    for host in names:
        window = phase["hosts"][host]["window"]["rnd 4k 0/100"]["iops"]
        assert window == sum(r["hosts"][host]["cells"]["rnd 4k 0/100"]["iops"] for r in rounds) / 5
    assert phase["window"]["rnd 4k 0/100"]["iops"] == sum(r["cells"]["rnd 4k 0/100"]["iops"] for r in rounds) / 5
    shown = run_cli("show", str(run_dir), env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "Per host: IOPS of every cell" in text and "Per host: steady state" in text  # the report's tables
    assert f"{phase['window']['rnd 4k 0/100']['iops']:,.1f}" in text
    for host in names:
        assert f"{phase['hosts'][host]['window']['rnd 4k 0/100']['iops']:,.1f}" in text
        assert f"{host} rnd 4k 0/100" in text  # the all-hosts steady-state table lists every host's variable


def test_host_killed_mid_round_then_resume(tmp_path: Path, servers: Servers) -> None:
    hosts = servers(2)
    victim = hosts[1]
    run_dir = tmp_path / "run"
    target = tmp_path / "test.dat"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "pts", str(target), "--hosts", hosts_arg(hosts),
                                *SMALL, "--mixes", "iops=0", "--round-time", "1.5", "--max-rounds", "3",
                                "--out", str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    second = run_dir / "pts/iops/rounds/002"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ((second / "job.fio").exists()
                                               and len(process_tree(servers.pid(victim))) >= 2):
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    time.sleep(0.5)  # round 2 runs on both hosts
    kill_tree(servers.pid(victim))
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "round 2 failed on 1 of 2 host(s)" in stderr and victim.label in stderr and "Traceback" not in stderr
    # fio's client usually reports the lost connection; on a loaded machine it can exit before it prints that
    assert "disconnected" in stderr or "fio: no message about this host" in stderr
    failed = json.loads((second / "failed.json").read_text())
    by_host = {h["host"]: h for h in failed["hosts"]}
    assert by_host[hosts[0].name]["status"] == "ok" and by_host[victim.name]["status"] == "failed"
    kept = failed["kept"][hosts[0].name]["rnd 4k 0/100"]
    entries = host_entries(second, kept["jobs"])
    assert list(entries) == [hosts[0].name]  # fio's results of the surviving host, kept with fio's own numbers
    assert kept["iops"] == group_iops([entry["write"] for entry in entries[hosts[0].name]])
    assert not (second / "round.json").exists() and len(rounds_of(run_dir)) == 1
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "failed"

    down = run_cli("resume", str(run_dir))  # the host is still down: pre-flight says so, nothing runs
    assert down.returncode != 0 and "pre-flight failed on 1 of 2 host(s)" in down.stderr
    assert victim.label in down.stderr and "Traceback" not in down.stderr
    servers.restart(victim)
    resumed = run_cli("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    rounds = rounds_of(run_dir)
    assert [r["round"] for r in rounds] == [1, 2, 3]
    assert all(sorted(r["hosts"]) == sorted(h.name for h in hosts) for r in rounds)
    assert (run_dir / "pts/iops/rounds/002.interrupted-1/failed.json").exists()
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "done"


def test_a_killed_process_group_stops_the_jobs_on_tcp_servers(tmp_path: Path, servers: Servers) -> None:
    """kill -9 of ptsbench's whole process group mid-round: fio's client, in a session of its own, outlives it for
    its parent-death SIGTERM, on which it tells each server to stop its jobs. A plain TCP server cannot be stopped
    from here otherwise: it would run the round's jobs to their end, 60 s, beside the resume's."""
    from conftest import kill_when, start_pts

    hosts = servers(2, daemon=True)  # a server in a session of its own keeps a dropped client's jobs running
    run_dir = tmp_path / "run"
    process = start_pts(run_dir, str(tmp_path / "test.dat"), "--hosts", hosts_arg(hosts), *SMALL, "--mixes",
                        "iops=0", "--round-time", "60", "--max-rounds", "1")
    jobs: list[int] = []  # the servers' processes serving the round (they leave the server's tree when orphaned)

    def serving() -> bool:
        jobs[:] = [pid for host in hosts for pid in process_tree(servers.pid(host))[1:]]
        return (run_dir / "pts/iops/rounds/001/job.fio").exists() and len(jobs) >= 2 * len(hosts)

    try:
        kill_when(process, serving, delay_s=1.0, group=True)
    finally:
        if process.poll() is None:
            kill_tree(process.pid)
            process.wait()
    deadline = time.monotonic() + 30  # half the round's runtime: a job run to its end would still be there
    while alive := [pid for pid in jobs if Path(f"/proc/{pid}").exists()]:
        if time.monotonic() > deadline:
            for pid in alive:
                kill_tree(pid)
            raise AssertionError(f"the servers' jobs outlived the killed run: {alive}")
        time.sleep(0.1)


def test_hosts_dry_run_and_refusals_are_one_line(tmp_path: Path) -> None:
    hosts = "tcp://127.0.0.1:8001,tcp://127.0.0.2:8001"
    dry = run_cli("pts", "/data/test.dat", "--hosts", hosts, *SMALL, "--dry-run", "--verbose")
    assert dry.returncode == 0, dry.stderr
    assert "# hosts: tcp://127.0.0.1:8001, tcp://127.0.0.2:8001" in dry.stdout
    assert "filename=/data/test.dat" in dry.stdout
    assert "cells stonewalled (fio's scheduler, about 0.3 s per hand-off): on fio servers (--hosts)" in dry.stdout
    assert "stonewall" in dry.stdout and "exec_prerun" not in dry.stdout  # the job fio's client runs
    for args, message in (
        (["/data/test.dat", "--hosts", hosts], "pts --hosts needs TARGET"),
        (["/data/test.dat", "--hosts", hosts, "--size", "1G", "--purge", "nvme-format"], "--purge nvme-format runs"),
        (["/dev/nvme0n1", "--hosts", "tcp://127.0.0.1:1", "--size", "1G"], "pre-flight failed on 1 of 1 host(s)"),
    ):
        done = run_cli("pts", *args, "--out", str(tmp_path / "run"))
        assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()


def test_pts_on_two_hosts_throughput_write_saturation_and_xsr(tmp_path: Path, servers: Servers) -> None:
    """TP, WSAT and an advanced test (XSR) in one short run: per-host cells, steady state and WSAT totals stored,
    each host's target named from fio in the manifest and the report."""
    from ptsbench.report.core.style import device_name

    hosts = servers(2)
    names = [host.name for host in hosts]
    folder = tmp_path / "data"
    folder.mkdir()
    run_dir = tmp_path / "run"
    size_bytes = 16 * 1024**2
    done = run_cli("pts", str(folder), "--hosts", hosts_arg(hosts), "--profile", "demo", "--tests", "tp,wsat,xsr",
                   "--block-sizes", "tp=1m", "--mixes", "tp=0", "--wsat-capacity", "1", "--size", "16M",
                   "--round-time", "0.3", "--xsr-groups", "0.3s,0.3s,0.3s", "--out", str(run_dir))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "done"

    tp = rounds_of(run_dir, "tp-1m")
    assert len(tp) == 5
    for record in tp:
        check_round(run_dir, record, names)
    phase = json.loads((run_dir / "pts/tp-1m/phase.json").read_text())
    verdicts = [phase["hosts"][host]["steady"] for host in names]
    assert all(isinstance(verdict, bool) for verdict in verdicts) and phase["steady"] == all(verdicts)
    for host in names:  # each host judged on its own bandwidth, round by round
        variable = phase["hosts"][host]["determination"]["seq 1m 0/100 bw_bytes"]
        assert variable["values"] == [r["hosts"][host]["cells"]["seq 1m 0/100"]["bw_bytes"] for r in tp]

    wsat = rounds_of(run_dir, "wsat")
    for record in wsat:
        check_round(run_dir, record, names)
    result = json.loads((run_dir / "pts/wsat/phase.json").read_text())
    assert result["stop_reason"] == "1 x capacity written"
    for host in names:  # every host wrote its own capacity; totals are its own fio write bytes
        written = result["hosts"][host]["wsat"]["written_bytes"]
        assert written == sum(r["hosts"][host]["cells"]["rnd 4k 0/100"]["write"]["io_bytes"] for r in wsat)
        assert written >= size_bytes
    assert result["wsat"]["written_bytes"] == sum(result["hosts"][host]["wsat"]["written_bytes"] for host in names)

    for key in ("xsr-1", "xsr-2", "xsr-3"):
        (record,) = rounds_of(run_dir, key)
        check_round(run_dir, record, names)
        assert sorted(json.loads((run_dir / f"pts/{key}/phase.json").read_text())["hosts"]) == sorted(names)

    doc = json.loads((run_dir / "pts/tp-1m/rounds/001/fio.json").read_text())
    for info in manifest["hosts"]:  # the disks fio named in pre-flight are those it reports IO on in the rounds
        fio_disks = [disk["name"] for disk in doc["disk_util"] if disk["hostname"] == info["host"]]
        assert info["targets"] == [{"path": str(folder / TESTFILE_NAME), "kind": "file", "disks": fio_disks,
                                    "size_checked_bytes": None}] and fio_disks
    target = manifest["target"]
    assert target["size_bytes"] == size_bytes and target["path"] == str(folder / TESTFILE_NAME)
    assert all(f"{info['host']}: disk {', '.join(info['targets'][0]['disks'])}" in target["hosts"]
               for info in manifest["hosts"])
    html = (run_dir / "report" / "index.html").read_text()
    shown = html.count(f"<dt>device</dt><dd>{device_name(target)}</dd>")  # the summary's and every test's
    assert shown == html.count("<dt>device</dt>") >= 4 and f"({size_bytes:,} bytes)" in html
    assert "Cross stimulus recovery" in html and "Write saturation" in html
