"""One table of a fleet: several runs or devices side by side, each tracked value with its noise, the median, min and
max, and the members more than a stated distance from the median named as outliers; and its charts (each value per
member as bars with the median marked, every member's convergence on one plot).

Callers describe each member as a Member - a label, facts about its device, and Tracked values each with its noise
(the spread of what the value averages) - and call fleet_section(members). `ptsbench compare` and the report of a
multi-device run both feed it, so both say the same things the same way.

The outlier rule is robust (one wild member cannot hide itself by moving the centre): a member is an outlier on a
value when its distance from the median is more than k times the median absolute deviation (MAD, scaled by 1.4826
so that it estimates the standard deviation of normally spread values), more than its own noise and more than 1 % of
the median (capped workloads give equal values and a MAD of 0). Two values
differ "within noise" when their difference is no more than the larger of their two noises.
"""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ptsbench.report.core.figure import Figure, Series
from ptsbench.report.core.model import Block, Column, Section, Table, Text, Value, format_value

FLEET_KEY = "fleet"
DEFAULT_K = 3.0
MAD_SCALE = 1.4826  # MAD x this estimates the standard deviation of normally spread values
MIN_MEMBERS = 3  # with fewer, the median cannot tell which one is off
MIN_RELATIVE = 0.01  # nearer than this share of the median is never an outlier: runs of a rate-limited (or
#                      otherwise capped) workload agree to the last digit, making the MAD 0
FACTS = ("model", "serial", "firmware", "steady state at round")
WITHIN_NOISE = "within noise"
MAX_SHOWN = 12  # values in the table and charts (a sweep has a value per cell); outliers are judged on all


@dataclass(frozen=True)
class Tracked:
    """One tracked value of a member: its name (the workload and metric, the same across members), unit, number kind
    (model.Column kinds), value, and noise: the spread (max - min) of the samples the value averages (a PTS window's
    rounds, a case's repetitions); None when unknown (one sample). `rounds` and `per_round`: the value per round
    (or repetition), for the convergence chart."""

    name: str
    unit: str
    kind: str
    value: float | None
    noise: float | None = None
    rounds: tuple[int, ...] = ()
    per_round: tuple[float | None, ...] = ()


@dataclass(frozen=True)
class Member:
    """A run or device of the fleet: its label, facts (FACTS: model, serial, firmware, steady state at round; more
    are shown after them) and tracked values."""

    label: str
    facts: tuple[tuple[str, str], ...]
    values: tuple[Tracked, ...]

    def value(self, name: str) -> Tracked | None:
        return next((tracked for tracked in self.values if tracked.name == name), None)


@dataclass(frozen=True)
class Spread:
    """A tracked value across the fleet: median, min and max, the MAD, and which members are outliers."""

    name: str
    median: float | None
    low: float | None
    high: float | None
    mad: float | None
    outliers: tuple[str, ...]


def within_noise(a: float, b: float, noise_a: float | None, noise_b: float | None) -> bool | None:
    """Whether two values differ by no more than the larger of their noises; None when neither noise is known."""
    noises = [noise for noise in (noise_a, noise_b) if noise is not None and math.isfinite(noise)]
    if not noises:
        return None
    return abs(a - b) <= max(noises)


def spread(name: str, values: Sequence[tuple[str, float | None, float | None]], k: float = DEFAULT_K) -> Spread:
    """The fleet's median, min, max and MAD of one value from (label, value, noise) per member, and the outliers:
    members farther from the median than k x MAD (scaled), than their own noise and than 1 % of the median. Fewer
    than three values name no outlier."""
    present = [(label, value, noise) for label, value, noise in values if value is not None and math.isfinite(value)]
    if not present:
        return Spread(name, None, None, None, None, ())
    numbers = [value for _, value, _ in present]
    median = statistics.median(numbers)
    mad = MAD_SCALE * statistics.median(abs(value - median) for value in numbers)
    floor = MIN_RELATIVE * abs(median)
    outliers = tuple(label for label, value, noise in present if len(present) >= MIN_MEMBERS
                     and abs(value - median) > max(k * mad, noise or 0.0, floor))
    return Spread(name, median, min(numbers), max(numbers), mad, outliers)


def value_names(members: Sequence[Member]) -> list[tuple[str, str, str]]:
    """(name, unit, kind) of every tracked value any member has, in first-seen order."""
    found: dict[str, tuple[str, str, str]] = {}
    for member in members:
        for tracked in member.values:
            found.setdefault(tracked.name, (tracked.name, tracked.unit, tracked.kind))
    return list(found.values())


def shown_names(members: Sequence[Member]) -> list[tuple[str, str, str]]:
    """The values the table and charts show: the first MAX_SHOWN."""
    return value_names(members)[:MAX_SHOWN]


