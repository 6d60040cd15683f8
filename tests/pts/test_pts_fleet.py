"""A fleet run (`ptsbench pts DEV1 DEV2 ... --destructive`) on four real loop devices: every target runs the whole
PTS at once and on its own; one whose device starts failing its IO during a round is recorded as failed with fio's
reason while the other three finish, and `resume` continues it once the device is back, the fleet's report and
`show` opening with the fleet table; kill -9 of the whole run and `resume` lose no finished round. The device fault
is real: the kernel's read-only flag of the loop device is set under fio (`blockdev --setro`, what a drive at the
end of its life does), so every write fails from then on, and cleared to restore it. (This kernel has no device
mapper for an error target; cutting a loop device's size limit under fio fails its writes with libaio but not with
io_uring, which the PTS chooses.)"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import attached_loop, kill_when, run_cli
from ptsbench.fio.lifetime import fio_pids
from test_present import first_screen
from test_report_browser import Browser, shared_browser

LOOP_BYTES = 16 * 1024 * 1024
SMALL = ["--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "0.3", "--max-rounds", "3",
         "--block-sizes", "iops=4k", "--mixes", "iops=0"]


def set_read_only(device: str, read_only: bool) -> None:
    """The kernel's read-only flag of the device (BLKROSET, as a drive at the end of its life turns read-only): set
    under fio, it fails every write from then on with EPERM."""
    subprocess.run(["blockdev", "--setro" if read_only else "--setrw", device], check=True)


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[list[str]]:
    with contextlib.ExitStack() as stack:
        devices = []
        for index in range(4):
            folder = tmp_path / f"fleet-image-{index}"
            folder.mkdir()
            devices.append(stack.enter_context(attached_loop(str(folder), LOOP_BYTES)))
        yield devices


def start_fleet(run_dir: Path, *args: str) -> subprocess.Popen[bytes]:
    """The fleet in the background, stderr kept in run_dir's sibling fleet.err."""
    errors = open(run_dir.parent / "fleet.err", "ab")  # noqa: SIM115 - the child holds it
    try:
        return subprocess.Popen([sys.executable, "-m", "ptsbench", *args], stdout=subprocess.DEVNULL, stderr=errors,
                                start_new_session=True)
    finally:
        errors.close()


def part(run_dir: Path, device: str) -> Path:
    return run_dir / "devices" / Path(device).name


def manifest(folder: Path) -> dict[str, object]:
    result: dict[str, object] = json.loads((folder / "manifest.json").read_text())
    return result


def stored(run_dir: Path) -> dict[str, bytes]:
    """Every finished-result file of every part: a resume must leave each as it was."""
    names = ("round.json", "phase.json", "result.json")
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in (run_dir / "devices").rglob("*.json")
            if p.name in names}


def check_complete(run_dir: Path, devices: list[str]) -> None:
    """Every part done, with rounds 1..N of its phase stored and nothing of fio left."""
    assert manifest(run_dir)["status"] == "done"
    for device in devices:
        folder = part(run_dir, device)
        assert manifest(folder)["status"] == "done", device
        phase = json.loads((folder / "pts" / "iops" / "phase.json").read_text())
        rounds = folder / "pts" / "iops" / "rounds"
        numbers = sorted(int(p.name) for p in rounds.iterdir() if p.name.isdigit())
        assert numbers == list(range(1, phase["rounds"] + 1)) == [1, 2, 3]
        assert all((rounds / f"{n:03d}" / "round.json").exists() for n in numbers)
    assert fio_pids(run_dir) == []


