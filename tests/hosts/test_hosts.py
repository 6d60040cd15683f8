"""Many hosts at once over plain TCP (`tcp://`): real fio servers on 127.0.0.1, 127.0.0.2, ... started and always
killed by the tests. The same through SSH: test_ssh_hosts.py.

The one stand-in is a copy of the real fio binary with another version string, for the version-mismatch fault
within one protocol; a really different fio (another protocol) is Debian 13's fio 3.39, run as a server in the root
scripts/debian13-root.sh makes.
"""

import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import fio_json, run_cli
from ptsbench.fio.runner import fio_binary, fio_version
from ptsbench.hosts.hostlist import Host, HostError, parse_host, parse_hosts, write_host_list
from ptsbench.hosts.server import Listen, check_port_free, kill_tree, process_tree, server_argv, wait_listening
from ptsbench.report.cases.tables import done_after_first_s

# no xdist_group: each test's fio servers take a port free on all their addresses, as test_pts_hosts.py's do beside
# any other test
NULL_JOB = """[global]
ioengine=null
size=1g
time_based
runtime={runtime}

[rr]
rw=randread
bs=4k

[mix]
stonewall
rw=randrw
bs=4k
"""

def free_port(addresses: list[str]) -> int:
    """A port nothing listens on at any of the addresses."""
    for _ in range(200):
        port = random.randint(20000, 60000)
        try:
            for address in addresses:
                check_port_free(address, port)
        except HostError:
            continue
        return port
    raise RuntimeError("no free port")


