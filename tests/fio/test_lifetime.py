"""fio never outlives ptsbench (fio/lifetime.py): kill -9 of ptsbench mid-preconditioning of a PTS run on a loop
device, mid-round while the next cell waits at its gate, and mid-case of `run` (also of its whole process group).
Every fio process goes (before, fio's job processes wrote on to the end of their job), the device is not written
afterwards, and the PTS run still resumes. Real fio on real loop devices (root). In the preconditioning case fio
3.33's orphaned job was seen to stall rather than write on; the `run` and chained-round cases show the writes."""

import contextlib
import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import LOOP_SIZE_BYTES, kill_when, run_cli, start_cli, start_pts
from ptsbench.fio import lifetime, watcher
from ptsbench.fio.lifetime import fio_pids, kill_fio_processes
from ptsbench.fio.watcher import fio_pids_of

SMALL = ["--profile", "demo", "--spec", "1.1", "--max-rounds", "1", "--tests", "iops", "--mixes", "iops=0"]
FIO_GONE_LIMIT_S = 60.0  # generous: fio stops within a second of ptsbench's death
QUIET_WINDOW_S = 3.0  # how long the device is watched for writes once fio is gone


def written_sectors(device: str) -> int:
    """Sectors written to a block device since it appeared (the kernel's count, /sys/block/X/stat field 7)."""
    return int(Path(f"/sys/block/{Path(device).name}/stat").read_text().split()[6])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@contextlib.contextmanager
def fio_killed_at_end(folder: Path) -> Iterator[None]:
    """Kill any fio of `folder` when the test ends, so a failing test leaves no fio writing to the loop device."""
    try:
        yield
    finally:
        kill_fio_processes(folder)


def wait_until_no_fio(folder: Path) -> None:
    deadline = time.monotonic() + FIO_GONE_LIMIT_S
    while pids := fio_pids(folder):
        assert time.monotonic() < deadline, f"fio outlived ptsbench by {FIO_GONE_LIMIT_S:.0f} s: pids {pids}"
        time.sleep(0.05)


def assert_not_written_afterwards(device: str, image: Path) -> None:
    """Once fio is gone, neither the device's write count nor its image changes over QUIET_WINDOW_S."""
    sectors, before = written_sectors(device), digest(image)
    time.sleep(QUIET_WINDOW_S)
    assert written_sectors(device) == sectors and digest(image) == before, "the device was written after fio went"


def writing(device: str, since: int, folder: Path) -> bool:
    """fio of `folder` runs and the device has been written since `since` sectors."""
    return bool(fio_pids(folder)) and written_sectors(device) > since


def test_kill_mid_preconditioning_stops_fio_and_the_run_resumes(tmp_path: Path, loop_device: str) -> None:
    run_dir, image = tmp_path / "run", tmp_path / "loop.img"
    args = [loop_device, "--destructive", *SMALL, "--round-time", "0.2", "--precondition-multiple", "200"]
    folder = run_dir / "pts" / "iops" / "precondition"
    start_sectors = written_sectors(loop_device)
    with fio_killed_at_end(run_dir):
        kill_when(start_pts(run_dir, *args), lambda: writing(loop_device, start_sectors, folder))
        wait_until_no_fio(run_dir)
        planned_bytes = json.loads((run_dir / "plan.json").read_text())["phases"][0]["precondition_bytes"]
        assert planned_bytes == 200 * LOOP_SIZE_BYTES
        written_bytes = (written_sectors(loop_device) - start_sectors) * 512
        assert 0 < written_bytes < planned_bytes / 2, "fio ran on to the end of its preconditioning"
        assert_not_written_afterwards(loop_device, image)
    assert not (folder / "result.json").exists()
    done = run_cli("resume", str(run_dir), "--destructive")
    assert done.returncode == 0, done.stderr
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "done"
    result = json.loads((folder / "result.json").read_text())
    assert result["written_bytes"] == result["planned_bytes"] == planned_bytes
    assert fio_pids(run_dir) == []


