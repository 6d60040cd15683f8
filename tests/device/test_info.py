"""Host and target facts, checked against independent sources (uname, sysconf, findmnt, blockdev)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LOOP_SIZE_BYTES, attached_loop
from ptsbench.device.info import HOST_FACT_KEYS, TARGET_FACT_KEYS, device_facts, host_facts, target_facts
from ptsbench.device.target import TESTFILE_NAME, Target, resolve_target
from test_guard import _write_mbr


def _tool(argv: list[str]) -> str:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} not installed")
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def _findmnt(column: str, path: str) -> str:
    """One findmnt column of the mount holding path (the last line: the topmost of stacked mounts)."""
    return _tool(["findmnt", "-n", "-o", column, "--target", path]).splitlines()[-1].strip()


def test_host_facts_match_uname_and_sysconf() -> None:
    facts = host_facts()
    assert tuple(facts) == HOST_FACT_KEYS
    assert facts["kernel"] == _tool(["uname", "-r"])
    assert facts["arch"] == _tool(["uname", "-m"])
    assert facts["cpu_count"] == os.cpu_count()
    page_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert facts["memory_bytes"] == page_bytes
    assert isinstance(facts["cpu_model"], str) and facts["cpu_model"]
    if os.path.exists("/etc/os-release"):
        lines = Path("/etc/os-release").read_text().splitlines()
        pretty = [line for line in lines if line.startswith("PRETTY_NAME=")]
        assert pretty and facts["os"] == pretty[0].split("=", 1)[1].strip('"')


def test_file_facts_match_findmnt(tmp_path: Path) -> None:
    facts = target_facts(resolve_target(str(tmp_path / "f.dat"), 4096))
    assert set(facts) == set(TARGET_FACT_KEYS)
    assert (facts["path"], facts["kind"], facts["size_bytes"]) == (str(tmp_path / "f.dat"), "file", 4096)
    assert facts["filesystem"] == _findmnt("FSTYPE", str(tmp_path))
    source = _findmnt("SOURCE", str(tmp_path))
    if source.startswith("/dev/") and os.path.exists(source):
        assert facts["backing_device"] == os.path.realpath(source)
        expected_ss = _tool(["lsblk", "-d", "-n", "-o", "LOG-SEC", source])
        assert facts["logical_sector_bytes"] == int(expected_ss)
        assert isinstance(facts["rotational"], bool)
        assert facts["disk"] is not None


def test_tmpfs_file_has_no_device_facts() -> None:
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    facts = target_facts(resolve_target("/dev/shm/ptsbench-info-test.dat"))
    assert facts["filesystem"] == _findmnt("FSTYPE", "/dev/shm")
    assert facts["backing_device"] is None and facts["disk"] is None and facts["model"] is None


def test_unknown_device_gives_none_not_errors() -> None:
    facts = target_facts(Target(path="/nonexistent/dev", kind="block", size_bytes=None, requested="x"))
    assert set(facts) == set(TARGET_FACT_KEYS)
    assert [key for key, value in facts.items() if value is not None] == ["path", "kind"]


@pytest.mark.root
@pytest.mark.parametrize("sector_bytes", [512, 4096])
def test_loop_device_facts_match_blockdev(tmp_path: Path, sector_bytes: int) -> None:
    with attached_loop(str(tmp_path), sector_bytes=sector_bytes) as device:
        facts = target_facts(resolve_target(device))
        assert facts["logical_sector_bytes"] == sector_bytes == int(_tool(["blockdev", "--getss", device]))
        assert facts["physical_sector_bytes"] == int(_tool(["blockdev", "--getpbsz", device]))
        assert facts["size_bytes"] == LOOP_SIZE_BYTES == int(_tool(["blockdev", "--getsize64", device]))
        assert (facts["transport"], facts["disk"], facts["kind"]) == ("loop", device, "block")
        assert facts["backing_file"] == str(tmp_path / "loop.img") == _tool(["losetup", "-n", "-O", "BACK-FILE",
                                                                               device])
        assert facts["rotational"] is (_tool(["lsblk", "-d", "-n", "-o", "ROTA", device]) == "1")
        assert facts["zoned"] == "none" == _tool(["lsblk", "-d", "-n", "-o", "ZONED", device])
        integrity = Path("/sys/block", os.path.basename(device), "integrity")  # kernels with integrity support
        assert facts["protection_information"] == ("none" if integrity.exists() else None)


@pytest.mark.root
def test_partition_reports_its_disk(tmp_path: Path) -> None:
    with attached_loop(str(tmp_path)) as device:
        _write_mbr(device)
        subprocess.run(["partx", "-a", device], capture_output=True, check=False)
        if not os.path.exists(device + "p1"):
            pytest.skip("the kernel did not create the partition node")
        facts = target_facts(resolve_target(device + "p1"))
        assert facts["disk"] == device
        assert facts["size_bytes"] == 16384 * 512
        assert facts["transport"] == "loop"


def test_nvme_sysfs_layout(tmp_path: Path) -> None:
    """No NVMe hardware here: a copy of the sysfs layout of an NVMe/TCP namespace checks the reading rules."""
    controller = tmp_path / "nvme0"
    controller.mkdir()
    for name, value in {"model": "ACME NVMe 1TB", "serial": "S123 ", "firmware_rev": "1.2.3",
                        "transport": "tcp"}.items():
        (controller / name).write_text(value + "\n")
    namespace = tmp_path / "nvme0n1"
    (namespace / "queue").mkdir(parents=True)
    (namespace / "queue" / "logical_block_size").write_text("4096\n")
    (namespace / "queue" / "rotational").write_text("0\n")
    (namespace / "wwid").write_text("eui.0025388b91d0cafe\n")
    (namespace / "device").symlink_to(controller)
    facts = device_facts(str(namespace))
    assert facts["model"] == "ACME NVMe 1TB" and facts["serial"] == "S123" and facts["firmware"] == "1.2.3"
    assert (facts["transport"], facts["nvme_controller"]) == ("nvme-tcp", "/dev/nvme0")
    assert facts["disk"] == "/dev/nvme0n1"
    assert (facts["logical_sector_bytes"], facts["rotational"]) == (4096, False)
    assert facts["physical_sector_bytes"] is None  # not in this tree: None, never an error
    assert facts["wwid"] == "eui.0025388b91d0cafe"


def _scsi_disk(root: Path, host_path: str, name: str, strings: dict[str, str]) -> Path:
    """A SCSI disk's sysfs directories as the kernel lays them out (seen in the device lab's QEMU guest)."""
    device = root / host_path
    disk = device / "block" / name
    (disk / "queue").mkdir(parents=True)
    (disk / "queue" / "rotational").write_text("1\n")
    for key, value in {"scsi_level": "6", **strings}.items():
        (device / key).write_text(value + "\n")
    (disk / "device").symlink_to(device)
    return disk


def test_scsi_disk_behind_virtio_is_scsi(tmp_path: Path) -> None:
    """virtio-scsi: the disk takes SCSI commands (sdparm, sg_format), so its transport is scsi, not virtio."""
    disk = _scsi_disk(tmp_path, "pci0000:00/0000:00:06.0/virtio2/host0/target0:0:0/0:0:0:0", "sda",
                      {"vendor": "QEMU", "model": "LAB SSD", "rev": "2.5+"})
    facts = device_facts(str(disk))
    assert (facts["transport"], facts["vendor"], facts["model"], facts["firmware"]) == ("scsi", "QEMU", "LAB SSD",
                                                                                       "2.5+")


def _ata_words(fields: dict[int, str]) -> str:
    """256 IDENTIFY words as libata prints them in ata_device/devX.Y/id (hex, 8 a line), strings at their words."""
    words = [0] * 256
    for first, text in fields.items():
        raw = text.encode("ascii")
        words[first : first + len(raw) // 2] = [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2)]
    return "".join(f"{word:04x}{chr(10) if index % 8 == 7 else ' '}" for index, word in enumerate(words))


def test_sata_strings_come_whole_from_ata_identify(tmp_path: Path) -> None:
    """libata's SCSI strings cut the model to 16 and the firmware to 4 characters; IDENTIFY has them whole."""
    port = "pci0000:00/0000:00:07.0/ata1"
    disk = _scsi_disk(tmp_path, f"{port}/host1/target1:0:0/1:0:0:0", "sdc",
                      {"vendor": "ATA", "model": "LAB SATA DISK WI", "rev": "W123"})
    ident = tmp_path / port / "link1" / "dev1.0" / "ata_device" / "dev1.0"
    ident.mkdir(parents=True)
    (ident / "id").write_text(_ata_words({10: "LABSATA0".ljust(20), 23: "LABFW123",
                                          27: "LAB SATA DISK WITH A 40 CHARACTER MODEL".ljust(40)}))
    facts = device_facts(str(disk))
    assert facts["transport"] == "sata" and facts["serial"] == "LABSATA0"
    assert (facts["model"], facts["firmware"]) == ("LAB SATA DISK WITH A 40 CHARACTER MODEL", "LABFW123")
    (ident / "id").write_text("garbage\n")  # unreadable IDENTIFY: the SCSI strings, never an error
    assert device_facts(str(disk))["model"] == "LAB SATA DISK WI"


