"""Device and host facts from sysfs and /proc: fast, no subprocess, None for anything not exposed."""

import glob
import os
import platform
import re
import socket

from ptsbench.device.target import (
    Mount,
    Target,
    block_sysfs_dir,
    devnum_sysfs_dir,
    read_mounts,
    read_sysfs,
)

TARGET_FACT_KEYS = (
    "path",
    "kind",
    "size_bytes",
    "filesystem",
    "backing_device",
    "disk",
    "transport",
    "backing_file",
    "model",
    "vendor",
    "serial",
    "firmware",
    "wwid",
    "nvme_controller",
    "logical_sector_bytes",
    "physical_sector_bytes",
    "rotational",
    "write_cache",
    "zoned",
    "metadata_bytes",
    "protection_information",
)
HOST_FACT_KEYS = ("hostname", "os", "kernel", "arch", "cpu_model", "cpu_count", "memory_bytes")

# Name prefixes of virtual block devices -> transport.
_VIRTUAL_TRANSPORTS = (
    ("loop", "loop"),
    ("dm-", "dm"),
    ("md", "md"),
    ("zram", "zram"),
    ("nbd", "nbd"),
    ("ram", "ram"),
    ("rbd", "rbd"),
    ("mmcblk", "mmc"),
)
_MAX_SLAVE_DEPTH = 4


def host_facts() -> dict[str, object]:
    """Hostname, OS (PRETTY_NAME), kernel, arch, CPU model and count, memory in bytes."""
    return {
        "hostname": socket.gethostname() or None,
        "os": _os_pretty_name(),
        "kernel": platform.release() or None,
        "arch": platform.machine() or None,
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
    }


def target_facts(target: Target) -> dict[str, object]:
    """Facts about a target and the device under it; every key of TARGET_FACT_KEYS is present."""
    facts: dict[str, object] = dict.fromkeys(TARGET_FACT_KEYS)
    facts.update(path=target.path, kind=target.kind, size_bytes=target.size_bytes)
    if target.kind == "block":
        sysdir = block_sysfs_dir(target.path)
    else:
        mount = _mount_of(target.path)
        facts["filesystem"] = mount.fstype if mount else None
        sysdir = _backing_sysdir(target.path, mount)
        facts["backing_device"] = _dev_node(sysdir) if sysdir else None
    if sysdir:
        facts.update(device_facts(sysdir))
    return facts


def device_facts(sysdir: str) -> dict[str, object]:
    """Facts of the whole disk holding the block device whose resolved sysfs directory is `sysdir`."""
    disk = _whole_disk(sysdir)
    ident = _identity_dir(disk)
    device = os.path.join(ident, "device")
    firmware = read_sysfs(os.path.join(device, "firmware_rev")) or read_sysfs(os.path.join(device, "rev"))
    rotational = read_sysfs(os.path.join(disk, "queue", "rotational"))
    transport = _transport(ident)
    # a SATA disk's SCSI strings are cut to 16 (model) and 4 (firmware) characters: ATA IDENTIFY has them whole
    ata = _ata_identify_strings(ident) if transport == "sata" else {}
    return {
        "disk": _dev_node(disk),
        "transport": transport,
        "backing_file": read_sysfs(os.path.join(disk, "loop", "backing_file")),  # what a loop device really is
        "model": ata.get("model") or read_sysfs(os.path.join(device, "model")),
        "vendor": _vendor(device),
        "serial": ata.get("serial") or _serial(ident),
        "firmware": ata.get("firmware") or firmware,
        "wwid": read_sysfs(os.path.join(ident, "wwid")) or read_sysfs(os.path.join(device, "wwid")),
        "nvme_controller": _nvme_controller(ident),
        "logical_sector_bytes": _int(read_sysfs(os.path.join(disk, "queue", "logical_block_size"))),
        "physical_sector_bytes": _int(read_sysfs(os.path.join(disk, "queue", "physical_block_size"))),
        "rotational": None if rotational is None else rotational == "1",
        "write_cache": read_sysfs(os.path.join(disk, "queue", "write_cache")),
        "zoned": read_sysfs(os.path.join(disk, "queue", "zoned")),  # none, host-aware, host-managed
        "metadata_bytes": _int(read_sysfs(os.path.join(disk, "metadata_bytes"))),  # NVMe, newer kernels
        "protection_information": _protection(disk),
    }


def _protection(disk: str) -> str | None:
    """The kernel's integrity profile of a disk with protection information (T10-DIF-TYPE1-CRC...); "none" for a
    disk without, None when the kernel does not say."""
    profile = read_sysfs(os.path.join(disk, "integrity", "format"))
    return "none" if profile == "nop" else profile


def _mount_of(path: str) -> Mount | None:
    """The mount holding `path` (or its parent directory when the file does not exist yet)."""
    existing = path
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    try:
        st_dev = os.stat(existing).st_dev
    except OSError:
        return None
    devnum = f"{os.major(st_dev)}:{os.minor(st_dev)}"
    matches = [mount for mount in read_mounts() if mount.devnum == devnum]
    real = os.path.realpath(existing)
    matches.sort(key=lambda mount: len(mount.mount_point) if real.startswith(mount.mount_point) else -1)
    return matches[-1] if matches else None


def _backing_sysdir(path: str, mount: Mount | None) -> str | None:
    """Sysfs dir of the block device under a file: its st_dev, else the mount source (btrfs: anon st_dev)."""
    if mount is not None:
        major, _, minor = mount.devnum.partition(":")
        if major.isdigit() and minor.isdigit() and int(major) != 0:
            found = devnum_sysfs_dir(int(major), int(minor))
            if found:
                return found
        if mount.source.startswith("/dev/"):
            return block_sysfs_dir(mount.source)
    return None


