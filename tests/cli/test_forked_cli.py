"""The suite's way of starting ptsbench (tests/forked_cli.py: forked from a server) gives what a fresh
`python -m ptsbench` gives: the same exit code, stdout and stderr; the caller's folder, environment and umask; and a
call past its timeout is killed, as subprocess.run kills it."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forked_cli


def fresh(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ptsbench", *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ), timeout=120)


@pytest.mark.parametrize("args", [["--version"], [], ["run", "--bogus"], ["run", "/nonexistent/job.fio"],
                                  ["show", "/nonexistent"],
                                  ["pts", "--profile", "demo", "--tests", "iops", "--out", "p", "--dry-run"]],
                         ids=["version", "help", "bad-option", "no-job", "no-run", "pts-dry-run"])
def test_the_same_as_a_fresh_interpreter(args: list[str], tmp_path: Path) -> None:
    forked = forked_cli.run(args, tmp_path, dict(os.environ), 120)
    started = fresh(args, tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (started.returncode, started.stdout, started.stderr)
    assert forked.args == started.args


def test_folder_environment_and_umask_are_the_callers(tmp_path: Path) -> None:
    """A relative job and --out resolve in the caller's folder, a ${VAR} of the job comes from the caller's
    environment, and the files made follow the caller's umask."""
    (tmp_path / "job.fio").write_text("[null]\nioengine=null\nsize=${JOBSIZE}\nrw=read\nruntime=0.2\n")
    forked_cli.run(["--version"], tmp_path, dict(os.environ), 120)  # the server started, with the usual umask
    before = os.umask(0o077)
    try:
        done = forked_cli.run(["run", "job.fio", "--out", "r"], tmp_path, {**os.environ, "JOBSIZE": "4m"}, 120)
    finally:
        os.umask(before)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r").stat().st_mode & 0o077 == 0  # the run's folder: made by mkdir, under the umask
    document = json.loads((tmp_path / "r" / "cases" / "001-job" / "fio.json").read_text())
    assert document["jobs"][0]["read"]["io_bytes"] == 4 << 20  # fio read ${JOBSIZE} from the caller's environment


def test_a_change_of_this_process_s_own_environment_starts_a_new_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that runs ptsbench's main() in-process sets OPENBLAS_NUM_THREADS in the test process's own environment:
    the calls after it are forked from a new server started with it (they once each started a fresh interpreter for
    the rest of that pytest worker's run), while a key given to one call only runs that call afresh."""
    forked_cli.run(["--version"], None, dict(os.environ), 120)
    first = forked_cli._server["process"]
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")  # a value no server started with
    before = forked_cli.cpu_s()
    done = forked_cli.run(["--version"], None, dict(os.environ), 120)
    assert done.returncode == 0 and done.stdout.startswith("ptsbench, version")
    assert forked_cli._server["process"] is not first and first.poll() is not None  # replaced, the old one stopped
    assert forked_cli.cpu_s() > before  # forked: the server's helper reported its CPU
    server = forked_cli._server["process"]
    before = forked_cli.cpu_s()
    assert forked_cli.run(["--version"], None, {**os.environ, "PYTHONHASHSEED": "7"}, 120).returncode == 0
    assert forked_cli._server["process"] is server and forked_cli.cpu_s() == before  # that call ran afresh


def test_a_call_past_its_timeout_is_killed(tmp_path: Path) -> None:
    (tmp_path / "long.fio").write_text("[long]\nioengine=null\nsize=1m\nrw=read\ntime_based\nruntime=120\n"
                                       "rate_iops=100\n")
    with pytest.raises(subprocess.TimeoutExpired):
        forked_cli.run(["run", str(tmp_path / "long.fio"), "--out", str(tmp_path / "r")], None, dict(os.environ), 3)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _fio_of(tmp_path):
        time.sleep(0.2)
    assert not _fio_of(tmp_path)  # ptsbench was killed, and its fio went with it (its parent-death signal)


def _fio_of(folder: Path) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
        except OSError:
            continue
        if str(folder).encode() in command and b"fio" in command.split(b"\0")[0]:
            found.append(entry.name)
    return found
