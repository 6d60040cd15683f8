"""`ptsbench check RUN_DIR`: judge a stored run against gates; and the same gates (and --tag) on every run command."""

import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ptsbench.catalog.gates import Gate, Verdict
    from ptsbench.catalog.qualify import Profile

GATE_HELP = ("A limit the run must meet: 'METRIC OP VALUE' (iops >= 400k, 'rnd 4k 0/100 iops >= 400k', "
             "p99.99 <= 2ms), 'METRIC not worse than baseline by more than 5 %', 'steady state reached' or "
             "'compliant' (repeatable; see docs/gates.md).")


@dataclass(frozen=True)
class GatePlan:
    """The gates of one command, parsed before any IO, and where their verdicts go."""

    gates: tuple["Gate", ...]
    junit: Path | None
    baseline: str | None
    catalog: str | None
    min_tail_ios: int = 10  # values.MIN_TAIL_IOS: a percentile with fewer IOs beyond it is not measured
    profile: "Profile | None" = None  # a qualification profile's targets, judged beside the gates
    profile_path: Path | None = None
    ocptv: Path | None = None  # where the verdicts go as OCPTV JSON


def gate_plan(gate_texts: Sequence[str], gates_file: Path | None, junit: Path | None, baseline: str | None,
              catalog: str | None, min_tail_ios: int = 10, profile: Path | None = None,
              ocptv: Path | None = None) -> GatePlan:
    """Parse every gate and the profile (a bad one is a one-line error here, before any IO) and check what relative
    gates need."""
    if not (gate_texts or gates_file or junit or baseline or profile or ocptv):  # most runs: no gate module loaded
        return GatePlan((), None, None, catalog, min_tail_ios)
    from ptsbench.catalog.gates import GateError, load_gates, parse_gate
    from ptsbench.outfolder import check_own_file

    gates = [parse_gate(text) for text in gate_texts] + (load_gates(gates_file) if gates_file else [])
    loaded = None
    if profile is not None:
        from ptsbench.catalog.qualify import load_profile

        loaded = load_profile(profile)
    for option, path in (("--junit", junit), ("--ocptv", ocptv)):
        if path is not None and not gates and loaded is None:
            raise GateError(f"{option} needs gates to write", "add --gate, --gates or --profile")
    if junit is not None:  # before the run: a user's file or a device node is never replaced by the verdicts
        from ptsbench.catalog.junit import JUNIT_MARK

        check_own_file(junit, JUNIT_MARK, "--junit")
    if ocptv is not None:
        from ptsbench.catalog.ocptv import OCPTV_MARK

        check_own_file(ocptv, OCPTV_MARK, "--ocptv")
    if baseline == "last" and catalog is None:
        raise GateError("--baseline last needs --catalog", "name the catalog (a path or database URL)")
    if baseline and not any(gate.kind == "baseline" for gate in gates):
        raise GateError("--baseline is given but no gate compares with it",
                        "add a gate like 'iops not worse than baseline by more than 5 %'")
    return GatePlan(tuple(gates), junit, baseline, catalog, min_tail_ios, loaded, profile, ocptv)


def _baseline_values(plan: GatePlan, run_dir: Path) -> tuple[dict[str, Any] | None, str]:
    from ptsbench.catalog.values import run_values
    from ptsbench.store import RunStore

    if plan.baseline is None:
        return None, "baseline"
    if plan.baseline == "last":
        from ptsbench.catalog.index import last_run_of_same_model

        found = last_run_of_same_model(plan.catalog or "", run_dir)
        if found is None:
            return {}, "no earlier run of this model in the catalog"
        baseline_dir = found
    else:
        baseline_dir = Path(plan.baseline)
    return {value.name: value for value in run_values(RunStore.open(baseline_dir))}, f"baseline {baseline_dir.name}"


