"""The drop options every run command shares (--drop-fraction, --drop-seconds, --min-fraction, --strict-drops) and
what they print at a run's end: a line per result that averages over a drop, and the --min-fraction verdict
(LimitError, exit code 3, once the results are stored and printed; seconds the host explains count only with
--strict-drops)."""

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ptsbench.drops.rule import DropRule
    from ptsbench.pts.store import PtsStore


def drop_options(function: click.decorators.FC) -> click.decorators.FC:
    decorators = [
        click.option("--drop-fraction", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.8,
                     show_default=True, help="A drop: a stretch of seconds below this share of the best level the "
                     "job held (latency: above the best level divided by it); see docs/drops.md."),
        click.option("--drop-seconds", type=click.IntRange(min=1), default=3, show_default=True,
                     help="A drop lasts at least this many seconds (so does the level it is measured against)."),
        click.option("--min-fraction", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None,
                     help="Fail the run (exit code 3, after storing it) when any second's IOPS is below this "
                     "share of the median of its job's seconds, e.g. 0.8."),
        click.option("--strict-drops", is_flag=True, expose_value=False, callback=_keep_strict,
                     help="--min-fraction fails the run also for seconds the host explains (CPU saturated or "
                     "stolen, fio kept from a CPU) and nothing on the drive does; by default those are reported "
                     "as host-limited, not the drive, and do not fail it."),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


STRICT = "ptsbench.strict_drops"  # where --strict-drops is kept in the click context (no command's parameter)


def _keep_strict(context: click.Context, _parameter: click.Parameter, value: bool) -> None:
    context.meta[STRICT] = value


def drop_rule(fraction: float, seconds: int) -> "DropRule":
    from ptsbench.drops.rule import DropRule

    return DropRule(fraction, seconds)


def drop_settings(fraction: float, seconds: int, min_fraction: float | None) -> dict[str, float | bool | None]:
    """The drop options as a run's manifest keeps them (a resumed run judges by the same rule), with
    --strict-drops of the command being run."""
    context = click.get_current_context(silent=True)
    strict = bool(context.meta.get(STRICT)) if context is not None else False
    return {"fraction": fraction, "seconds": seconds, "min_fraction": min_fraction, "strict": strict}


def say_case_drops(root: Path, records: Iterable[Any], rule: "DropRule", min_fraction: float | None) -> list[str]:
    """say_drops over the cases of a run or sweep directory."""
    return say_drops(((record.name, root / "cases" / f"{record.index:03d}-{record.name}", None)
                      for record in records), rule, min_fraction)


def say_pts_drops(pts: "PtsStore") -> list[str]:
    """say_drops over every stored round of a PTS run, by the rule it was started with."""
    from ptsbench.drops.stored import pts_rounds, stored_rule

    rounds = [(found.name, found.folder, found.record.get("telemetry")) for found in pts_rounds(pts)]
    return say_drops(rounds, *stored_rule(pts.store.manifest))


def say_drops(folders: Iterable[tuple[str, Path, Mapping[str, Any] | None]], rule: "DropRule",
              min_fraction: float | None) -> list[str]:
    """Print (stderr) a line per drop found in each (name, folder, telemetry read around it), and the seconds below
    --min-fraction; return those breaches as lines."""
    from ptsbench.drops.stored import below_min_fraction, folder_findings

    broken: list[str] = []
    excused: list[str] = []
    for name, folder, telemetry in folders:
        for finding in folder_findings(folder, rule, telemetry):
            if finding.drop.metric != "lat":
                click.echo(f"ptsbench: drop in {name}: {finding.line()}; {finding.cause_text}", err=True)
        if min_fraction is not None:
            for low in below_min_fraction(folder, min_fraction, telemetry):
                (excused if low.host and not rule.strict else broken).append(f"{name}: {low.line(min_fraction)}")
    for line in broken:
        click.echo(f"ptsbench: limit: {line}", err=True)
    for line in excused:
        click.echo(f"ptsbench: limit: {line}; not counted (--strict-drops counts it)", err=True)
    if min_fraction is not None and not broken and not excused:
        click.echo(f"ptsbench: limit: no second below {min_fraction:.0%} of its job's median IOPS", err=True)
    return broken


def fail_on_limit(broken: list[str]) -> None:
    from ptsbench.errors import LimitError

    if broken:
        raise LimitError(f"{len(broken)} job(s) had a second below --min-fraction ({broken[0]})",
                         "the run is stored; see docs/drops.md")
