"""The device lab's checks. They run INSIDE the QEMU guest that scripts/device-lab.sh boots, on the real kernel
drivers (nvme, virtio_scsi + sd, ahci) and the real tools (nvme-cli, sg3-utils, sdparm, hdparm, smartctl, fio), and
compare what ptsbench says and does with what the device itself answers.

  device_lab_guest.py --results FILE [--checks A,B]   (in the guest) run the checks, one JSON line each to FILE
  device_lab_guest.py --summarize FILE [--checks A,B] (on the host) print `device lab: N passed, M failed`; a check
                                                      without a result (the guest died) counts as failed
  device_lab_guest.py --list                          the check names, in run order

Checks run in order and some use what an earlier one left (the 4 KiB namespace is purged before the guard check
partitions it). Not collected by pytest itself: tests/device_lab/test_device_lab.py runs the lab once and turns each
check into a test. What QEMU does not emulate is written down in docs/device-lab.md.
"""

import argparse
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ptsbench.device.target import Target

WORK = Path("/tmp/ptsbench-device-lab")  # in the guest's overlay: writes stay in the guest's memory
JOB = "[lab]\nrw=randwrite\nbs=4k\niodepth=4\nsize=64M\n"


@dataclass(frozen=True)
class Disk:
    """One emulated disk as scripts/device-lab.sh sets it up (the QEMU options give these values)."""

    name: str
    serial: str
    model: str
    transport: str
    logical_sector_bytes: int
    rotational: bool


DISKS = (
    Disk("nvme512", "LABNVME0", "QEMU NVMe Ctrl", "nvme", 512, False),
    Disk("nvme4k", "LABNVME1", "QEMU NVMe Ctrl", "nvme", 4096, False),
    Disk("ssd", "LABSSD0", "LAB SSD", "scsi", 512, False),
    Disk("hdd", "LABHDD0", "LAB HDD", "scsi", 512, True),
    Disk("sata", "LABSATA0", "LAB SATA DISK WITH A 40 CHARACTER MODEL", "sata", 512, True),
)
SATA_FIRMWARE = "LABFW123"  # 8 characters: more than a SCSI INQUIRY revision (4) holds
# a third NVMe controller that the QEMU monitor unplugs and plugs in again (QEMU id nvmehp, block node nvhp)
HOTPLUG = Disk("nvmehp", "LABNVMEHP", "QEMU NVMe Ctrl", "nvme", 512, False)
HOTPLUG_ADD = "device_add nvme,id=nvmehp,serial=LABNVMEHP,drive=nvhp"
# a namespace with 8 bytes of metadata per block and protection information type 1 (QEMU nvme-ns ms=8,pi=1)
WITH_PI = Disk("nvmepi", "LABNVMEPI", "QEMU NVMe Ctrl", "nvme", 512, False)


# ---------------------------------------------------------------------------------------------------------------
# helpers


def run(argv: list[str], ok: bool | None = True, timeout_s: float = 600, stdin: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    """Run a command; with ok=True (False) its exit status must be 0 (non-zero), None: either."""
    done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout_s, input=stdin,
                          check=False)
    if ok is not None and (done.returncode == 0) != ok:
        raise AssertionError(f"{' '.join(argv)} exited with {done.returncode} (expected {'0' if ok else 'non-zero'})"
                             f": {(done.stderr or done.stdout)[-1500:]}")
    return done


# Python starts slowly in the emulated guest (imports over 9p, about 10x slower than the host), so ptsbench runs in
# a child forked from this process, which has imported it (and what its reports draw with) once: the same entry
# point as the console script, the same exit status, stdout and stderr.
WARM_MODULES = ("ptsbench.cli", "ptsbench.cases.schedule", "ptsbench.pts.engine", "ptsbench.report.build",
                "ptsbench.report.core.draw_mpl", "ptsbench.report.core.pdf", "ptsbench.report.core.html",
                "ptsbench.report.core.workbook", "matplotlib.pyplot", "plotly.graph_objects", "numpy")


def warm_up() -> None:
    import contextlib
    import importlib

    for name in WARM_MODULES:
        with contextlib.suppress(ImportError):  # a module renamed by another change: only slower
            importlib.import_module(name)


def start_ptsbench(args: list[str], output: Path) -> int:
    """Fork a child running `ptsbench ARGS` with stdout in OUTPUT.out and stderr in OUTPUT.err; its pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        for fd, suffix in ((1, ".out"), (2, ".err")):
            os.dup2(os.open(f"{output}{suffix}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
        sys.argv = ["ptsbench", *args]
        from ptsbench.cli import main

        main()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001 - a traceback is a failure the check reports
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def finish_ptsbench(pid: int, args: list[str], output: Path, ok: bool | None) -> subprocess.CompletedProcess[str]:
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    done = subprocess.CompletedProcess(["ptsbench", *args], code,
                                       Path(f"{output}.out").read_text(errors="replace"),
                                       Path(f"{output}.err").read_text(errors="replace"))
    if ok is not None and (code == 0) != ok:
        raise AssertionError(f"ptsbench {' '.join(args)} exited with {code} (expected {'0' if ok else 'non-zero'})"
                             f": {(done.stderr or done.stdout)[-1500:]}")
    return done


def ptsbench(*args: str, ok: bool | None = True) -> subprocess.CompletedProcess[str]:
    output = WORK / f"ptsbench-{time.monotonic_ns()}"
    return finish_ptsbench(start_ptsbench(list(args), output), list(args), output, ok)


def find_disks() -> dict[str, str]:
    """Lab disk name -> /dev node, found by serial (NVMe) or model (SCSI, SATA): probe order differs per boot."""
    found = {}
    for entry in sorted(os.listdir("/sys/block")):
        device = Path("/sys/block", entry, "device")
        serial = _read(device / "serial")
        model = _read(device / "model")
        for disk in (*DISKS, HOTPLUG, WITH_PI):
            if (disk.transport == "nvme" and serial == disk.serial) or (
                    disk.transport != "nvme" and model and disk.model.startswith(model)):
                found.setdefault(disk.name, f"/dev/{entry}")  # a controller's first namespace
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def controller(dev: str) -> str:
    return re.sub(r"n\d+$", "", dev)  # /dev/nvme0n1 -> /dev/nvme0


def generic(dev: str) -> str:
    return dev.replace("/dev/nvme", "/dev/ng")  # /dev/nvme0n1 -> /dev/ng0n1


def nvme_json(*args: str) -> dict:
    return json.loads(run(["nvme", *args, "-o", "json"]).stdout)


def device_write_cache(disk: Disk, dev: str) -> int:
    """The write cache as the device answers it: NVMe feature 6, SCSI WCE (sdparm), ATA (hdparm -W)."""
    if disk.transport == "nvme":
        out = run(["nvme", "get-feature", controller(dev), "-f", "6"]).stdout
        return int(re.search(r"Current value:\s*(0x[0-9a-f]+|\d+)", out, re.I)[1], 0) & 1  # type: ignore[index]
    if disk.transport == "scsi":
        out = run(["sdparm", "--get=WCE", dev], ok=None).stdout
        return int(re.search(r"^WCE\s+(\d)", out, re.M)[1])  # type: ignore[index]
    out = run(["hdparm", "-W", dev]).stdout
    return int(re.search(r"write-caching\s*=\s*(\d)", out)[1])  # type: ignore[index]


def write_pattern(dev: str, offsets: list[int]) -> bytes:
    """Write 4 KiB of random bytes at each offset (direct IO), return them."""
    data = os.urandom(4096)
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT | os.O_SYNC)
    try:
        import mmap

        buffer = mmap.mmap(-1, 4096)
        buffer.write(data)
        for offset in offsets:
            os.pwrite(fd, buffer, offset)
    finally:
        os.close(fd)
    return data


def read_at(dev: str, offsets: list[int]) -> list[bytes]:
    run(["blockdev", "--flushbufs", dev])
    with open(dev, "rb", buffering=0) as handle:
        return [os.pread(handle.fileno(), 4096, offset) for offset in offsets]


def uring_job(path: Path, ng: str) -> Path:
    """The lab's job with fio's io_uring_cmd engine on an NVMe generic character device."""
    path.write_text(JOB.replace("[lab]\n", f"[uring]\nfilename={ng}\nioengine=io_uring_cmd\ncmd_type=nvme\n"))
    return path


def size_bytes(dev: str) -> int:
    return int(run(["blockdev", "--getsize64", dev]).stdout)


def run_watching_cache(disk: Disk, dev: str, args: list[str]) -> list[tuple[float, int]]:
    """`ptsbench ARGS` while reading the device's write cache once a second: (time.time(), value) of each read."""
    output = WORK / f"ptsbench-{time.monotonic_ns()}"
    pid = start_ptsbench(args, output)
    seen = []
    while True:
        reaped, status = os.waitpid(pid, os.WNOHANG)
        if reaped:
            break
        seen.append((time.time(), device_write_cache(disk, dev)))
        time.sleep(1.0)
    code = os.waitstatus_to_exitcode(status)
    assert code == 0, f"ptsbench {' '.join(args)} exited with {code}: {Path(f'{output}.err').read_text()[-2000:]}"
    return seen


