"""The device's volatile write cache (PTS: Enterprise runs with it disabled, Client with it enabled).

NVMe: feature 6 (Volatile Write Cache) belongs to the controller: it is read and set on /dev/nvmeN with namespace
id 0 (set on a namespace, a controller answers "Feature Not Namespace Specific"), with nvme-cli's long options:
its short ones changed (2.4: `-v` is the value; 2.13: `-v` is --verbose, the value `-V`, one not given is 0, so
`-v 1` turned the cache off). A controller whose id-ctrl VWC bit 0 is clear has no volatile write cache and aborts
feature 6. SCSI: the WCE bit of the caching mode page (sdparm), current value only. SATA: hdparm -W. None of them is
saved: a power cycle resets it."""

import os
import re
import shlex
import shutil

from ptsbench.device.purge import CommandLog, id_ctrl_value, tool_message
from ptsbench.device.scope import controller_namespaces
from ptsbench.device.target import Target, block_sysfs_dir, read_sysfs

NVME_FEATURE_VWC = "6"  # Volatile Write Cache feature id
SCSI_TRANSPORTS = ("scsi", "sas")


def read_write_cache(target: Target, facts: dict[str, object], log: CommandLog | None = None) -> bool | None:
    """True when the volatile write cache is on, False when off, None when unknown.

    NVMe: nvme get-feature; SATA: hdparm -W; otherwise the kernel's view in sysfs queue/write_cache."""
    log = log if log is not None else CommandLog()
    device = _disk(target, facts)
    if device is None:
        return None
    tool_value = _read_with_tool(device, facts, log)
    return tool_value if tool_value is not None else _read_sysfs(device)


def set_write_cache(
    target: Target, facts: dict[str, object], enabled: bool, log: CommandLog | None = None
) -> tuple[bool, str]:
    """Switch the device's write cache and read it back: (done, message naming the commands run)."""
    log = log if log is not None else CommandLog()
    wanted = "on" if enabled else "off"
    if target.kind != "block":
        return False, f"{target.path} is a file: the write cache of the disk under it is left as is"
    device = _disk(target, facts) or target.path
    transport = str(facts.get("transport") or "")
    if transport.startswith("nvme") and shutil.which("nvme"):
        device = _nvme_controller(device, facts)
        argv = ["nvme", "set-feature", device, f"--feature-id={NVME_FEATURE_VWC}", "--namespace-id=0",
                f"--value={int(enabled)}"]
    elif transport == "sata" and shutil.which("hdparm"):
        argv = ["hdparm", f"-W{1 if enabled else 0}", device]
    elif transport in SCSI_TRANSPORTS and shutil.which("sdparm"):
        argv = ["sdparm", "--quiet", f"--set=WCE={int(enabled)}", device]
    else:
        return False, f"cannot set the write cache of {device} (transport {transport or 'unknown'}): left as is"
    done = log.run(argv)
    ran = "ran: " + shlex.join(argv)
    if done.returncode != 0 and argv[0] == "nvme" and _nvme_vwc_present(device, log) is False:
        # nothing to switch: writes reach the media (or its power-safe buffer) before they complete
        return not enabled, f"{device} has no volatile write cache (id-ctrl VWC bit 0 clear): nothing to turn {wanted}"
    if done.returncode != 0:
        return False, f"turning the write cache {wanted} failed: {tool_message(done)} ({ran})"
    now = read_write_cache(target, facts, log)
    if now is not enabled:
        return False, f"write cache of {device} still reads {_describe(now)} after turning it {wanted} ({ran})"
    served = controller_namespaces(device) if transport.startswith("nvme") else []
    scope = (f"; a controller feature: it holds for all {len(served)} namespaces of {os.path.basename(device)}: "
             + ", ".join(os.path.basename(name) for name in served)) if len(served) > 1 else ""
    return True, f"write cache of {device} turned {wanted} ({ran}{scope})"


def _disk(target: Target, facts: dict[str, object]) -> str | None:
    disk = facts.get("disk")
    if isinstance(disk, str):
        return disk
    return target.path if target.kind == "block" else None


def _nvme_controller(device: str, facts: dict[str, object]) -> str:
    controller = facts.get("nvme_controller")
    return controller if isinstance(controller, str) else device


def _read_with_tool(device: str, facts: dict[str, object], log: CommandLog) -> bool | None:
    transport = str(facts.get("transport") or "")
    if transport.startswith("nvme") and shutil.which("nvme"):
        controller = _nvme_controller(device, facts)
        done = log.run(["nvme", "get-feature", controller, f"--feature-id={NVME_FEATURE_VWC}"])
        match = re.search(r"Current value:\s*(0x[0-9a-fA-F]+|\d+)", done.stdout) if done.returncode == 0 else None
        if match:
            return bool(int(match.group(1), 0) & 1)
        return False if done.returncode != 0 and _nvme_vwc_present(controller, log) is False else None
    if transport == "sata" and shutil.which("hdparm"):
        done = log.run(["hdparm", "-W", device])
        match = re.search(r"write-caching\s*=\s*([01])", done.stdout) if done.returncode == 0 else None
        return match.group(1) == "1" if match else None
    if transport in SCSI_TRANSPORTS and shutil.which("sdparm"):
        # sdparm may exit non-zero after printing the current value (a device without saved values, like QEMU's)
        done = log.run(["sdparm", "--quiet", "--get=WCE", device])
        match = re.search(r"^WCE\s+([01])\b", done.stdout, re.MULTILINE)
        return match.group(1) == "1" if match else None
    return None


def _nvme_vwc_present(controller: str, log: CommandLog) -> bool | None:
    """Whether the controller has a volatile write cache (id-ctrl VWC bit 0); None when id-ctrl does not say."""
    vwc = id_ctrl_value(log, controller, "vwc")
    return None if vwc is None else bool(vwc & 1)


def _read_sysfs(device: str) -> bool | None:
    sysdir = block_sysfs_dir(device)
    value = read_sysfs(os.path.join(sysdir, "queue", "write_cache")) if sysdir else None
    return {"write back": True, "write through": False}.get(value or "")


def _describe(state: bool | None) -> str:
    return {True: "on", False: "off", None: "unknown"}[state]
