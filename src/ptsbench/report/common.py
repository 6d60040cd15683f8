"""What every report has, whatever made the run: the run's facts, its provenance line and the environment."""

from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.device.waf import FDP_HOST_COUNTER, HOST_UNIT_BYTES, SMART_HOST_COUNTER
from ptsbench.report.core.model import Block, Column, Section, Table


def provenance_line(manifest: Mapping[str, Any]) -> str:
    """What made the numbers: ptsbench and fio versions, device(s), date."""
    from ptsbench.report.core import style

    return str(style.provenance(manifest))


def fact(value: Any) -> str:
    """A recorded value as shown: '-' when missing, yes / no, lists space-separated."""
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return " ".join(str(item) for item in value)
    return str(value)


DESCRIPTION_KEYS = ("device_info", "description")  # what the user said about the device, as the run stored it


def description_facts(manifest: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The user's own description of the device (text, or named fields), as stored with the run; shown first."""
    facts: list[tuple[str, str]] = []
    for key in DESCRIPTION_KEYS:
        value = manifest.get(key)
        if isinstance(value, Mapping):
            facts += [(str(label).replace("_", " "), fact(item)) for label, item in value.items()]
        elif value:
            facts.append(("description", fact(value)))
    return tuple(facts)


def run_facts(manifest: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Facts every report starts with."""
    return (
        ("run", fact(manifest.get("name"))),
        ("kind", fact(manifest.get("kind"))),
        ("started (UTC)", fact(manifest.get("created_utc"))),
        ("ptsbench", fact(manifest.get("ptsbench_version"))),
        ("fio", fact(manifest.get("fio_version"))),
        ("command line", fact(manifest.get("command_line"))),
        ("store schema", fact(manifest.get("schema_version"))),
    )


def _sized(key: str, value: object) -> object:
    """A byte count as people read it, with the exact count beside it: 256.0 MiB (268,435,456 bytes)."""
    from ptsbench.units import format_bytes

    if key.endswith("_bytes") and isinstance(value, int) and not isinstance(value, bool) and value >= 1024:
        return f"{format_bytes(value)} ({value:,} bytes)"
    return value


def environment_section(manifest: Mapping[str, Any]) -> Section:
    """Host and target facts as recorded in the manifest, and which parser read the fio logs for this report."""
    from ptsbench.fio.log_reader import reader_name
    from ptsbench.units import format_bytes

    host = manifest.get("host") or {}
    host_rows = tuple((key, fact(format_bytes(value) if key == "memory_bytes" and value else value))
                      for key, value in host.items())
    blocks: list[Block] = [Table("host", "Host", (Column("fact"), Column("value")), host_rows),
                           Table("log-reader", "This report", (Column("fact"), Column("value")),
                                 (("fio log reader", reader_name()),))]  # read by this process, not the run's
    targets = manifest.get("targets") or []
    if targets:
        keys = list(dict.fromkeys(key for target in targets for key, value in target.items()
                                  if value not in (None, "", [])))  # what no target has is not a fact
        columns = (Column("fact"), *(Column(f"target {number}") for number in range(1, len(targets) + 1)))
        rows = tuple((key.removesuffix("_bytes").replace("_", " "), *(fact(_sized(key, target.get(key)))
                                                                      for target in targets)) for key in keys)
        blocks.append(Table("targets", "Targets", columns, rows))
    return Section("environment", "Environment", blocks=tuple(blocks))


def waf_text(wafs: Sequence[Mapping[str, Any]], span: str = "round") -> str:
    """One line on write amplification over rounds (or cases: `span`): its sources and granularity, or once why
    there is none."""
    sources = sorted({str(w["source"]) for w in wafs if w.get("source")})
    if not sources:
        notes = list(dict.fromkeys(str(w["note"]).removeprefix("not available: ") for w in wafs if w.get("note")))
        return "Write amplification: not available - " + ("; ".join(notes) or f"no {span} recorded it") + "."
    short = sum(1 for w in wafs if w.get("source") and w.get("ratio") is None)
    counters = {counter for w in wafs if w.get("source")
                for counter in str(w.get("host_counter") or SMART_HOST_COUNTER).split("; ")}
    hosts = [f"the {FDP_HOST_COUNTER}, exact"] if FDP_HOST_COUNTER in counters else []
    if SMART_HOST_COUNTER in counters:
        hosts.append(f"the SMART log's data units of {HOST_UNIT_BYTES:,} bytes, rounded up by the drive: each "
                     f"{span}'s host bytes are known to within one unit")
    return (f"Write amplification: media bytes written ({', '.join(sources)}) over host bytes written "
            f"({'; '.join(hosts)})" + (f"; {short} {span}(s) without a ratio (under one unit written, or a "
                                       "counter unknown)" if short else "") + ".")


def case_waf_lines(rows: Sequence[Any]) -> list[str]:
    """One line on the cases' write amplification (its source and granularity, or why there is none), when a case
    read an NVMe drive (rows: report/cases/tables.py ResultRow); nothing for cases on files and other devices."""
    cases = {row.case: {"ratio": row.waf, "source": row.waf_source, "host_counter": row.waf_host_counter,
                        "note": row.waf_note} for row in rows if row.waf_source or row.waf_note}
    return [waf_text(list(cases.values()), "case")] if cases else []