def facts_of(dev: str) -> "tuple[Target, dict[str, object]]":
    from ptsbench.device.info import target_facts
    from ptsbench.device.target import resolve_target

    target = resolve_target(dev)
    return target, target_facts(target)


# ---------------------------------------------------------------------------------------------------------------
# the checks

Check = Callable[["Lab"], str | None]
CHECKS: dict[str, Check] = {}
BACKGROUND: set[str] = set()  # checks that run in a child process while the next ones go on
WAITS: dict[str, tuple[str, ...]] = {}  # check -> background checks that must have ended before it starts


def registry() -> tuple[dict[str, Check], Callable[[str], Callable[[Check], Check]]]:
    """A lab variant's own checks (by name) and the decorator that registers one there, in order."""
    checks: dict[str, Check] = {}

    def register_as(name: str) -> Callable[[Check], Check]:
        def register(function: Check) -> Check:
            checks[name] = function
            return function

        return register

    return checks, register_as


def check(name: str, background: bool = False, waits: tuple[str, ...] = ()) -> Callable[[Check], Check]:
    """Register a check. background: mostly waiting (sg_format polls once a minute) or busy on its own disk, so
    it runs alongside the checks after it (the emulated CPUs are the lab's bottleneck: two at a time use both);
    waits: background checks on the same disk that must end first."""
    def register(function: Check) -> Check:
        CHECKS[name] = function
        if background:
            BACKGROUND.add(name)
        WAITS[name] = waits
        return function

    return register


@dataclass
class Lab:
    devs: dict[str, str]
    samples: Path  # raw tool output kept for the record (next to the results, on the host)

    def keep(self, name: str, text: str) -> None:
        self.samples.mkdir(exist_ok=True)
        (self.samples / name).write_text(text)

    def disk(self, name: str) -> tuple[Disk, str]:
        return next(d for d in (*DISKS, HOTPLUG, WITH_PI) if d.name == name), self.devs[name]

    def monitor(self, command: str, timeout_s: float = 120) -> str:
        """A QEMU monitor command, sent by the host's relay (scripts/device-lab.sh); the monitor's answer."""
        folder = self.samples.parent / "monitor"
        request = folder / f"{time.monotonic_ns()}.cmd"
        request.with_suffix(".new").write_text(command)
        request.with_suffix(".new").rename(request)
        deadline = time.monotonic() + timeout_s
        while not request.with_suffix(".done").exists():
            assert time.monotonic() < deadline, f"the host's monitor relay did not answer {command!r}"
            time.sleep(0.2)
        return request.with_suffix(".done").read_text()


def _info_check(name: str) -> Check:
    def info_check(lab: Lab) -> str:
        disk, dev = lab.disk(name)
        facts = json.loads(ptsbench("info", dev, "--json").stdout)["target"]
        sysdir = Path("/sys/block", os.path.basename(dev))
        want: dict[str, object] = {
            "transport": disk.transport,
            "rotational": _read(sysdir / "queue" / "rotational") == "1",
            "logical_sector_bytes": int(_read(sysdir / "queue" / "logical_block_size") or 0),
            "physical_sector_bytes": int(_read(sysdir / "queue" / "physical_block_size") or 0),
            "size_bytes": int(_read(sysdir / "size") or 0) * 512,
        }
        assert want["rotational"] is disk.rotational, f"QEMU set up rotational {disk.rotational}, sysfs says not"
        assert want["logical_sector_bytes"] == disk.logical_sector_bytes
        if disk.transport == "nvme":
            ctrl = nvme_json("id-ctrl", controller(dev))
            ns = nvme_json("id-ns", dev)
            lbaf = ns["lbafs"][ns["flbas"] & 0xF]
            assert 2 ** lbaf["ds"] == want["logical_sector_bytes"], f"LBA format in use {lbaf} vs sysfs"
            want.update(model=ctrl["mn"].strip(), serial=ctrl["sn"].strip(), firmware=ctrl["fr"].strip(),
                        nvme_controller=controller(dev), size_bytes=ns["nsze"] * 2 ** lbaf["ds"])
        elif disk.transport == "scsi":
            inquiry = run(["sg_inq", dev]).stdout
            fields = dict(re.findall(r"^\s*(Vendor identification|Product identification|Product revision level|"
                                     r"Unit serial number):\s*(.*?)\s*$", inquiry, re.M))
            want.update(vendor=fields["Vendor identification"], model=fields["Product identification"],
                        firmware=fields["Product revision level"], serial=fields["Unit serial number"])
        else:
            identify = run(["hdparm", "-I", dev]).stdout
            fields = dict(re.findall(r"^\s*(Model Number|Serial Number|Firmware Revision):\s*(.*?)\s*$", identify,
                                     re.M))
            want.update(model=fields["Model Number"], serial=fields["Serial Number"],
                        firmware=fields["Firmware Revision"])
            assert want["firmware"] == SATA_FIRMWARE and want["model"] == disk.model, identify[:600]
        wrong = {key: (facts.get(key), value) for key, value in want.items() if facts.get(key) != value}
        assert not wrong, f"ptsbench info {dev} differs from the device (ptsbench, device): {wrong}"
        return f"{dev}: " + ", ".join(f"{key}={value}" for key, value in want.items())

    return info_check


for _disk in DISKS:
    check(f"info-{_disk.name}")(_info_check(_disk.name))


@check("pts-hdd-iops", background=True)
def pts_hdd(lab: Lab) -> str:
    disk, dev = lab.disk("hdd")
    out = WORK / "pts-hdd"
    seen = run_watching_cache(disk, dev, ["pts", dev, "--profile", "demo", "--tests", "hdd-iops", "--zones", "1",
                                          "--destructive", "--out", str(out)])
    notes = _pts_store_checks(out, dev, disk, seen, None, "smartctl")
    return "; ".join(notes)


