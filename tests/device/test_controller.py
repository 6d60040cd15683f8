"""One controller, many runs (issue 39): the write cache of an NVMe controller is one resource. Runs on sibling
namespaces share it under one count of holders, the last one out puts back what was there before the first, a run
wanting it the other way is refused naming the holder, and a holder killed with SIGKILL neither wedges the record
nor loses the original. The holders are real processes (flock, /proc start times, SIGKILL); the controller is the
stand-in nvme of tests/fakebin (its feature 6 lives in a state file), as no kernel device lets a test switch its
write cache; the device lab checks the same on QEMU's NVMe controller with two namespaces."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import attached_loop
from ptsbench.device.controller import (
    CacheHold,
    check_write_cache_free,
    controller_dir,
    controller_of,
    hold_write_cache,
    release_write_cache,
)
from ptsbench.device.target import Target
from ptsbench.errors import UnsafeTargetError
from ptsbench.pts.engine import QuietReporter, run
from ptsbench.pts.settings import make_settings
from ptsbench.pts.start import RunStart, create_run, target_info

HOLDER = """
import sys
from pathlib import Path
from ptsbench.device.controller import controller_of, hold_write_cache, release_write_cache
from ptsbench.device.target import Target
controller, wanted, run_dir = sys.argv[1], sys.argv[2] == "on", sys.argv[3]
target = Target(controller + "n1", "block", 1 << 20, controller + "n1")
facts = {"transport": "nvme", "nvme_controller": controller}
hold = hold_write_cache(target, facts, controller_of(target, facts), wanted, Path(run_dir))
print("held", flush=True)
sys.stdin.readline()
print(*release_write_cache(hold, target, facts), sep="|", flush=True)
"""


@pytest.fixture
def controller(fakebin: Any) -> Iterator[str]:
    """A controller of its own per test (its record in the real folder, as runs use it), the cache on at first."""
    name = f"/dev/nvme-test-{uuid.uuid4().hex[:12]}"
    yield name
    for suffix in (".json", ".lock"):
        (controller_dir() / f"nvme-{os.path.basename(name)}{suffix}").unlink(missing_ok=True)


def join(target: Target, facts: dict[str, object], wanted: bool, run_dir: Path) -> CacheHold:
    found = controller_of(target, facts)
    assert found is not None
    return hold_write_cache(target, facts, found, wanted, run_dir)


def cache_reads(_calls: Callable[[], list[list[str]]]) -> bool:
    """The stand-in controller's feature 6 now (its state file beside the call log)."""
    state = json.loads(Path(os.environ["FAKEBIN_LOG"] + ".state.json").read_text())
    return bool(state.get("write_cache", 1))


def namespace(controller: str, number: int) -> tuple[Target, dict[str, object]]:
    path = f"{controller}n{number}"
    return Target(path, "block", 1 << 20, path), {"transport": "nvme", "nvme_controller": controller}


