"""Is the block device at a run's path the one the run started on? What a run records when it starts (the device's
ids, a loop device's backing file, its size and signatures) and what `resume` checks against it, so a resume never
writes over another device that now stands at the same path, nor merges results of two devices."""

from pathlib import Path
from typing import Any

from ptsbench.device.guard import signature_types
from ptsbench.device.identity import DRIVE_IDS, identity_changes, identity_record
from ptsbench.device.target import block_size_bytes
from ptsbench.errors import TargetError


def start_record(path: str) -> dict[str, Any]:
    """The block device at `path` as a run starts on it (JSON-ready): its ids (device/identity.py), size and the
    signatures it carries (what --destructive allowed the run to overwrite)."""
    return {**identity_record(path), "size_bytes": block_size_bytes(path), "signatures": signature_types(path)}


def check_same_device(path: str, recorded: object, written: bool, run_root: Path) -> list[str]:
    """TargetError when the block device at `path` is not the one `recorded` (start_record) describes: another
    size, an id it offered then differs now, another file backs the loop device, or it carries a signature
    (filesystem, partition table, RAID or LVM member...) it did not carry then, or any at all once the run has
    `written` to it: someone else uses the device now. Notes on what could not be checked (a run from before
    identities were recorded; a device without a serial or WWN)."""
    if not isinstance(recorded, dict):
        return [f"{run_root} was started by a ptsbench that recorded no device identity: resume could not fully "
                f"check that {path} is the device the run started on"]
    changes = identity_changes(path, recorded)
    size_bytes = block_size_bytes(path)
    if recorded.get("size_bytes") not in (None, size_bytes):
        changes.insert(0, f"its size is {size_bytes:,} bytes (it was {recorded['size_bytes']:,})")
    if changes:
        raise TargetError(f"{path} is not the device this run started on: {'; '.join(changes)}",
                          "attach the run's device again at that path (a loop device: losetup it over the run's "
                          "image), or start a new run on this one")
    allowed = [] if written else list(recorded.get("signatures") or [])
    new = [found for found in signature_types(path) if found not in allowed]
    if new:
        since = "made after this run began writing to it" if written else "it did not carry when this run started"
        raise TargetError(f"{path} now carries a {new[0]} signature {since}: another user of the device made it",
                          "resume only a device nothing else uses; if nothing on it matters, erase the signature "
                          f"(wipefs -a {path}) and resume, else start a new run on another device")
    ids = recorded.get("ids") or {}
    if not recorded.get("loop_backing") and not any(name in ids for name in DRIVE_IDS):
        return [f"{path} offers no serial, WWN, EUI64 or NGUID: resume checked its size and that it carries no new "
                "signature, not that it is the same drive"]
    return []

