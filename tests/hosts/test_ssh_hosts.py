"""The fio server belongs to root: hosts reached through SSH (a real sshd on 127.0.0.2 and 127.0.0.3 with keys made
here; fio's server started on each "host" over ssh), a local `ptsbench server` on a Unix socket that an
unprivileged user cannot reach, and plain TCP only when spelled out."""

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import attached_loop, run_cli
from ptsbench.fio.runner import fio_version
from ptsbench.hosts import ssh
from ptsbench.hosts.hostlist import parse_hosts
from ptsbench.hosts.server import Listen, _server_pids, kill_tree, wait_listening
from sshd import Sshd
from sshd import sshd as sshd  # noqa: PLC0414 - the fixture
from test_hosts import NULL_JOB, rows_of
from test_run_cli import assert_one_line_error


def server_pids(folders: set[Path]) -> list[int]:
    """fio servers serving a socket in one of these folders (the server module's own scan of /proc)."""
    return [pid for folder in folders for pid in _server_pids(f"--server=sock:{folder}/{ssh.REMOTE_SOCKET}")]


def wait_for(condition, timeout_s: float = 60.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


def test_tunnels_start_a_private_server_per_host_and_stop_it(sshd: Sshd) -> None:
    hosts = parse_hosts(sshd.spec())
    before = sshd.remote_folders()
    try:
        assert ssh.connect(hosts) == {}
        folder = ssh.client_folder(hosts)
        assert folder is not None and stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert sorted(os.listdir(folder)) == ["127.0.0.2", "127.0.0.3"]  # one local socket per host, by its name
        made = sshd.remote_folders() - before
        assert len(made) == 2  # a fresh folder per host's server
        for remote in made:
            found = os.lstat(remote)
            assert stat.S_ISDIR(found.st_mode) and stat.S_IMODE(found.st_mode) == 0o700 and found.st_uid == 0
            assert stat.S_ISSOCK(os.lstat(remote / ssh.REMOTE_SOCKET).st_mode)
        assert len(server_pids(made)) == 2
        assert ssh.connect(hosts) == {}  # already open: nothing new
        assert sshd.remote_folders() - before == made
    finally:
        ssh.close_all()
    assert wait_for(lambda: not server_pids(made) and not sshd.remote_folders() & made)
    assert not folder.exists()


def test_run_on_two_hosts_through_ssh(tmp_path: Path, sshd: Sshd, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("null.fio", NULL_JOB.format(runtime="500ms"))
    out = tmp_path / "run"
    before = sshd.remote_folders()
    result = run_cli("run", str(job), "--hosts", sshd.spec(), "--out", str(out), "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = rows_of(result)
    assert [(r["job"], r["host"], r["direction"]) for r in rows] == [
        ("rr", "127.0.0.2", "read"), ("rr", "127.0.0.3", "read"), ("rr", "all hosts", "read"),
        *[("mix", host, d) for host in ("127.0.0.2", "127.0.0.3", "all hosts") for d in ("read", "write", "total")]]
    assert all(row["status"] == "ok" and row["iops"] > 0 for row in rows)
    case_dir = out / "cases" / "001-null"
    logs = sorted(path.name for path in (case_dir / "logs").iterdir())
    assert "rr_iops.1.log.127.0.0.2" in logs and "mix_lat.2.log.127.0.0.3" in logs  # named by host, as over TCP
    manifest = json.loads((out / "manifest.json").read_text())
    assert [(h["host"], h["transport"], h["fio_version"]) for h in manifest["hosts"]] == [
        ("127.0.0.2", "ssh", fio_version()), ("127.0.0.3", "ssh", fio_version())]
    assert (out / "hosts.list").read_text() == "sock:127.0.0.2\nsock:127.0.0.3\n"
    # the servers and their folders ended with the run
    assert wait_for(lambda: not sshd.remote_folders() - before and not server_pids(sshd.remote_folders()))


def test_preflight_names_hosts_ssh_cannot_reach(tmp_path: Path, sshd: Sshd) -> None:
    """127.0.0.4: no sshd there; 127.0.0.5: a host key not in known_hosts (BatchMode: no question, a refusal)."""
    (tmp_path / "x.fio").write_text("[x]\nioengine=null\nsize=4k\n")
    result = run_cli("run", str(tmp_path / "x.fio"), "--target", str(tmp_path), "--hosts",
                     "ssh://127.0.0.2,ssh://127.0.0.4,ssh://127.0.0.5", "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert "pre-flight failed on 2 of 3 host(s)" in lines[1]
    assert any("ssh://127.0.0.4:" in line and "refused" in line for line in lines)
    assert any("ssh://127.0.0.5:" in line and "Host key verification failed" in line for line in lines)
    assert not any("127.0.0.2" in line for line in lines[2:])
    assert not (tmp_path / "run").exists()


def remote_folder_of(sshd: Sshd, host: str) -> Path | None:
    """The remote folder of the live tunnel to `host` of this server (from its ssh's -L argument)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if argv[0] == "ssh" and "-L" in argv and str(sshd.config) in argv:
                local, _, remote = argv[argv.index("-L") + 1].partition(":")
                if local.endswith(f"/{host}"):
                    return Path(remote).parent
    return None


def test_a_remote_server_that_dies_fails_its_host_and_the_next_case_reconnects(
        tmp_path: Path, sshd: Sshd, write_job) -> None:  # type: ignore[no-untyped-def]
    # held to 100 IOPS (an IO every 10 ms, which fio sleeps through): two hosts' unlimited null jobs spin two CPUs
    first = write_job("a.fio", "[long]\nioengine=null\nsize=1g\ntime_based\nruntime=4\nrw=randread\nbs=4k\n"
                               "rate_iops=100\n")
    second = write_job("b.fio", "[short]\nioengine=null\nsize=1g\ntime_based\nruntime=300ms\n")
    out = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(first), str(second), "--hosts",
                                sshd.spec(), "--out", str(out), "--format", "json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: (out / "cases" / "001-a" / "job.fio").exists()
                        and (folder := remote_folder_of(sshd, "127.0.0.3")) is not None
                        and len(server_pids({folder})) >= 2)
        victim = remote_folder_of(sshd, "127.0.0.3")
        assert victim is not None
        time.sleep(1.0)  # the job runs on both hosts now
        for pid in server_pids({victim}):
            kill_tree(pid)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            kill_tree(process.pid)
            process.wait()
    assert process.returncode == 1, stderr
    records = [json.loads((out / "cases" / name / "result.json").read_text()) for name in ("001-a", "002-b")]
    statuses = [{host["host"]: host["status"] for host in record["hosts"]} for record in records]
    assert statuses == [{"127.0.0.2": "ok", "127.0.0.3": "failed"}, {"127.0.0.2": "ok", "127.0.0.3": "ok"}]
    assert {(r["job"], r["host"]) for r in json.loads(stdout) if r["job"] == "short"} == {
        ("short", "127.0.0.2"), ("short", "127.0.0.3"), ("short", "all hosts")}
    assert wait_for(lambda: not victim.exists())  # the dead server's folder was removed by its script


def test_guard_judges_an_ssh_host_on_this_machine_as_local(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    """ssh://127.0.0.2 is this machine: a write to a loop device is judged by the local guard (dry run, no ssh)."""
    with attached_loop(str(tmp_path), 4 * 1024**2) as device:
        job = write_job("w.fio", f"[w]\nioengine=psync\nrw=write\nsize=1m\nfilename={device}\n")
        result = run_cli("run", str(job), "--hosts", "ssh://127.0.0.2", "--dry-run")
    assert result.returncode == 2 and "--destructive" in result.stderr and "Traceback" not in result.stderr


def test_plain_tcp_hosts_need_to_be_spelled_out(tmp_path: Path, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("x.fio", "[x]\nioengine=null\nsize=4k\n")
    for spec in ("127.0.0.1:8765", "127.0.0.1", "node1"):
        result = run_cli("run", str(job), "--hosts", spec, "--out", str(tmp_path / "run"))
        assert_one_line_error(result, "does not say how to reach its fio server", "tcp://")
    assert not (tmp_path / "run").exists()


def digest(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def test_an_unprivileged_user_cannot_use_the_local_server(tmp_path: Path) -> None:
    """`runuser -u nobody -- fio --client=sock:...` with a job that writes a loop device and runs a command: refused
    (the socket's folder is root's, mode 0700); the device is byte-identical and the command never ran. root's own
    client, through the same socket, is served."""
    base = tmp_path / "open"  # a folder everyone may enter: only the socket's own folder keeps nobody out
    base.mkdir(mode=0o755)
    for parent in (base, *base.parents):
        if parent != Path("/"):
            os.chmod(parent, os.stat(parent).st_mode | 0o005)
    listen = Listen(socket=base / "ptsbench" / "fio.sock")
    marker = base / "pwned"
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "server", "--socket", str(listen.socket)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_listening(listen, 30.0)
        assert stat.S_IMODE(os.stat(listen.socket.parent).st_mode) == 0o700
        with attached_loop(str(base), 4 * 1024**2) as device:
            evil = base / "evil.fio"
            evil.write_text(f"[evil]\nioengine=psync\nrw=write\nsize=1m\nfilename={device}\n"
                            f"exec_prerun=touch {marker}\n")
            evil.chmod(0o644)
            before = digest(device)
            attack = subprocess.run(["runuser", "-u", "nobody", "--", "fio", f"--client=sock:{listen.socket}",
                                     str(evil)], capture_output=True, text=True, timeout=60)
            assert attack.returncode != 0 and "Permission denied" in attack.stdout + attack.stderr
            assert digest(device) == before and not marker.exists()
            nobody_can_enter = subprocess.run(["runuser", "-u", "nobody", "--", "test", "-x", str(base)])
            assert nobody_can_enter.returncode == 0  # refused by the socket's folder, not by a folder above it
        read = base / "read.fio"
        read.write_text("[r]\nioengine=null\nrw=read\nsize=4k\n")
        served = subprocess.run(["fio", f"--client=sock:{listen.socket}", str(read)], capture_output=True, text=True,
                                timeout=60)
        assert served.returncode == 0, served.stderr
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)


@pytest.mark.parametrize("problem", ["symlink", "open", "file"])
def test_server_refuses_a_socket_folder_others_could_enter(tmp_path: Path, problem: str) -> None:
    folder = tmp_path / "sock"
    if problem == "symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        folder.symlink_to(tmp_path / "elsewhere")
    elif problem == "open":
        folder.mkdir()
        folder.chmod(0o755)
    else:
        folder.write_text("")
    result = run_cli("server", "--socket", str(folder / "fio.sock"))
    expected = {"symlink": "is a symlink", "open": "has mode 0755", "file": "is not a folder"}[problem]
    assert_one_line_error(result, f"the socket folder {folder} {expected}")
    assert not os.path.lexists(tmp_path / "elsewhere" / "fio.sock")


def _after_kill(sshd: Sshd, made: set[Path], tunnels_before: set[Path], pid: int) -> set[Path]:
    """After a kill -9 of ptsbench (`pid`): the remote servers of its tunnels and their jobs end, their folders go;
    its local tunnel folder is left (returned), named by it."""
    assert wait_for(lambda: not server_pids(made) and not made & sshd.remote_folders()), server_pids(made)
    left = sshd.tunnel_folders() - tunnels_before
    assert [folder.name.startswith(f"{ssh.FOLDER_PREFIX}{pid}-") for folder in left] == [True], left
    return left


def _after_resume(sshd: Sshd, left: set[Path], made_before: set[Path], tunnels_before: set[Path]) -> None:
    """After a resume: no remote server or folder of it stays, the killed run's local tunnel folder was removed
    (its process is gone) and the resume removed its own."""
    assert wait_for(lambda: not server_pids(sshd.remote_folders() - made_before))
    assert not sshd.remote_folders() - made_before
    assert not left & sshd.tunnel_folders() and not sshd.tunnel_folders() - tunnels_before


def test_pts_on_two_hosts_through_ssh_killed_mid_round_resumes_without_losing_a_round(tmp_path: Path,
                                                                                      sshd: Sshd) -> None:
    """A PTS run's rounds go through the tunnels too (one fio client per round, each host's job by its socket).
    kill -9 of it while round 2 runs: no fio stays (the local client, the remote servers and their jobs), round 1
    is kept as stored, resume runs round 2 again on both hosts."""
    from conftest import kill_when, start_pts
    from ptsbench.fio.lifetime import fio_pids
    from test_pts_hosts import rounds_of

    folder = tmp_path / "data"
    folder.mkdir()
    run_dir = tmp_path / "run"
    before, tunnels_before = sshd.remote_folders(), sshd.tunnel_folders()
    rounds = run_dir / "pts/iops/rounds"
    process = start_pts(run_dir, str(folder), "--hosts", sshd.spec(), "--profile", "demo", "--spec", "1.1",
                        "--tests", "iops", "--block-sizes", "iops=4k", "--mixes", "iops=0", "--size", "16M",
                        "--round-time", "1", "--max-rounds", "2")
    try:
        kill_when(process, lambda: (rounds / "002" / "command.txt").exists() and len(
            server_pids(sshd.remote_folders() - before)) >= 4, delay_s=0.3)  # both servers run round 2's job
    finally:
        if process.poll() is None:
            kill_tree(process.pid)
            process.wait()
    kept = (rounds / "001" / "round.json").read_bytes()
    assert not (rounds / "002" / "round.json").exists(), "the premise: killed before round 2 was stored"
    left = _after_kill(sshd, sshd.remote_folders() - before, tunnels_before, process.pid)
    assert wait_for(lambda: not fio_pids(run_dir))  # the local fio client ended with ptsbench

    resumed = run_cli("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert [record["round"] for record in rounds_of(run_dir)] == [1, 2]
    assert (rounds / "001" / "round.json").read_bytes() == kept  # not run again
    for record in rounds_of(run_dir):
        assert sorted(record["hosts"]) == ["127.0.0.2", "127.0.0.3"]
        assert all(host["cells"]["rnd 4k 0/100"]["write"]["io_bytes"] > 0 for host in record["hosts"].values())
        command = (rounds / f"{record['round']:03d}" / "command.txt").read_text()
        assert "--client=sock:127.0.0.2" in command and "--client=sock:127.0.0.3" in command
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "done"
    assert [(h["host"], h["transport"]) for h in manifest["hosts"]] == [("127.0.0.2", "ssh"), ("127.0.0.3", "ssh")]
    assert not fio_pids(run_dir)
    _after_resume(sshd, left, before, tunnels_before)


def test_run_on_hosts_killed_mid_case_resumes_its_unfinished_cases(tmp_path: Path, sshd: Sshd,
                                                                   write_job) -> None:  # type: ignore[no-untyped-def]
    """kill -9 of `run --hosts` while its second case runs on both SSH hosts: its ssh's input ends, so the remote
    script stops fio's server and its job; nothing of fio stays, the first case is kept as stored, resume runs the
    second again and the third."""
    from conftest import kill_when, start_cli
    from ptsbench.fio.lifetime import fio_pids

    jobs = [write_job(f"{name}.fio", f"[{name}]\nioengine=null\nsize=64m\nrw=randread\nbs=4k\ntime_based\n"
                                     f"runtime={runtime}\n") for name, runtime in (("a", "300ms"), ("b", "2s"),
                                                                                  ("c", "300ms"))]
    run_dir = tmp_path / "run"
    before, tunnels_before = sshd.remote_folders(), sshd.tunnel_folders()
    process = start_cli("run", *map(str, jobs), "--hosts", sshd.spec(), "--out", str(run_dir))
    try:
        kill_when(process, lambda: (run_dir / "cases" / "002-b" / "command.txt").exists() and len(
            server_pids(sshd.remote_folders() - before)) >= 4, delay_s=0.3)
    finally:
        if process.poll() is None:
            kill_tree(process.pid)
            process.wait()
    kept = (run_dir / "cases" / "001-a" / "result.json").read_bytes()
    assert not (run_dir / "cases" / "002-b" / "result.json").exists()
    left = _after_kill(sshd, sshd.remote_folders() - before, tunnels_before, process.pid)
    assert wait_for(lambda: not fio_pids(run_dir))

    resumed = run_cli("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert "1 of 3 case(s) finished and kept" in resumed.stderr
    assert (run_dir / "cases" / "001-a" / "result.json").read_bytes() == kept
    for name in ("002-b", "003-c"):
        record = json.loads((run_dir / "cases" / name / "result.json").read_text())
        assert record["status"] == "ok" and {h["host"]: h["status"] for h in record["hosts"]} == {
            "127.0.0.2": "ok", "127.0.0.3": "ok"}
    assert not fio_pids(run_dir)
    _after_resume(sshd, left, before, tunnels_before)