class Servers:
    """Real fio servers (foreground processes) on loopback addresses, killed with their jobs at teardown."""

    def __init__(self) -> None:
        self.processes: dict[Host, subprocess.Popen[bytes]] = {}

    def __call__(self, count: int, first: int = 1, binary: str | None = None, cwd: Path | None = None,
                 daemon: bool = False) -> list[Host]:
        """`daemon`: each server in a session of its own, as a daemonized one runs."""
        addresses = [f"127.0.0.{first + index}" for index in range(count)]
        port = free_port(addresses)
        hosts = [Host(address, port) for address in addresses]
        for host in hosts:
            self.processes[host] = subprocess.Popen(server_argv(Listen(bind=host.name, port=port), binary=binary),
                                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                    stdin=subprocess.DEVNULL, cwd=cwd, start_new_session=daemon)
        for host in hosts:
            assert wait_listening(Listen(bind=host.name, port=port)), f"fio server {host.label} did not start"
        return hosts

    def pid(self, host: Host) -> int:
        return self.processes[host].pid

    def restart(self, host: Host) -> None:
        """Start a host's server again on its address and port (after the test killed it)."""
        kill_tree(self.processes[host].pid)
        self.processes[host].wait()
        listen = Listen(bind=host.name, port=host.port)
        self.processes[host] = subprocess.Popen(server_argv(listen), stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        assert wait_listening(listen), f"fio server {host.label} did not start again"

    def stop_all(self) -> None:
        for process in self.processes.values():
            kill_tree(process.pid)
            process.wait()


@pytest.fixture
def servers() -> Iterator[Servers]:
    pool = Servers()
    try:
        yield pool
    finally:
        pool.stop_all()


def hosts_arg(hosts: list[Host]) -> str:
    return ",".join(host.label for host in hosts)


def rows_of(result: subprocess.CompletedProcess[str]) -> list[dict]:  # type: ignore[type-arg]
    rows: list[dict] = json.loads(result.stdout)  # type: ignore[type-arg]
    return rows


def run_rows(job: Path, hosts: list[Host], out: Path) -> list[dict]:  # type: ignore[type-arg]
    """`ptsbench run JOB --hosts ...` into `out`, its results table's rows as --format json gives them."""
    result = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--out", str(out), "--format", "json")
    assert result.returncode == 0, result.stderr
    return rows_of(result)


def fio_percentile(bins: dict[int, int], percent: float) -> int:
    """fio's definition: the smallest latency bin whose cumulative count reaches percent% of all samples."""
    total = sum(bins.values())
    cumulative = 0
    for value in sorted(bins):
        cumulative += bins[value]
        if cumulative >= percent / 100 * total:
            return value
    raise AssertionError("empty bins")


def entries_of(doc: dict, job: str) -> list[dict]:  # type: ignore[type-arg]
    return [entry for entry in doc["client_stats"] if entry["jobname"] == job]


def check_aggregates(rows: list[dict], doc: dict, hosts: list[Host]) -> None:  # type: ignore[type-arg]
    """Every all-hosts row: rates by fio's group arithmetic (all IOs over the longest runtime, as fio's own All
    clients entry), percentiles those of the merged bins."""
    all_rows = [row for row in rows if row["host"] == "all hosts"]
    assert all_rows
    for row in all_rows:
        entries = entries_of(doc, row["job"])
        assert sorted(entry["hostname"] for entry in entries) == sorted(host.name for host in hosts)
        directions = ["read", "write"] if row["direction"] == "total" else [row["direction"]]
        longest_ms = max(e[d]["runtime"] for e in entries for d in directions)
        assert row["iops"] == 1000 * sum(e[d]["total_ios"] for e in entries for d in directions) / longest_ms
        assert row["bw_bytes"] == 1000 * sum(e[d]["io_bytes"] for e in entries for d in directions) // longest_ms
        merged: dict[int, int] = {}
        for entry in entries:
            for direction in directions:
                for value, count in entry[direction]["lat_ns"]["bins"].items():
                    merged[int(value)] = merged.get(int(value), 0) + count
        for percent in ("90", "95", "99", "99.9"):
            assert row[f"lat_p{percent}_ns"] == fio_percentile(merged, float(percent))
    # the same bin arithmetic gives fio's own per-host percentiles: the merge follows fio's definition
    for entry in doc["client_stats"]:
        if entry["jobname"] != "All clients" and entry["read"]["total_ios"]:
            bins = {int(v): c for v, c in entry["read"]["lat_ns"]["bins"].items()}
            assert entry["read"]["lat_ns"]["percentile"]["99.000000"] == fio_percentile(bins, 99.0)
    # fio's own "All clients" entry sums every job of every host: our merge of all host entries agrees with it
    all_clients = entries_of(doc, "All clients")
    host_entries = [entry for entry in doc["client_stats"] if entry["jobname"] != "All clients"]
    for direction in ("read", "write"):
        used = [entry[direction] for entry in host_entries if entry[direction]["total_ios"]]
        if all_clients and used:
            theirs = all_clients[0][direction]
            assert theirs["total_ios"] == sum(part["total_ios"] for part in used)
            assert theirs["runtime"] == max(part["runtime"] for part in used)  # fio's group arithmetic
            assert theirs["iops"] == pytest.approx(1000 * theirs["total_ios"] / theirs["runtime"], abs=1e-6)
            assert theirs["lat_ns"]["N"] == sum(part["lat_ns"]["N"] for part in used)
            assert theirs["lat_ns"]["max"] == max(part["lat_ns"]["max"] for part in used)
            assert theirs["lat_ns"]["min"] == min(part["lat_ns"]["min"] for part in used)
    assert all_clients or len(hosts) == 1


def check_all_clients_check_can_fail(doc: dict) -> None:  # type: ignore[type-arg]
    """The runtime check against fio's All clients entry reports a merge that disagrees with it."""
    from ptsbench.fio.output import parse_jobs
    from ptsbench.hosts.results import all_clients_mismatches

    assert all_clients_mismatches(doc, parse_jobs(doc)) == []
    entry = next(e for e in doc["client_stats"] if e["jobname"] != "All clients" and e["read"]["total_ios"])
    entry["read"]["total_ios"] += 1
    entry["read"]["lat_ns"]["max"] = 10**12  # above every host's max
    problems = all_clients_mismatches(doc, parse_jobs(doc))
    assert any("read total_ios" in p for p in problems) and any("read lat max" in p for p in problems)


def test_host_lists_parse_and_reject_clearly(tmp_path: Path) -> None:
    assert parse_hosts("ssh://node1,ssh://root@node2:2222,ssh://[::1],tcp://10.0.0.5,tcp://[::2]:8800") == [
        Host("node1", 0, "ssh"), Host("node2", 2222, "ssh", "root"), Host("::1", 0, "ssh"), Host("10.0.0.5"),
        Host("::2", 8800)]
    listing = tmp_path / "fleet.txt"
    listing.write_text("# rack 1\nssh://admin@node1\n\n  tcp://node2:9000   # spare\ntcp://[fe80::1]\n")
    hosts = parse_hosts(str(listing))
    assert hosts == [Host("node1", 0, "ssh", "admin"), Host("node2", 9000), Host("fe80::1")]
    assert [parse_host(host.label) for host in hosts] == hosts  # labels are --hosts spellings (stored, resumed)
    assert Host("::1", 8800).fio_arg == "ip6:::1,8800" and Host("node1").fio_arg == "node1,8765"
    assert hosts[0].fio_arg == "sock:node1"  # the tunnel's socket, in the fio client's working folder
    path = write_host_list(tmp_path, hosts)
    assert path.read_text() == "sock:node1\nnode2,9000\nip6:fe80::1,8765\n"
    for bad, needle in [("tcp://node1:99999", "65535"), ("ssh://no de", "not a host"),
                        ("ssh://node1,tcp://node1:9000", "listed twice"), ("tcp://[::1", "IPv6"),
                        (",", "names no host"), ("ssh://-x", "not a host"), ("ssh://-oProxyCommand=x@h", "user"),
                        ("node1", "does not say how to reach"), ("node1:8765", "does not say how to reach"),
                        ("http://node1", "unknown transport")]:
        with pytest.raises(HostError, match=needle):
            parse_hosts(bad)
    assert parse_host("tcp://[::1]").port == 8765 and parse_host("ssh://[::1]").port == 0


def test_done_after_first_is_the_runtime_difference() -> None:
    jobs = [{"groupid": 0, "name": "j", "hostname": host, "directions": [{"runtime_ms": runtime}]}
            for host, runtime in (("a", 2000), ("b", 2350), ("all hosts", 2350))]
    done = done_after_first_s(jobs, ["a", "b"])
    assert done == {0: 0.0, 1: 0.35, 2: 0.35}
    # a second job of the same name is another job: its own runtimes
    twice = [*jobs, *({**job, "directions": [{"runtime_ms": 1000}]} for job in jobs)]
    assert done_after_first_s(twice, ["a", "b"]) == {0: 0.0, 1: 0.35, 2: 0.35, 3: 0.0, 4: 0.0, 5: 0.0}


def test_two_sections_of_one_name_stay_two_jobs_on_every_host(tmp_path: Path, servers: Servers,
                                                             write_job) -> None:  # type: ignore[no-untyped-def]
    hosts = servers(2)
    job = write_job("same.fio", "[global]\nioengine=null\nsize=64m\ntime_based\nruntime=300ms\n\n"
                                "[same]\nrw=randread\n\n[same]\nrw=randwrite\nnumjobs=2\n")
    result = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--out", str(tmp_path / "run"), "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = rows_of(result)
    # per job: each host, then all hosts; the reader's rows never hold the writer's IOs
    assert [(r["job"], r["host"], r["direction"], r["numjobs"]) for r in rows] == [
        *[("same", host, "read", 1) for host in ("127.0.0.1", "127.0.0.2", "all hosts")],
        *[("same", host, "write", 2) for host in ("127.0.0.1", "127.0.0.2", "all hosts")]]
    doc = fio_json(tmp_path / "run" / "cases" / "001-same")
    writers = [entry for entry in doc["client_stats"] if entry["jobname"] == "same" and entry["write"]["total_ios"]]
    assert rows[5]["iops"] == 1000 * sum(e["write"]["total_ios"] for e in writers) / max(
        e["write"]["runtime"] for e in writers)


def test_two_hosts_rows_sums_exact_percentiles_and_logs_apart(tmp_path: Path, servers: Servers,
                                                              write_job) -> None:  # type: ignore[no-untyped-def]
    hosts = servers(2)
    job = write_job("null.fio", NULL_JOB.format(runtime=1))
    out = tmp_path / "run"
    rows = run_rows(job, hosts, out)
    case_dir = out / "cases" / "001-null"
    doc = fio_json(case_dir)
    assert [(r["job"], r["host"], r["direction"]) for r in rows] == [
        ("rr", "127.0.0.1", "read"), ("rr", "127.0.0.2", "read"), ("rr", "all hosts", "read"),
        *[("mix", host, d) for host in ("127.0.0.1", "127.0.0.2", "all hosts") for d in ("read", "write", "total")]]
    for row in rows:
        if row["host"] != "all hosts":
            entry = next(e for e in entries_of(doc, row["job"]) if e["hostname"] == row["host"])
            if row["direction"] != "total":
                assert row["iops"] == entry[row["direction"]]["iops"]
                assert row["lat_p99_ns"] == entry[row["direction"]]["lat_ns"]["percentile"]["99.000000"]
        assert row["status"] == "ok" and row["done_after_first_s"] is not None
    check_aggregates(rows, doc, hosts)
    record = json.loads((case_dir / "result.json").read_text())
    assert record["hosts"] == [{"host": h.name, "status": "ok", "message": ""} for h in hosts]
    logs = sorted(path.name for path in (case_dir / "logs").iterdir())
    for host in hosts:  # fio's client appends the host to every log it writes for that host
        assert f"rr_iops.1.log.{host.name}" in logs and f"mix_lat.2.log.{host.name}" in logs
    manifest = json.loads((out / "manifest.json").read_text())
    assert [(h["host"], h["port"], h["fio_version"]) for h in manifest["hosts"]] == [
        (h.name, h.port, fio_version()) for h in hosts]
    assert f"--client={out.resolve() / 'hosts.list'}" in (case_dir / "command.txt").read_text()
    shown = run_cli("show", str(out), "--format", "json")
    assert rows_of(shown) == rows
    check_all_clients_check_can_fail(doc)


def test_eight_hosts_at_once(tmp_path: Path, servers: Servers, write_job) -> None:  # type: ignore[no-untyped-def]
    hosts = servers(8)
    job = write_job("one.fio", "[one]\nioengine=null\nsize=1g\ntime_based\nruntime=200ms\nrw=randread\nbs=4k\n")
    out = tmp_path / "run"
    rows = run_rows(job, hosts, out)
    assert [row["host"] for row in rows] == [host.name for host in hosts] + ["all hosts"]
    doc = fio_json(out / "cases" / "001-one")
    check_aggregates(rows, doc, hosts)
    assert entries_of(doc, "All clients")[0]["read"]["total_ios"] == sum(
        e["read"]["total_ios"] for e in entries_of(doc, "one"))
    table = run_cli("show", str(out)).stdout
    assert "all hosts" in table and "127.0.0.8" in table


def mismatched_fio(tmp_path: Path) -> str:
    """A copy of the real fio whose version string says another version (same length, so nothing else moves)."""
    version = fio_version().encode()
    data = Path(fio_binary()).read_bytes()
    if data.count(version + b"\0") != 1:
        pytest.skip(f"cannot find {version!r} once in the fio binary")
    other = version[:-1] + (b"8" if version[-1:] == b"9" else b"9")
    path = tmp_path / "fio-other"
    path.write_bytes(data.replace(version + b"\0", other + b"\0"))
    path.chmod(0o755)
    return str(path)


def test_preflight_names_version_mismatch_unreachable_host_and_bad_target(
        tmp_path: Path, servers: Servers, write_job) -> None:  # type: ignore[no-untyped-def]
    good = servers(1, first=1)
    other = servers(1, first=2, binary=mismatched_fio(tmp_path))
    unreachable = Host("127.0.0.3", free_port(["127.0.0.3"]))
    job = write_job("w.fio", "[w]\nioengine=psync\nrw=write\nsize=64k\nbs=4k\n")
    out = tmp_path / "run"
    target = tmp_path / "no-such-dir" / "file.dat"
    result = run_cli("run", str(job), "--target", str(target), "--out", str(out),
                     "--hosts", hosts_arg([*good, *other, unreachable]))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    other_version = subprocess.run([str(tmp_path / "fio-other"), "--version"], capture_output=True,
                                   text=True).stdout.strip()
    assert other_version != fio_version()
    lines = result.stderr.splitlines()
    assert any(other[0].label in line and other_version in line and fio_version() in line for line in lines)
    assert any(unreachable.label in line and "cannot connect" in line for line in lines)
    assert any(good[0].label in line and f"no such directory {target.parent}" in line for line in lines)
    assert "pre-flight failed on 3 of 3 host(s)" in result.stderr
    assert not out.exists() and not target.parent.exists()  # nothing ran, nothing was created


def test_preflight_names_the_version_of_a_fio_that_speaks_another_protocol(
        tmp_path: Path, servers: Servers, debian13_fio: str) -> None:
    """fio's client only says the server's protocol number; the pre-flight asks the server itself which fio it is."""
    other = servers(1, first=4, binary=debian13_fio)
    version_there = subprocess.run([debian13_fio, "--version"], capture_output=True, text=True).stdout.strip()
    assert version_there.startswith("fio-") and version_there != fio_version()
    out = tmp_path / "quick"
    result = run_cli("quick", str(tmp_path / "q.dat"), "--size", "16M", "--out", str(out), "--hosts", hosts_arg(other))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert (f"{other[0].label}: runs {version_there}, the controller runs {fio_version()}: install the same fio "
            "version on every host") in result.stderr
    assert not out.exists() and not (tmp_path / "q.dat").exists()


def test_preflight_resolves_directories_and_new_files_like_a_local_run(
        tmp_path: Path, servers: Servers) -> None:
    from ptsbench.hosts.preflight import preflight

    hosts = servers(2)
    folder = tmp_path / "data"
    folder.mkdir()
    existing = tmp_path / "existing.dat"
    existing.write_bytes(b"x" * 8192)
    checked = preflight(hosts, [str(folder), str(tmp_path / "new.dat"), str(existing)])
    assert [t.path for t in checked.targets] == [str(folder / "ptsbench-testfile.dat"), str(tmp_path / "new.dat"),
                                                str(existing)]
    assert sorted(os.listdir(tmp_path)) == ["data", "existing.dat"] and not os.listdir(folder)  # scratch removed
    assert existing.read_bytes() == b"x" * 8192
    with pytest.raises(HostError, match=re.escape(f"{existing / 'inside.dat'}: {existing} is a file or device")):
        preflight(hosts, [str(existing / "inside.dat")])


def test_server_killed_mid_run_keeps_the_others(tmp_path: Path, servers: Servers,
                                                write_job) -> None:  # type: ignore[no-untyped-def]
    hosts = servers(2)
    job = write_job("long.fio", "[long]\nioengine=null\nsize=1g\ntime_based\nruntime=4\nrw=randread\nbs=4k\n"
                                    "rate_iops=100\n")
    out = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(job), "--hosts", hosts_arg(hosts),
                                "--out", str(out), "--format", "json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    victim = servers.pid(hosts[1])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
            (out / "cases" / "001-long" / "job.fio").exists() and len(process_tree(victim)) >= 3):
        time.sleep(0.05)  # the case started (pre-flight is over) and the server forked its job
    time.sleep(1.0)  # the job runs on both hosts now
    kill_tree(victim)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    rows = json.loads(stdout)
    record = json.loads((out / "cases" / "001-long" / "result.json").read_text())
    assert record["status"] == "failed"
    by_host = {h["host"]: h for h in record["hosts"]}
    assert by_host["127.0.0.1"]["status"] == "ok"
    assert by_host["127.0.0.2"]["status"] == "failed" and "disconnected" in by_host["127.0.0.2"]["message"]
    kept = next(r for r in rows if r["host"] == "127.0.0.1")
    entry = entries_of(fio_json(out / "cases" / "001-long"), "long")
    assert [e["hostname"] for e in entry] == ["127.0.0.1"] and kept["iops"] == entry[0]["read"]["iops"]
    assert kept["status"] == "ok"
    dead = next(r for r in rows if r["host"] == "127.0.0.2")
    assert dead["status"] == "failed" and dead["iops"] is None and "disconnected" in dead["message"]
    assert any(r["host"] == "1 of 2 hosts" and r["iops"] == kept["iops"] for r in rows)
    assert "failed cases: long" in stderr