def _alive(pid: int) -> bool:
    """The child still runs (not ended, not a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _wait_until(ready: Callable[[], bool], what: str, timeout_s: float = 300) -> float:
    started = time.monotonic()
    while not ready():
        assert time.monotonic() - started < timeout_s, f"{what}: not within {timeout_s} s"
        time.sleep(0.5)
    return time.monotonic() - started


@check("hotplug-nvme", background=True)
def hotplug(lab: Lab) -> str:
    """QEMU's monitor unplugs an NVMe controller (device_del) as a chained PTS round starts and plugs it in again
    (device_add): no file appears at the namespace's /dev name, the round's error names the vanished device, and
    resume on the drive that came back finishes the run (or, back under another name, says where it is)."""
    _, dev = lab.disk("nvmehp")
    out = WORK / "hotplug"
    args = ["pts", dev, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "2",
            "--max-rounds", "2", "--block-sizes", "iops=4k", "--mixes", "iops=0,100", "--purge", "none",
            "--active-range", "25", "--precondition-multiple", "1", "--destructive", "--out", str(out)]
    output = WORK / "hotplug-pts"
    pid = start_ptsbench(args, output)
    round_one = out / "pts" / "iops" / "rounds" / "001"
    _wait_until(lambda: round_one.exists() or not _alive(pid), "round 1 of the PTS run")
    assert round_one.exists(), Path(f"{output}.err").read_text()[-1500:]
    said = lab.monitor("device_del nvmehp")  # the kernel takes its time (tens of seconds under TCG)
    removed_s = _wait_until(lambda: not os.path.exists(f"/sys/block/{os.path.basename(dev)}"), "device_del")
    failed = finish_ptsbench(pid, args, output, ok=False)
    error = failed.stderr.strip().splitlines()[-1]
    assert f"the device disappeared: {dev}" in error, failed.stderr[-1500:]
    assert not os.path.lexists(dev) or Path(dev).is_block_device(), f"{dev} is a {os.stat(dev)} now, no device"
    assert not os.path.isfile(dev), f"a regular file stands at {dev}"
    lab.keep("hotplug-failure.txt", failed.stderr + said)
    lab.monitor(HOTPLUG_ADD)
    back: list[str] = []

    def returned() -> bool:
        back[:] = [d for name, d in find_disks().items() if name == "nvmehp"]
        return bool(back)

    added_s = _wait_until(returned, "device_add")
    _wait_until(lambda: os.path.exists(back[0]), f"the node {back[0]}")
    resumed = ptsbench("resume", str(out), "--destructive", ok=None)
    if back[0] == dev:
        assert resumed.returncode == 0, resumed.stderr[-1500:]
        assert json.loads((out / "manifest.json").read_text())["status"] == "done"
        outcome = "resume on the drive back at the same name finished the run"
    else:
        last = resumed.stderr.strip().splitlines()[-1]
        assert resumed.returncode != 0 and f"the same drive is at {back[0]} now" in last, resumed.stderr[-1500:]
        outcome = f"back as {back[0]}: resume says {last}"
    return (f"unplugged as round 1 started (gone in {removed_s:.0f} s): {error}; plugged in again ({added_s:.0f} s): "
            f"{outcome}")


IO_ERROR_SERIAL = "LABNVMEIO"  # QEMU's blkdebug under this controller's image: writes fail once it is armed
WRITE_ZEROES = ["nvme", "write-zeroes", "--start-block=0", "--block-count=0"]  # one block: arms or disarms the fault


@check("io-error-nvme", background=True)
def io_error(lab: Lab) -> str:
    """QEMU's blkdebug driver under an NVMe namespace's image fails every write with EIO from one NVMe Write Zeroes
    command of the guest to the next (its rules: scripts/device-lab.sh); the device reports a write fault, which the
    kernel passes on as ENODATA ("No data available", its word for a medium error). Armed once round 1 of a PTS run
    is stored, the round after it fails: the error names the device and its error, no traceback, round 1 is kept,
    and once disarmed `ptsbench resume` finishes the run."""
    dev = _namespaces_of(IO_ERROR_SERIAL)[0]
    out = WORK / "io-error"
    args = ["pts", dev, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "2",
            "--max-rounds", "3", "--block-sizes", "iops=4k", "--mixes", "iops=0", "--purge", "none",
            "--active-range", "25", "--precondition-multiple", "1", "--destructive", "--out", str(out)]
    output = WORK / "io-error-pts"
    pid = start_ptsbench(args, output)
    rounds = out / "pts" / "iops" / "rounds"
    try:
        _wait_until(lambda: (rounds / "001" / "round.json").exists() or not _alive(pid), "round 1 of the PTS run")
        run(WRITE_ZEROES + [dev])  # arms blkdebug: every write fails from now on
    except BaseException:
        os.kill(pid, signal.SIGKILL)  # no run left behind on a failed check
        finish_ptsbench(pid, args, output, ok=None)
        raise
    failed = finish_ptsbench(pid, args, output, ok=False)
    error = failed.stderr.strip().splitlines()[-1]
    lab.keep("io-error-failure.txt", failed.stderr)
    assert re.search(r"IOPS round [23] failed", error), error  # armed as round 2 starts (or before round 3)
    assert f"io_u error on file {dev}: No data available: write" in error, error
    assert "Traceback" not in failed.stderr, failed.stderr[-1500:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "failed" and (rounds / "001" / "round.json").exists(), manifest["status"]
    assert not (rounds / "003" / "round.json").exists(), "the run ended although every write failed"
    run(WRITE_ZEROES + [dev])  # disarms it: writes reach the image again
    resumed = ptsbench("resume", str(out), "--destructive")
    assert json.loads((out / "manifest.json").read_text())["status"] == "done", resumed.stderr[-1500:]
    assert (rounds / "003" / "round.json").exists() or "steady" in resumed.stderr, resumed.stderr[-800:]
    return f"{error.removeprefix('ptsbench: error: ')}; round 1 kept; resume after the fault finished the run"


@check("lost-writes-nvme", waits=("io-error-nvme",))  # the same namespace
def lost_writes(lab: Lab) -> str:
    """A job without direct=1 writes into the page cache, and fio counts every write done; with blkdebug armed the
    kernel's write-back to the namespace fails ("lost async page write"). The case fails, naming the device, the
    error ptsbench's sync after fio got, and the kernel's words; once disarmed, the same job is ok. (A file on a
    filesystem whose device fails: tests/device/test_lost_writes.py, on the host; here mkfs's own Write Zeroes would
    flip blkdebug's state.)"""
    dev = _namespaces_of(IO_ERROR_SERIAL)[0]
    job = WORK / "lost-writes.fio"
    job.write_text("[buffered]\nrw=randwrite\nbs=4k\niodepth=4\nsize=8m\n")
    run(WRITE_ZEROES + [dev])  # armed: every write fails
    try:
        failed = ptsbench("run", str(job), "--target", dev, "--destructive", "--out", str(WORK / "lost-writes"),
                          ok=False)
    finally:
        run(WRITE_ZEROES + [dev])  # disarmed
    (result,) = (WORK / "lost-writes").glob("cases/*/result.json")
    record = json.loads(result.read_text())
    lab.keep("lost-writes.txt", failed.stdout + failed.stderr)
    assert record["status"] == "failed", record
    message = record["message"]
    assert f"writes to {dev} never reached the device" in message and "the kernel: " in message, message
    assert os.path.basename(dev) in message.partition("the kernel: ")[2], message
    ptsbench("run", str(job), "--target", dev, "--destructive", "--out", str(WORK / "lost-writes-ok"))
    return message


def write_cache_off_and_on(disk: Disk, dev: str) -> str:
    """ptsbench turns the write cache off and on again, each read back from the device by its own tool."""
    from ptsbench.device.cache import read_write_cache, set_write_cache

    target, facts = facts_of(dev)
    assert device_write_cache(disk, dev) == 1, "the lab's disks start with the write cache on"
    assert read_write_cache(target, facts) is True
    steps = []
    for wanted in (False, True):
        done, message = set_write_cache(target, facts, wanted)
        assert done, message
        assert device_write_cache(disk, dev) == int(wanted), f"device still reads {not wanted}: {message}"
        assert read_write_cache(target, facts) is wanted
        steps.append(message)
    return "; ".join(steps)


def _cache_check(name: str) -> Check:
    def cache_check(lab: Lab) -> str:
        return write_cache_off_and_on(*lab.disk(name))

    return cache_check


for _name in ("nvme512", "ssd", "sata"):
    check(f"write-cache-{_name}")(_cache_check(_name))


@check("telemetry-nvme")
def telemetry_nvme(lab: Lab) -> str:
    from ptsbench.device.telemetry import read_telemetry

    _, dev = lab.disk("nvme512")
    target, facts = facts_of(dev)
    before = read_telemetry(target, facts)
    run(["dd", "if=/dev/urandom", f"of={dev}", "bs=1M", "count=32", "oflag=direct", "status=none"])
    after = read_telemetry(target, facts)
    text = run(["nvme", "smart-log", controller(dev), "-o", "json"]).stdout
    lab.keep("nvme-cli-smart-log-qemu.json", text)
    log = json.loads(text)
    assert after["source"] == "nvme-cli" and after["note"] is None, after
    assert after["temperature_k"] == log["temperature"] and after["temperature_c"] == log["temperature"] - 273
    assert after["data_units_written"] == int(log["data_units_written"])
    written = after["data_units_written"] - before["data_units_written"]
    assert written >= 32 * 2**20 // 512_000, f"32 MiB written, smart-log counts {written} units of 512000 bytes"
    return f"{after['temperature_c']} C, {written} data units written by 32 MiB"


def _smartctl_reading(lab: Lab, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """ptsbench's telemetry reading of a lab disk and smartctl's own JSON document of it (kept as a sample)."""
    from ptsbench.device.telemetry import read_telemetry

    _, dev = lab.disk(name)
    reading = read_telemetry(*facts_of(dev))
    text = run(["smartctl", "-j", "-a", dev], ok=None).stdout
    lab.keep(f"smartctl-qemu-{name}.json", text)
    assert reading["source"] == "smartctl", reading
    return reading, json.loads(text)


@check("telemetry-sata")
def telemetry_sata(lab: Lab) -> str:
    reading, doc = _smartctl_reading(lab, "sata")
    assert reading["note"] is None, reading
    assert reading["temperature_c"] == doc["temperature"]["current"], (reading, doc.get("temperature"))
    return f"{reading['temperature_c']} C from {reading['command']}"


@check("telemetry-scsi")
def telemetry_scsi(lab: Lab) -> str:
    reading, doc = _smartctl_reading(lab, "ssd")
    if not doc.get("smart_support", {}).get("available"):  # QEMU: no SMART, a temperature of 0
        assert reading["temperature_c"] is None and str(reading["note"]).startswith("not available"), reading
    return str(reading["note"])


@check("purge-nvme4k")
def purge_nvme(lab: Lab) -> str:
    from ptsbench.device.purge import NvmeSanitize, choose_purge, purge

    _, dev = lab.disk("nvme4k")
    target, facts = facts_of(dev)
    offsets = [0, size_bytes(dev) // 2, size_bytes(dev) - 4096]
    data = write_pattern(dev, offsets)
    assert read_at(dev, offsets) == [data] * 3
    assert NvmeSanitize().applies(target, facts) == "sanitize not supported"
    assert choose_purge(target, facts).name == "nvme-format"
    flbas = nvme_json("id-ns", dev)["flbas"] & 0xF
    outcome = purge(target, facts, destructive=True)
    assert outcome.ok and not outcome.is_deviation, outcome
    assert ["nvme", "format", dev, "--ses=1", f"--lbaf={flbas}", "--ms=0", "--pi=0", "--pil=0"] in outcome.commands
    assert read_at(dev, offsets) == [bytes(4096)] * 3, "data written before the purge is still there"
    assert _read(Path("/sys/block", os.path.basename(dev), "queue/logical_block_size")) == "4096"
    return outcome.message


@check("purge-nvme-pi")
def purge_nvme_pi(lab: Lab) -> str:
    """A namespace with 8 bytes of metadata and PI type 1: `info` says so, and the purge (NVMe format) keeps its LBA
    format, metadata and protection information (nvme-cli's defaults would drop the PI), read back from the drive."""
    from ptsbench.device.purge import purge

    _, dev = lab.disk("nvmepi")
    facts = json.loads(ptsbench("info", dev, "--json").stdout)["target"]
    sysdir = Path("/sys/block", os.path.basename(dev))
    profile = _read(sysdir / "integrity" / "format")
    assert profile == "T10-DIF-TYPE1-CRC" and facts["protection_information"] == profile, (profile, facts)
    assert facts["zoned"] == "none", facts
    if (sysdir / "metadata_bytes").exists():
        assert facts["metadata_bytes"] == 8, facts
    before = nvme_json("id-ns", dev)
    lbaf = before["lbafs"][before["flbas"] & 0xF]
    assert (lbaf["ms"], before["dps"] & 7) == (8, 1), f"QEMU set up ms=8,pi=1: {lbaf}, dps {before['dps']}"
    offsets = [0, size_bytes(dev) - 4096]
    data = write_pattern(dev, offsets)
    target, purge_facts = facts_of(dev)
    outcome = purge(target, purge_facts, destructive=True)
    assert outcome.ok, outcome
    assert ["nvme", "format", dev, "--ses=1", f"--lbaf={before['flbas'] & 0xF}", "--ms=0", "--pi=1", "--pil=0"] \
        in outcome.commands, outcome.commands
    after = nvme_json("id-ns", dev)
    assert (after["flbas"], after["dps"]) == (before["flbas"], before["dps"]), (before, after)
    assert _read(sysdir / "integrity" / "format") == profile, "the kernel's integrity profile changed"
    try:
        assert read_at(dev, offsets) != [data] * 2, "data written before the purge is still there"
        reads = "reads back erased"
    except OSError as error:  # a block formatted with PI may fail its check until written again
        reads = f"reads fail until written again ({error.strerror})"
    return f"{dev}: {outcome.message}; flbas {after['flbas']}, dps {after['dps']}, integrity {profile} kept; {reads}"


NAMESPACES_SERIAL = "LABNVMENS"  # a controller with two namespaces (QEMU nvme-ns nsid=1 and nsid=2)
# a shell script, not Python: the purge-scope check calls it dozens of times and Python starts slowly in the guest
STAND_IN_NVME = """#!/bin/sh
# nvme-cli with SANICAP and FNA set in `id-ctrl -o json` (QEMU 7.2 has neither); everything else unchanged
case "$1 $*" in
  "id-ctrl "*json*) ;;
  *) exec {real} "$@" ;;
esac
out=$({real} "$@") || exit $?
printf '%s\\n' "$out" | sed -E "s/(\\"sanicap\\"[[:space:]]*:[[:space:]]*)[0-9]+/\\1$((LAB_SANICAP))/; \\
  s/(\\"fna\\"[[:space:]]*:[[:space:]]*)[0-9]+/\\1$((LAB_FNA))/"
"""


def _namespaces_of(serial: str) -> list[str]:
    return sorted(f"/dev/{entry}" for entry in os.listdir("/sys/block")
                  if _read(Path("/sys/block", entry, "device", "serial")) == serial)


def _checksums(folder: Path) -> dict[str, str]:
    import hashlib

    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.glob("*.bin"))}


@check("purge-scope-nvme")
def purge_scope(lab: Lab) -> str:
    """A controller with two namespaces, a mounted ext4 partition with files on the second. A stand-in nvme adds
    SANICAP (block erase) and FNA bits (format and secure erase apply to all namespaces) to id-ctrl: sanitize and
    format of the first namespace are refused naming the second; auto chooses a method that erases only the first;
    with the second unmounted, --purge-scope subsystem allows the sanitize and the dry run states its reach. The
    second namespace's files stay byte-identical."""
    from ptsbench.device.purge import purge

    first, second = _namespaces_of(NAMESPACES_SERIAL)
    ctrl = os.path.basename(controller(first))
    run(["sfdisk", "--quiet", second], stdin="label: gpt\n,\n")
    part = second + "p1"
    _wait_until(lambda: os.path.exists(part), f"the partition {part}", 10)
    run(["mkfs.ext4", "-q", "-F", part])
    mnt = WORK / "ns2"
    mnt.mkdir(exist_ok=True)
    run(["mount", part, str(mnt)])
    for number in range(3):
        (mnt / f"{number}.bin").write_bytes(os.urandom(1 << 20))
    before = _checksums(mnt)
    bin_dir = WORK / "stand-in"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "nvme").write_text(STAND_IN_NVME.format(real=shutil.which("nvme")))
    (bin_dir / "nvme").chmod(0o755)
    saved = dict(os.environ)
    os.environ["PATH"] = f"{bin_dir}:{os.environ['PATH']}"
    reach = f"erases all 2 namespaces of {ctrl}: {os.path.basename(first)}, {os.path.basename(second)}"
    dry = ["pts", first, "--profile", "demo", "--tests", "iops", "--destructive", "--dry-run"]
    seen = []
    try:
        for sanicap, fna, method, what in (("0x2", "0", "nvme-sanitize", "sanitize"),
                                           ("0", "0x3", "nvme-format", "format")):
            os.environ.update(LAB_SANICAP=sanicap, LAB_FNA=fna)
            refused = ptsbench(*dry, "--purge", method, ok=False).stderr.strip().splitlines()[-1]
            assert refused.startswith(f"ptsbench: error: refusing to purge {first} with {method}: {what} {reach}, "
                                      f"and {second}: {part} is mounted on {mnt}"), refused
            seen.append(refused)
        os.environ.update(LAB_SANICAP="0x2", LAB_FNA="0x3")
        chosen = ptsbench(*dry).stdout
        assert "Purge at run time: blkdiscard" in chosen, chosen
        target, facts = facts_of(first)
        outcome = purge(target, facts, destructive=True)  # the engine's purge: only the first namespace
        assert outcome.ok and outcome.method == "blkdiscard" and outcome.commands == [["blkdiscard", first]], outcome
        os.environ.update(LAB_SANICAP="0", LAB_FNA="0")  # what QEMU says: a format erases one namespace
        assert "Purge at run time: nvme-format\n" in ptsbench(*dry).stdout
        run(["umount", str(mnt)])
        os.environ.update(LAB_SANICAP="0x2", LAB_FNA="0x3")
        refused = ptsbench(*dry, "--purge", "nvme-sanitize", ok=False).stderr.strip().splitlines()[-1]
        assert "--purge-scope subsystem allows erasing it" in refused, refused
        allowed = ptsbench(*dry, "--purge", "nvme-sanitize", "--purge-scope", "subsystem").stdout
        assert f"Purge at run time: nvme-sanitize (sanitize {reach})" in allowed, allowed
        seen.append(next(line.strip() for line in allowed.splitlines() if "Purge at run time" in line))
    finally:
        os.environ.clear()
        os.environ.update(saved)
        if os.path.ismount(mnt):
            run(["umount", str(mnt)])
    run(["mount", "-o", "ro", part, str(mnt)])
    try:
        after = _checksums(mnt)
    finally:
        run(["umount", str(mnt)])
    assert after == before and len(after) == 3, f"the second namespace's files changed: {before} -> {after}"
    from ptsbench.device.cache import set_write_cache

    target, facts = facts_of(first)
    for wanted in (False, True):  # the volatile write cache is the controller's: the message names what it covers
        done, message = set_write_cache(target, facts, wanted)
        assert done and message.endswith(f"a controller feature: it holds for all 2 namespaces of {ctrl}: "
                                         f"{os.path.basename(first)}, {os.path.basename(second)})"), message
    seen.append(message)
    return " | ".join([*seen, f"auto chose {outcome.method} of {first} only", f"{len(after)} files on {part} "
                       "byte-identical (sha256)"])


