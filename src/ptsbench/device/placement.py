"""FDP placement for a PTS run (`ptsbench pts --fdp-placement`): on an NVMe namespace whose Flexible Data Placement
is enabled (device/fdp.py), fio writes through the namespace's generic character device /dev/ngXnY with the
placement handles chosen here: all of them in turn (spread) or the first (one). Every other target is refused, and
the character device is judged as the namespace it reaches (device/guard.py), by device number, never by name."""

import glob
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass

from ptsbench.device.fdp import read_fdp
from ptsbench.device.guard import check_path_allowed
from ptsbench.device.target import Target, block_device_of_char
from ptsbench.errors import TargetError

PLACEMENTS = ("off", "spread", "one")  # off: the block device as always
GENERIC_DEVICES = "/dev/ng*"


@dataclass(frozen=True)
class Placement:
    """Where a PTS run's writes go with FDP placement on."""

    mode: str  # "spread" | "one"
    char_device: str  # the namespace's /dev/ngXnY, which fio opens
    placement_ids: tuple[int, ...]  # fio's fdp_pli: placement handles as `nvme fdp status` lists them


def generic_device_of(namespace: str) -> str | None:
    """The NVMe generic character device that reaches the block device `namespace`, found from device numbers."""
    wanted = os.stat(namespace).st_rdev
    for path in sorted(glob.glob(GENERIC_DEVICES)):
        try:
            if not stat.S_ISCHR(os.stat(path).st_mode):
                continue
            block = block_device_of_char(path)
            if block is not None and os.stat(block).st_rdev == wanted:
                return path
        except OSError:  # gone meanwhile
            continue
    return None


def fdp_enabled(target: Target, facts: Mapping[str, object]) -> bool:
    """Whether `target` is an NVMe namespace whose endurance group has FDP enabled (nvme-cli says so)."""
    if target.kind != "block" or not str(facts.get("transport") or "").startswith("nvme"):
        return False
    controller = facts.get("nvme_controller")
    return read_fdp(controller if isinstance(controller, str) else target.path, target.path)["fdp"] == "enabled"


def choose_placement(mode: str | None, target: Target, facts: Mapping[str, object]) -> Placement | None:
    """The placement `mode` asks for on `target` (None for off or not given); TargetError when the target cannot
    take it."""
    if mode in (None, "off"):
        return None
    asked = f"--fdp-placement {mode}"
    hint = "leave --fdp-placement out (off) to test it as it is"
    transport = str(facts.get("transport") or "")
    if target.kind != "block" or not transport.startswith("nvme"):
        what = "a file" if target.kind != "block" else f"not an NVMe namespace (transport {transport or 'unknown'})"
        raise TargetError(f"{asked} needs an NVMe namespace with FDP enabled: {target.path} is {what}", hint)
    controller = facts.get("nvme_controller")
    fdp = read_fdp(controller if isinstance(controller, str) else target.path, target.path)
    if fdp["fdp"] != "enabled":
        why = "FDP is disabled on its endurance group" if fdp["fdp"] == "disabled" else fdp["fdp_note"]
        raise TargetError(f"{asked}: {target.path} cannot place writes: {why}",
                          f"`ptsbench info {target.path}` shows its FDP; {hint}")
    ids = tuple(fdp["fdp_placement_ids"] or ())
    if not ids:
        raise TargetError(f"{asked}: {target.path} lists no placement handles ({fdp['fdp_note'] or 'none'})", hint)
    char_device = generic_device_of(target.path)
    if char_device is None:
        raise TargetError(f"{asked}: {target.path} has no generic character device /dev/ngXnY",
                          f"the kernel makes one per namespace from 5.13 on; {hint}")
    return Placement(mode, char_device, ids if mode == "spread" else ids[:1])


def check_placement_device(char_device: str, namespace: str, destructive: bool) -> None:
    """The guard on the character device a placement run writes: judged as the namespace it reaches, which must be
    the run's (a node replaced since the plan was made reaches another)."""
    block = block_device_of_char(char_device) if os.path.exists(char_device) else None
    if block is None or os.stat(block).st_rdev != os.stat(namespace).st_rdev:
        raise TargetError(f"{char_device} does not reach {namespace} (it reaches {block or 'no namespace'})",
                          "the namespaces changed since the run was planned: plan it again")
    check_path_allowed(char_device, True, destructive)
