"""A PTS test's rounds as the drive's own logs saw them, from the stored rounds alone: the OCP C3h latency monitor
beside the host's latencies (catalog/monitor_host.py; each round stores both when it ends) and the NVMe error log's
entries new during each round (device/error_log.py). Both logs are read with nvme-cli only: rounds read otherwise
(files, loop devices, smartctl, --hosts) show nothing here, the telemetry table's note says why. Where an NVMe drive
has no such log, one line says so for the test."""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.catalog.monitor_host import DIRECTIONS, drive_slower_counts, most_specific, round_disagreements
from ptsbench.device.latency_monitor import BUCKETS
from ptsbench.report.core.model import Block, Column, Table, Text, Value
from ptsbench.report.pts.views import slug

SHOWN_ROUNDS = 10  # rounds named one line each, per phase, before the rest are counted


def drive_log_blocks(test: str, views: Sequence[Any]) -> list[Block]:
    """The latency monitor's and the error log's blocks of one test; nothing when no round read an NVMe drive."""
    read = [(view, record) for view in views for record in view.rounds
            if ((record.get("telemetry") or {}).get("after") or {}).get("source") == "nvme-cli"]
    if not read:
        return []
    return [*monitor_blocks(test, read), *error_log_blocks(read)]


def monitor_blocks(test: str, read: Sequence[tuple[Any, Mapping[str, Any]]]) -> list[Block]:
    """Per phase and bucket the drive's commands and the host's IOs at or above the bucket's threshold, summed over
    the rounds compared; the rounds where they differ, named; why the others were not compared."""
    sums: dict[tuple[str, str, float], list[int]] = {}  # (phase, bucket, threshold ms) -> drive, host per direction
    compared: Counter[str] = Counter()
    named: list[str] = []
    notes: Counter[str] = Counter()
    for view, record in read:
        title, telemetry = str(view.plan["title"]), record["telemetry"]
        host, change = telemetry.get("monitor_host"), telemetry.get("change") or {}
        if not isinstance(host, Mapping):
            note = str(change.get("latency_monitor_note") or "the round stored no host counts beside the drive's")
            notes[note] += 1
            continue
        compared[title] += 1
        counted = drive_slower_counts(change["latency_monitor"])
        for index, bucket in enumerate(BUCKETS):
            row = sums.setdefault((title, bucket, float(host["thresholds_ms"][index])), [0] * 2 * len(DIRECTIONS))
            for place, direction in enumerate(DIRECTIONS):
                row[2 * place] += counted[direction][index]
                row[2 * place + 1] += int(host[direction][index])
        said = most_specific(round_disagreements(record))
        if said:
            named.append(f"{title}, round {record['round']}: " + "; ".join(said))
    blocks: list[Block] = []
    if sums:
        columns = [Column("phase"), Column("bucket and up")]
        for direction in DIRECTIONS:
            columns += [Column(f"drive {direction}s", "int"), Column(f"host {direction}s", "int")]
        rows: tuple[tuple[Value, ...], ...] = tuple((title, f"{bucket} (at or above {ms:g} ms)", *counts)
                                                    for (title, bucket, ms), counts in sums.items())
        rounds = ", ".join(f"{title} {count}" for title, count in compared.items())
        blocks.append(Table(slug(test, "latency-monitor"), "Drive latency monitor (OCP C3h) beside the host: "
                            "commands the drive counted and IOs fio timed at or above each bucket's threshold, "
                            f"summed over the rounds compared ({rounds})", tuple(columns), rows, keys=(0, 1)))
        blocks += _named_rounds(named)
    for note, count in notes.items():
        blocks.append(Text(f"Latency monitor (OCP C3h) not compared in {count} round(s): {note}."))
    return blocks


def _named_rounds(named: Sequence[str]) -> list[Block]:
    if not named:
        return [Text("The drive's latency monitor and the host agree in every round compared: the host timed at "
                     "least as many IOs as the drive counted commands at or above every threshold, and no more.")]
    shown: list[Block] = [Text(f"Latency monitor and host differ: {line}.", "warning") for line in named[:SHOWN_ROUNDS]]
    if len(named) > SHOWN_ROUNDS:
        shown.append(Text(f"... and in {len(named) - SHOWN_ROUNDS} more round(s): each round's counts are in its "
                          "round.json (telemetry: change.latency_monitor and monitor_host).", "warning"))
    return shown


def error_log_blocks(read: Sequence[tuple[Any, Mapping[str, Any]]]) -> list[Block]:
    """Each round's new NVMe error log entries, one line per round naming them; a line for the rounds without;
    the drive's reason once where it gave no error log."""
    from ptsbench.device.error_log import entries_texts

    blocks: list[Block] = []
    quiet, notes = 0, Counter[str]()
    for view, record in read:
        telemetry = record["telemetry"]
        change, after = telemetry.get("change") or {}, telemetry.get("after") or {}
        if after.get("error_log") is None or (telemetry.get("before") or {}).get("error_log") is None:
            note = str(after.get("error_log_note") or (telemetry.get("before") or {}).get("error_log_note")
                       or "not read")
            notes[note] += 1
        lines = entries_texts(change.get("error_log_new"), change.get("error_log_entries"))
        if lines:
            blocks.append(Text(f"The drive's error log ({after.get('device')}) gained entries during "
                               f"{view.plan['title']} round {record['round']}: " + "; ".join(lines) + ".", "warning"))
        elif change.get("error_log_new") is not None:
            quiet += 1
    if quiet:
        blocks.append(Text(f"NVMe error log: no new entries in {quiet} round(s) read before and after."))
    blocks += [Text(f"NVMe error log not read in {count} round(s): {note}.") for note, count in notes.items()]
    return blocks