@check("zoned-nvme")
def zoned(lab: Lab) -> str:
    """A host-managed zoned namespace (the second one of the PI controller): info says so; pts is refused, and a
    job without zonemode=zbd too, each saying why; a job with zonemode=zbd runs as fio runs it."""
    dev = _namespaces_of(WITH_PI.serial)[1]
    model = _read(Path("/sys/block", os.path.basename(dev), "queue", "zoned"))
    assert model == "host-managed", f"QEMU set up zoned=true: sysfs says {model}"
    facts = json.loads(ptsbench("info", dev, "--json").stdout)["target"]
    assert facts["zoned"] == model, facts
    pts = ptsbench("pts", dev, "--profile", "demo", "--tests", "iops", "--destructive", "--dry-run", ok=False)
    said = pts.stderr.strip().splitlines()[-1]
    assert pts.returncode == 2 and f"{dev} is a zoned block device (host-managed)" in said, pts.stderr[-800:]
    job = WORK / "zoned.fio"
    job.write_text("[zoned]\nrw=write\nbs=64k\ndirect=1\nsize=64M\n")
    plain = ptsbench("run", str(job), "--target", dev, "--destructive", "--out", str(WORK / "zoned-plain"), ok=False)
    refused = plain.stderr.strip().splitlines()[-1]
    assert "a zoned block device (host-managed), without zonemode=zbd" in refused, plain.stderr[-800:]
    assert not (WORK / "zoned-plain").exists()
    done = ptsbench("run", str(job), "--target", dev, "--set", "zonemode=zbd", "--destructive", "--format", "json",
                    "--out", str(WORK / "zoned-zbd"))
    rows = json.loads(done.stdout)
    assert rows[0]["status"] == "ok" and rows[0]["iops"] > 0, rows
    zones = run(["blkzone", "report", dev]).stdout
    assert re.search(r"wptr 0x0*[1-9a-f]", zones), f"no zone written: {zones}"
    return f"{dev}: info zoned={facts['zoned']}; pts: {said}; run: {refused}; with zonemode=zbd: " \
           f"{rows[0]['iops']:.0f} IOPS; {zones.strip().splitlines()[0]}"