def test_kill_mid_round_stops_the_running_cell_and_the_one_at_its_gate(tmp_path: Path, loop_device: str) -> None:
    """A chained round: the first cell writes for 100 s while the second waits at its gate in an fio of its own."""
    run_dir, image = tmp_path / "run", tmp_path / "loop.img"
    args = [loop_device, "--destructive", *SMALL, "--round-time", "100", "--block-sizes", "iops=8k,4k"]
    round_dir = run_dir / "pts" / "iops" / "rounds" / "001"
    with fio_killed_at_end(run_dir):
        process = start_pts(run_dir, *args)
        start_sectors: list[int] = []

        def both_cells_started() -> bool:  # two fio main processes and their jobs: each cell uses 2 threads
            if not start_sectors and (round_dir / "job.fio").exists():
                start_sectors.append(written_sectors(loop_device))
            return bool(start_sectors) and len(fio_pids(round_dir)) >= 4 and \
                written_sectors(loop_device) > start_sectors[0]

        kill_when(process, both_cells_started)
        wait_until_no_fio(run_dir)
        assert_not_written_afterwards(loop_device, image)
    assert not (round_dir / "round.json").exists()


@pytest.mark.parametrize("group", [False, True], ids=["ptsbench", "its-process-group"])
def test_kill_mid_case_of_run_stops_fio(tmp_path: Path, loop_device: str, group: bool) -> None:
    """kill -9 of ptsbench alone (fio gets its parent-death signal), and of its whole process group: fio's main
    process dies with it, and its job process (in a session of its own) is stopped by the watcher."""
    image, out = tmp_path / "loop.img", tmp_path / "out"
    job = tmp_path / "write.fio"
    job.write_text("[write]\nrw=randwrite\nbs=4k\ndirect=1\nioengine=psync\ntime_based=1\nruntime=600\n")
    start_sectors = written_sectors(loop_device)
    with fio_killed_at_end(out):
        process = start_cli("run", str(job), "--target", loop_device, "--destructive", "--out", str(out))
        kill_when(process, lambda: writing(loop_device, start_sectors, out), group=group)
        wait_until_no_fio(out)
        assert_not_written_afterwards(loop_device, image)
    assert os.path.isdir(out)


def processes_naming(folder: Path) -> list[int]:
    """Every process whose arguments name something under `folder`, whatever its program is called."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and str(folder).encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def described(pid: int) -> str:
    """A process as a failure message needs it: its arguments, state, parent and session."""
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        arguments = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        return f"pid {pid} state {stat[0]} parent {stat[1]} session {stat[3]}: {arguments}"
    return f"pid {pid} (gone)"


def watchers() -> list[str]:
    """The fio watchers (python -I -S .../fio/watcher.py) alive now."""
    return [described(pid) for pid in processes_naming(Path(watcher.__file__))]


def job_process_runs(folder: Path, session: int) -> bool:
    """A process naming `folder` runs outside `session`: fio's job process (fio calls setsid for it)."""
    for pid in processes_naming(folder):
        with contextlib.suppress(OSError):
            if os.getsid(pid) != session:
                return True
    return False


def sessions(pids: list[int]) -> set[int]:
    """The sessions of the processes `pids` that still run (fio forks short-lived ones: gone by the time they are
    asked)."""
    found = set()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            found.add(os.getsid(pid))
    return found