def _ptsbench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}  # long temporary paths: no wrapping in the table
    argv = [sys.executable, "-m", "ptsbench", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=False, env=env)


def test_cli_info_json(tmp_path: Path) -> None:
    done = _ptsbench("info", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["target"]["path"] == str(tmp_path / TESTFILE_NAME)
    assert facts["target"]["filesystem"] == _findmnt("FSTYPE", str(tmp_path))
    assert facts["host"]["cpu_count"] == os.cpu_count()
    assert facts["ptsbench"]["fio_log_reader"] == "compiled C"  # the test install builds the C parser


def test_cli_info_table_shows_facts(tmp_path: Path) -> None:
    done = _ptsbench("info", str(tmp_path / "t.dat"))
    assert done.returncode == 0, done.stderr
    assert str(tmp_path / "t.dat") in done.stdout
    assert "logical sector" in done.stdout and "memory" in done.stdout
    assert "fio log reader" in done.stdout and "compiled C" in done.stdout
    assert _findmnt("FSTYPE", str(tmp_path)) in done.stdout


def test_cli_info_bad_target_is_one_line(tmp_path: Path) -> None:
    done = _ptsbench("info", str(tmp_path / "missing" / "f.dat"))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("ptsbench: error: target directory does not")


@pytest.mark.root
def test_cli_info_table_leaves_out_facts_that_do_not_apply(tmp_path: Path) -> None:
    with attached_loop(str(tmp_path)) as device:
        done = _ptsbench("info", device)
    assert done.returncode == 0, done.stderr
    labels = {line.split("│")[1].strip() for line in done.stdout.splitlines() if line.count("│") == 3}
    assert "backing file" in labels and str(tmp_path / "loop.img") in done.stdout
    assert not labels & {"backing device", "filesystem", "NVMe controller"}
    assert {"model", "serial", "size"} <= labels  # facts that apply stay, 'unknown' when unread


def test_version_is_the_installed_distributions() -> None:
    """ptsbench.__version__ is a constant (no importlib.metadata at start-up); the installed package says the same."""
    import importlib.metadata

    import ptsbench

    assert ptsbench.__version__ == importlib.metadata.version("ptsbench")