@check("capacity0-nvme")
def capacity_zero(lab: Lab) -> str:
    """A namespace with 8 bytes of metadata inside each block (QEMU nvme-ns ms=8,mset=1: extended LBA), which the
    kernel cannot use: it shows capacity 0. `pts` and `run` say so in one line of their own (not "pass --size")."""
    dev = _namespaces_of(WITH_PI.serial)[2]
    assert _read(Path("/sys/block", os.path.basename(dev), "size")) == "0", f"{dev} has a capacity in the kernel"
    namespace = nvme_json("id-ns", dev)
    assert namespace["flbas"] & 0x10 and namespace["nsze"] > 0, f"QEMU set up ms=8,mset=1: {namespace['flbas']}"
    said = []
    for args in (["pts", dev, "--profile", "demo", "--destructive", "--dry-run"],
                 ["run", str(WORK / "lab.fio"), "--target", dev, "--destructive", "--out", str(WORK / "cap0")]):
        done = ptsbench(*args, ok=False)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-800:]
        assert len(lines) == 1 and lines[0].startswith(f"ptsbench: error: {dev} has a capacity of 0 bytes: the "
                                                       "kernel cannot read or write it"), done.stderr
        assert "extended LBA" in lines[0] and "--size" not in lines[0], lines[0]
        said.append(f"{args[0]}: {lines[0]}")
    assert not (WORK / "cap0").exists()
    return f"{dev}: nsze {namespace['nsze']}, flbas {namespace['flbas']:#x}, sysfs size 0; " + " | ".join(said)


@check("purge-sata")
def purge_sata(lab: Lab) -> str:
    from ptsbench.device.purge import AtaSecureErase, choose_purge, purge

    _, dev = lab.disk("sata")
    target, facts = facts_of(dev)
    why = AtaSecureErase().applies(target, facts)
    assert why == "the ATA security feature set is not supported", why
    assert choose_purge(target, facts).name == "blkdiscard"
    outcome = purge(target, facts, destructive=True)
    assert outcome.ok and outcome.is_deviation and outcome.commands == [["blkdiscard", dev]], outcome
    assert_no_ata_password(dev)
    return f"{why}: fell back to {outcome.method}, a deviation ({outcome.message})"


def assert_no_ata_password(dev: str) -> None:
    identify = run(["hdparm", "-I", dev]).stdout
    section = identify.split("Security:", 1)[1] if "Security:" in identify else ""
    states = {line.strip() for line in section.splitlines()[1:8]}
    assert "enabled" not in states and "locked" not in states, f"a password is set on {dev}: {section[:400]}"


@check("ata-password-never-left")
def ata_password(lab: Lab) -> str:
    """QEMU has no ATA security feature set: force the erase past its probe, so the device aborts the very first
    security command, and check ptsbench stops there and no password is left."""
    from ptsbench.device import purge as purge_module

    _, dev = lab.disk("sata")
    target, facts = facts_of(dev)
    probe = purge_module._security_problem
    purge_module._security_problem = lambda log, device: None
    try:
        outcome = purge_module.AtaSecureErase().run(target, facts)
    finally:
        purge_module._security_problem = probe
    assert not outcome.ok and "temporary password failed" in outcome.message, outcome
    assert [c for c in outcome.commands if "--security-erase" in c] == [], "erase attempted without a password"
    assert_no_ata_password(dev)
    return outcome.message


@check("purge-scsi", background=True)
def purge_scsi(lab: Lab) -> str:
    from ptsbench.device.purge import purge

    _, dev = lab.disk("ssd")
    target, facts = facts_of(dev)
    offsets = [0, size_bytes(dev) - 4096]
    data = write_pattern(dev, offsets)
    outcome = purge(target, facts, destructive=True)
    assert outcome.method == "scsi" and outcome.ok and not outcome.is_deviation, outcome
    assert outcome.commands == [["sg_format", "--format", "--quick", dev]], outcome.commands
    erased = read_at(dev, offsets) != [data] * 2
    return f"{outcome.message}; data written before {'erased' if erased else 'still there (QEMU: FORMAT UNIT only)'}"


@check("guard-nvme")
def guard(lab: Lab) -> str:
    """On the 4 KiB namespace (blank after purge-nvme4k): a GPT partition table, then a mounted partition. The
    character device /dev/ngXnY, named in a job file, is judged like its namespace. run-parallel-nvme then writes
    the blank namespace with --destructive."""
    _, dev = lab.disk("nvme4k")
    mnt = WORK / "mnt"
    mnt.mkdir(exist_ok=True)
    ng_job = uring_job(WORK / "ng.fio", generic(dev))
    seen: list[str] = []

    def refused(target: str | None, *extra: str, says: tuple[str, ...], job_file: Path = ng_job) -> None:
        job = ["--target", target, str(WORK / "lab.fio")] if target else [str(job_file)]
        done = ptsbench("run", *job, "--runtime", "1", "--out", str(WORK / f"guard-{len(seen)}"), *extra, ok=False)
        error = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        assert error.startswith("ptsbench: error: refusing to write"), done.stderr[-800:]
        missing = [word for word in says if word not in error]
        assert not missing, f"{target or generic(dev)} {extra}: {missing} not in {error!r}"
        seen.append(f"{target or generic(dev) + ' (job file)'} {' '.join(extra)}: {error}")

    run(["sfdisk", "--quiet", dev], stdin="label: gpt\n,\n")
    part = dev + "p1"
    for _ in range(25):
        if os.path.exists(part):
            break
        time.sleep(0.2)
    refused(dev, says=("gpt", "has partitions: " + os.path.basename(part)))
    refused(None, says=(dev, "gpt", os.path.basename(part)))
    run(["mkfs.ext4", "-q", "-F", part])
    run(["mount", part, str(mnt)])
    try:
        refused(dev, "--destructive", says=(f"{part} is mounted on {mnt}",))
        refused(None, "--destructive", says=(f"{part} is mounted on {mnt}",))
        refused(part, "--destructive", says=(f"{part} is mounted on {mnt}",))
        # a node made by hand, named like another (blank) namespace's generic device but carrying this one's device
        # number: fio opens what the number says, so the guard judges the number, not the name
        _, blank = lab.disk("nvme512")
        handmade = WORK / "handmade" / os.path.basename(generic(blank))
        handmade.parent.mkdir(exist_ok=True)
        os.mknod(handmade, 0o600 | stat.S_IFCHR, os.stat(generic(dev)).st_rdev)
        refused(None, "--destructive", says=(f"{part} is mounted on {mnt}",),
                job_file=uring_job(WORK / "handmade.fio", str(handmade)))
    finally:
        run(["umount", str(mnt)])
    run(["wipefs", "-q", "-a", part])
    run(["wipefs", "-q", "-a", dev])
    run(["blockdev", "--rereadpt", dev])
    assert not os.path.exists(part), f"{part} still there after wiping the partition table"
    refused(dev, says=("block device",))
    return " | ".join(seen)


@check("io_uring_cmd-ng", background=True)
def uring_cmd(lab: Lab) -> str:
    """fio's io_uring_cmd engine on the NVMe generic character device, named in a job file."""
    _, dev = lab.disk("nvme512")
    ng = generic(dev)
    job = uring_job(WORK / "uring.fio", ng)
    done = ptsbench("run", str(job), "--runtime", "2", "--destructive", "--format", "json", "--out",
                    str(WORK / "uring"))
    rows = json.loads(done.stdout)
    assert rows and rows[0]["status"] == "ok" and rows[0]["iops"] > 0, rows
    fio = json.loads(next((WORK / "uring" / "cases").glob("*/fio.json")).read_text())
    options = fio["jobs"][0]["job options"]
    assert options["ioengine"] == "io_uring_cmd" and options["filename"] == ng, options
    as_target = ptsbench("run", str(WORK / "lab.fio"), "--target", ng, "--out", str(WORK / "uring-target"), ok=False)
    said = as_target.stderr.strip()
    assert as_target.returncode == 2 and said.count("\n") == 0 and "generic character device" in said, said
    assert not (WORK / "uring-target").exists()
    return f"{ng}: {rows[0]['iops']:.0f} IOPS with io_uring_cmd; as --target: {said}"


