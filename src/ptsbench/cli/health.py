"""After a case run (run, quick, sweep): the drive's logs read around each case, in a line per finding. A drive that
throttled, set a new critical warning or logged new errors is named with its case, each new entry of its NVMe
error log in a line of its own (status, LBA, namespace, command); where no drive log was read at
all (files, loop devices, drives that are not NVMe) the run says so once, not per case."""

from collections.abc import Iterable
from typing import Any

import click

from ptsbench.device.error_log import entries_texts


def health_lines(records: Iterable[Any]) -> list[str]:
    """The lines to say of the cases' stored telemetry changes."""
    lines, read = [], False
    for record in records:
        for entry in getattr(record, "telemetry", None) or []:
            change, device = entry.get("change") or {}, entry.get("device")
            read = read or any(change.get(key) is not None for key in ("throttled", "media_errors"))
            found = []
            if change.get("throttled"):
                found.append("THERMAL THROTTLING during the case")
            if change.get("critical_warning_new"):
                found.append("NEW CRITICAL WARNING: " + ", ".join(change["critical_warning_new"]))
            for key, what in (("error_log_entries", "new error log entries"), ("media_errors", "new media errors")):
                if change.get(key):
                    found.append(f"{change[key]:,} {what}")
            if found:
                lines.append(f"ptsbench: {record.name}: {device}: " + "; ".join(found))
            if change.get("error_log_new") or change.get("error_log_entries"):  # each new entry, as the drive logged it
                lines += [f"ptsbench: {record.name}: {device}: {text}"
                          for text in entries_texts(change.get("error_log_new"), change.get("error_log_entries"))]
    if not read:
        lines.append("ptsbench: note: no drive log was read for any case (files, loop devices, drives without an "
                     "NVMe SMART log and --hosts runs have none): throttling, critical warnings and errors not known")
    return lines


def say_health(records: Iterable[Any]) -> None:
    for line in health_lines(records):
        click.echo(line, err=True)