def judge_run(plan: GatePlan, run_dir: Path, to_stderr: bool = False) -> list["Verdict"]:
    """The verdicts of a stored run, printed as a table (on stderr: `to_stderr`, when stdout carries json or csv),
    and written as JUnit XML with --junit."""
    from ptsbench.catalog.gates import judge, run_facts
    from ptsbench.catalog.values import run_values
    from ptsbench.store import RunStore

    store = RunStore.open(run_dir)
    baseline, baseline_name = _baseline_values(plan, run_dir)
    verdicts = judge(plan.gates, run_values(store), run_facts(store), baseline, baseline_name, plan.min_tail_ios) \
        if plan.gates else []
    if plan.profile is not None:
        from ptsbench.catalog.qualify import judge_profile

        verdicts += judge_profile(plan.profile, store)
    _print_verdicts(verdicts, to_stderr, f"Profile {plan.profile.name}: " if plan.profile else "Gates: ")
    run_name = Path(run_dir).resolve().name
    if plan.junit is not None:
        from ptsbench.catalog.junit import write_junit

        write_junit(plan.junit, run_name, verdicts)
    if plan.ocptv is not None:
        from ptsbench.catalog.ocptv import ocptv_artifacts, write_ocptv

        parameters = {"run": str(Path(run_dir).resolve())}
        if plan.profile is not None:
            parameters.update(profile=plan.profile.name, profile_file=str(plan.profile_path),
                              profile_source=plan.profile.source)
        write_ocptv(plan.ocptv, ocptv_artifacts(run_name, parameters, _drive_facts(store), verdicts,
                                                " ".join(sys.argv)))
    return verdicts


def _drive_facts(store: Any) -> dict[str, Any]:
    """The drive's model, serial, firmware and vendor as the run's manifest names them (or its tags model=...)."""
    manifest = store.manifest
    target = (manifest.get("target") if store.kind == "pts" else (manifest.get("targets") or [{}])[0]) or {}
    tags = dict(str(tag).split("=", 1) for tag in manifest.get("tags") or () if "=" in str(tag))
    return {key: target.get(key) or tags.get(key) for key in ("model", "serial", "firmware", "vendor")}


def _print_verdicts(verdicts: Sequence["Verdict"], to_stderr: bool, title: str) -> None:
    from rich.console import Console

    from ptsbench.report.core.model import Column, Table
    from ptsbench.report.core.terminal import print_model_table, terminal_console

    passed = sum(verdict.passed for verdict in verdicts)
    failed = sum(verdict.outcome == "FAIL" for verdict in verdicts)
    unmeasured = len(verdicts) - passed - failed
    rows = tuple((v.gate, v.subject, v.value, v.limit, v.outcome, v.note) for v in verdicts)
    title = f"{title}{passed} passed, {failed} failed" + (f", {unmeasured} not measured" if unmeasured else "")
    table = Table("gates", title,
                  tuple(Column(name) for name in ("gate", "value of", "value", "limit", "verdict", "note")), rows)
    print_model_table(table, Console(stderr=True) if to_stderr else terminal_console())


def gate_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """--gate/--gates/--junit/--baseline/--catalog (judged on the stored run when the command returns its run
    directory) and --tag (labels written into the run's manifest) on a run command."""

    @functools.wraps(function)
    def wrapper(*args: Any, gate_texts: tuple[str, ...], gates_file: Path | None, junit: Path | None,
                baseline: str | None, catalog: str | None, min_tail_ios: int, tags: tuple[str, ...],
                **kwargs: Any) -> Any:
        from ptsbench.store import RUN_TAGS

        plan = gate_plan(gate_texts, gates_file, junit, baseline, catalog, min_tail_ios)
        RUN_TAGS.set(parse_tags(tags))
        if plan.gates and len(kwargs.get("targets") or ()) > 1 and function.__name__ == "pts":
            from ptsbench.catalog.gates import GateError

            raise GateError("gates judge one device's run, and this is a fleet of several",
                            "run without gates, then `ptsbench check` each device's run directory")
        run_dir = function(*args, **kwargs)
        if plan.gates and run_dir is not None:
            finish_with_gates(plan, Path(run_dir), to_stderr=kwargs.get("output_format", "table") != "table")
        return run_dir

    return TAG_OPTION(_gate_inputs(wrapper))


EXIT_FAILED = 1  # a gate or target failed
EXIT_NOT_MEASURED = 4  # none failed, but one was not measured (too few IOs beyond a percentile, no such value)