@check("run-parallel-nvme", waits=("io_uring_cmd-ng",))  # the same disk: a run claims it whole
def parallel(lab: Lab) -> str:
    devs = [lab.devs["nvme512"], lab.devs["nvme4k"]]  # the 4 KiB one blank after guard-nvme: accepted now
    out = WORK / "parallel"
    done = ptsbench("run", str(WORK / "lab.fio"), *[a for d in devs for a in ("--target", d)], "--parallel",
                    "--runtime", "3", "--destructive", "--format", "json", "--out", str(out))
    rows = json.loads(done.stdout)
    assert sorted(row["target"] for row in rows) == sorted(devs), rows
    assert all(row["status"] == "ok" and row["iops"] > 0 for row in rows), rows
    spans = [json.loads(path.read_text()) for path in sorted((out / "cases").glob("*/result.json"))]
    first, second = spans
    assert first["started_utc"] <= second["ended_utc"] and second["started_utc"] <= first["ended_utc"], spans
    return ", ".join(f"{row['target']} {row['iops']:.0f} IOPS" for row in rows) + " (overlapping in time)"


LAB_BASE_IOPS, LAB_LOW_IOPS = 200, 20  # QEMU's throttle on the drive nvme512 (block backend nv0)


def _reads_done(dev: str) -> int:
    """Read IOs the kernel completed on the disk (/sys/block/DEV/stat, first field)."""
    return int(Path(f"/sys/block/{os.path.basename(dev)}/stat").read_text().split()[0])


@check("drops-nvme", waits=("io_uring_cmd-ng",))
def drops_nvme(lab: Lab) -> str:
    """QEMU's block_set_io_throttle holds an NVMe drive's reads to 200 IOPS, lowers them to 20 for 6 s in the middle
    of a case and restores them: the real NVMe driver's slowdown is one drop, beginning within a second's reads of
    the moment the limit fell, its worst second near a tenth of the level, and --min-fraction 0.8 --strict-drops
    exits with 3."""
    from ptsbench.drops.find import DropRule
    from ptsbench.drops.stored import folder_findings

    _, dev = lab.disk("nvme512")
    job = WORK / "drops.fio"
    job.write_text("[reader]\nrw=randread\nbs=4k\ndirect=1\nioengine=libaio\niodepth=8\ntime_based\nruntime=24\n")
    out = WORK / "drops"
    throttle = "block_set_io_throttle nv0 0 0 0 {iops} 0 0"
    said = [lab.monitor(throttle.format(iops=LAB_BASE_IOPS))]
    # --strict-drops: a guest under TCG emulation is often CPU-saturated, which would excuse the drop as the host's
    args = ["run", str(job), "--target", dev, "--min-fraction", "0.8", "--strict-drops", "--out", str(out)]
    output = WORK / "drops-run"
    try:
        before = _reads_done(dev)
        pid = start_ptsbench(args, output)
        _wait_until(lambda: _reads_done(dev) - before >= 5 * LAB_BASE_IOPS or not _alive(pid), "5 s of reads")
        reads_at_drop = _reads_done(dev) - before
        said.append(lab.monitor(throttle.format(iops=LAB_LOW_IOPS)))
        time.sleep(6)
        said.append(lab.monitor(throttle.format(iops=LAB_BASE_IOPS)))
        done = finish_ptsbench(pid, args, output, ok=None)
    finally:
        said.append(lab.monitor(throttle.format(iops=0)))  # unthrottled again for the checks after this one
    case_dir = out / "cases" / "001-drops"  # the case is named after its job file
    from ptsbench.drops.stored import stored_seconds

    seconds = [round(float(v)) for job in stored_seconds(case_dir) for d in job.directions.values()
               for v in d.values["iops"]]
    lab.keep("drops-run.txt", f"{done.stderr}\nmonitor: {said}\nIOPS per second: {seconds}\n")
    assert not any(answer.strip() for answer in said), f"QEMU's monitor said {said}"
    assert done.returncode == 3, done.stderr[-1500:]
    findings = [f for f in folder_findings(case_dir, DropRule()) if f.drop.metric != "lat"]
    assert len(findings) == 1, ([f.line() for f in findings], seconds, reads_at_drop)
    drop = findings[0].drop
    assert abs(drop.done_bytes - reads_at_drop * 4096) <= 1.5 * LAB_BASE_IOPS * 4096, (drop, reads_at_drop)
    assert drop.duration_s >= 5 and drop.worst / drop.reference <= 0.2, (drop, seconds)
    return f"{findings[0].line()}; {findings[0].cause_text}; --min-fraction 0.8 --strict-drops: exit 3"


