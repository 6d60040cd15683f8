"""Write amplification: the bytes a drive wrote to its media against the bytes the host wrote, per round.

Host bytes come from the most exact counter the drive gives, named beside every ratio (`host_counter`): the FDP
statistics log's host bytes written, a count of bytes, when media bytes come from that log; else the standard SMART
/ Health log (`data_units_written`, units of 1000 x 512 = 512,000 bytes, rounded up by the drive: a round's host
bytes are known to within one unit; an 8 MiB write reads as 17 units, 0.964 of them). Media bytes come from one of
two logs, read with nvme-cli as JSON; the source is named beside every ratio:
- "OCP C0h": the OCP Datacenter NVMe SSD specification's SMART / Health Information Extended log,
  `nvme ocp smart-add-log CTRL -o json`, Physical Media Units Written (a 16-byte little-endian count of bytes).
  nvme-cli prints it as {"hi": upper 64 bits, "lo": lower 64 bits} under "Physical media units written" (2.x),
  "physical media units written" (some 2.x releases) or "physical_media_units_written" (the later
  --output-format-version=2); some releases print a plain number or a digit string. (nvme-cli releases before
  about 2.5 put "lo" through a 32-bit JSON integer; such a counter wraps at 4 GiB and a round across the wrap reads
  as a counter that went back: no ratio.)
- "FDP statistics": the Flexible Data Placement statistics log (NVMe TP4146, log page 20h) of the namespace's
  endurance group, `nvme fdp stats DEV --endgrp-id=N -o json` (nvme-cli >= 2.3): "hbmw" host bytes with metadata
  written, "mbmw" media bytes with metadata written, "mbe" media bytes erased, each a 128-bit byte count that
  nvme-cli prints as a digit string (2.13: a number). Read only when the OCP log is not there.
"""

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

OCP_SOURCE = "OCP C0h"
FDP_SOURCE = "FDP statistics"
HOST_UNIT_BYTES = 512_000  # the standard SMART log's data unit (NVMe: thousands of 512-byte units, rounded up)
SMART_HOST_COUNTER = "SMART data units written (512,000 bytes each)"
FDP_HOST_COUNTER = "FDP statistics host bytes with metadata written (HBMW)"
FDP_ENDURANCE_GROUP = 1  # the endurance group of a drive with one (QEMU's, most FDP drives')
_OCP_WRITTEN_KEYS = ("physical media units written", "physical_media_units_written")
_OCP_GUID_KEYS = ("log page guid", "log_page_guid")
OCP_C0_GUID = "afd514c97c6f4f9ca4f2bfea2810afc5"  # the SMART / Health Information Extended log's GUID
MEDIA_KEYS = ("media_written_bytes", "media_source", "fdp_host_written_bytes", "media_erased_bytes", "media_note",
              "ocp_throttle_events", "ocp_throttle_status")  # the OCP log's thermal throttling, read with it
MEDIA_COUNTER_KEYS = ("media_written_bytes", "fdp_host_written_bytes", "media_erased_bytes")
NOT_REPORTED = "the drive reports no media bytes written (neither the OCP C0h log nor FDP statistics)"

# (argv) -> (document or None, problem or None, exit status): telemetry.py's JSON runner
JsonRunner = Callable[[list[str]], tuple[Any, str | None, int]]


def counter_value(value: object) -> int | None:
    """A counter as nvme-cli / smartctl print it: int, float (nvme-cli 1.x 128-bit values), digit string, or
    {"hi", "lo"}: the 64-bit halves of a 128-bit count."""
    if isinstance(value, Mapping):
        high, low = counter_value(value.get("hi")), counter_value(value.get("lo"))
        return None if high is None or low is None else (high << 64) + low
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def parse_ocp_smart_add_log(doc: Mapping[str, Any]) -> int | None:
    """Physical Media Units Written (bytes) of an `nvme ocp smart-add-log -o json` document; None when absent, or
    when the log's GUID is not the OCP one (log page C0h is vendor-specific on other drives)."""
    guids = [str(value) for key, value in doc.items() if str(key).strip().lower() in _OCP_GUID_KEYS]
    if guids and guids[0].lower().replace("0x", "").lstrip("0") != OCP_C0_GUID:
        return None
    for key, value in doc.items():
        if str(key).strip().lower() in _OCP_WRITTEN_KEYS:
            return counter_value(value)
    return None


def parse_fdp_stats(doc: Mapping[str, Any]) -> dict[str, int | None]:
    """Host and media bytes written and media bytes erased of an `nvme fdp stats -o json` document."""
    return {"fdp_host_written_bytes": counter_value(doc.get("hbmw")),
            "media_written_bytes": counter_value(doc.get("mbmw")), "media_erased_bytes": counter_value(doc.get("mbe"))}


def ocp_throttling(doc: Mapping[str, Any]) -> dict[str, int | None]:
    """The OCP C0h log's thermal throttling: its lifetime count of throttling events and the current status (0: not
    throttling, else the throttling level), as nvme-cli names them."""
    found: dict[str, int | None] = {"ocp_throttle_events": None, "ocp_throttle_status": None}
    for key, value in doc.items():
        name = str(key).strip().lower()
        if name == "number of thermal throttling events":
            found["ocp_throttle_events"] = counter_value(value)
        elif name == "current throttling status":
            found["ocp_throttle_status"] = counter_value(value)
    return found


