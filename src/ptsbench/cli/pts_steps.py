"""The steps of starting `ptsbench pts` on a target, shared by a run on one target and a fleet (cli/fleet.py):
resolving the target, planning on it, timing its purges and preconditioning, printing the plan, a dry run and the
guard's verdict."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ptsbench.errors import PtsbenchError

if TYPE_CHECKING:
    from ptsbench.device.purge import PurgeMethod
    from ptsbench.device.target import Target
    from ptsbench.pts.params import Settings
    from ptsbench.pts.plan import Plan, TargetInfo
    from ptsbench.pts.prep_time import PrepTiming
    from ptsbench.pts.store import PtsStore

MEASURE_READ_S = 3.0  # --measure-rate: long enough to pass a drive's caches, short enough to wait for


@dataclass(frozen=True)
class PtsRequest:
    """What `pts` is asked, built and checked once from its options (cli/pts.py pts_request) and passed down whole:
    to a run on one target, on hosts, or a fleet."""

    settings: "Settings"  # the profile, spec, tests and their parameters
    targets: tuple[str, ...]  # as typed; none: the demo's scratch file
    name: str  # the run's name (pts-PROFILE)
    run_dir: Path
    size: str | None = None  # of a new target file or the scratch file, as typed
    destructive: bool = False
    purge_method: str = "auto"  # auto or a method's name
    purge_scope: str = "namespace"  # what an NVMe purge may erase besides the target: namespace or subsystem
    dry_run: bool = False
    verbose: bool = False  # with dry_run: every phase's job files too
    measure_rate: bool = False  # purge and preconditioning timed from a short read of the target
    hosts_spec: str | None = None  # --hosts as typed; None: this machine
    fdp_placement: str | None = None  # off, spread or one; None: not given
    description: Mapping[str, str] = field(default_factory=dict)  # --device-info
    drops: Mapping[str, float | bool | None] = field(default_factory=dict)  # the drop rule, as the manifest keeps it
    images: tuple[str, ...] = ()  # the report's figures also as these image formats

    @property
    def size_bytes(self) -> int | None:
        from ptsbench.units import parse_size_bytes

        return parse_size_bytes(self.size) if self.size else None


@dataclass
class Prepared:
    """A target resolved, planned on and timed, ready for its run directory."""

    target: "Target"
    scratch: bool
    plan: "Plan"
    info: "TargetInfo"
    facts: dict[str, object]
    ioengine_note: str
    purge_method: str  # as asked (auto, or a method name): resume chooses again
    purge_scope: str
    method: "PurgeMethod"  # as chosen now
    timing: "PrepTiming"
    check: Callable[[], None]  # the destructive-write guard on it (raises when the run would be refused)

    def create_run(self, run_dir: Path, settings: "Settings", name: str,
                   description: Mapping[str, str]) -> "tuple[PtsStore, Plan]":
        from ptsbench.device.same_device import start_record
        from ptsbench.pts.start import RunStart, create_run

        identity = start_record(self.target.path) if self.target.kind == "block" else None
        start = RunStart(ioengine_note=self.ioengine_note, purge_method=self.purge_method,
                         purge_scope=self.purge_scope, scratch=self.scratch, name=name,
                         device_info=dict(description), device_identity=identity, timing=self.timing)
        return create_run(run_dir, settings, self.info, self.facts, start)


def prepare_target(request: PtsRequest, target: str | None, run_dir: Path, size_bytes: int | None,
                   dry_run: bool, fleet: Sequence[str] = ()) -> Prepared:
    """Resolve TARGET, refuse it when the guard does (not in a dry run: it says so after its plan), plan on it (with
    --fdp-placement: through its generic character device, also guarded; not in a `fleet`), choose its purge
    (refusing a method it cannot take, or one that would erase another target of the `fleet`) and time it, all
    before a run directory exists."""
    from ptsbench.device.controller import check_write_cache_free
    from ptsbench.device.guard import check_path_allowed
    from ptsbench.device.placement import check_placement_device
    from ptsbench.device.purge import choose_purge
    from ptsbench.device.userfile import check_whole_file
    from ptsbench.errors import TargetError

    size, destructive, settings = request.size, request.destructive, request.settings
    resolved, scratch = resolve_pts_target(target, run_dir, size_bytes, size is not None)
    if size and resolved.kind == "block":
        raise TargetError(f"--size {size} does not apply to the block device {resolved.path}: it is tested whole "
                          f"({resolved.size_bytes:,} bytes)", "leave --size out; --active-range limits the LBAs used")

    def check_resolved() -> None:
        check_path_allowed(resolved.path, True, destructive)
        check_whole_file(resolved.path, destructive)

    if not dry_run:  # before planning probes the target (fio makes its probe file in the target's folder)
        check_resolved()
    plan, info, facts, note = plan_target(settings, resolved, None if fleet else request.fdp_placement)

    def check_placement() -> None:
        if info.fdp_device:  # what fio opens: judged as the namespace it reaches
            check_placement_device(info.fdp_device, resolved.path, destructive)

    def check_cache() -> None:  # another run holding the controller's write cache the other way (the engine's too)
        check_write_cache_free(resolved, facts, plan.settings.write_cache == "enabled")

    def check_target() -> None:
        check_resolved()
        check_placement()
        check_cache()

    if not dry_run:  # the target was judged above (a block device again under the run's claim: pts/engine.py)
        check_placement()
        check_cache()
    # resume keeps the method: refuse one the target cannot take before the run exists
    method = choose_purge(resolved, facts, request.purge_method, request.purge_scope, fleet)
    timing = prep_timing(plan, resolved, facts, method, request.measure_rate)
    return Prepared(resolved, scratch, plan, info, facts, note, request.purge_method, request.purge_scope, method,
                    timing, check_target)


def print_target_dry_run(prepared: Prepared, verbose: bool, description: Mapping[str, str],
                         raise_refusal: bool = True) -> PtsbenchError | None:
    """A dry run on one target: its plan, purge, and the guard's verdict (the refusal raised, or with
    `raise_refusal` False returned, for a fleet that lists every target first)."""
    from ptsbench.device.purge import purge_reach_text

    method = prepared.method
    deviation = "" if method.pts_purge else " (not a PTS purge: the run will not be PTS-compliant)"
    reach = purge_reach_text(method, prepared.target, prepared.facts, prepared.purge_scope)
    print_dry_run(prepared.plan, prepared.timing, f"Purge at run time: {method.name}{deviation}{reach}",
                  method.pts_purge, verbose, dict(description))
    try:
        guard_verdict(prepared.check)
    except PtsbenchError as error:
        if raise_refusal:
            raise
        return error
    return None


def guard_verdict(check: Callable[[], None]) -> None:
    """A dry run's last line: whether the destructive-write guard lets the real run start (raise when not)."""
    try:
        check()
    except PtsbenchError as error:
        click.echo(f"# guard: the real run would be refused: {error}")
        raise
    click.echo("# guard: the real run would start")