def _utc(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _pts_store_checks(out: Path, dev: str, disk: Disk, seen: list[tuple[float, int]], method: str | None,
                      source: str) -> list[str]:
    """What a finished demo PTS run stored, against the device: purge, write cache, telemetry, report."""
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "done", manifest["status"]
    attempts = [a for path in sorted(out.glob("pts/*/purge.json")) for a in json.loads(path.read_text())]
    assert [a["method"] for a in attempts if a["ok"]] == ([method] if method else []), attempts
    records = manifest["write_cache"]
    assert records[0]["before"] is True and records[-1]["after"] is False, records
    rounds = [json.loads(path.read_text()) for path in sorted(out.glob("pts/*/rounds/*/round.json"))]
    assert rounds, "no rounds stored"
    # from the purge (or the first round) to the end of the last round: off at every read (1 s of clock slack)
    start = _utc(attempts[0]["started_utc"] if attempts else rounds[0]["started_utc"]) + 1
    end = _utc(rounds[-1]["finished_utc"]) - 1
    during = [value for when, value in seen if start < when < end]
    assert during and set(during) == {0}, f"write cache read while the run wrote: {during} ({seen})"
    assert device_write_cache(disk, dev) == 1, "write cache not restored after the run"
    assert manifest["write_cache_restored"]["done"] is True, manifest.get("write_cache_restored")
    readings = [record["telemetry"]["after"] for record in rounds]
    assert all(reading["source"] == source for reading in readings), f"telemetry not from {source}: {readings}"
    if source == "nvme-cli":
        written = [reading["data_units_written"] for reading in readings]
        assert all(r["temperature_k"] for r in readings) and written == sorted(written) and written[-1] > written[0]
    assert (out / "report" / "index.html").exists(), "no report"
    purged = f"purge {attempts[0]['method']}: {attempts[0]['message']}" if attempts else "no purge (HDD test)"
    return [purged, f"{len(rounds)} rounds", f"write cache read {len(during)} times during the run: all off; "
            "on again afterwards", f"telemetry after round 1: {json.dumps(readings[0])[:300]}"]


@check("pts-nvme-demo", waits=("io_uring_cmd-ng",))
def pts_nvme(lab: Lab) -> str:
    disk, dev = lab.disk("nvme512")
    out = WORK / "pts-nvme"
    # two cells a round, three rounds: each fio process takes seconds to start in the emulated guest
    seen = run_watching_cache(disk, dev, ["pts", dev, "--profile", "demo", "--tests", "lat", "--max-rounds", "3",
                                          "--block-sizes", "lat=4k", "--mixes", "lat=0,100", "--destructive",
                                          "--out", str(out)])
    notes = _pts_store_checks(out, dev, disk, seen, "nvme-format", "nvme-cli")
    return "; ".join(notes)


@check("resume-history-nvme", waits=("io_uring_cmd-ng",))
def resume_history(lab: Lab) -> str:
    """A PTS run is killed after round 1; `dd` writes 32 MiB more than round 1 wrote (the most the killed round may
    have written) to the namespace; resume reads the drive's own counters, records at least those 32 MiB as written
    by someone else (a deviation, on the terminal and in the manifest) and finishes the run."""
    _, dev = lab.disk("nvme512")
    out = WORK / "resume-history"
    args = ["pts", dev, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "2",
            "--max-rounds", "3", "--block-sizes", "iops=4k", "--mixes", "iops=0", "--purge", "none",
            "--active-range", "25", "--precondition-multiple", "1", "--destructive", "--out", str(out)]
    output = WORK / "resume-history-pts"
    pid = start_ptsbench(args, output)
    stored = out / "pts" / "iops" / "rounds" / "001" / "round.json"
    _wait_until(lambda: stored.exists() or not _alive(pid), "round 1 of the PTS run")
    os.kill(pid, signal.SIGKILL)
    finish_ptsbench(pid, args, output, ok=None)
    assert stored.exists() and not (out / "pts" / "iops" / "rounds" / "003" / "round.json").exists(), \
        Path(f"{output}.err").read_text()[-1500:]
    round_bytes = json.loads(stored.read_text())["telemetry"]["change"]["data_written_bytes"]
    foreign_mib = -(-round_bytes // 2**20) + 32
    run(["dd", "if=/dev/zero", f"of={dev}", "bs=1M", f"count={foreign_mib}", "oflag=direct", "status=none"])
    resumed = ptsbench("resume", str(out), "--destructive")
    notes = [line for line in resumed.stderr.splitlines() if "did not write" in line]
    assert len(notes) == 1 and "recorded as a deviation" in notes[0], resumed.stderr[-1500:]
    named = re.search(r"([\d,]+) bytes were written", notes[0])
    assert named, notes[0]
    extra_bytes = int(named.group(1).replace(",", ""))
    units_bytes = 2 * 512_000  # NVMe data units, rounded up at each reading
    assert 32 * 2**20 - units_bytes <= extra_bytes <= foreign_mib * 2**20 + units_bytes, (foreign_mib, notes[0])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "done"
    assert any("did not write" in reason for reason in manifest["compliance"]["reasons"]), manifest["compliance"]
    return notes[0].split("ptsbench: note: ", 1)[-1]


@check("pts-fleet", waits=("io_uring_cmd-ng", "purge-scsi"))  # their disks: a run claims each whole
def pts_fleet(lab: Lab) -> str:
    """The PTS (demo profile, one test) on two NVMe controllers and the SCSI disk at once, on the real drivers:
    every device done, each part's device the one named (serial), their rounds overlapping in time, the fleet's
    report opening with the fleet table of all three."""
    names = ("nvme512", "nvme4k", "ssd")
    devs = [lab.devs[name] for name in names]
    out = WORK / "pts-fleet"
    # short, as resume-history-nvme: three devices at once on the lab's two emulated CPUs (the demo IOPS matrix on
    # all three outran the lab's 20 minutes; a SCSI format alone takes a minute)
    ptsbench("pts", *devs, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "2",
             "--max-rounds", "3", "--block-sizes", "iops=4k", "--mixes", "iops=0", "--purge", "none",
             "--active-range", "25", "--precondition-multiple", "1", "--destructive", "--out", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "done" and [d["path"] for d in manifest["devices"]] == devs, manifest
    spans, said = [], []
    for name, device in zip(names, manifest["devices"], strict=True):
        folder = out / "devices" / device["name"]
        part = json.loads((folder / "manifest.json").read_text())
        disk, _dev = lab.disk(name)
        assert part["status"] == "done" and part["target"]["serial"] == disk.serial, (name, part["target"])
        rounds = [json.loads(path.read_text()) for path in sorted(folder.glob("pts/*/rounds/*/round.json"))]
        assert rounds and (folder / "report" / "index.html").exists(), f"{name}: no rounds or no report"
        spans.append((_utc(rounds[0]["started_utc"]), _utc(rounds[-1]["finished_utc"])))
        said.append(f"{device['path']} ({disk.serial}) {len(rounds)} rounds")
    assert max(start for start, _end in spans) < min(end for _start, end in spans), f"not at once: {spans}"
    html = (out / "report" / "index.html").read_text()  # the fleet's report opens with the fleet table
    table = html[html.index("Fleet: every device side by side"):html.index("Devices of the fleet")]
    assert all(lab.disk(name)[0].serial in table for name in names) and "median" in table, table[:2000]
    return "; ".join(said) + " (their rounds overlapping in time); the fleet table names all three serials"


# ---------------------------------------------------------------------------------------------------------------
# one controller, many namespaces (issue 39): the write cache and the purge are the controller's

NAMESPACES_DISK = Disk("nvmens", NAMESPACES_SERIAL, "QEMU NVMe Ctrl", "nvme", 512, False)


def short_pts(dev: str, out: Path, rounds: int = 3, *more: str) -> list[str]:
    """A short PTS run (as resume-history-nvme): IOPS, 4 KiB writes, rounds of 2 s, 25 % active range."""
    return ["pts", dev, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "2",
            "--max-rounds", str(rounds), "--block-sizes", "iops=4k", "--mixes", "iops=0", "--purge", "none",
            "--active-range", "25", "--precondition-multiple", "1", "--destructive", "--out", str(out), *more]


def _cache_recorded(out: Path) -> bool:
    try:
        return bool(json.loads((out / "manifest.json").read_text()).get("write_cache"))
    except (OSError, ValueError):
        return False


def _round_spans(out: Path) -> list[tuple[float, float]]:
    return [(_utc(record["started_utc"]), _utc(record["finished_utc"]))
            for path in sorted(out.glob("pts/*/rounds/*/round.json")) if (record := json.loads(path.read_text()))]


@check("write-cache-siblings-nvme")
def write_cache_siblings(lab: Lab) -> str:
    """Two PTS runs on the two namespaces of one controller (the write cache is feature 6 of the controller). Run A
    turns it off; a run on the sibling wanting it on (client profile) is refused naming A; run B wanting it off
    joins A. Read from the device once a second: off whenever a round of either ran; whichever ends first leaves
    it off for the other, the last one puts it back on, as it was before A; every round of both read it off."""
    first, second = _namespaces_of(NAMESPACES_SERIAL)
    disk = NAMESPACES_DISK
    assert device_write_cache(disk, first) == 1, "the lab's controllers start with the write cache on"
    out_a, out_b = WORK / "siblings-a", WORK / "siblings-b"
    args_a, args_b = short_pts(first, out_a, 5), short_pts(second, out_b, 3)
    pid_a = start_ptsbench(args_a, WORK / "siblings-a-pts")
    pids = [pid_a]
    seen: list[tuple[float, int]] = []
    try:
        _wait_until(lambda: _cache_recorded(out_a) or not _alive(pid_a), "run A set the write cache")
        refused = ptsbench("pts", second, "--profile", "client", "--tests", "lat", "--round-time", "2",
                           "--max-rounds", "3", "--purge", "none", "--destructive", "--out",
                           str(WORK / "siblings-refused"), ok=False).stderr.strip().splitlines()[-1]
        assert not (WORK / "siblings-refused").exists(), "the refused run made its run directory"
        assert (f"is held off by another ptsbench run on {first} (pid {pid_a}, run directory {out_a}); this run "
                "wants it on") in refused, refused
        assert device_write_cache(disk, first) == 0, "the refused run changed the write cache"
        pids.append(start_ptsbench(args_b, WORK / "siblings-b-pts"))
        while any(_alive(pid) for pid in pids):
            seen.append((time.time(), device_write_cache(disk, first)))
            time.sleep(1.0)
    except BaseException:
        for pid, args, output in zip(pids, (args_a, args_b), ("siblings-a-pts", "siblings-b-pts"), strict=False):
            os.kill(pid, signal.SIGKILL)  # no run left behind on a failed check (reaped: no zombie holder)
            finish_ptsbench(pid, args, WORK / output, ok=None)
        raise
    finish_ptsbench(pids[0], args_a, WORK / "siblings-a-pts", ok=True)
    finish_ptsbench(pids[1], args_b, WORK / "siblings-b-pts", ok=True)
    manifests = [json.loads((out / "manifest.json").read_text()) for out in (out_a, out_b)]
    joined = manifests[1]["write_cache"][-1]
    assert (joined["before"], joined["after"]) == (False, False), joined
    assert [other["target"] for other in joined["shared_with"]] == [first], joined  # B joined A: one count
    actions = sorted(manifest["write_cache_restored"]["action"] for manifest in manifests)
    assert actions == ["left", "restored"], [manifest["write_cache_restored"] for manifest in manifests]
    for manifest in manifests:
        assert [each["read"] for each in manifest["write_cache_rounds"]] == [False] * len(
            manifest["write_cache_rounds"]), manifest["write_cache_rounds"]
        assert not [r for r in manifest["compliance"]["reasons"] if "write cache" in r], manifest["compliance"]
    spans = _round_spans(out_a) + _round_spans(out_b)
    during = [value for when, value in seen if any(start + 1 < when < end - 1 for start, end in spans)]
    assert during and set(during) == {0}, f"write cache read during a round of either run: {during}"
    assert device_write_cache(disk, first) == 1, "not put back as it was before the first run"
    last = next(m for m in manifests if m["write_cache_restored"]["action"] == "restored")["write_cache_restored"]
    return (f"{refused.removeprefix('ptsbench: error: ')} | B joined A ({joined['message']}); read {len(during)} "
            f"times during their rounds: all off; the last out: {last['message']}; on again afterwards")


@check("write-cache-rounds-nvme")
def write_cache_rounds(lab: Lab) -> str:
    """The write cache read again at the end of every round is what the device had: turned on behind the run's
    back (nvme set-feature) once round 1 is stored, the rounds after it read on and that is a deviation naming the
    round; the first round read off; at the end it already reads on, as before the run, and stays so."""
    first, _second = _namespaces_of(NAMESPACES_SERIAL)
    disk = NAMESPACES_DISK
    out = WORK / "cache-rounds"
    args = short_pts(first, out, 3)
    output = WORK / "cache-rounds-pts"
    pid = start_ptsbench(args, output)
    try:
        _wait_until(lambda: (out / "pts" / "iops" / "rounds" / "001" / "round.json").exists() or not _alive(pid),
                    "round 1 of the PTS run")
        run(["nvme", "set-feature", controller(first), "--feature-id=6", "--value=1"])
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        finish_ptsbench(pid, args, output, ok=None)
        raise
    finish_ptsbench(pid, args, output, ok=True)
    manifest = json.loads((out / "manifest.json").read_text())
    readings = [(each["round"], each["read"]) for each in manifest["write_cache_rounds"]]
    assert readings[0] == (1, False) and readings[-1][1] is True, readings
    turned = next(number for number, read in readings if read)
    reasons = [r for r in manifest["compliance"]["reasons"] if "write cache read on at the end of" in r]
    assert reasons and reasons[0].startswith(f"write cache read on at the end of IOPS round {turned} "), reasons
    assert manifest["write_cache_restored"]["action"] == "kept", manifest["write_cache_restored"]
    assert device_write_cache(disk, first) == 1
    return f"rounds read {readings}; deviation: {reasons[0]}; {manifest['write_cache_restored']['message']}"


@check("purge-fleet-nvme")
def purge_fleet(lab: Lab) -> str:
    """A fleet on both namespaces of one controller whose sanitize and format reach every namespace (the stand-in
    nvme of purge-scope-nvme): --purge nvme-sanitize is refused with one line naming the other member, in the dry
    run and the run (nothing made), even with --purge-scope subsystem; auto plans blkdiscard for each member, and
    the run purges each namespace on its own: no sanitize or format is ever sent. The two members share the
    controller's write cache: one leaves it, the last one puts it back on."""
    first, second = _namespaces_of(NAMESPACES_SERIAL)
    ctrl = os.path.basename(controller(first))
    bin_dir = WORK / "stand-in-fleet"
    bin_dir.mkdir(exist_ok=True)
    log = WORK / "stand-in-fleet.log"
    script = STAND_IN_NVME.format(real=shutil.which("nvme"))
    (bin_dir / "nvme").write_text(script.replace("\n", f'\necho "$*" >> {log}\n', 1))
    (bin_dir / "nvme").chmod(0o755)
    saved = dict(os.environ)
    os.environ.update(PATH=f"{bin_dir}:{os.environ['PATH']}", LAB_SANICAP="0x2", LAB_FNA="0x3")
    out = WORK / "purge-fleet"
    fleet = ["pts", first, second, "--profile", "demo", "--spec", "1.1", "--tests", "iops", "--round-time", "2",
             "--max-rounds", "2", "--block-sizes", "iops=4k", "--mixes", "iops=0", "--active-range", "25",
             "--precondition-multiple", "1", "--destructive", "--out", str(out)]
    said = []
    try:
        for more in (["--dry-run"], [], ["--purge-scope", "subsystem"]):
            refused = ptsbench(*fleet, "--purge", "nvme-sanitize", *more, ok=False).stderr.strip().splitlines()
            assert len([line for line in refused if "ptsbench: error:" in line]) == 1, refused
            assert refused[-1].startswith(
                f"ptsbench: error: refusing to purge {first} with nvme-sanitize: sanitize erases all 2 namespaces "
                f"of {ctrl}: {os.path.basename(first)}, {os.path.basename(second)}, and {second}: it is another "
                "target of this fleet, measured at the same time"), refused[-1]
            assert not out.exists(), f"a refused fleet made {out}"
        said.append(refused[-1].removeprefix("ptsbench: error: "))
        dry = ptsbench(*fleet, "--dry-run").stdout
        planned = [line for line in dry.splitlines() if "Purge at run time" in line]
        assert len(planned) == 2 and all("blkdiscard" in line for line in planned), planned
        assert "# guard: the fleet would start" in dry, dry[-800:]
        log.unlink(missing_ok=True)
        ptsbench(*fleet)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    sent = log.read_text().splitlines() if log.exists() else []
    assert not [line for line in sent if line.split()[:1] in (["sanitize"], ["format"])], sent
    for dev, part in ((first, os.path.basename(first)), (second, os.path.basename(second))):
        folder = out / "devices" / part
        attempts = [a for path in sorted(folder.glob("pts/*/purge.json")) for a in json.loads(path.read_text())]
        done = [(a["method"], a["ok"], a["commands"][-1].split()[-1]) for a in attempts]  # commands: shell lines
        assert done == [("blkdiscard", True, dev)], attempts
        assert json.loads((folder / "manifest.json").read_text())["status"] == "done"
    # the members share the controller's write cache: one count, the last one out puts it back
    restored = [json.loads((out / "devices" / os.path.basename(dev) / "manifest.json").read_text())[
        "write_cache_restored"] for dev in (first, second)]
    assert sorted(each["action"] for each in restored) == ["left", "restored"], restored
    assert device_write_cache(NAMESPACES_DISK, first) == 1, "the fleet did not put the write cache back"
    said.append(f"auto planned and ran blkdiscard of each namespace alone; {len(sent)} nvme commands, no sanitize "
                "or format; the write cache shared by both members, put back on by the last one out")
    return " | ".join(said)


# ---------------------------------------------------------------------------------------------------------------


def run_check(lab: Lab, name: str, checks: dict[str, Check] = CHECKS) -> dict[str, object]:
    started = time.monotonic()
    try:
        detail, ok = checks[name](lab) or "", True
    except Exception as error:  # noqa: BLE001 - every failure is a result, the next check still runs
        detail, ok = f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=3)}", False
    seconds = time.monotonic() - started
    print(f"{'ok  ' if ok else 'FAIL'} {name} ({seconds:.1f} s): {detail[:2000]}", flush=True)
    return {"check": name, "ok": ok, "seconds": round(seconds, 1), "detail": detail}


def append_record(results: Path, record: dict[str, object]) -> None:
    """A check's result as one JSON line, appended in one write as soon as the check ends (a background check's
    process appends its own), so a guest stopped by the time limit keeps every result made before."""
    fd = os.open(results, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(record) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def start_background(lab: Lab, name: str, results: Path) -> tuple[int, Path]:
    """Fork a child running one check; it appends its result to `results` and leaves it in the returned file."""
    result = WORK / f"{name}.result.json"
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            record = run_check(lab, name)
            append_record(results, record)
            result.write_text(json.dumps(record))
        finally:
            os._exit(0)
    return pid, result


def run_in_order(lab: Lab, names: list[str], results: Path, checks: dict[str, Check]) -> int:
    """A variant's checks one after another, each result stored as soon as its check ends; 0 when all passed."""
    WORK.mkdir(parents=True, exist_ok=True)
    warm_up()
    records = []
    for name in names:
        records.append(run_check(lab, name, checks))
        append_record(results, records[-1])
    return 0 if all(record["ok"] for record in records) else 1


def run_checks(names: list[str], results: Path) -> int:
    shutil.rmtree(WORK, ignore_errors=True)  # the host's folder of that name, if any, stays as it is
    WORK.mkdir(parents=True)
    (WORK / "lab.fio").write_text(JOB)
    devs = find_disks()
    lab = Lab(devs, results.parent / "samples")
    print(f"lab disks: {devs}", flush=True)
    started = time.monotonic()
    warm_up()
    print(f"imported ptsbench and its report modules in {time.monotonic() - started:.1f} s", flush=True)
    background: dict[str, tuple[int, Path]] = {}
    records = []

    def keep(record: dict[str, object]) -> None:
        records.append(record)
        append_record(results, record)

    def join(name: str) -> None:
        pid, result = background.pop(name)
        os.waitpid(pid, 0)
        if result.exists():
            records.append(json.loads(result.read_text()))
        else:
            keep({"check": name, "ok": False, "seconds": 0, "detail": "the check's process ended without a result"})

    for name in names:
        for earlier in WAITS[name]:
            if earlier in background:
                join(earlier)
        if name in BACKGROUND:
            background[name] = start_background(lab, name, results)
        else:
            keep(run_check(lab, name))
    for name in list(background):
        join(name)
    return 0 if all(record["ok"] for record in records) else 1


def summarize(names: list[str], results: Path) -> int:
    records = {}
    if results.exists():
        for line in results.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                records[record["check"]] = record
    passed = [name for name in names if records.get(name, {}).get("ok")]
    for name in names:
        if name not in records:
            print(f"FAIL {name}: no result (the guest stopped before it)")
        elif not records[name]["ok"]:
            print(f"FAIL {name}: {records[name]['detail'][:600]}")
    print(f"device lab: {len(passed)} passed, {len(names) - len(passed)} failed")
    return 0 if len(passed) == len(names) else 1


def lab_main(description: str | None, checks: dict[str, Check], run_names: Callable[[list[str], Path], int]) -> int:
    """The command line of a lab's guest program: --list, --summarize, or run the checks named (all by default)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path)
    parser.add_argument("--summarize", type=Path)
    parser.add_argument("--checks", help="comma-separated check names (default: all)")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.checks.split(",") if n] if args.checks else list(checks)
    unknown = [n for n in names if n not in checks]
    if unknown:
        parser.error(f"unknown checks {unknown}; known: {', '.join(checks)}")
    if args.list:
        print("\n".join(names))
        return 0
    if args.summarize:
        return summarize(names, args.summarize)
    if args.results is None:
        parser.error("--results or --summarize is needed")
    return run_names(names, args.results)


def main() -> int:
    return lab_main(__doc__, CHECKS, run_checks)


if __name__ == "__main__":
    sys.exit(main())

