"""--repeat N|auto and its options (run, quick, sweep), and what a run says of --repeat auto's decisions."""

from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli import Seconds

if TYPE_CHECKING:
    from ptsbench.confidence import AutoRepeat, RepeatRule
    from ptsbench.store import RunStore


class RepeatCount(click.ParamType):
    """--repeat: a count 1 ... 1000, or `auto`."""

    name = "N|auto"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        if isinstance(value, int) or value == "auto":
            return value
        try:
            count = int(value)
        except ValueError:
            count = 0
        if not 1 <= count <= 1000:
            self.fail(f"{value!r} is neither a count from 1 to 1000 nor auto", param, ctx)
        return count


repeat_options = [
    click.option("--repeat", type=RepeatCount(), default=1, show_default=True,
                 help="Run each case N times in a row: every repetition is stored and shown; reports and `compare` "
                      "give their mean, and their spread (max - min) as its noise. auto: repeat until the 95 % "
                      "confidence interval of the case's IOPS is within --repeat-ci of its mean (at least 3 times, "
                      "at most --repeat-max, and no repeat that would end past --repeat-max-time)."),
    click.option("--repeat-ci", "repeat_ci_pct", type=click.FloatRange(0.1, 100), default=5.0, show_default=True,
                 help="With --repeat auto: the target half-width of the 95 % confidence interval, in % of the mean."),
    click.option("--repeat-max", type=click.IntRange(3, 100), default=10, show_default=True,
                 help="With --repeat auto: the most repetitions of a case."),
    click.option("--repeat-max-time", "repeat_max_s", type=Seconds(), default=3600.0, show_default=True,
                 help="With --repeat auto: a case's repetitions keep within this time: none starts that would "
                      "end past it if it took as long as the longest so far (seconds, or 30m, 2h)."),
]


def repeat_rule(repeat: int | str, ci_pct: float, max_repeats: int, max_s: float) -> "tuple[int, RepeatRule | None]":
    """--repeat and its auto options: the count to plan, and the rule that stops early (None: run them all)."""
    from ptsbench.confidence import RepeatRule

    if repeat != "auto":
        return int(repeat), None
    return max_repeats, RepeatRule(ci_pct, max_repeats, max_s)


def auto_repeat(store: "RunStore", rule: "RepeatRule | None") -> "AutoRepeat | None":
    from ptsbench.confidence import AutoRepeat

    return AutoRepeat(rule, store, lambda line: click.echo(line, err=True)) if rule else None


def stored_rule_of(store: "RunStore") -> "AutoRepeat | None":
    """The --repeat auto rule a run's manifest holds (a sweep, also when resumed), ready to decide; None without."""
    from ptsbench.confidence import RepeatRule

    manifest = store.manifest
    if manifest.get("repeat") != "auto":
        return None
    return auto_repeat(store, RepeatRule(float(manifest["repeat_ci_pct"]), int(manifest["repeat_max"]),
                                          float(manifest["repeat_max_s"])))


def print_repeat_auto(store: "RunStore") -> None:
    """With --repeat auto: each case's interval and why its repeats stopped, after the results."""
    from ptsbench.cases.records import load_records
    from ptsbench.report.core.terminal import print_model_tables
    from ptsbench.report.glance import repeat_auto_table

    table = repeat_auto_table(load_records(store), store.manifest)
    if table is not None:
        print_model_tables([table])