def resolve_pts_target(target: str | None, run_dir: Path, size_bytes: int | None, size_given: bool,
                       ) -> "tuple[Target, bool]":
    from ptsbench.device.target import Target, resolve_target
    from ptsbench.errors import TargetError

    if target is None:
        if size_bytes is None:
            raise TargetError("no target given", "pass a block device or file, or use --profile demo or --size")
        scratch = str((run_dir / "scratch.dat").absolute())  # made by fio inside the new run directory
        return Target(path=scratch, kind="file", size_bytes=size_bytes, requested="scratch file"), True
    from ptsbench.fio.jobs import target_options

    resolved = resolve_target(target, size_bytes)
    target_options(resolved.path)  # refuses a path fio would read as another (';', '#', '$')
    if not size_given and resolved.names_missing_file:  # a typo is no new file
        raise TargetError(f"{target}: no such file", "give --size to create it (or check the path for a typo)")
    return resolved, False


def plan_target(settings: "Settings", resolved: "Target", fdp_placement: str | None = None,
                ) -> "tuple[Plan, TargetInfo, dict[str, object], str]":
    from ptsbench.device.info import target_facts
    from ptsbench.device.target import check_has_capacity, zoned_model
    from ptsbench.errors import TargetError
    from ptsbench.fio.runner import probe_engine
    from ptsbench.pts.plan import make_plan
    from ptsbench.pts.start import target_info

    check_has_capacity(resolved)
    zoned = zoned_model(resolved.path) if resolved.kind == "block" else None
    if zoned:
        raise TargetError(f"{resolved.path} is a zoned block device ({zoned}): the PTS writes it at random, which "
                          "a zoned device takes only at each zone's write pointer", "`ptsbench pts` tests "
                          "conventional devices; test a zoned one with `ptsbench run` and a job that sets "
                          "zonemode=zbd")
    if not resolved.size_bytes:
        raise TargetError(f"{resolved.path} has no size yet", "pass --size for a new file, e.g. --size 64G")
    facts = target_facts(resolved)
    probe_at = resolved.path
    while not Path(probe_at).exists():
        probe_at = str(Path(probe_at).parent)
    engine, note = probe_engine(probe_at)
    info = placed(target_info(resolved, facts, engine, resolved.size_bytes), resolved, facts, fdp_placement)
    return make_plan(settings, info), info, facts, note