def test_quick_on_two_hosts(tmp_path: Path, servers: Servers) -> None:
    hosts = servers(2)
    folder = tmp_path / "data"
    folder.mkdir()
    out = tmp_path / "run"
    result = run_cli("quick", str(folder), "--hosts", hosts_arg(hosts), "--runtime", "0.2", "--size", "1M",
                     "--out", str(out), "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = rows_of(result)
    assert len(rows) == 8 * 3 and {r["host"] for r in rows} == {"127.0.0.1", "127.0.0.2", "all hosts"}
    assert {r["target"] for r in rows} == {str(folder / "ptsbench-testfile.dat")}
    check_aggregates(rows, fio_json(out / "cases" / "001-quick"), hosts)
    assert "ioengine=" in (out / "quick.fio").read_text()


def test_quick_hosts_needs_a_target() -> None:
    result = run_cli("quick", "--hosts", "ssh://127.0.0.1")
    assert result.returncode == 2 and "needs TARGET" in result.stderr


def test_server_tcp_only_when_asked_with_a_warning_daemon_and_stop(tmp_path: Path) -> None:
    port = free_port(["127.0.0.1", "0.0.0.0"])
    refused = run_cli("server", "--bind", "127.0.0.1", "--port", str(port))
    assert refused.returncode == 2 and "add --tcp" in refused.stderr and "Traceback" not in refused.stderr
    assert not wait_listening(Listen(bind="127.0.0.1", port=port), 0.5)
    assert "WARNING" in run_cli("server", "--help").stdout
    pidfile = tmp_path / "fio.pid"
    started = run_cli("server", "--tcp", "--port", str(port), "--daemon", "--pidfile", str(pidfile))
    try:
        assert started.returncode == 0, started.stderr
        assert "warning" in started.stderr and "no authentication" in started.stderr
        pid = int(pidfile.read_text())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert f"--server=ip:127.0.0.1,{port}".encode() in argv
        assert wait_listening(Listen(bind="127.0.0.1", port=port), 1.0)
        busy = run_cli("server", "--tcp", "--bind", "0.0.0.0", "--port", str(port))  # port taken: warns, refuses
        assert busy.returncode == 2 and "no authentication" in busy.stderr and f"port {port}" in busy.stderr
        stopped = run_cli("server", "--stop", "--pidfile", str(pidfile))
        assert stopped.returncode == 0 and not pidfile.exists()
        assert not wait_listening(Listen(bind="127.0.0.1", port=port), 0.5)
    finally:
        if pidfile.exists():
            kill_tree(int(pidfile.read_text()))
    again = run_cli("server", "--stop", "--pidfile", str(pidfile))
    assert again.returncode == 2 and "is the server running" in again.stderr


def test_preflight_names_the_disk_fio_used_and_checks_a_device_holds_size(tmp_path: Path, servers: Servers) -> None:
    from conftest import attached_loop
    from ptsbench.hosts.preflight import preflight, remote_target_facts

    hosts = servers(1)
    size_bytes = 4 * 1024**2
    with attached_loop(str(tmp_path), size_bytes) as device:
        checked = preflight(hosts, [device], size_bytes=size_bytes)
        target = checked.hosts[0].targets[0]
        assert (target.path, target.kind, target.size_checked_bytes) == (device, "block", size_bytes)
        assert target.disks == (os.path.basename(device),)  # fio's disk_util names the loop device itself
        facts = remote_target_facts(checked.hosts, size_bytes)
        assert facts["path"] == device and facts["size_bytes"] == size_bytes
        assert f"{hosts[0].name}: disk {os.path.basename(device)}, holds 4.0 MiB" == facts["hosts"]
        said = f"{device} is smaller than --size 4.0 MiB ({size_bytes + 512} bytes): fio cannot read its byte at " \
            f"offset {size_bytes + 511}"
        with pytest.raises(HostError, match=re.escape(said)):
            preflight(hosts, [device], size_bytes=size_bytes + 512)


def test_host_statuses_judge_each_host_by_its_own_job_file(tmp_path: Path) -> None:
    """Hosts that ran different job files (a sequential cell in two parts on one host only) are each complete."""
    from dataclasses import replace

    from ptsbench.fio.output import parse_jobs
    from ptsbench.hosts.results import host_statuses

    job = tmp_path / "parts.fio"
    job.write_text("[global]\nioengine=null\nsize=64k\nbs=4k\n[s-a]\n[s-b]\n[s]\n")
    done = subprocess.run([fio_binary(), "--output-format=json+", str(job)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    first, second = Host("10.0.0.1"), Host("10.0.0.2")
    owner = {"s-a": first.name, "s-b": first.name, "s": second.name}
    results = [replace(result, hostname=owner[result.name]) for result in parse_jobs(json.loads(done.stdout))]
    jobs = {first.name: ["s-a", "s-b"], second.name: ["s"]}
    assert [s.status for s in host_statuses([first, second], results, "", jobs)] == ["ok", "ok"]
    assert [s.status for s in host_statuses([first, second], results, "")] == ["failed", "failed"]  # one job file
    missing = host_statuses([first, second], [r for r in results if r.name != "s-b"], "", jobs)
    assert missing[0].status == "failed" and "results for 1 of 2 jobs" in missing[0].message
    assert missing[1].status == "ok"


def test_percentile_evidence_is_counted_in_the_bins_merged_across_hosts(
        tmp_path: Path, servers: Servers, write_job) -> None:  # type: ignore[no-untyped-def]
    """600 reads per host: each host's p99 rests on its own 600 IOs (at most 6 slower than it: not measured), the
    all-hosts row's on the 1,200 of both, its IOs slower than each percentile counted in the bins merged across the
    hosts (fio.json's json+ bins, counted here); the terminal marks a percentile n/m exactly where fewer than 10 are
    slower, and shows the IOs behind each row."""
    from ptsbench.fio.output import MIN_TAIL_IOS

    hosts = servers(2)
    job = write_job("few.fio", "[few]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\nnumber_ios=600\n")
    out = tmp_path / "run"
    rows = run_rows(job, hosts, out)
    doc = fio_json(out / "cases" / "001-few")
    merged: dict[int, int] = {}
    for entry in entries_of(doc, "few"):
        for value, count in entry["read"]["lat_ns"]["bins"].items():
            merged[int(value)] = merged.get(int(value), 0) + count
    assert sum(merged.values()) == 1200
    for row in rows:
        if row["host"] == "all hosts":
            bins, n = merged, 1200
        else:
            entry = next(e for e in entries_of(doc, "few") if e["hostname"] == row["host"])
            bins, n = {int(v): c for v, c in entry["read"]["lat_ns"]["bins"].items()}, 600
        assert row["lat_n"] == n and row["lat_beyond"]
        for percentile, beyond in row["lat_beyond"].items():  # fio's figure stays beside its evidence
            value = row[f"lat_p{percentile}_ns"]
            assert value == fio_percentile(bins, float(percentile))
            assert beyond == sum(c for v, c in bins.items() if v > value), (row, percentile)
        if row["host"] != "all hosts":
            assert row["lat_beyond"]["99"] <= 6 < MIN_TAIL_IOS  # one host alone cannot claim its p99
    # the table: per row its IOs, and n/m in each percentile column where fewer than 10 IOs are slower
    table = run_cli("show", str(out), env={"COLUMNS": "400"}).stdout
    header = next(line for line in table.splitlines() if " p99 " in f" {line} ").split()
    for row in rows:
        [line] = [line.split() for line in table.splitlines() if f" {row['host']} " in f" {line} " and " few " in
                  f" {line} "]
        assert f"{row['lat_n']:,}" in line, (line, header)
        thin = {percentile for percentile, beyond in row["lat_beyond"].items() if beyond < MIN_TAIL_IOS}
        assert line.count("n/m") == len(thin & {key.removeprefix("p") for key in header if key.startswith("p9")}), \
            (line, header, row["lat_beyond"])
