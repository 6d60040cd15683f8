"""What an NVMe purge reaches beyond the namespace it is asked for. Sanitize always erases every namespace of the NVM
subsystem; a format does too when the controller's FNA bits say so (bit 0: a format, bit 1: a secure erase applies to
all namespaces). Each other namespace is judged with the write guard before anything is erased, and one that a run
measures is never erased: another target of the same fleet (named beforehand, or held by this process while it
runs) or a namespace another ptsbench run holds."""

import glob
import os
import re
import stat
from collections.abc import Sequence

from ptsbench.device.claim import other_run_reason
from ptsbench.device.guard import block_device_signatures, in_use_reasons
from ptsbench.device.inuse import held_here
from ptsbench.device.target import read_sysfs

SYSFS = "/sys"
PURGE_SCOPES = ("namespace", "subsystem")  # --purge-scope: only the named namespace may be erased, or them all
_NAMESPACE = re.compile(r"nvme\d+n\d+")
_CONTROLLER = re.compile(r"nvme\d+")
_PATH = re.compile(r"nvme(\d+)c\d+n(\d+)")  # a multipath path device: subsystem, controller, namespace


def subsystem_namespaces(controller: str, sysfs: str = SYSFS) -> list[str]:
    """Every namespace block device (/dev/nvmeXnY) of the NVM subsystem of `controller` (/dev/nvmeN), through all
    its controllers: the kernel's multipath heads under /sys/class/nvme-subsystem, and each controller's own
    namespaces (without native multipath)."""
    name = os.path.basename(controller)
    nqn = read_sysfs(os.path.join(sysfs, "class", "nvme", name, "subsysnqn"))
    controllers, namespaces = {name}, set()
    for subsystem in glob.glob(os.path.join(sysfs, "class", "nvme-subsystem", "*")):
        if nqn is None or read_sysfs(os.path.join(subsystem, "subsysnqn")) != nqn:
            continue
        for entry in _entries(subsystem):
            if _CONTROLLER.fullmatch(entry):
                controllers.add(entry)
            elif _NAMESPACE.fullmatch(entry):
                namespaces.add(entry)
    for each in controllers:
        namespaces.update(entry for entry in _entries(os.path.join(sysfs, "class", "nvme", each))
                          if _NAMESPACE.fullmatch(entry))
    return ["/dev/" + entry for entry in sorted(namespaces, key=_natural)]


def controller_namespaces(controller: str, sysfs: str = SYSFS) -> list[str]:
    """The namespace block devices a controller (/dev/nvmeN) serves: its own (nvmeNnM) and, with native multipath,
    the heads of the paths it holds (nvmeScNnM -> /dev/nvmeSnM)."""
    found = set()
    for entry in _entries(os.path.join(sysfs, "class", "nvme", os.path.basename(controller))):
        path = _PATH.fullmatch(entry)
        if _NAMESPACE.fullmatch(entry) or path:
            found.add(f"nvme{path[1]}n{path[2]}" if path else entry)
    return ["/dev/" + entry for entry in sorted(found, key=_natural)]


def _entries(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _natural(name: str) -> list[int]:
    return [int(number) for number in re.findall(r"\d+", name)]


def describe_reach(what: str, namespaces: list[str], controller: str) -> str:
    """'format erases all 2 namespaces of nvme1: nvme1n1, nvme1n2'."""
    names = ", ".join(os.path.basename(dev) for dev in namespaces)
    return f"{what} erases all {len(namespaces)} namespaces of {os.path.basename(controller)}: {names}"


def scope_problem(device: str, reach: list[str], what: str, controller: str, scope: str,
                  fleet: Sequence[str] = ()) -> str | None:
    """None when erasing `reach` to purge `device` is allowed, else why not: a namespace another run measures (a
    target of the same fleet, `fleet` or held by this process, or one another ptsbench run holds) or one in use is
    never erased; one carrying data signatures only when the user named the wider scope (--purge-scope subsystem)."""
    others = [dev for dev in reach if dev != device]
    if not others:
        return None
    fleet_devices = {number for path in fleet if (number := _device_number(path)) is not None}
    measured = [f"{dev}: {reason}" for dev in others if (reason := _measured(dev, fleet_devices))]
    if measured:
        return f"{describe_reach(what, reach, controller)}, and {measured[0]}"
    in_use = [f"{dev}: {'; '.join(reasons)}" for dev in others if (reasons := in_use_reasons(dev))]
    if in_use:
        return f"{describe_reach(what, reach, controller)}, and {in_use[0]}"
    holding = [f"{dev}: {'; '.join(reasons)}" for dev in others if (reasons := block_device_signatures(dev))]
    if holding and scope != "subsystem":
        return (f"{describe_reach(what, reach, controller)}, and {holding[0]} (--purge-scope subsystem allows "
                "erasing it)")
    return None


def _measured(dev: str, fleet_devices: set[int]) -> str | None:
    """Why `dev` is being measured by a run (so a purge must not erase it under that run), or None."""
    if held_here(dev) or _device_number(dev) in fleet_devices:
        return "it is another target of this fleet, measured at the same time"
    return other_run_reason(dev)


def _device_number(path: str) -> int | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_rdev if stat.S_ISBLK(found.st_mode) else None