def spreads(members: Sequence[Member], k: float = DEFAULT_K) -> list[Spread]:
    """Every tracked value's spread across the members."""
    result = []
    for name, _unit, _kind in value_names(members):
        per_member = [(member.label, tracked.value if tracked else None, tracked.noise if tracked else None)
                      for member in members for tracked in (member.value(name),)]
        result.append(spread(name, per_member, k))
    return result


def rule_text(k: float) -> str:
    return (f"Outliers are named by this rule: more than k = {k:g} x MAD from the median (MAD: the median "
            f"absolute deviation, x {MAD_SCALE} to estimate a standard deviation), more than its own noise and more "
            f"than {MIN_RELATIVE:.0%} of the median; at least {MIN_MEMBERS} members are needed to name one. "
            "Noise: max - min of what a value averages (a PTS measurement window's rounds, a case's "
            f"repetitions); a difference no larger than the larger noise is '{WITHIN_NOISE}'.")


def _column_title(name: str, unit: str) -> str:
    return f"{name} ({unit})" if unit and not name.endswith(f"({unit})") else name


def _outlier_text(member: Member, found: Sequence[Spread]) -> str:
    parts = []
    for one in found:
        tracked = member.value(one.name)
        if member.label in one.outliers and tracked and tracked.value is not None and one.median:
            parts.append(f"{one.name}: {tracked.value / one.median:.3f}x median")
    return "; ".join(parts) or "-"


def fleet_table(members: Sequence[Member], k: float = DEFAULT_K, who: str = "run") -> Table:
    """A row per member (label, facts, each tracked value, what it is an outlier on), then median, min and max."""
    names = shown_names(members)
    found = spreads(members, k)
    extra = list(dict.fromkeys(key for member in members for key, _ in member.facts if key not in FACTS))
    facts = [*FACTS, *extra]
    columns = (Column(who), *(Column(fact) for fact in facts),
               *(Column(_column_title(name, unit), kind) for name, unit, kind in names), Column("outlier on"))
    rows: list[tuple[Value, ...]] = []
    for member in members:
        known = dict(member.facts)
        values = tuple(tracked.value if (tracked := member.value(name)) else None for name, _, _ in names)
        rows.append((member.label, *(known.get(fact, "-") for fact in facts), *values, _outlier_text(member, found)))
    blanks = ("",) * len(facts)
    for label, pick in (("median", "median"), ("min", "low"), ("max", "high")):
        rows.append((label, *blanks, *(getattr(one, pick) for one in found), ""))
    value_columns = tuple(range(1 + len(facts), 1 + len(facts) + len(names)))
    return Table(FLEET_KEY, f"Tracked values (PTS: at steady state), every {who} side by side", columns, tuple(rows),
                 keys=(0,), compare=value_columns, totals=3)


def noise_table(members: Sequence[Member], who: str = "run") -> Table:
    """Each member's noise of each tracked value ('-': unknown, one sample)."""
    names = shown_names(members)
    columns = (Column(who), *(Column(_column_title(name, unit), kind) for name, unit, kind in names))
    rows = tuple((member.label, *(tracked.noise if (tracked := member.value(name)) else None for name, _, _ in names))
                 for member in members)
    return Table(f"{FLEET_KEY}-noise", "Noise of each value (max - min of the rounds or repetitions it averages)",
                 columns, rows)


HIGHER_IS_BETTER_KINDS = ("iops", "mbs", "int", "number")  # rates; latencies ("us") are better when lower


def outlier_lines(members: Sequence[Member], k: float = DEFAULT_K) -> list[str]:
    """One line per member named an outlier, with the values it is off on and which way (better or worse than the
    median: a faster run is an outlier too, not a fault); empty when none is."""
    lines = []
    found = spreads(members, k)
    for member in members:
        parts = []
        for one in found:
            tracked = member.value(one.name)
            if member.label in one.outliers and tracked and tracked.value is not None and one.median is not None:
                higher = tracked.value > one.median
                better = higher == (tracked.kind in HIGHER_IS_BETTER_KINDS)
                parts.append(f"{one.name} {format_value(tracked.value, tracked.kind)} {tracked.unit} "
                             f"(median {format_value(one.median, tracked.kind)}: {'higher' if higher else 'lower'}, "
                             f"{'better' if better else 'worse'})")
        if parts:
            lines.append(f"Outlier: {member.label}: " + "; ".join(parts))
    return lines


