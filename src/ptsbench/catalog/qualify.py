"""Qualification profiles: targets per workload a stored run is judged against, from its run directory alone.

A profile is TOML (docs/qualify.md):

    name = "..."                      # what the profile is
    source = "..."                    # where its targets come from
    min_tail_ios = 10                 # optional: fewer IOs beyond a percentile and it is not measured
    steady_state = true               # optional: every tracked variable / fio ss= job reached steady state
    compliant = true                  # optional: the PTS run is PTS-compliant
    waf_max = 2.5                     # optional: write amplification at most this, in every case or phase
    latency_monitor_max = {"3" = 0}   # optional: the drive's OCP C3h latency monitor, bucket -> most commands it
                                      # may count over each case or phase (read + write + trim)
    no_throttling = true              # optional: the drive's thermal-throttling counters did not rise
    no_media_errors = true            # optional: its media errors did not rise
    no_critical_warning = true        # optional: no NVMe critical warning bit newly set over a case or phase
    no_new_errors = true              # optional: the NVMe error log's entry count did not rise

    [[workload]]
    values = "randread read"          # the words before the metric that name the run's values, as gates do
    iops = ">= 150k per TB"           # iops, MB/s, mean, max, p50 ... p99.9999: "OP VALUE" or "OP VALUE per TB"

Each target becomes a gate (catalog/gates.py): "randread read iops >= 150k per TB" is judged on every value whose
name ends with "randread read iops", its limit scaled by the run's capacity in TB (10^12 bytes).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ptsbench.catalog.gates import Gate, GateError, Verdict, judge, parse_gate, run_facts, show_number
from ptsbench.catalog.values import MIN_TAIL_IOS, metric_quantity, run_capacity_bytes, run_values
from ptsbench.device.latency_monitor import BUCKETS, OPERATIONS, config_text

PER_TB = "per tb"
TB_BYTES = 10**12
HEALTH = {"no_throttling": ("throttled", "no thermal throttling"),  # key -> (telemetry change, what the line says)
          "no_media_errors": ("media_errors", "no new media errors"),
          "no_critical_warning": ("critical_warning_new", "no new critical warning"),
          "no_new_errors": ("error_log_entries", "no new error log entries")}
TOP_KEYS = {"name", "source", "min_tail_ios", "steady_state", "compliant", "waf_max", "latency_monitor_max",
            "workload", *HEALTH}
HINT = "see docs/qualify.md: [[workload]] tables with values = \"randread read\" and targets like iops = \">= 150k\""


class ProfileError(GateError):
    """A profile that cannot be understood (one line, before anything is judged)."""


@dataclass(frozen=True)
class Target:
    """One target of a workload: a gate, per TB of capacity or absolute."""

    gate: Gate
    per_tb: bool


@dataclass(frozen=True)
class Profile:
    name: str
    source: str
    targets: tuple[Target, ...]
    steady_state: bool = False
    compliant: bool = False
    waf_max: float | None = None
    min_tail_ios: int = MIN_TAIL_IOS
    latency_monitor_max: tuple[tuple[str, int], ...] = ()  # (C3h bucket, most commands over a case or phase)
    health: tuple[str, ...] = ()  # HEALTH keys the profile asks for


def _target(path: Path, words: str, metric: str, text: object) -> Target:
    where = f"--profile {path}: workload {words!r}, {metric}"
    if metric_quantity(metric) is None:
        raise ProfileError(f"{where}: not a metric", "give iops, MB/s, mean, max or a percentile such as p99.99")
    if not isinstance(text, str):
        raise ProfileError(f"{where}: {text!r} is not a limit", "write it as a string: \">= 150k\", \"<= 2ms\"")
    limit = " ".join(text.split())
    per_tb = limit.lower().endswith(" " + PER_TB)
    if per_tb:
        limit = limit[:-len(PER_TB)].rstrip()
    gate = parse_gate(f"{words} {metric} {limit}")
    if gate.kind != "limit":
        raise ProfileError(f"{where}: {text!r} is not a limit", "write OP VALUE, e.g. \">= 150k\" or \"<= 2ms\"")
    if per_tb and gate.quantity == "lat":
        raise ProfileError(f"{where}: a latency is not per TB", "give latency targets as absolute times")
    return Target(replace(gate, text=f"{gate.text} per TB" if per_tb else gate.text), per_tb)


def load_profile(path: Path) -> Profile:
    """A profile from its TOML file; ProfileError (one line) when it is not one."""
    import tomllib

    from ptsbench.textfile import read_user_text

    try:
        document = tomllib.loads(read_user_text(path, "--profile", HINT, ProfileError))
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"--profile {path}: not TOML ({error})", HINT) from None
    unknown = sorted(set(document) - TOP_KEYS)
    if unknown:
        raise ProfileError(f"--profile {path}: unknown key {unknown[0]!r}", HINT)
    targets: list[Target] = []
    for workload in document.get("workload") or []:
        words = workload.get("values") if isinstance(workload, Mapping) else None
        if not isinstance(words, str) or not words.split():
            raise ProfileError(f"--profile {path}: a [[workload]] without values = \"WORDS\"", HINT)
        targets += [_target(path, words, metric, text) for metric, text in workload.items() if metric != "values"]
    waf_max = document.get("waf_max")
    min_tail = document.get("min_tail_ios", MIN_TAIL_IOS)
    if waf_max is not None and (not isinstance(waf_max, int | float) or waf_max < 1):
        raise ProfileError(f"--profile {path}: waf_max {waf_max!r} is not a write amplification",
                           "give a number of at least 1, e.g. waf_max = 2.5")
    if not isinstance(min_tail, int) or min_tail < 1:
        raise ProfileError(f"--profile {path}: min_tail_ios {min_tail!r} is not a count of IOs",
                           "give a whole number of at least 1, e.g. min_tail_ios = 10")
    monitor = document.get("latency_monitor_max", {})
    if not isinstance(monitor, dict) or not all(bucket in BUCKETS and isinstance(most, int) and most >= 0
                                                for bucket, most in monitor.items()):
        raise ProfileError(f"--profile {path}: latency_monitor_max must map buckets \"0\" to \"3\" to counts",
                           "write latency_monitor_max = {\"2\" = 10, \"3\" = 0}")
    flags = {key: document.get(key, False) for key in ("steady_state", "compliant", *HEALTH)}
    if not all(isinstance(flag, bool) for flag in flags.values()):
        raise ProfileError(f"--profile {path}: steady_state, compliant, no_throttling, no_media_errors, "
                           "no_critical_warning and no_new_errors are true or false", HINT)
    if not targets and not any(flags.values()) and waf_max is None and not monitor:  # HEALTH keys are flags
        raise ProfileError(f"--profile {path}: no targets", HINT)
    return Profile(str(document.get("name", path.stem)), str(document.get("source", "")), tuple(targets),
                   flags["steady_state"], flags["compliant"], None if waf_max is None else float(waf_max), min_tail,
                   tuple(sorted(monitor.items())), tuple(key for key in HEALTH if flags[key]))


def _scaled(target: Target, capacity_bytes: int | None) -> tuple[Gate | None, str]:
    """The target's gate with its limit for this run's capacity, and a note saying how; None: capacity unknown."""
    if not target.per_tb:
        return target.gate, ""
    if capacity_bytes is None:
        return None, ""
    terabytes = capacity_bytes / TB_BYTES
    note = (f"{show_number(target.gate.limit, target.gate.quantity)} per TB x {terabytes:,.6g} TB "
            f"({capacity_bytes:,} bytes)")
    return replace(target.gate, limit=target.gate.limit * terabytes), note


def _waf_verdicts(profile: Profile, store: Any) -> list[Verdict]:
    """Each case's (case runs) or phase's (PTS) write amplification against the ceiling; NOT MEASURED where the
    drive gave none."""
    assert profile.waf_max is not None
    text = f"write amplification <= {profile.waf_max:g}"
    found: list[tuple[str, float | None, str]] = []  # subject, ratio, source or why none
    if store.kind == "pts":
        from ptsbench.pts.phases import phase_telemetry
        from ptsbench.report.pts.views import load_context

        for view in load_context(store)[1]:
            summary = phase_telemetry(view)
            found.append((str(view.plan["title"]), summary.waf if summary else None,
                          (summary.waf_source if summary else None) or "the drive reported no media writes"))
    else:
        from ptsbench.cases.records import load_records
        from ptsbench.device.waf import case_waf

        for record in load_records(store):
            waf = case_waf(getattr(record, "telemetry", None) or [])
            found.append((record.name, (waf or {}).get("ratio"),
                          (waf or {}).get("source") or (waf or {}).get("note") or "no device was read"))
    if not found:
        return [Verdict(text, "run", "-", f"<= {profile.waf_max:g}", False, "nothing ran", measured=False)]
    return [Verdict(text, subject, "-" if ratio is None else f"{ratio:.3f}", f"<= {profile.waf_max:g}",
                    ratio is not None and ratio <= profile.waf_max, source, measured=ratio is not None)
            for subject, ratio, source in found]


def _telemetry_spans(store: Any) -> list[tuple[str, list[dict[str, Any]]]]:
    """(case or PTS phase, the telemetry changes over it: one per device of a case, one per round of a phase)."""
    if store.kind == "pts":
        from ptsbench.report.pts.views import load_context

        return [(str(view.plan["title"]), [r["telemetry"]["change"] for r in view.rounds if r.get("telemetry")])
                for view in load_context(store)[1]]
    from ptsbench.cases.records import load_records

    return [(record.name, [entry.get("change") or {} for entry in getattr(record, "telemetry", None) or []])
            for record in load_records(store)]


def _monitor_verdicts(profile: Profile, store: Any) -> list[Verdict]:
    """Each case's (PTS: phase's) increase of the drive's C3h bucket counters against the profile's most; NOT
    MEASURED where the drive gave no latency monitor log (its note says why)."""
    verdicts = []
    beside = _beside_host(store)
    for subject, changes in _telemetry_spans(store):
        increases = [change.get("latency_monitor") for change in changes]
        notes = [str(change.get("latency_monitor_note")) for change in changes if change.get("latency_monitor_note")]
        for bucket, most in profile.latency_monitor_max:
            text = f"OCP C3h latency monitor bucket {bucket} <= {most}"
            if not increases or not all(isinstance(found, dict) for found in increases):
                why = notes[0] if notes else "no device was read (files and loop devices have no latency monitor)"
                verdicts.append(Verdict(text, subject, "-", f"<= {most:,}", False, why, measured=False))
                continue
            counts = {op: sum(int(found[bucket][op]) for found in increases if found) for op in OPERATIONS}
            total = sum(counts.values())
            split = ", ".join(f"{op} {count:,}" for op, count in counts.items())
            # the monitor's configuration the counts were taken under (feature C5h's settings, as C3h reports them)
            under = "; ".join(dict.fromkeys(f"under: {config_text(change.get('latency_monitor_config'))}"
                                            for change in changes))
            verdicts.append(Verdict(text, subject, f"{total:,} commands", f"<= {most:,}", total <= most,
                                    "; ".join([split, under, *beside.get(subject, {}).get(bucket, [])])))
    return verdicts


def _beside_host(store: Any) -> dict[str, dict[str, list[str]]]:
    """Case (PTS: phase) -> bucket -> the drive's monitor beside the host's latencies (catalog/monitor_host.py): a
    line whatever they say, then where they disagree, a PTS phase's from its rounds' stored counts, each
    disagreement naming its round."""
    if store.kind == "pts":
        from ptsbench.catalog.monitor_host import phase_beside_host, round_disagreements
        from ptsbench.report.pts.views import load_context

        said: dict[str, dict[str, list[str]]] = {}
        for view in load_context(store)[1]:
            by_bucket = said.setdefault(str(view.plan["title"]), phase_beside_host(view.rounds))
            for record in view.rounds:
                for bucket, lines in round_disagreements(record).items():
                    by_bucket.setdefault(bucket, []).extend(f"round {record['round']}: {line}" for line in lines)
        return said
    from ptsbench.cases.records import load_records
    from ptsbench.catalog.monitor_host import case_beside_host

    return {record.name: case_beside_host(store.root / "cases" / f"{record.index:03d}-{record.name}",
                                          record.telemetry) for record in load_records(store)}


def _health_verdicts(profile: Profile, store: Any) -> list[Verdict]:
    """Each case's (PTS: phase's) thermal throttling and media errors, from the drive's counters read before and
    after it (device/telemetry.py); NOT MEASURED where the drive gave no such counter."""
    verdicts = []
    for subject, changes in _telemetry_spans(store):
        for key in profile.health:
            field, text = HEALTH[key]
            known: list[Any] = [change[field] for change in changes if change.get(field) is not None]
            if not known:
                verdicts.append(Verdict(text, subject, "-", text, False, "the drive reported no such counter "
                                        "(files and loop devices: no drive was read)", measured=False))
            elif field == "throttled":
                count = sum(bool(found) for found in known)
                verdicts.append(Verdict(text, subject, f"throttled in {count} of {len(known)}" if count else
                                        "not throttled", text, not count, f"{len(known)} reading span(s)"))
            elif field == "critical_warning_new":
                names = list(dict.fromkeys(name for found in known for name in found))
                verdicts.append(Verdict(text, subject, "set: " + ", ".join(names) if names else "none new", text,
                                        not names, f"{len(known)} reading span(s)"))
            else:
                rise: int = sum(int(found) for found in known)
                verdicts.append(Verdict(text, subject, f"{rise:,} new", text, rise == 0))
    return verdicts


def judge_profile(profile: Profile, store: Any) -> list[Verdict]:
    """Every target of the profile judged on a stored run (RunStore): a line per value it names."""
    values = run_values(store)
    facts = run_facts(store)
    capacity = run_capacity_bytes(store)
    verdicts: list[Verdict] = []
    for target in profile.targets:
        gate, note = _scaled(target, capacity)
        if gate is None:
            verdicts.append(Verdict(target.gate.text, target.gate.metric, "-", "-", False,
                                    "capacity unknown: the run names no target (run it with --target)",
                                    measured=False))
            continue
        # a line without a quantity names no value: the workload did not run, so its target is not measured
        verdicts += [replace(verdict, note="; ".join(filter(None, (note, verdict.note))),
                             measured=verdict.measured and bool(verdict.quantity))
                     for verdict in judge([gate], values, facts, min_tail_ios=profile.min_tail_ios)]
    flags = [text for text, wanted in (("steady state reached", profile.steady_state),
                                       ("compliant", profile.compliant)) if wanted]
    # steady state or compliance the run could not show (no criterion, not a PTS run): not measured
    verdicts += [replace(verdict, measured=verdict.value != "-")
                 for verdict in judge([parse_gate(text) for text in flags], values, facts)]
    if profile.waf_max is not None:
        verdicts += _waf_verdicts(profile, store)
    if profile.latency_monitor_max:
        verdicts += _monitor_verdicts(profile, store)
    return verdicts + _health_verdicts(profile, store)


def outcome_counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """How many lines passed, failed, and were not measured."""
    counts = {"pass": 0, "FAIL": 0, "NOT MEASURED": 0}
    for verdict in verdicts:
        counts[verdict.outcome] += 1
    return counts
