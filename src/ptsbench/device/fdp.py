"""Flexible Data Placement (NVMe TP4146) of an NVMe namespace's endurance group, as nvme-cli reports it.

- Whether FDP is enabled: feature 1Dh of the endurance group, `nvme get-feature CTRL -f 0x1d --cdw11=ENDGID`
  (nvme-cli prints "Current value:0x..."): bit 0 FDP enabled, bits 15:8 the FDP configuration index in use.
- The configurations: the FDP configurations log, `nvme fdp configs CTRL --endgrp-id=ENDGID -o json`: per
  configuration "nrg" reclaim groups, "nruh" reclaim unit handles, "runs" the reclaim unit size in bytes.
- The namespace's placement handles: `nvme fdp status NS -o json` (I/O management receive, reclaim unit handle
  status): "ruhss", one entry per placement handle with "pid" (the placement identifier fio's `plids` names),
  "ruhid" and "ruamw" (the reclaim unit's available media writes, in logical blocks).
"""

import re
import shlex
from collections.abc import Mapping
from typing import Any

from ptsbench.device.purge import CommandLog
from ptsbench.device.telemetry import run_json
from ptsbench.device.waf import FDP_ENDURANCE_GROUP

FDP_FEATURE = "0x1d"
FDP_KEYS = ("fdp", "fdp_config_index", "fdp_reclaim_groups", "fdp_reclaim_unit_handles", "fdp_reclaim_unit_bytes",
            "fdp_placement_ids", "fdp_note")


def parse_fdp_feature(text: str) -> tuple[bool, int] | None:
    """(enabled, configuration index) from `nvme get-feature -f 0x1d` output; None when it has no value."""
    match = re.search(r"Current value:\s*(0x[0-9a-fA-F]+|\d+)", text)
    if match is None:
        return None
    value = int(match.group(1), 0)
    return bool(value & 1), (value >> 8) & 0xFF


def parse_fdp_config(doc: Mapping[str, Any], index: int) -> dict[str, int | None]:
    """Reclaim groups, reclaim unit handles and reclaim unit size of configuration `index` of an
    `nvme fdp configs -o json` document (all None when it has no such configuration)."""
    configs = doc.get("configs")
    config = configs[index] if isinstance(configs, list) and 0 <= index < len(configs) else {}
    config = config if isinstance(config, Mapping) else {}

    def number(key: str) -> int | None:
        value = config.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return {"fdp_reclaim_groups": number("nrg"), "fdp_reclaim_unit_handles": number("nruh"),
            "fdp_reclaim_unit_bytes": number("runs")}


def parse_fdp_status(doc: Mapping[str, Any]) -> list[int]:
    """The placement identifiers of an `nvme fdp status -o json` document, in the drive's order."""
    entries = doc.get("ruhss")
    return [int(entry["pid"]) for entry in entries or []
            if isinstance(entry, Mapping) and isinstance(entry.get("pid"), int)] if isinstance(entries, list) else []


def read_fdp(controller: str, namespace_device: str, log: CommandLog | None = None) -> dict[str, Any]:
    """FDP_KEYS of an NVMe namespace: `fdp` is "enabled", "disabled" or None (unknown, `fdp_note` says why)."""
    log = log if log is not None else CommandLog()
    facts: dict[str, Any] = dict.fromkeys(FDP_KEYS)
    feature_argv = ["nvme", "get-feature", controller, "-f", FDP_FEATURE, f"--cdw11={FDP_ENDURANCE_GROUP}"]
    done = log.run(feature_argv)
    feature = parse_fdp_feature(done.stdout or "") if done.returncode == 0 else None
    if feature is None:
        return {**facts, "fdp_note": f"not reported: `{shlex.join(feature_argv)}` gave no value (exit status "
                                     f"{done.returncode}): the drive has no FDP, or nvme-cli is too old"}
    enabled, index = feature
    facts.update(fdp="enabled" if enabled else "disabled", fdp_config_index=index)
    if not enabled:
        return facts
    doc, problem, status = run_json(["nvme", "fdp", "configs", controller, f"--endgrp-id={FDP_ENDURANCE_GROUP}",
                                     "-o", "json"], log)
    if isinstance(doc, Mapping) and status == 0:
        facts.update(parse_fdp_config(doc, index))
    doc, problem, status = run_json(["nvme", "fdp", "status", namespace_device, "-o", "json"], log)
    if isinstance(doc, Mapping) and status == 0:
        facts["fdp_placement_ids"] = parse_fdp_status(doc)
    else:
        facts["fdp_note"] = f"placement handles not read: {problem or f'exit status {status}'}"
    return facts