def bars_figure(members: Sequence[Member], name: str, unit: str, k: float = DEFAULT_K, index: int = 0,
                who: str = "run") -> Figure:
    """One tracked value per member as bars, the fleet's median as a line across them."""
    found = spread(name, [(member.label, tracked.value if (tracked := member.value(name)) else None,
                           tracked.noise if tracked else None) for member in members], k)
    x = tuple(float(position) for position in range(len(members)))
    values = tuple(tracked.value if (tracked := member.value(name)) else None for member in members)
    series: list[Series] = [Series(_column_title(name, unit), x, values, mode="bars", color=0)]
    if found.median is not None:
        series.append(Series("median", (-0.5, len(members) - 0.5), (found.median, found.median), mode="lines",
                             dash="dash", color=1))
    outliers = ", ".join(found.outliers) or "none"
    ticks = tuple((position, member.label) for position, member in zip(x, members, strict=True))
    return Figure(f"{FLEET_KEY}-bars-{index + 1}", f"{name}: every {who}, and the median", who,
                  _column_title("value", unit), tuple(series), x_ticks=ticks,
                  caption=f"Bars: each {who}'s value; dashed line: the median. Outliers ({k:g} x MAD): {outliers}.")


def convergence_figure(members: Sequence[Member], name: str, unit: str, index: int = 0,
                       who: str = "run") -> Figure | None:
    """One tracked value per round (or repetition), every member a line; None when no member has rounds."""
    series = tuple(Series(member.label, tuple(tracked.rounds), tuple(tracked.per_round), color=position)
                   for position, member in enumerate(members)
                   if (tracked := member.value(name)) is not None and tracked.rounds)
    if not series:
        return None
    return Figure(f"{FLEET_KEY}-convergence-{index + 1}", f"{name}: convergence of every {who}",
                  "round (or repetition)", _column_title("value", unit), series, data_sheet=True,
                  caption=f"Each {who}'s value per round (PTS) or repetition (--repeat), every {who} a line.")


def fleet_section(members: Sequence[Member], k: float = DEFAULT_K, who: str = "run",
                  title: str = "Fleet: every run side by side") -> Section:
    """The fleet's section: outliers named, the rule, the table, the noise table and the charts."""
    lines = outlier_lines(members, k)
    blocks: list[Block] = [Text(line) for line in lines]  # neutral: an outlier may be the better run
    if not lines:
        blocks.append(Text(f"No outliers among {len(members)} {who}s."))
    noise = noise_table(members, who)
    known = any(cell is not None for row in noise.rows for cell in row[1:])
    blocks += [fleet_table(members, k, who), Text(rule_text(k)), *([noise] if known else [])]
    count = len(value_names(members))
    if count > MAX_SHOWN:
        blocks.append(Text(f"The table and charts show the first {MAX_SHOWN} of {count} tracked values; outliers "
                           "are named on all of them."))
    for index, (name, unit, _kind) in enumerate(shown_names(members)):
        blocks.append(bars_figure(members, name, unit, k, index, who))
        convergence = convergence_figure(members, name, unit, index, who)
        if convergence is not None:
            blocks.append(convergence)
    return Section(FLEET_KEY, title, blocks=tuple(blocks))


def terminal_parts(section: Section, values_per_part: int = 2) -> list[Table]:
    """The fleet's table for a terminal: the members' facts and outliers, then its values a few at a time, each
    beside its noise (every number whole on an 80-column terminal)."""
    table = next(t for t in section.tables() if t.key == FLEET_KEY)
    noise = next((t for t in section.tables() if t.key == f"{FLEET_KEY}-noise"), None)  # None: no noise known
    value_columns = list(table.compare or ())
    fact_count = len(table.columns) - 2 - len(value_columns)
    members = len(table.rows) - 3  # the fleet table's first rows; median, min and max follow
    facts = [*range(1 + fact_count), len(table.columns) - 1]
    parts = [Table(f"{FLEET_KEY}-facts", table.title, tuple(table.columns[i] for i in facts),
                   tuple(tuple(row[i] for i in facts) for row in table.rows[:members]))]
    for start in range(0, len(value_columns), values_per_part):
        chosen = value_columns[start:start + values_per_part]
        columns: list[Column] = [table.columns[0]]
        for index in chosen:
            columns += [table.columns[index], *([Column("noise", table.columns[index].kind)] if noise else [])]
        rows = []
        for position, row in enumerate(table.rows):
            cells: list[Value] = [row[0]]
            for index in chosen:
                cells.append(row[index])
                if noise is not None:
                    cells.append(noise.rows[position][index - fact_count] if position < members else None)
            rows.append(tuple(cells))
        parts.append(Table(f"{FLEET_KEY}-values-{start + 1}", "Values and their noise" if noise else "Values",
                           tuple(columns), tuple(rows)))
    return parts