def start_holder(controller: str, wanted: str, run_dir: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", HOLDER, controller, wanted, str(run_dir)], text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == "held\n"
    return child


def release_holder(child: subprocess.Popen[str]) -> list[str]:
    out, _ = child.communicate("\n", timeout=60)
    return out.strip().split("|")


def test_sibling_runs_share_the_cache_and_the_last_one_out_puts_it_back(controller: str, fakebin: Any,
                                                                        tmp_path: Path) -> None:
    """Run A turns the cache off; run B on the sibling namespace joins (off, as wanted, and still so); A ends first
    and leaves it off for B; B, the last one out, puts it back on, as it was before A."""
    first = start_holder(controller, "off", tmp_path / "runA")
    assert cache_reads(fakebin) is False
    target, facts = namespace(controller, 2)
    hold = join(target, facts, False, tmp_path / "runB")
    assert (hold.before, hold.after, hold.done, hold.original) == (False, False, True, True)
    assert [other["pid"] for other in hold.others] == [first.pid]
    assert release_holder(first)[:2] == ["left", "True"]
    assert cache_reads(fakebin) is False  # B still measures with the cache off
    action, done, message = release_write_cache(hold, target, facts)
    assert (action, done) == ("restored", True), message
    assert cache_reads(fakebin) is True
    assert not (controller_dir() / f"nvme-{os.path.basename(controller)}.json").exists()


def test_the_first_run_ending_last_puts_it_back(controller: str, fakebin: Any, tmp_path: Path) -> None:
    first = start_holder(controller, "off", tmp_path / "runA")
    target, facts = namespace(controller, 2)
    hold = join(target, facts, False, tmp_path / "runB")
    assert release_write_cache(hold, target, facts)[0] == "left"
    assert cache_reads(fakebin) is False
    assert release_holder(first)[:2] == ["restored", "True"]
    assert cache_reads(fakebin) is True


def test_a_run_wanting_the_other_setting_is_refused_naming_the_holder(controller: str, fakebin: Any,
                                                                      tmp_path: Path) -> None:
    first = start_holder(controller, "off", tmp_path / "runA")
    target, facts = namespace(controller, 2)
    with pytest.raises(UnsafeTargetError) as refused:
        join(target, facts, True, tmp_path / "runB")
    text = str(refused.value)
    assert "\n" not in text and f"pid {first.pid}" in text and str(tmp_path / "runA") in text, text
    assert "held off" in text and "wants it on" in text, text
    assert cache_reads(fakebin) is False  # untouched: A still measures with it off
    with pytest.raises(UnsafeTargetError, match=f"held off by another ptsbench run on {controller}n1 "):
        check_write_cache_free(target, facts, True)  # the check before a run directory, and the dry run's
    check_write_cache_free(target, facts, False)  # the same setting: it would join
    assert release_holder(first)[:2] == ["restored", "True"]
    assert cache_reads(fakebin) is True
    check_write_cache_free(target, facts, True)  # nobody holds it now


def test_a_killed_holder_neither_wedges_the_record_nor_loses_the_original(controller: str, fakebin: Any,
                                                                          tmp_path: Path) -> None:
    """A is killed with SIGKILL while it holds the cache off: a run wanting it on is not refused by the dead one,
    and the resume of A later still knows the cache was on before A (it reads off now) and puts that back."""
    first = start_holder(controller, "off", tmp_path / "runA")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)
    assert cache_reads(fakebin) is False
    target, facts = namespace(controller, 1)
    resumed = join(target, facts, False, tmp_path / "runA")
    assert (resumed.before, resumed.original, resumed.others) == (False, True, [])
    assert release_write_cache(resumed, target, facts)[:2] == ("restored", True)
    assert cache_reads(fakebin) is True