def read_media_written(controller: str, namespace_device: str, run_json: JsonRunner) -> dict[str, Any]:
    """The media counters of an NVMe drive (MEDIA_KEYS): the OCP log of the controller, else the FDP statistics of
    the namespace's endurance group; `media_note` says why neither was read."""
    reading: dict[str, Any] = dict.fromkeys(MEDIA_KEYS)
    ocp_argv = ["nvme", "ocp", "smart-add-log", controller, "-o", "json"]
    doc, ocp_problem, ocp_status = run_json(ocp_argv)
    written = parse_ocp_smart_add_log(doc) if isinstance(doc, dict) and not ocp_status else None
    if written is not None:
        return {**reading, "media_written_bytes": written, "media_source": OCP_SOURCE, **ocp_throttling(doc)}
    fdp_argv = ["nvme", "fdp", "stats", namespace_device, f"--endgrp-id={FDP_ENDURANCE_GROUP}", "-o", "json"]
    doc, fdp_problem, fdp_status = run_json(fdp_argv)
    values = parse_fdp_stats(doc) if isinstance(doc, dict) and not fdp_status else {}
    if values.get("media_written_bytes") is not None:
        return {**reading, **values, "media_source": FDP_SOURCE}
    why = [f"`{shlex.join(argv)}`: {_failure(problem, code)}"
           for argv, problem, code in ((ocp_argv, ocp_problem, ocp_status), (fdp_argv, fdp_problem, fdp_status))]
    return {**reading, "media_note": f"{NOT_REPORTED}; " + "; ".join(why)}


def _failure(problem: str | None, status: int) -> str:
    if problem:
        return problem
    return f"exit status {status}" if status else "no media bytes written in its output"


def write_amplification(before: Mapping[str, Any], after: Mapping[str, Any], span: str = "round") -> dict[str, Any]:
    """A round's (or another `span`'s: a case) write amplification from the readings before and after it: host
    bytes (the FDP log's byte count with FDP statistics, else the standard SMART log's exact multiples of 512,000)
    and the counter they came from, media bytes (OCP C0h or FDP statistics, bytes), their ratio and its source;
    `ratio` is None with a `note` saying why (the drive reports no media bytes, the span wrote under one host unit
    or no host byte, a counter went back or changed source)."""
    result: dict[str, Any] = {"host_written_bytes": None, "media_written_bytes": None, "ratio": None,
                              "source": None, "host_unit_bytes": HOST_UNIT_BYTES, "host_counter": None, "note": None}
    source = after.get("media_source")
    if source is None or before.get("media_source") != source:
        result["note"] = after.get("media_note") or before.get("media_note") or after.get("note") or NOT_REPORTED
        return result
    media = _delta(before, after, "media_written_bytes")
    exact = _delta(before, after, "fdp_host_written_bytes") if source == FDP_SOURCE else None
    if exact is not None:  # bytes, not units: no rounding
        result.update(host_written_bytes=exact, media_written_bytes=media, source=source,
                      host_counter=FDP_HOST_COUNTER, host_unit_bytes=1)
        if media is None:
            result["note"] = "a counter was unknown or went back between the readings"
        elif exact == 0:
            result["note"] = f"the {span} wrote no host bytes as the drive counts: no ratio"
        else:
            result["ratio"] = media / exact
        return result
    units = _delta(before, after, "data_units_written")
    host = None if units is None else units * HOST_UNIT_BYTES
    result.update(host_written_bytes=host, media_written_bytes=media, source=source, host_counter=SMART_HOST_COUNTER)
    if units is None or media is None:
        result["note"] = "a counter was unknown or went back between the readings"
    elif units == 0:
        result["note"] = f"the {span} wrote less than one host data unit ({HOST_UNIT_BYTES:,} bytes) as the drive " \
                         "counts: no ratio"
    else:
        result["ratio"] = media / units / HOST_UNIT_BYTES
    return result


def _delta(before: Mapping[str, Any], after: Mapping[str, Any], key: str) -> int | None:
    start, end = before.get(key), after.get(key)
    return end - start if isinstance(start, int) and isinstance(end, int) and end >= start else None


def combined_ratio(changes: list[Mapping[str, Any]]) -> tuple[float | None, str | None]:
    """Write amplification over several rounds: their media bytes over their host bytes (rounds with both known,
    one source), and the source; (None, None) when no round has both."""
    known = [c for c in changes if c.get("host_written_bytes") and c.get("media_written_bytes") is not None]
    sources = {c["source"] for c in known}
    if not known or len(sources) != 1:
        return None, None
    host = sum(int(c["host_written_bytes"]) for c in known)
    return sum(int(c["media_written_bytes"]) for c in known) / host, sources.pop()


def case_waf(telemetry: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A stored case's write amplification (its namespaces' media bytes over their host bytes) as
    {ratio, source, host_counter, note} (host_counter: the counters its host bytes came from, named as in
    write_amplification, '; ' between two); None when the case read no device."""
    wafs = [(entry.get("change") or {}).get("waf") or {} for entry in telemetry]
    if not wafs:
        return None
    ratio, source = combined_ratio(wafs)
    counters = "; ".join(dict.fromkeys(str(waf["host_counter"]) for waf in wafs
                                       if waf.get("source") and waf.get("host_counter"))) or None
    if ratio is not None:
        return {"ratio": ratio, "source": source, "host_counter": counters, "note": None}
    first = next((waf for waf in wafs if waf.get("source")), wafs[0])
    return {"ratio": None, "source": first.get("source"), "host_counter": counters, "note": first.get("note")}
