"""Device telemetry around one case of the case runner (`run`, `sweep`, `quick`), for its write amplification.

The NVMe namespaces a case writes (a generic /dev/ngXnY counts as its namespace) are read before and after the case
with the same reading as a PTS round's (device/telemetry.py: the SMART log, then OCP C0h or the FDP statistics), one
reading per controller, whose SMART log counts the writes of all its namespaces. Files, loop devices and every other
device read nothing: no tool is run for them.
"""

import os
import stat
from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.device.info import target_facts
from ptsbench.device.target import Target, block_device_of_char
from ptsbench.device.telemetry import read_telemetry, telemetry_change


def written_nvme_namespaces(opened: Sequence[tuple[str, bool]]) -> list[tuple[Target, dict[str, object]]]:
    """The NVMe namespaces among the (path, written) pairs a case opens, with their facts, one per controller."""
    found: dict[str, tuple[Target, dict[str, object]]] = {}
    for path, written in opened:
        try:
            mode = os.stat(path).st_mode if written else 0
        except OSError:  # a file fio makes: no device
            continue
        block = path if stat.S_ISBLK(mode) else block_device_of_char(path) if stat.S_ISCHR(mode) else None
        if block is None:
            continue
        target = Target(block, "block", None, block)
        facts = target_facts(target)
        if str(facts.get("transport") or "").startswith("nvme"):
            found.setdefault(str(facts.get("nvme_controller") or facts.get("disk")), (target, facts))
    return list(found.values())


class CaseCounters:
    """The readings of a case's NVMe namespaces, taken when made (before fio starts) unless `carried` holds one (the
    previous case's last reading of that namespace, see CaseReadings); `finish` reads them again and gives what the
    case stores: per namespace its readings and their change (with `waf`)."""

    def __init__(self, opened: Sequence[tuple[str, bool]], carried: Mapping[str, dict[str, Any]]) -> None:
        self.namespaces = written_nvme_namespaces(opened)
        self.before = [carried.get(target.path) or read_telemetry(target, facts) for target, facts in self.namespaces]

    def finish(self) -> list[dict[str, Any]]:
        stored = []
        for (target, facts), before in zip(self.namespaces, self.before, strict=True):
            after = read_telemetry(target, facts)
            stored.append({"device": target.path, "before": before, "after": after,
                           "change": telemetry_change(before, after, "case")})
        return stored


class CaseReadings:
    """The readings between cases run one after another in this process: a case's reading of a namespace at its end
    is the next case's at its start, as nothing ran in between, so back-to-back cases read a drive once between them,
    not twice. Only the case right before counts (one that writes no NVMe namespace may still write the drive, through
    a file system), and only a reading that read the drive (a failed one is read again). Not for cases run at once
    (--parallel): another target's case may write the same drive between them."""

    def __init__(self) -> None:
        self.last: dict[str, dict[str, Any]] = {}  # namespace -> the previous case's reading at its end

    def start(self, opened: Sequence[tuple[str, bool]]) -> CaseCounters:
        counters = CaseCounters(opened, self.last)
        self.last = {}  # a case that ends without finishing (interrupted) leaves nothing to carry
        return counters

    def finish(self, counters: CaseCounters) -> list[dict[str, Any]]:
        stored = counters.finish()
        self.last = {entry["device"]: entry["after"] for entry in stored if entry["after"].get("note") is None}
        return stored