def test_a_run_after_a_killed_holder_wanting_the_other_setting_restores_the_first_original(
        controller: str, fakebin: Any, tmp_path: Path) -> None:
    first = start_holder(controller, "on", tmp_path / "runA")  # the cache was on: nothing to switch
    first.kill()  # and not reaped yet: a zombie, whose pid and start time are still in /proc, holds nothing
    while Path(f"/proc/{first.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
        time.sleep(0.01)
    target, facts = namespace(controller, 2)
    hold = join(target, facts, False, tmp_path / "runB")
    first.wait(timeout=60)
    assert (hold.before, hold.after, hold.original) == (True, False, True)
    assert release_write_cache(hold, target, facts)[:2] == ("restored", True)
    assert cache_reads(fakebin) is True


def test_no_controller_for_files_and_devices_whose_cache_is_not_set(tmp_path: Path) -> None:
    path = str(tmp_path / "x.dat")
    assert controller_of(Target(path, "file", 1, path), {"transport": "nvme", "nvme_controller": "/dev/nvme0"}) is None
    assert controller_of(Target("/dev/loop0", "block", 1, "/dev/loop0"), {"transport": "loop"}) is None


def test_each_round_reads_the_cache_again_and_a_change_is_a_deviation(tmp_path: Path, fakebin: Any,
                                                                      controller: str) -> None:
    """The PTS engine reads the cache at the end of every round into the round and the manifest: a round during
    which something turned it back on (here the stand-in controller's state, flipped as round 2 starts) reads on,
    and that is a deviation naming the round."""
    from ptsbench.device.target import resolve_target
    from ptsbench.fio.runner import probe_engine

    class FlipInRound2(QuietReporter):
        def round_started(self, progress: Any) -> None:
            if progress.round_number == 2:
                state_path = Path(os.environ["FAKEBIN_LOG"] + ".state.json")
                state_path.write_text(json.dumps({**json.loads(state_path.read_text()), "write_cache": 1}))

    settings = make_settings("demo", "1.1", ("iops",), {"iops": {"round_time_s": 0.2, "max_rounds": 2,
                                                                  "block_sizes": (4096,), "mixes": (0,)}})
    with attached_loop(str(tmp_path), size_bytes=16 * 1024**2) as device:
        target = resolve_target(device)
        facts = {"transport": "nvme", "nvme_controller": controller, "disk": device}
        info = target_info(target, facts, probe_engine(str(tmp_path))[0], 16 * 1024**2)
        store, _ = create_run(tmp_path / "run", settings, info, facts, RunStart(ioengine_note="", purge_method="none"))
        run(store, target, destructive=True, reporter=FlipInRound2())
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert [(each["round"], each["read"]) for each in manifest["write_cache_rounds"]] == [(1, False), (2, True)]
    rounds = sorted((tmp_path / "run" / "pts" / "iops" / "rounds").glob("*/round.json"))
    assert [json.loads(path.read_text())["write_cache"]["read"] for path in rounds] == [False, True]
    reasons = manifest["compliance"]["reasons"]
    assert any("write cache read on at the end of IOPS round 2" in reason for reason in reasons), reasons
    assert not any("round 1" in reason for reason in reasons), reasons
    assert manifest["write_cache_restored"]["action"] == "kept"  # it read on at the end, as before the run


def test_a_run_killed_mid_round_is_resumed_and_puts_back_the_cache_it_found(tmp_path: Path, fakebin: Any,
                                                                             controller: str) -> None:
    """A PTS run (its own process) turns the cache off and is killed with SIGKILL once round 1 is stored: the cache
    stays off. Its resume finds it off, yet knows from the controller's record that it was on before the run, and
    puts that back at the end."""
    from ptsbench.device.target import resolve_target
    from ptsbench.fio.runner import probe_engine

    settings = make_settings("demo", "1.1", ("iops",), {"iops": {"round_time_s": 1.0, "max_rounds": 4,
                                                                  "block_sizes": (4096,), "mixes": (0,)}})
    with attached_loop(str(tmp_path), size_bytes=16 * 1024**2) as device:
        target = resolve_target(device)
        facts = {"transport": "nvme", "nvme_controller": controller, "disk": device}
        info = target_info(target, facts, probe_engine(str(tmp_path))[0], 16 * 1024**2)
        store, _ = create_run(tmp_path / "run", settings, info, facts, RunStart(ioengine_note="", purge_method="none"))
        child = subprocess.Popen([sys.executable, "-c", "import sys\nfrom pathlib import Path\n"
                                  "from ptsbench.pts.engine import run\nfrom ptsbench.pts.store import PtsStore\n"
                                  "from ptsbench.store import RunStore\nfrom ptsbench.device.target import "
                                  "resolve_target\nrun(PtsStore(RunStore.open(Path(sys.argv[1]))), "
                                  "resolve_target(sys.argv[2]), destructive=True)\n", str(store.root), device])
        round_one = store.root / "pts" / "iops" / "rounds" / "001" / "round.json"
        while not round_one.exists():
            assert child.poll() is None, "the run ended before round 1 was stored"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        assert cache_reads(fakebin) is False  # left off by the killed run
        from ptsbench.pts.store import PtsStore
        from ptsbench.store import RunStore

        run(PtsStore(RunStore.open(store.root)), target, destructive=True)
    manifest = json.loads((store.root / "manifest.json").read_text())
    first, resumed = manifest["write_cache"]
    assert (first["before"], resumed["before"], resumed["original"]) == (True, False, True), manifest["write_cache"]
    restored = manifest["write_cache_restored"]
    assert (restored["action"], restored["to"], restored["done"]) == ("restored", True, True), restored
    assert cache_reads(fakebin) is True and manifest["status"] == "done"