def test_kill_of_the_process_group_stops_an_fio_of_another_name(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """PTSBENCH_FIO names an fio called otherwise (fio-copy): after a kill -9 of ptsbench's process group the watcher
    still stops fio's job process (it looked for programs called fio only, and this one ran to its end)."""
    program = tmp_path / "bin" / "fio-copy"
    program.parent.mkdir()
    program.symlink_to(shutil.which("fio") or "fio")
    monkeypatch.setenv("PTSBENCH_FIO", str(program))
    job, out = tmp_path / "null.fio", tmp_path / "out"
    job.write_text("[null]\nioengine=null\nsize=1m\ntime_based=1\nruntime=600\nrate_iops=100\n")
    try:
        process = start_cli("run", str(job), "--out", str(out))
        kill_when(process, lambda: job_process_runs(out, process.pid), group=True)
        deadline = time.monotonic() + FIO_GONE_LIMIT_S
        while pids := processes_naming(out):
            assert time.monotonic() < deadline, (f"fio outlived ptsbench by {FIO_GONE_LIMIT_S:.0f} s: "
                                                 f"{[described(pid) for pid in pids]}; watchers: {watchers()}")
            time.sleep(0.05)
    finally:
        for pid in processes_naming(out):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("group", [False, True], ids=["ptsbench", "its-process-group"])
def test_kill_of_ptsbench_server_stops_its_fio_server_and_the_jobs_it_runs(tmp_path: Path, group: bool) -> None:
    """`ptsbench server` in the foreground, a client's job running on it: kill -9 of ptsbench (its fio server got
    SIGTERM but served on) or of its process group (the server's job process, in a session of its own, wrote on)
    leaves no process of that fio server."""
    socket_path = tmp_path / "s" / "fio.sock"
    option = f"--server=sock:{socket_path}"
    job = tmp_path / "job.fio"
    job.write_text("[job]\nioengine=null\nsize=1g\nrw=write\ntime_based=1\nruntime=600\nrate_iops=100\n")
    server = start_cli("server", "--socket", str(socket_path))
    client = None
    try:
        deadline = time.monotonic() + FIO_GONE_LIMIT_S
        while not socket_path.is_socket():
            assert server.poll() is None and time.monotonic() < deadline, "the server never listened"
            time.sleep(0.05)
        client = subprocess.Popen(["fio", f"--client=sock:{socket_path}", str(job)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        # its main process, the client's connection and the job process, in a session of its own
        kill_when(server, lambda: len(sessions(lifetime.server_pids(option))) >= 2, group=group)
        while pids := lifetime.server_pids(option):
            assert time.monotonic() < deadline, f"the fio server outlived ptsbench: pids {pids}"
            time.sleep(0.05)
    finally:
        for pid in lifetime.server_pids(option):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for process in (server, client):
            if process is not None:
                process.kill()
                process.wait()


SIGNAL_LIMIT_S = 60.0  # generous: the kernel signals the child as the thread ends


def signal_bits(pid: int, field: str) -> int:
    """A signal mask of /proc/PID/status (SigIgn, SigCgt, ...)."""
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith(field))
    return int(line.split()[1], 16)


@pytest.fixture(params=["launcher", "preexec_fn"])
def binding(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of binding a child: the compiled launcher (built by every install with a C compiler, so its
    absence here is a failure) and the fork with a preexec_fn it replaces where it was not built."""
    if request.param == "launcher":
        assert lifetime.launcher() is not None, "the launcher (src/ptsbench/fio/_bound_exec.c) was not built"
        monkeypatch.delenv(lifetime.START_ENV, raising=False)
    else:
        monkeypatch.setenv(lifetime.START_ENV, "fork")
    return str(request.param)


def test_a_bound_child_dies_with_the_thread_that_started_it(binding: str) -> None:
    """The parent-death signal, SIGPIPE ignored and SIGINT at its default (though this process ignores SIGINT at
    the time, as a fleet does while it stops its parts), through the program's exec; SIGTERM when the starting
    thread ends."""
    # no preexec_fn lets Python start the launcher with vfork (a fork copies this process's page tables)
    assert (lifetime.bound_command(["sleep", "600"])[1] is None) == (binding == "launcher")
    started: list[subprocess.Popen[bytes]] = []
    checked = threading.Event()

    def starter() -> None:
        started.append(lifetime.start_bound(["sleep", "600"]))
        checked.wait(SIGNAL_LIMIT_S)

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        thread = threading.Thread(target=starter)
        thread.start()
        deadline = time.monotonic() + SIGNAL_LIMIT_S
        while not started or Path(f"/proc/{started[0].pid}/comm").read_text().strip() != "sleep":
            assert time.monotonic() < deadline, "the child never ran sleep"
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, previous)
    child = started[0]
    try:
        ignored = signal_bits(child.pid, "SigIgn")
        assert ignored & 1 << (signal.SIGPIPE - 1)
        assert not ignored & 1 << (signal.SIGINT - 1)
        assert child.poll() is None
        checked.set()
        thread.join()
        assert child.wait(SIGNAL_LIMIT_S) == -signal.SIGTERM
    finally:
        child.kill()
        child.wait()


def test_the_launcher_does_not_start_a_program_whose_ptsbench_is_gone(tmp_path: Path) -> None:
    """ptsbench died before the launcher set its death signal: the parent it was given is not its parent any more,
    so it exits 128 + the signal without running the program."""
    program = lifetime.launcher()
    assert program is not None
    marker, touch = tmp_path / "ran", shutil.which("touch") or "touch"
    done = subprocess.run([program, str(os.getppid()), str(int(signal.SIGTERM)), touch, str(marker)], check=False)
    assert done.returncode == 128 + signal.SIGTERM
    assert not marker.exists()
    done = subprocess.run([program, str(os.getpid()), str(int(signal.SIGTERM)), touch, str(marker)], check=False)
    assert done.returncode == 0 and marker.exists()


def test_a_bound_program_that_cannot_run_raises_as_subprocess_does(binding: str, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        lifetime.run_bound(["ptsbench-no-such-program"])
    text_file = tmp_path / "not-a-program"
    text_file.write_text("x")
    with pytest.raises(PermissionError):
        lifetime.run_bound([str(text_file)])
    assert lifetime.run_bound(["true"]).returncode == 0


def test_a_bound_program_is_the_file_found_and_never_run_through_a_shell(binding: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An executable without a #! line is refused, not run by /bin/sh (the launcher's execvp did that); a relative
    path runs the file found from this process's folder, also when the child starts in another (`cwd=`)."""
    marker = tmp_path / "ran"
    script = tmp_path / "fio"
    script.write_text(f"touch {marker}\n")
    script.chmod(0o755)
    try:
        done = lifetime.run_bound([str(script)], capture_output=True)
        assert done.returncode == 127 and b"Exec format error" in done.stderr
    except OSError as error:  # subprocess's own exec (the fork way) raises
        assert error.errno == errno.ENOEXEC
    assert not marker.exists()
    elsewhere = tmp_path / "elsewhere"
    for folder, text in ((tmp_path, "here"), (elsewhere, "elsewhere")):
        program = folder / "bin" / "say"
        program.parent.mkdir(parents=True)
        program.write_text(f"#!/bin/sh\necho {text}\n")
        program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert lifetime.run_bound(["bin/say"], capture_output=True, text=True, cwd=elsewhere).stdout == "here\n"


def test_one_look_finds_the_fio_of_every_marker(tmp_path: Path) -> None:
    """The watcher's look through /proc for all its markers at once (fio/watcher.py fio_pids_of) finds each marker's
    fio and no other: job paths (under a folder given, too) and a server's option alike; no markers, no fio. A folder
    whose name begins with another's (a1 beside a), or a path that goes up out of it (a/../c), is not under it: a run
    in a/ that stops its orphans never stops theirs (CI: a PTS run in /tmp/demo stopped one in /tmp/demo15)."""
    folders = [tmp_path / "a", tmp_path / "b", tmp_path / "c", tmp_path / "a1"]
    given = [folders[0] / "job.fio", folders[1] / "job.fio", folders[0] / ".." / "c" / "job.fio",
             folders[3] / "job.fio"]
    started = []
    try:
        for folder, job in zip(folders, given, strict=True):
            folder.mkdir()
            (folder / "job.fio").write_text("[x]\nioengine=null\nsize=1g\ntime_based\nruntime=60\nthread\n"
                                            "rate_iops=100\n")
            started.append(subprocess.Popen(["fio", "--output-format=json", str(job)],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 60
        while len(fio_pids(tmp_path)) < 4:  # each fio is there (its job a thread of it)
            assert time.monotonic() < deadline, "the fio processes did not start"
            time.sleep(0.05)
        a_pids, b_pids, c_pids, a1_pids = (set(fio_pids(folder)) for folder in folders)
        assert started[0].pid in a_pids and started[1].pid in b_pids and not a_pids & b_pids
        assert started[2].pid in c_pids and started[3].pid in a1_pids and not a_pids & (c_pids | a1_pids)
        both = set(fio_pids_of([str(folders[0] / "job.fio"), str(folders[1])]))
        assert started[0].pid in both and started[1].pid in both and not both & c_pids
        assert fio_pids_of([]) == [] and fio_pids_of(["--server=sock:/nowhere"]) == []
    finally:
        kill_fio_processes(tmp_path)
        for process in started:
            process.wait()
        wait_until_no_fio(tmp_path)