def test_a_failing_device_is_recorded_the_others_finish_and_resume_continues_it(loops: list[str], tmp_path: Path,
                                                                               browser: Browser) -> None:
    run_dir = tmp_path / "run"
    failing = loops[3]
    process = start_fleet(run_dir, "pts", *loops, "--destructive", "--out", str(run_dir), *SMALL)
    first_round = part(run_dir, failing) / "pts" / "iops" / "rounds" / "001" / "job.fio"
    deadline = time.monotonic() + 120
    while not first_round.exists():
        assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "fleet.err").read_text()
        time.sleep(0.01)
    set_read_only(failing, True)
    try:
        assert process.wait(timeout=300) != 0
    finally:
        set_read_only(failing, False)
    said = (tmp_path / "fleet.err").read_text()
    assert f"1 of 4 targets failed: {Path(failing).name}: IOPS round" in said, said
    for device in loops[:3]:
        assert manifest(part(run_dir, device))["status"] == "done", device
    failed = manifest(part(run_dir, failing))
    assert failed["status"] == "failed" and "Operation not permitted" in str(failed["failure"]), failed
    fleet = manifest(run_dir)
    assert fleet["status"] == "failed" and Path(failing).name in fleet["failures"]  # type: ignore[operator]
    shown = run_cli("show", str(run_dir))
    assert shown.returncode == 0 and f"{Path(failing).name}" in shown.stdout and "failed: IOPS round" in \
        shown.stdout, shown.stdout
    before = stored(run_dir)
    resumed = run_cli("resume", str(run_dir), "--destructive")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming {run_dir}: {Path(failing).name}" in resumed.stderr  # only the part not done runs again
    after = stored(run_dir)
    assert before.items() <= after.items()
    check_complete(run_dir, loops)
    assert all((part(run_dir, device) / "report" / "index.html").is_file() for device in loops)
    html = (run_dir / "report" / "index.html").read_text()  # the fleet's own report opens with its table
    assert html.index("Fleet: every device side by side") < html.index("Devices of the fleet")
    seen = first_screen(browser, run_dir / "report" / "index.html", tmp_path / "first-screen.png")["seen"]
    assert all(Path(device).name in seen for device in loops) and "median" in seen, seen[:60]  # in chromium
    shown = run_cli("show", str(run_dir)).stdout
    assert shown.index("every device side by side") < shown.index(f"== {Path(loops[0]).name} (")
    assert all(f"\n{Path(device).name} " in shown for device in loops) and "median" in shown, shown
    one = run_cli("show", str(part(run_dir, failing)))  # one part alone, as any PTS run
    assert one.returncode == 0 and failing in one.stdout


