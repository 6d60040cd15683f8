"""The NVMe Error Information log (log page 01h): the drive's last errors, one entry each, and those new over a span.

ptsbench reads it with nvme-cli as JSON (`nvme error-log CTRL -o json`: {"errors": [{"error_count", "sqid",
"cmdid", "status_field", "parm_error_location", "lba", "nsid", "opcode", ...}]}) before and after each case and
round, as it reads the SMART log. Every entry has a unique, increasing `error_count` (0: an empty slot), so the
entries new over a span are those whose count is above every count of the reading before it. nvme-cli 2.x prints the
status without its phase tag bit (and the tag as `phase_tag`); 1.x printed the whole 16-bit field: shifted here.
The drive keeps only its last entries (Identify Controller ELPE + 1): more errors than that during a span and the
oldest of them are gone, which the change says (its SMART count of entries rose by more than the entries found).
"""

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

ERROR_LOG_KEYS = ("error_log", "error_log_note")
ENTRY_FIELDS = ("error_count", "sqid", "cmdid", "status_field", "parm_error_location", "lba", "nsid", "opcode",
                "trtype", "cs", "vs")
# Status Code Types of the NVMe base specification (the status field's bits 10:8)
STATUS_CODE_TYPES = {0: "generic command status", 1: "command specific status", 2: "media and data integrity error",
                     3: "path related status", 7: "vendor specific"}
# a few status codes by type and code, the ones a drive under test most likely logs
STATUS_CODES = {(0, 0x04): "data transfer error", (0, 0x06): "internal error", (0, 0x07): "command abort requested",
                (0, 0x80): "LBA out of range", (0, 0x81): "capacity exceeded", (0, 0x82): "namespace not ready",
                (2, 0x80): "write fault", (2, 0x81): "unrecovered read error", (2, 0x82): "end-to-end guard check "
                "error", (2, 0x85): "compare failure", (2, 0x86): "access denied",
                (2, 0x87): "deallocated or unwritten logical block"}

JsonRunner = Callable[[list[str]], tuple[Any, str | None, int]]


def parse_error_log(doc: Mapping[str, Any]) -> list[dict[str, int]] | None:
    """The log's entries that hold an error, oldest first, each with ENTRY_FIELDS as found and `status` (the 15-bit
    status without the phase tag); None when the document has no "errors" list."""
    found = doc.get("errors")
    if not isinstance(found, list):
        return None
    entries = []
    for raw in found:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("error_count"), int) or raw["error_count"] <= 0:
            continue
        entry = {key: int(raw[key]) for key in ENTRY_FIELDS if isinstance(raw.get(key), int)}
        status = entry.get("status_field")
        if status is not None:
            entry["status"] = status if "phase_tag" in raw else status >> 1  # nvme-cli 1.x: the whole field
        entries.append(entry)
    return sorted(entries, key=lambda entry: entry["error_count"])


def read_error_log(controller: str, run_json: JsonRunner) -> dict[str, Any]:
    """ERROR_LOG_KEYS of one reading: the entries, or a note saying why there are none."""
    argv = ["nvme", "error-log", controller, "-o", "json"]
    doc, problem, status = run_json(argv)
    entries = parse_error_log(doc) if isinstance(doc, dict) and not status else None
    if entries is None:
        why = problem or (f"exit status {status}" if status else "no error entries list in its output")
        return {"error_log": None, "error_log_note": f"no NVMe error log: `{shlex.join(argv)}`: {why}"}
    return {"error_log": entries, "error_log_note": None}


def new_entries(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, int]] | None:
    """The error log entries of `after` newer than every entry of `before`; None when either was not read."""
    start, end = before.get("error_log"), after.get("error_log")
    if not isinstance(start, list) or not isinstance(end, list):
        return None
    last = max((entry["error_count"] for entry in start), default=0)
    return [entry for entry in end if entry["error_count"] > last]


def status_text(status: int) -> str:
    """'0x0281 (media and data integrity error: unrecovered read error)', and DNR when the drive said not to retry."""
    kind, code = status >> 8 & 0x7, status & 0xFF
    words = STATUS_CODE_TYPES.get(kind, f"status code type {kind}")
    named = STATUS_CODES.get((kind, code))
    words += f": {named}" if named else f", code {code:#04x}"
    return f"{status & 0x7FFF:#06x} ({words}{', do not retry' if status >> 14 & 1 else ''})"


def entry_text(entry: Mapping[str, int]) -> str:
    """One entry in words: its count, status, LBA, namespace, command and queue."""
    parts = [f"error {entry['error_count']:,}"]
    if "status" in entry:
        parts.append(f"status {status_text(entry['status'])}")
    for key, label, shown in (("lba", "LBA", "{:,}"), ("nsid", "namespace", "{}"), ("opcode", "opcode", "{:#04x}"),
                              ("cmdid", "command id", "{:#06x}"), ("sqid", "queue", "{}")):
        if key in entry:
            parts.append(f"{label} {shown.format(entry[key])}")
    return ", ".join(parts)


def entries_texts(entries: Sequence[Mapping[str, int]] | None, counted: int | None) -> list[str]:
    """The entries in words (None: the error log was not read); a last line when the SMART log counted more new
    entries than the log still holds."""
    if entries is None:
        return [f"{counted:,} new error(s) counted by the SMART log (the error log itself was not read)"] \
            if counted else []
    lines = [entry_text(entry) for entry in entries]
    if counted is not None and counted > len(entries):
        lines.append(f"{counted - len(entries):,} more error(s) counted by the SMART log are no longer in the "
                     "error log (the drive keeps only its last entries)")
    return lines