def placed(info: "TargetInfo", resolved: "Target", facts: Mapping[str, object], mode: str | None) -> "TargetInfo":
    """The planning view with FDP placement `mode` (device/placement.py): refused unless the target is an NVMe
    namespace with FDP enabled and fio (3.34 or newer) can write its generic character device through io_uring_cmd.
    Off is recorded when asked for, or (`mode` None) when the namespace has FDP enabled: the run is then the FDP-off
    side of a `compare`."""
    from dataclasses import replace

    from ptsbench.device.placement import choose_placement, fdp_enabled
    from ptsbench.errors import FioNotFoundError, TargetError
    from ptsbench.fio.runner import fio_version, probe_passthrough
    from ptsbench.fio.versions import data_placement_problem

    placement = choose_placement(mode, resolved, facts)
    if placement is None:
        return replace(info, fdp_placement="off") if mode == "off" or fdp_enabled(resolved, facts) else info
    problem = data_placement_problem(fio_version())
    if problem:
        raise FioNotFoundError(f"--fdp-placement {mode}: {problem}", "install a newer fio (docs/waf-fdp.md), or "
                               "leave --fdp-placement out")
    problem = probe_passthrough(placement.char_device)
    if problem:
        raise TargetError(f"--fdp-placement {mode}: fio's io_uring_cmd engine cannot read {placement.char_device}: "
                          f"{problem}", "it needs NVMe passthrough on io_uring (Linux 5.19 or newer) and a fio built "
                          "with io_uring; or leave --fdp-placement out")
    return replace(info, fdp_placement=mode, fdp_device=placement.char_device,
                   fdp_plids=",".join(map(str, placement.placement_ids)))


def check_precondition_fio(settings: "Settings") -> None:
    """--precondition sprandom only where the fio ptsbench runs has sprandom: one line saying so before anything
    runs (a dry run too)."""
    from ptsbench.errors import FioNotFoundError
    from ptsbench.fio.runner import fio_has_option, fio_version
    from ptsbench.fio.versions import SPRANDOM_HINT, SPRANDOM_MISSING

    if settings.precondition == "sprandom" and not fio_has_option("sprandom"):
        raise FioNotFoundError(f"--precondition sprandom: {SPRANDOM_MISSING.format(version=fio_version())}",
                               SPRANDOM_HINT)


def prep_timing(plan: "Plan", resolved: "Target", facts: dict[str, object], method: "PurgeMethod",
                measure: bool) -> "PrepTiming":
    """How long the purges and preconditioning take: at a rate measured with a short read of the target when asked
    (and possible), else at the assumed rate, as the output says."""
    from ptsbench.device.purge_time import purge_time_s
    from ptsbench.fio.runner import measure_read_rate
    from ptsbench.pts.prep_time import ASSUMED_RATE_BYTES_PER_S, ASSUMED_RATE_SOURCE, PrepTiming

    rate, source = float(ASSUMED_RATE_BYTES_PER_S), ASSUMED_RATE_SOURCE
    if measure:
        measured, said = measure_read_rate(resolved.path, plan.target.ioengine, MEASURE_READ_S)
        if measured is None:
            source = f"assumed: --measure-rate could not measure ({said})"
        else:
            rate, source = measured, f"{said} (writes are often slower than reads)"
    purge_s, basis = purge_time_s(method, resolved, facts, rate)
    return PrepTiming(rate, source, method.name, purge_s, basis)


def print_plan(plan: "Plan", timing: "PrepTiming | None") -> None:
    from ptsbench.pts.describe import describe

    for line in describe(plan, timing):
        click.echo(line, err=True)


def print_dry_run(plan: "Plan", timing: "PrepTiming", purge: str, pts_purge: bool, verbose: bool,
                  description: dict[str, str]) -> None:
    """What matters first (tests, worst-case time, purge, write cache, compliance), then each phase and the
    deviations; the job files with --verbose."""
    from ptsbench.pts.describe import RUN_TIME_DEVIATIONS, phase_lines, summary_lines
    from ptsbench.pts.plan import precondition_job, round_job, round_seed
    from ptsbench.report.pts.facts import device_description

    summary = summary_lines(plan, timing)
    verdict = summary[-1]
    if not pts_purge:
        count = len(plan.deviations) + 1
        verdict = (f"Can be PTS-compliant: no, {count} deviation{'s' if count != 1 else ''} (the purge, and any "
                   f"below; {RUN_TIME_DEVIATIONS})")
    for line in [*summary[:-1], purge, f"Write cache: set to {plan.settings.write_cache} at run time (a deviation "
                 "if the device does not allow it)", verdict, *phase_lines(plan, timing)]:
        click.echo(f"# {line}")
    if description:
        click.echo(f"# Device description: {device_description({'device_info': description})}")
    if not verbose:
        click.echo("# Job files: add --verbose to print every phase's job files")
        return
    for phase in plan.phases:
        if phase.phase.precondition is not None:
            click.echo(f"\n# {phase.phase.title}: preconditioning job file")
            click.echo(precondition_job(plan, phase), nl=False)
        click.echo(f"\n# {phase.phase.title}: round 1 job file (later rounds: a new randseed; sequential cells carry "
                   "on where the previous round stopped)")
        click.echo(round_job(plan, phase, round_seed(0, phase.key, 1)).text, nl=False)
        if phase.phase.role == "sweep" and phase.phase.test in plan.pending_points:
            click.echo(f"\n# {phase.phase.title}: the operating points' job files are made once the sweep has chosen "
                       "their TC/QD")
