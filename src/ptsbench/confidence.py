"""`--repeat auto`: repeat a case until the 95 % confidence interval (Student's t) of its headline value is within a
stated percentage of the mean, or a cap on repeats or time stops it. The decision is taken from the stored cells
only, so a report can recompute and show it from the run directory."""

import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Student's t, two-sided 95 % (the 0.975 quantile), for 1 ... 30 degrees of freedom (standard table values)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
_Z975 = 1.959964

MIN_REPEATS = 3  # fewer and the sample deviation says little (Phoronix also starts from three runs)
DEFAULT_CI_PCT = 5.0
DEFAULT_MAX_REPEATS = 10  # users complain when an auto-repeat loops 20-40 times
DEFAULT_MAX_S = 3600.0  # per case, its repeats together


def base_case_name(name: str, repetition: int) -> str:
    """The case's name without its repetition suffix (-r1, -r2, ...)."""
    suffix = f"-r{repetition}"
    return name[: -len(suffix)] if repetition and name.endswith(suffix) else name


def repeat_group(name: str, repetition: int, sweep: bool = False) -> str:
    """The case a repetition belongs to: its name without -rN (run, quick) or, in a sweep, without its cell's
    -loopN (the first loop has none) before any @tN; a sweep's per-cell precondition belongs to its cell's group."""
    name = base_case_name(name, repetition)
    return re.sub(r"-loop\d+(?=@t\d+$|$)", "", name) if sweep else name


def t975(degrees: int) -> float:
    """Student's t 0.975 quantile: the table up to 30 degrees of freedom, beyond it the Cornish-Fisher expansion
    around the normal quantile (within 0.001 there)."""
    if degrees < 1:
        raise ValueError("Student's t needs at least one degree of freedom")
    if degrees <= len(_T975):
        return _T975[degrees - 1]
    z = _Z975
    return z + (z ** 3 + z) / (4 * degrees) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * degrees ** 2)


@dataclass(frozen=True)
class Interval:
    """A 95 % confidence interval of a mean: mean ± half_width from n values."""

    mean: float
    half_width: float
    n: int

    @property
    def relative_pct(self) -> float:
        return 100.0 * self.half_width / abs(self.mean) if self.mean else math.inf

    def text(self, unit: str) -> str:
        return (f"{self.mean:,.1f} ± {self.half_width:,.1f} {unit} (±{self.relative_pct:.1f} %, 95 % CI, "
                f"n={self.n})")


def interval(values: Sequence[float]) -> Interval | None:
    """The 95 % confidence interval (Student's t) of the mean of `values`; None for fewer than two."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    deviation = math.sqrt(sum((value - mean) ** 2 for value in values) / (n - 1))
    return Interval(mean, t975(n - 1) * deviation / math.sqrt(n), n)


@dataclass(frozen=True)
class RepeatRule:
    """--repeat auto's target and caps."""

    ci_pct: float = DEFAULT_CI_PCT
    max_repeats: int = DEFAULT_MAX_REPEATS
    max_s: float = DEFAULT_MAX_S

    def as_manifest(self) -> dict[str, Any]:
        return {"repeat": "auto", "repeat_ci_pct": self.ci_pct, "repeat_max": self.max_repeats,
                "repeat_max_s": self.max_s}


Values = dict[str, float]  # a repetition's IOPS per job and direction ("randread read")


def case_values(record: Any) -> Values | None:
    """A case's values: the IOPS of each job and direction with IO (for a fixed block size the bandwidth's interval
    is the same in percent); None when the case did not end ok or fio measured no IO."""
    if record.status != "ok":
        return None
    found: Values = {}
    for position, job in enumerate(record.jobs, 1):
        for direction in job.get("directions", ()):
            if direction.get("iops"):
                job_name = repeat_group(str(job.get("name")), 0, sweep=True)  # a sweep's job is named by its loop
                name = f"{job_name} {direction.get('direction')}"
                found[name if name not in found else f"{name} (job {position})"] = float(direction["iops"])
    return found or None


def widest(repetitions: Sequence[Values | None]) -> tuple[str, Interval] | None:
    """The case's headline: of the values every repetition measured, the one whose 95 % confidence interval is
    widest in percent of its mean, with that interval; None before two repetitions measured."""
    measured = [values for values in repetitions if values is not None]
    if len(measured) < 2:
        return None
    names = [name for name in measured[0] if all(name in values for values in measured)]
    found = [(name, interval([values[name] for values in measured])) for name in names]
    return max(((name, one) for name, one in found if one is not None), key=lambda item: item[1].relative_pct,
               default=None)


def decision(repetitions: Sequence[Values | None], durations_s: Sequence[float], rule: RepeatRule) -> str | None:
    """Why the repeats of a case stop after these repetitions' values (None: run another). Every value of the case
    must be within the target. A repetition fio measured nothing in stops them: the next would likely fail alike.
    The time cap holds: `durations_s` are the repetitions' times so far (each from the end of the one before), and
    no repetition starts that would end past the cap if it took as long as the longest of them."""
    if any(values is None for values in repetitions):
        return "a repetition measured nothing"
    found = widest(repetitions) if len(repetitions) >= MIN_REPEATS else None
    if found is not None and found[1].relative_pct <= rule.ci_pct:
        return f"within ±{rule.ci_pct:g} %"
    if len(repetitions) >= rule.max_repeats:
        return f"cap of {rule.max_repeats} repeats reached before ±{rule.ci_pct:g} %"
    elapsed_s = sum(durations_s)
    if elapsed_s >= rule.max_s:
        return f"time cap of {rule.max_s:g} s reached before ±{rule.ci_pct:g} %"
    if durations_s and elapsed_s + max(durations_s) > rule.max_s:
        return (f"time cap of {rule.max_s:g} s: another repeat (as long as the longest, {max(durations_s):.3g} s) "
                f"would end past it, at {elapsed_s + max(durations_s):.3g} s, before ±{rule.ci_pct:g} %")
    return None


@dataclass
class AutoRepeat:
    """Which planned repetitions still run: each case's repeats stop at the rule's decision, stored in the run's
    manifest (`repeat_stops`: case -> reason) as it is taken. Shared by the threads of a --parallel run."""

    rule: RepeatRule
    store: Any
    say: Callable[[str], None]
    _values: dict[str, list[Values | None]] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic  # the time cap's clock
    _last: dict[str, float] = field(default_factory=dict)  # when the case's last repetition (or wait) ended
    _durations: dict[str, list[float]] = field(default_factory=dict)
    _stops: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wants(self, base: str) -> bool:
        with self._lock:
            if base not in self._last:
                self._last[base] = self.clock()
            return base not in self._stops

    def finished(self, base: str, record: Any, last: bool) -> None:
        """Record a repetition's values; decide (the last planned repetition is the repeat cap)."""
        with self._lock:
            values = self._values.setdefault(base, [])
            values.append(case_values(record))
            now = self.clock()
            durations = self._durations.setdefault(base, [])
            durations.append(now - self._last[base])
            self._last[base] = now
            reason = decision(values, durations, self.rule)
            if reason is None and last:
                reason = f"cap of {len(values)} repeats reached before ±{self.rule.ci_pct:g} %"
            if reason is None:
                return
            self._stops[base] = reason
            self.store.update_manifest(repeat_stops=dict(self._stops))
        found = widest(values)
        shown = f"{found[0]} {found[1].text('IOPS')}" if found else f"{len(values)} repetition(s)"
        self.say(f"ptsbench: {base}: {shown}: {reason}")