def finish_with_gates(plan: GatePlan, run_dir: Path, to_stderr: bool = False) -> None:
    """Judge the stored run; exit EXIT_FAILED when a gate failed, EXIT_NOT_MEASURED when none failed but one was
    not measured."""
    outcomes = {verdict.outcome for verdict in judge_run(plan, run_dir, to_stderr)}
    if "FAIL" in outcomes:
        click.echo("ptsbench: error: a gate failed (see the table above)", err=True)
        sys.exit(EXIT_FAILED)
    if "NOT MEASURED" in outcomes:
        click.echo("ptsbench: error: a gate's value was not measured (see the table above)", err=True)
        sys.exit(EXIT_NOT_MEASURED)


def parse_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Labels as given: 'nightly' or 'firmware=2.1' (one line each, no surrounding blanks)."""
    from ptsbench.errors import PtsbenchError

    for tag in tags:
        if not tag.strip() or tag != tag.strip() or "\n" in tag or (tag.startswith("=") or tag.endswith("=")):
            raise PtsbenchError(f"--tag {tag!r} is not a label", "give a word or KEY=VALUE, e.g. --tag firmware=2.1")
    return tuple(dict.fromkeys(tags))


_GATE_DECORATORS = [
    click.option("--gate", "gate_texts", multiple=True, metavar="GATE", help=GATE_HELP),
    click.option("--gates", "gates_file", type=click.Path(path_type=Path), metavar="FILE",
                 help="Gates from a TOML file: gates = [\"iops >= 400k\", \"compliant\"]."),
    click.option("--junit", type=click.Path(path_type=Path), metavar="FILE",
                 help="Also write the gates' verdicts as JUnit XML (one test case per gate and value)."),
    click.option("--baseline", metavar="RUN_DIR|last",
                 help="The run relative gates compare with; 'last': the catalog's latest earlier run of the same "
                      "device model (needs --catalog)."),
    click.option("--catalog", metavar="PATH|URL", help="The catalog --baseline last reads (see ptsbench catalog)."),
    click.option("--min-tail", "min_tail_ios", type=click.IntRange(min=1), default=10, show_default=True,
                 metavar="IOS", help="A latency percentile with fewer IOs beyond it is not measured: its gate "
                                     "fails as NOT MEASURED unless it ends with 'even if not measured' (a profile "
                                     "sets its own: min_tail_ios)."),
]
TAG_OPTION = click.option("--tag", "tags", multiple=True, metavar="LABEL",
                          help="A label stored in the run's manifest, e.g. nightly or firmware=2.1 (repeatable).")


def _gate_inputs(function: Callable[..., Any]) -> Callable[..., Any]:
    for decorator in reversed(_GATE_DECORATORS):
        function = decorator(function)
    return function


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@_gate_inputs
@click.option("--profile", "profile_file", type=click.Path(path_type=Path), metavar="FILE",
              help="A qualification profile (TOML): targets per workload, absolute or per TB, judged beside the "
                   "gates (see docs/qualify.md).")
@click.option("--ocptv", type=click.Path(path_type=Path), metavar="FILE",
              help="Also write the verdicts as OCP Test & Validation JSON (one artifact a line).")
def check(run_dir: Path, gate_texts: tuple[str, ...], gates_file: Path | None, junit: Path | None,
          baseline: str | None, catalog: str | None, min_tail_ios: int, profile_file: Path | None,
          ocptv: Path | None) -> None:
    """Judge a stored run against gates or a qualification profile: a table of every gate with its value, limit and
    verdict; exit 1 when one fails, 4 when none failed but one was not measured. From the run directory alone (no
    fio, no device).

    \b
    Examples:
      ptsbench check RUN --gate 'rnd 4k 0/100 iops >= 400k' --gate 'p99.99 <= 2ms' --gate compliant
      ptsbench check RUN --gates gates.toml --junit gates.xml
      ptsbench check RUN --gate 'iops not worse than baseline by more than 5 %' --baseline OLD_RUN
      ptsbench check RUN --gate 'iops not worse than baseline by more than 5 %' --baseline last --catalog lab.sqlite
      ptsbench check RUN --profile qualify.toml --junit verdicts.xml --ocptv verdicts.jsonl
    """
    plan = gate_plan(gate_texts, gates_file, junit, baseline, catalog, min_tail_ios, profile_file, ocptv)
    if not plan.gates and plan.profile is None:
        from ptsbench.catalog.gates import GateError

        raise GateError("no gates to check", "give --gate, --gates or --profile")
    finish_with_gates(plan, run_dir)