def _whole_disk(sysdir: str) -> str:
    """A partition's parent disk directory; the directory itself otherwise."""
    return os.path.dirname(sysdir) if os.path.isfile(os.path.join(sysdir, "partition")) else sysdir


def _identity_dir(disk: str) -> str:
    """Follow a stacked device (dm, md) down to its one underlying disk, if it has exactly one."""
    for _ in range(_MAX_SLAVE_DEPTH):
        try:
            slaves = os.listdir(os.path.join(disk, "slaves"))
        except OSError:
            return disk
        if len(slaves) != 1:
            return disk
        disk = _whole_disk(os.path.realpath(os.path.join(disk, "slaves", slaves[0])))
    return disk


def _transport(disk: str) -> str | None:
    """nvme (nvme-tcp, nvme-rdma...), sata, scsi, usb, virtio, loop, dm, md... from names and sysfs paths."""
    name = os.path.basename(disk)
    if name.startswith("nvme"):
        kind = read_sysfs(os.path.join(disk, "device", "transport"))
        return "nvme" if kind in (None, "pcie") else f"nvme-{kind}"
    for prefix, transport in _VIRTUAL_TRANSPORTS:
        if name.startswith(prefix):
            return transport
    if "/usb" in disk:
        return "usb"
    if "/ata" in disk or read_sysfs(os.path.join(disk, "device", "vendor")) == "ATA":
        return "sata"
    if os.path.exists(os.path.join(disk, "device", "scsi_level")):
        return "scsi"  # also a SCSI disk behind virtio-scsi: it takes SCSI commands (sdparm, sg_format)
    if "/virtio" in disk:
        return "virtio"
    return None


# ATA IDENTIFY DEVICE string fields: (first word, word count); two characters per word, high byte first
_ATA_STRINGS = {"serial": (10, 10), "firmware": (23, 4), "model": (27, 20)}


def _ata_identify_strings(disk: str) -> dict[str, str]:
    """Model, serial and firmware from the IDENTIFY data libata keeps in sysfs (ata_device/devX.Y/id, 256
    hex words), for the ATA device under the disk's SCSI device (its SCSI target id is the ATA device number);
    empty when not found."""
    real = os.path.realpath(os.path.join(disk, "device"))
    port = re.search(r"/(ata\d+)/", real)
    scsi_id = os.path.basename(real).split(":")
    if port is None or len(scsi_id) != 4:
        return {}
    root = real[: port.end()]
    found = sorted(glob.glob(os.path.join(root, "link*", "dev*", "ata_device", "dev*", "id")))
    if len(found) > 1:
        found = [path for path in found if path.endswith(f".{scsi_id[2]}/id")]
    try:
        with open(found[0], encoding="ascii") as handle:
            words = [int(word, 16) for word in handle.read().split()]
    except (IndexError, OSError, ValueError):
        return {}
    if len(words) < 256 or len(found) != 1:
        return {}
    strings = {}
    for key, (first, count) in _ATA_STRINGS.items():
        raw = b"".join(word.to_bytes(2, "big") for word in words[first : first + count])
        text = raw.decode("ascii", errors="replace").strip(" \x00")
        if text:
            strings[key] = text
    return strings


def _vendor(device: str) -> str | None:
    """The SCSI/ATA vendor string; PCI vendor ids (0x1af4) are not a vendor name."""
    vendor = read_sysfs(os.path.join(device, "vendor"))
    return None if vendor is None or vendor.startswith("0x") else vendor


def _serial(disk: str) -> str | None:
    """Serial from sysfs: NVMe controller, virtio disk, or the SCSI unit serial VPD page (0x80)."""
    for path in (os.path.join(disk, "device", "serial"), os.path.join(disk, "serial")):
        value = read_sysfs(path)
        if value:
            return value
    try:
        with open(os.path.join(disk, "device", "vpd_pg80"), "rb") as handle:
            page = handle.read()
    except OSError:
        return None
    length = int.from_bytes(page[2:4], "big") if len(page) >= 4 else 0
    serial = page[4 : 4 + length].decode("ascii", errors="replace").strip()
    return serial or None


def _nvme_controller(disk: str) -> str | None:
    """/dev/nvmeN for an NVMe namespace (first controller of a multipath subsystem)."""
    if not os.path.basename(disk).startswith("nvme"):
        return None
    device = os.path.realpath(os.path.join(disk, "device"))
    if re.fullmatch(r"nvme\d+", os.path.basename(device)):
        return "/dev/" + os.path.basename(device)
    try:
        controllers = sorted(entry for entry in os.listdir(device) if re.fullmatch(r"nvme\d+", entry))
    except OSError:
        return None
    return "/dev/" + controllers[0] if controllers else None


def _dev_node(sysdir: str) -> str:
    return "/dev/" + os.path.basename(sysdir)


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def _os_pretty_name() -> str | None:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME")
    except OSError:
        return None


def _cpu_model() -> str | None:
    """'model name' (x86), else 'Model'/'Hardware' (ARM) from /proc/cpuinfo, else platform.processor()."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()
    except OSError:
        lines = []
    for key in ("model name", "Model", "Hardware", "cpu model"):
        for line in lines:
            name, _, value = line.partition(":")
            if name.strip() == key and value.strip():
                return value.strip()
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
