"""Gates: declared limits a stored run must meet, parsed before any IO and judged from the store alone.

Forms (case-insensitive):
  METRIC OP VALUE                                        iops >= 400k, rnd 4k 0/100 iops >= 400k, p99.99 <= 2ms
  METRIC not worse than baseline by more than N %        iops not worse than baseline by more than 5 %
  steady state reached                                   every tracked variable (PTS) or fio ss= job attained it
  compliant                                              the PTS run is PTS-compliant
METRIC ends with `iops`, `MB/s`, `mean` or a percentile (`p99.99`, any the run measured); the words before it narrow
which of the run's values it names (catalog/values.py): a gate is judged on every value whose name ends with it.
A percentile with fewer than MIN_TAIL_IOS IOs beyond it is not measured: such a line fails as "not measured" unless
the gate ends with `even if not measured`. VALUE is exact: IOPS with k/M/G (x1000), MB/s with KB/s MB/s GB/s KiB/s
MiB/s GiB/s (a bare number is MB/s), latency with ns, us, µs, ms or s (a unit is required).
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from ptsbench.catalog.values import HIGHER_IS_BETTER, MIN_TAIL_IOS, Value, metric_quantity, names_match, nearest_names
from ptsbench.errors import PtsbenchError


class GateError(PtsbenchError):
    """A gate that cannot be understood (checked before any IO)."""


OPERATORS = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}
_COUNT = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_BANDWIDTH = {"": 10**6, "kb/s": 10**3, "mb/s": 10**6, "gb/s": 10**9, "kib/s": 2**10, "mib/s": 2**20,
              "gib/s": 2**30}
_TIME_NS = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9}
_LIMIT = re.compile(r"^(?P<metric>.+?)\s*(?P<op><=|>=|<|>)\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>\S*)$")
_RELATIVE = re.compile(r"^(?P<metric>.+?)\s+not\s+worse\s+than\s+baseline\s+by\s+more\s+than\s+"
                       r"(?P<pct>\d+(?:\.\d+)?)\s*%$", re.IGNORECASE)
UNMEASURED_OK = "even if not measured"  # a gate's suffix: judge percentiles with a thin tail too
FORMS = ("'METRIC OP VALUE' (iops >= 400k, p99.99 <= 2ms), 'METRIC not worse than baseline by more than 5 %', "
         "'steady state reached' or 'compliant'")


@dataclass(frozen=True)
class Gate:
    """One parsed gate. `limit` is in stored units (IOPS, bytes/s, ns); `percent` for baseline gates."""

    text: str
    kind: str  # "limit" | "baseline" | "steady" | "compliant"
    metric: str = ""
    quantity: str = ""
    operator: str = ""
    limit: float = 0.0
    percent: float = 0.0
    unmeasured_ok: bool = False  # the gate ends with UNMEASURED_OK


@dataclass(frozen=True)
class Verdict:
    """One line of the gate table: a gate judged on one value (or on the run, for steady state and compliance)."""

    gate: str
    subject: str  # the value's name, or what was judged
    value: str
    limit: str
    passed: bool
    note: str = ""
    measured: bool = True  # False: not judged (a percentile with too few IOs beyond it, nothing to judge)
    quantity: str = ""  # a limit's quantity (values.QUANTITIES), "" for other lines
    number: float | None = None  # a limit line's value in stored units (IOPS, bytes/s, ns)
    limit_number: float | None = None  # its limit, in the same unit
    operator: str = ""  # its operator

    @property
    def outcome(self) -> str:
        """'pass', 'FAIL' or 'NOT MEASURED' (refused: too few IOs beyond the percentile)."""
        if self.passed:
            return "pass"
        return "FAIL" if self.measured else "NOT MEASURED"


def _number(text: str, unit: str, quantity: str, gate: str) -> float:
    scales = {"iops": _COUNT, "mbs": _BANDWIDTH, "lat": _TIME_NS}[quantity]
    key = unit.lower().removesuffix("iops") if quantity == "iops" else unit.lower()
    if key not in scales:
        wanted = {"iops": "a count with k, M or G (400k)", "mbs": "MB/s, GB/s, KB/s, MiB/s, GiB/s or KiB/s",
                  "lat": "a time unit: ns, us, ms or s (2ms)"}[quantity]
        raise GateError(f"gate {gate!r}: {unit or 'no unit'} does not fit its metric", f"give {wanted}")
    return float(Fraction(text) * scales[key])


def parse_gate(text: str) -> Gate:
    """One gate from its text; GateError (one line, before any IO) when it is not one of FORMS."""
    gate = " ".join(text.split())
    unmeasured_ok = gate.lower().endswith(" " + UNMEASURED_OK)
    if unmeasured_ok:
        gate = gate[:-len(UNMEASURED_OK)].rstrip()
    lowered = gate.lower()
    if lowered == "steady state reached":
        return Gate(gate, "steady")
    if lowered == "compliant":
        return Gate(gate, "compliant")
    relative = _RELATIVE.match(gate)
    limit = None if relative else _LIMIT.match(gate)
    found = relative or limit
    if found is None:
        raise GateError(f"gate {text!r} is not understood", f"write {FORMS}")
    metric = found.group("metric").strip()
    quantity = metric_quantity(metric.split()[-1])
    if quantity is None:
        raise GateError(f"gate {text!r}: {metric.split()[-1]!r} is not a metric (iops, MB/s, mean or a percentile "
                        "such as p99.99)", f"write {FORMS}")
    shown = " ".join(text.split())
    if relative:
        return Gate(shown, "baseline", metric, quantity, percent=float(relative.group("pct")),
                    unmeasured_ok=unmeasured_ok)
    assert limit is not None
    return Gate(shown, "limit", metric, quantity, limit.group("op"),
                _number(limit.group("number"), limit.group("unit"), quantity, text), unmeasured_ok=unmeasured_ok)


def load_gates(path: Path) -> list[Gate]:
    """Gates from a TOML file: `gates = ["iops >= 400k", ...]`."""
    import tomllib

    from ptsbench.textfile import read_user_text

    hint = "write gates = [\"iops >= 400k\", \"compliant\"]"
    try:
        document = tomllib.loads(read_user_text(path, "--gates", hint, GateError))
    except tomllib.TOMLDecodeError as error:
        raise GateError(f"--gates {path}: not TOML ({error})", hint) from None
    gates = document.get("gates")
    if not isinstance(gates, list) or not all(isinstance(g, str) for g in gates) or set(document) != {"gates"}:
        raise GateError(f"--gates {path}: it must hold one key, gates, a list of strings", hint)
    return [parse_gate(text) for text in gates]


def _with_evidence(verdict: Verdict, value: Value, gate: Gate, min_tail_ios: int) -> Verdict:
    """A percentile's line carries its evidence; a percentile with too thin a tail is judged only when the gate
    asks (UNMEASURED_OK), else its line is NOT MEASURED (failing)."""
    if not value.percentile:
        return verdict
    evidence = value.evidence()
    if value.measured(min_tail_ios):
        return replace(verdict, note="; ".join(filter(None, (evidence, verdict.note))))
    why = f"not measured: fewer than {min_tail_ios} IOs beyond it" if value.beyond is not None else "not measured"
    if gate.unmeasured_ok:  # judged as asked: it passes or fails on its value
        return replace(verdict, note="; ".join(filter(None, (evidence, f"{why}, judged as the gate asks",
                                                             verdict.note))))
    return replace(verdict, passed=False, measured=False,
                   note=f"{evidence}; {why} (end the gate with '{UNMEASURED_OK}' to judge it anyway)")


def show_number(number: float, quantity: str, more_digits: int = 0) -> str:
    """A stored number as people read it: '412,345.0 IOPS', '1,602.3 MB/s', '1.85 ms' (`more_digits` after
    those)."""
    if quantity == "iops":
        return f"{number:,.{1 + more_digits}f} IOPS"
    if quantity == "mbs":
        return f"{number / 1e6:,.{1 + more_digits}f} MB/s"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(number) >= scale:
            return f"{number / scale:,.{3 + more_digits}g} {unit}"
    return f"{number:,.{3 + more_digits}g} ns"


MAX_MORE_DIGITS = 17  # a float's digits: past them two different numbers always read differently


def show_apart(value: float, limit: float, quantity: str) -> tuple[str, str]:
    """A value and its limit, each with as many digits as it takes for two different numbers to read differently
    (a failing 141,517.36 IOPS against a limit of 141,517.4 is not '141,517.4 IOPS >= 141,517.4 IOPS')."""
    more = 0
    while (more < MAX_MORE_DIGITS and value != limit
           and show_number(value, quantity, more) == show_number(limit, quantity, more)):
        more += 1
    return show_number(value, quantity, more), show_number(limit, quantity, more)


def _percent_apart(percent: float, limit_pct: float) -> tuple[str, str]:
    """Two percentages with one decimal, or as many as it takes to tell them apart."""
    more = 1
    while more < MAX_MORE_DIGITS and percent != limit_pct and f"{percent:.{more}f}" == f"{limit_pct:.{more}f}":
        more += 1
    return f"{percent:.{more}f}", f"{limit_pct:.{more}f}" if more > 1 else f"{limit_pct:g}"


def _judge_limit(gate: Gate, values: Sequence[Value]) -> list[Verdict]:
    verdicts = []
    for value in values:
        shown, limit = show_apart(value.value, gate.limit, gate.quantity)
        verdicts.append(Verdict(gate.text, value.name, shown, f"{gate.operator} {limit}",
                                OPERATORS[gate.operator](value.value, gate.limit), quantity=gate.quantity,
                                number=value.value, limit_number=gate.limit, operator=gate.operator))
    return verdicts


def _judge_baseline(gate: Gate, values: Sequence[Value], baseline: Mapping[str, Value] | None,
                    baseline_name: str) -> list[Verdict]:
    verdicts = []
    for value in values:
        base = (baseline or {}).get(value.name)
        if base is None:
            why = "no baseline given" if baseline is None else f"{baseline_name} has no such value"
            verdicts.append(Verdict(gate.text, value.name, show_number(value.value, value.quantity), "-", False, why))
            continue
        worse_by = (base.value - value.value) if HIGHER_IS_BETTER[value.quantity] else (value.value - base.value)
        worse_pct = 100 * worse_by / base.value if base.value else 0.0
        noises = [n for n in (value.noise, base.noise) if n is not None]
        noise = max(noises) if noises else None
        beyond_pct = worse_pct > gate.percent
        if noise is None:
            passed, note = not beyond_pct, "noise unknown: judged on the percentage alone"
        elif beyond_pct and worse_by <= noise:
            passed, note = True, f"within noise ({show_number(noise, value.quantity)}, {value.noise_source})"
        else:
            passed, note = not beyond_pct, f"noise {show_number(noise, value.quantity)} ({value.noise_source})"
        direction = "worse" if worse_by > 0 else "better"
        shown_pct, limit_pct = _percent_apart(abs(worse_pct), gate.percent)
        shown, base_shown = show_apart(value.value, base.value, value.quantity)
        verdicts.append(Verdict(gate.text, value.name, f"{shown} ({shown_pct} % {direction})",
                                f"{baseline_name} {base_shown} - {limit_pct} %", passed, note))
    return verdicts


@dataclass(frozen=True)
class RunFacts:
    """What gates judge besides values: each steady-state verdict and the compliance verdict of a run."""

    steady: tuple[tuple[str, bool], ...]  # (what, reached)
    compliant: bool | None  # None: not a PTS run
    reasons: tuple[str, ...] = ()


def judge(gates: Iterable[Gate], values: Sequence[Value], facts: RunFacts,
          baseline: Mapping[str, Value] | None = None, baseline_name: str = "baseline",
          min_tail_ios: int = MIN_TAIL_IOS) -> list[Verdict]:
    """Every gate judged on the run: a line per matching value, a failing line when nothing matches. A percentile
    with fewer than `min_tail_ios` IOs beyond it is not measured (values.py)."""
    verdicts: list[Verdict] = []
    for gate in gates:
        if gate.kind == "steady":
            verdicts += [Verdict(gate.text, what, "reached" if reached else "NOT reached", "reached", reached)
                         for what, reached in facts.steady] or \
                [Verdict(gate.text, "run", "-", "reached", False, "nothing in this run has a steady-state criterion")]
            continue
        if gate.kind == "compliant":
            if facts.compliant is None:
                verdicts.append(Verdict(gate.text, "run", "-", "PTS-compliant", False, "not a PTS run"))
            else:
                verdicts.append(Verdict(gate.text, "run", "compliant" if facts.compliant else "NOT compliant",
                                        "PTS-compliant", facts.compliant, "; ".join(facts.reasons[:3])))
            continue
        matching = [value for value in values if names_match(gate.metric, value.name)]
        if not matching:
            alike = [value.name for value in values if value.quantity == gate.quantity and
                     value.name.split()[-1].lower() == gate.metric.split()[-1].lower()]
            near = nearest_names(gate.metric, alike or [value.name for value in values])
            verdicts.append(Verdict(gate.text, gate.metric, "-", "-", False, "no value of this run has that name"
                                    + (f"; nearest: {', '.join(near)}" if near else "")))
        else:
            judged = _judge_limit(gate, matching) if gate.kind == "limit" else \
                _judge_baseline(gate, matching, baseline, baseline_name)
            verdicts += [_with_evidence(verdict, value, gate, min_tail_ios)
                         for verdict, value in zip(judged, matching, strict=True)]
    return verdicts


def run_facts(store: Any) -> RunFacts:
    """The steady-state and compliance verdicts of a run directory (RunStore)."""
    if store.kind == "pts":
        from ptsbench.report.pts.views import determination_of, load_context

        steady = []
        for view in load_context(store)[1]:
            throttled = view.throttled_window_rounds()  # a window the drive throttled in claims no steady state
            marked = f" (THERMAL THROTTLING in window round(s) {', '.join(map(str, throttled))})" if throttled else ""
            for label, determined in determination_of(view).items():
                steady.append((f"{view.plan['title']}: {label}{marked}",
                               bool((determined or {}).get("steady")) and not throttled))
        compliance = store.manifest.get("compliance") or {}
        return RunFacts(tuple(steady), bool(compliance.get("compliant")), tuple(compliance.get("reasons") or ()))
    from ptsbench.cases.records import load_records
    from ptsbench.report.cases.tables import result_rows

    steady = [(f"{row.case}/{row.job} {row.direction}", bool(row.ss_attained))
              for row in result_rows(load_records(store)) if row.ss_attained is not None]
    return RunFacts(tuple(steady), None)