def test_kill_of_the_whole_fleet_and_resume_lose_no_finished_round(loops: list[str], tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    rounds = [part(run_dir, device) / "pts" / "iops" / "rounds" for device in loops]

    def some_rounds_stored() -> bool:
        return sum((folder / "002" / "round.json").exists() for folder in rounds) >= 2

    kill_when(start_fleet(run_dir, "pts", *loops, "--destructive", "--out", str(run_dir), *SMALL),
              some_rounds_stored)
    first = stored(run_dir)
    assert sum(name.endswith("002/round.json") for name in first) >= 2
    assert not all((folder.parent / "phase.json").exists() for folder in rounds)
    resumed = run_cli("resume", str(run_dir), "--destructive")
    assert resumed.returncode == 0, resumed.stderr
    assert first.items() <= stored(run_dir).items()
    check_complete(run_dir, loops)


def test_the_same_device_twice_and_a_dry_run_of_all(loops: list[str], tmp_path: Path) -> None:
    link = tmp_path / "again"
    link.symlink_to(loops[0])
    twice = run_cli("pts", loops[0], loops[1], str(link), "--destructive", "--out", str(tmp_path / "run"), *SMALL)
    assert twice.returncode != 0 and f"{loops[0]} and {link} are the same device" in twice.stderr, twice.stderr
    assert not (tmp_path / "run").exists()
    dry = run_cli("pts", *loops, "--dry-run", *SMALL)
    assert dry.returncode != 0  # no --destructive: each device's plan, then the refusal
    for device in loops:
        assert f"== {Path(device).name}: {device} ==" in dry.stdout
    assert "# Fleet worst case:" in dry.stdout and "4 of 4 targets refused" in dry.stdout, dry.stdout
    assert run_cli("pts", *loops, "--dry-run", "--destructive", *SMALL).stdout.endswith(
        "# guard: the fleet would start\n")


def test_a_loop_device_and_what_backs_it_are_one_target(loops: list[str], tmp_path: Path) -> None:
    """A loop device and its backing file, and a loop device and the loop device it is backed by, are the same bytes:
    a fleet naming both is refused before anything is written, and every device and file stays byte-identical."""
    import hashlib

    image = tmp_path / "fleet-image-0" / "loop.img"
    stacked = subprocess.run(["losetup", "--find", "--show", loops[1]], capture_output=True, text=True, check=True)
    upper = stacked.stdout.strip()
    try:
        for device in loops:
            with open(device, "r+b") as handle:
                handle.write(Path(device).name.encode() * 1000)
        before = [hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in [*loops, str(image)]]
        for pair in ([loops[0], str(image)], [loops[1], upper], [upper, loops[1]]):
            done = run_cli("pts", loops[2], *pair, "--destructive", "--out", str(tmp_path / "run"), *SMALL)
            assert done.returncode != 0 and f"{pair[0]} and {pair[1]} are the same device" in done.stderr, \
                done.stderr
            assert not (tmp_path / "run").exists()
        assert [hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in [*loops, str(image)]] == before
    finally:
        subprocess.run(["losetup", "-d", upper], check=False)


def test_a_folder_and_the_test_file_made_in_it_are_one_target(tmp_path: Path) -> None:
    """A folder target is tested through the file ptsbench makes in it: naming that file as well is one target
    twice, refused before a run directory or a file is made."""
    folder = tmp_path / "folder"
    folder.mkdir()
    done = run_cli("pts", str(folder), str(folder / "ptsbench-testfile.dat"), "--size", "16M", "--out",
                   str(tmp_path / "run"), *SMALL)
    assert done.returncode != 0 and "ptsbench-testfile.dat are the same device or file" in done.stderr, done.stderr
    assert not (tmp_path / "run").exists() and not any(folder.iterdir())


def test_ctrl_c_stops_every_target_and_resume_finishes_them(tmp_path: Path) -> None:
    """Ctrl-C as a terminal sends it (SIGINT to ptsbench and every fio of its process group): every part is stored
    as interrupted (or done, when it had just finished), not failed nor left running, no fio is left, and resume
    finishes them all, with the reports the run was started for (--images svg)."""
    run_dir = tmp_path / "run"
    files = [str(tmp_path / name) for name in ("a.dat", "b.dat")]
    process = start_fleet(run_dir, "pts", *files, "--size", "16M", "--out", str(run_dir), *SMALL, "--images", "svg")
    second = part(run_dir, files[1]) / "pts" / "iops" / "rounds" / "002" / "job.fio"
    deadline = time.monotonic() + 120
    while not second.exists():
        assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "fleet.err").read_text()
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(timeout=120) == 130
    statuses = {str(manifest(part(run_dir, path))["status"]) for path in files}
    assert statuses <= {"interrupted", "done"}  # none failed of it, none left running
    # a fio started ahead waits at its gate deaf to SIGINT: the watcher (fio/lifetime.py) stops it within its 5 s
    # once ptsbench is gone (120 s: a busy host's)
    ended = time.monotonic() + 120
    while fio_pids(run_dir) and time.monotonic() < ended:
        time.sleep(0.1)
    assert fio_pids(run_dir) == []
    assert manifest(run_dir)["status"] == "interrupted"
    resumed = run_cli("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert all(manifest(part(run_dir, path))["status"] == "done" for path in files)
    for folder in [run_dir, *(part(run_dir, path) for path in files)]:  # each device's report and the fleet's
        images = [path.suffix for path in (folder / "report" / "figures").iterdir()]
        assert images and set(images) == {".svg"}, folder


def test_resume_writes_the_report_of_a_device_done_before_the_fleet_was_stopped(tmp_path: Path) -> None:
    """A device whose PTS ended just before Ctrl-C stopped the fleet has no report yet (the fleet's end writes the
    devices' reports): the resume, which runs only the devices not done, writes it too."""
    from ptsbench.store import RunStore

    run_dir = tmp_path / "run"
    files = [str(tmp_path / name) for name in ("a.dat", "b.dat")]
    finished = run_cli("pts", *files, "--size", "16M", "--out", str(run_dir), *SMALL)
    assert finished.returncode == 0, finished.stderr
    shutil.rmtree(part(run_dir, files[0]) / "report")  # as the stop left it: a.dat done, its report not yet written
    RunStore.open(run_dir).update_manifest(status="interrupted")
    resumed = run_cli("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert (part(run_dir, files[0]) / "report" / "index.html").is_file()
    assert manifest(run_dir)["status"] == "done"
