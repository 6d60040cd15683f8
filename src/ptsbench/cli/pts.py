"""`ptsbench pts` and `ptsbench resume`: parse options, call the PTS engine, print plan, progress and results."""

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli import Finite, safety_flag, text_path
from ptsbench.cli.case_options import LATENCY_MONITOR_OPTION, images_option, one_line
from ptsbench.cli.check import gate_options
from ptsbench.cli.drops import drop_options, drop_settings
from ptsbench.cli.metrics import metrics_options
from ptsbench.cli.pts_steps import (
    PtsRequest,
    check_precondition_fio,
    guard_verdict,
    prepare_target,
    print_dry_run,
    print_plan,
    print_target_dry_run,
)
from ptsbench.cli.run_end import report_images
from ptsbench.device.placement import PLACEMENTS
from ptsbench.pts.params import PRECONDITIONS
from ptsbench.units import MAX_SECONDS

if TYPE_CHECKING:
    from ptsbench.device.target import Target
    from ptsbench.hosts.hostlist import Host
    from ptsbench.hosts.preflight import HostInfo
    from ptsbench.pts.store import PtsStore

DEVICE_INFO_MAX_BYTES = 1024 * 1024  # a description of one device, for a report's first page
OVERRIDE_HELP = "A plain value applies to every selected test; TEST=VALUE (e.g. iops=4k,64k) to one. Repeatable."


def _override(name: str, help_text: str) -> Callable[[Any], Any]:
    return click.option(name, multiple=True, metavar="[TEST=]VALUE", help=f"{help_text} {OVERRIDE_HELP}")


def _advanced(name: str, help_text: str) -> Callable[[Any], Any]:
    """An option of the advanced tests that have the parameter (TEST=VALUE also works, for one of them)."""
    return click.option(name, multiple=True, metavar="VALUE", help=help_text)


def _takes_request(function: Callable[..., Any]) -> Callable[..., Any]:
    """pts gets its PtsRequest, built and checked from every option, in their place."""

    @functools.wraps(function)
    def wrapper(**options: Any) -> Any:
        return function(pts_request(options))

    return wrapper


@click.command()
@gate_options
@metrics_options
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@click.option("--profile", type=click.Choice(["enterprise", "client", "demo"]), default="enterprise",
              show_default=True, help="PTS profile; demo: the same flow in about two minutes on a scratch file.")
@click.option("--spec", type=click.Choice(["2.0", "1.1"]), default="2.0", show_default=True,
              help="PTS 2.0.2 (three tracked IOPS cells) or PTS-E 1.1 (one).")
@click.option("--tests", default="iops,tp,lat,wsat", show_default=True,
              help="Tests to run (any order; they run in this one): iops, tp, lat, wsat, hir (host idle recovery), "
              "xsr (cross stimulus recovery), cbw (composite block size workload; ecw with --spec 1.1), dirth "
              "(demand intensity / response time histogram), hdd-iops, hdd-tp (TKperf's HDD zones).")
@click.option("--out", type=click.Path(path_type=Path), callback=lambda _c, _p, value: text_path(value),
              help="Run directory (default ./ptsbench-results/...).")
@click.option("--size", help="Size of a new target file or scratch file (e.g. 64G); a device is tested whole.")
@safety_flag("--destructive", help_text="Allow writing (and purging) a block device. All data is lost.")
@click.option("--purge", "purge_method", default="auto", show_default=True,
              help="auto, nvme-sanitize, nvme-format, ata-secure-erase, scsi, blkdiscard or none.")
@click.option("--purge-scope", type=click.Choice(["namespace", "subsystem"]), default="namespace",
              show_default=True, help="What an NVMe purge may erase besides TARGET: namespace: nothing else that "
              "holds data (auto then chooses a method that erases only TARGET); subsystem: every namespace of the "
              "NVM subsystem that is not in use (sanitize always reaches them all, a format when FNA says so).")
@_override("--round-time", "Seconds per cell (PTS: 60).")
@_override("--max-rounds", "Maximum rounds (PTS: 25).")
@_override("--numjobs", "Thread count TC (CBW, DIRTH, ECW: --demand-tcs).")
@_override("--iodepth", "Queue depth QD per thread (CBW, DIRTH, ECW: --demand-qds).")
@_override("--block-sizes", "Comma-separated block sizes (they run largest first, as the spec nests them).")
@_override("--mixes", "Comma-separated read percentages (100,65,0) or mixes (65/35); they run from all reads to "
           "all writes, as the spec nests them.")
@_advanced("--hir-wait-states", "HIR idle times after the bursts, e.g. 5,10,15,25,50 (PTS).")
@_advanced("--hir-bursts", "HIR bursts per wait state (PTS: 360).")
@_advanced("--hir-burst-time", "HIR burst length (PTS: 5s).")
@_advanced("--hir-recovery-time", "HIR continuous writes after each wait state (PTS: 30m).")
@_advanced("--xsr-groups", "XSR access group lengths, e.g. 8h,6h,8h (PTS).")
@_advanced("--demand-tcs", "CBW/DIRTH/ECW thread counts, e.g. 32,16,8,6,4,2,1 (PTS).")
@_advanced("--demand-qds", "CBW/DIRTH/ECW queue depths per thread, e.g. 32,16,8,6,4,2,1 (PTS).")
@_advanced("--prewrite-time", "CBW/DIRTH/ECW pre-write before each sweep round (PTS: 5m).")
@_advanced("--point-prewrite-time", "CBW/DIRTH/ECW pre-write before each operating point (PTS: 60m).")
@_advanced("--point-capture-time", "CBW/DIRTH/ECW response-time capture at each operating point (PTS: 10m).")
@_advanced("--point-prewrite-depth", "CBW/DIRTH/ECW operating-point pre-write at the sweep's top TC/QD (top, "
           "TC32/QD32, the default) or at the point's own TC/QD (point).")
@_advanced("--ss-round-time", "HIR baseline and CBW/DIRTH/ECW preconditioning round length (PTS: 30m, 30 one-minute "
           "intervals).")
@_advanced("--dirth-workload", "DIRTH random workload as BLOCK_SIZE:READ_PERCENT (default 8k:65).")
@_advanced("--zones", "HDD zones of the active range (TKperf: 128).")
@click.option("--active-range", type=Finite(0, 100, min_open=True), help="Active range in percent.")
@click.option("--precondition-multiple", type=Finite(0, 1000, min_open=True),
              help="Preconditioning writes this many times the active range (PTS: 2).")
@click.option("--precondition", "precondition", type=click.Choice(PRECONDITIONS), default="wipc",
              help="How the IOPS and latency tests are preconditioned: wipc (PTS: 2 x the active range of sequential "
              "128 KiB writes) or sprandom (fio's, fio 3.41+: random 4 KiB writes of the range and its "
              "over-provisioning once, laid out as a random-write steady state; a deviation). Throughput keeps WIPC.")
@click.option("--sprandom-op", type=Finite(0, 1, min_open=True, max_open=True),
              help="With --precondition sprandom: the drive's over-provisioning as a fraction (fio's spr_op; "
              "default 0.15).")
@click.option("--wsat-capacity", type=Finite(0, 1000, min_open=True),
              help="Write saturation stops after this many times the capacity written (PTS: 4).")
@click.option("--wsat-time", help="Write saturation time limit, e.g. 24h (PTS: 24h).")
@click.option("--ramp-time", type=Finite(0, MAX_SECONDS), default=0.0, help="fio ramp_time in seconds (PTS: 0).")
@click.option("--lat-histogram-time", help="PTS 2.0 latency test: response-time histogram capture after steady "
              "state (PTS: 20m; 0: none).")
@click.option("--fdp-placement", type=click.Choice(PLACEMENTS),
              help="NVMe namespace with Flexible Data Placement enabled: fio writes its /dev/ngXnY through "
              "io_uring_cmd, spread over all its placement handles or all to one (fio 3.34+); off (the default): as "
              "always, recorded as off on a namespace with FDP enabled. Compare an FDP on and off run with "
              "`ptsbench compare` (docs/waf-fdp.md).")
@click.option("--device-info", multiple=True, metavar="KEY=VALUE|@FILE",
              help="Describe the device for the report, e.g. form_factor=U.2 media=TLC interface='PCIe 4.0 x4'; "
              "@FILE reads KEY=VALUE lines. Repeatable.")
@click.option("--dry-run", is_flag=True,
              help="Print the plan (tests, worst-case time, purge, compliance); run nothing.")
@click.option("--verbose", is_flag=True, help="With --dry-run: also print every phase's fio job files.")
@click.option("--measure-rate", is_flag=True, help="Estimate purge and preconditioning times from a few seconds of "
              "sequential reads of TARGET (read-only) instead of an assumed 500 MB/s.")
@click.option("--hosts", "hosts_spec", metavar="HOSTS",
              help="Run on the same TARGET path on these hosts at once, rounds in lockstep: ssh://[USER@]HOST[:PORT]"
              ",... (fio's server is started there through SSH; tcp://HOST[:PORT] for an unauthenticated `ptsbench "
              "server --tcp`) or a file with one per line. Needs --size (the smallest device's); purge is not run "
              "on the hosts (a deviation).")
@images_option("For the report at the end (and after `ptsbench resume`): ")
@LATENCY_MONITOR_OPTION
@drop_options
@_takes_request
def pts(request: PtsRequest) -> Path | None:
    """Run the SNIA PTS tests on TARGET: IOPS, throughput, latency, write saturation (the default), host idle
    recovery, cross stimulus recovery, composite block size workload (ECW in PTS-E 1.1), demand intensity / response
    time histogram, and TKperf's HDD zone tests.

    With several TARGETs (a fleet), the whole PTS runs on every one at once, each on its own, in one run directory
    with a part per target (see docs/fleet.md).

    Each test: purge, preconditioning, rounds until steady state (or the maximum round count, or its fixed schedule).
    Every finished round is stored at once, with device telemetry and host CPU; `ptsbench resume RUN_DIR` continues
    an interrupted run. Without TARGET (demo profile), a scratch file in the run directory is used.

    \b
    Examples:
      ptsbench pts --profile demo
      ptsbench pts /dev/nvme0n1 --destructive
      ptsbench pts /dev/sdb --profile client --tests iops,lat --destructive
      ptsbench pts /dev/nvme0n1 --spec 1.1 --round-time 30 --max-rounds 10 --dry-run
      ptsbench pts /mnt/scratch/test.dat --size 64G --block-sizes iops=4k,64k,1m --mixes iops=100,65,0
      ptsbench pts --profile demo --tests hir,xsr,cbw,dirth
      ptsbench pts /dev/nvme0n1 --tests dirth --dirth-workload 4k:70 --destructive
      ptsbench pts /dev/nvme0n1 --spec 1.1 --tests ecw --destructive
      ptsbench pts /dev/sdc --tests hdd-iops,hdd-tp --zones 64 --destructive
      ptsbench pts /dev/nvme0n1 --hosts ssh://root@node1,ssh://root@node2 --size 1T --destructive
      ptsbench pts /dev/nvme0n1 /dev/nvme1n1 /dev/nvme2n1 --destructive --dry-run
      ptsbench pts /dev/nvme0n1 --tests wsat --fdp-placement spread --destructive
      ptsbench pts /dev/nvme0n1 --device-info form_factor=M.2 --device-info media=QLC --destructive
    """
    if request.hosts_spec is not None:
        return _pts_on_hosts(request)
    if len(request.targets) > 1:
        from ptsbench.cli.fleet import pts_fleet

        pts_fleet(request)
        return None  # a fleet: its devices' runs are checked one by one (ptsbench check)
    run_dir = request.run_dir
    target = request.targets[0] if request.targets else None
    size_bytes = request.size_bytes if request.size else request.settings.scratch_size_bytes
    prepared = prepare_target(request, target, run_dir, size_bytes, request.dry_run)
    if request.dry_run:
        print_target_dry_run(prepared, request.verbose, request.description)
        return None
    from ptsbench.device.target import check_free_space

    check_free_space([prepared.target])
    store, plan = prepared.create_run(run_dir, request.settings, request.name, request.description)
    click.echo(f"ptsbench: run directory {run_dir}", err=True)
    print_plan(plan, prepared.timing)
    store.store.update_manifest(drops=dict(request.drops), report_images=list(request.images))
    _run(store, prepared.target, request.destructive)
    return run_dir


def pts_request(options: Mapping[str, Any]) -> PtsRequest:
    """The request of pts's options as click parsed them: values on one line, the tests and their [TEST=]VALUE
    overrides to Settings, --device-info read, and the options that exclude each other refused."""
    from ptsbench.pts.settings import OPTION_NAMES, RunChoices, make_settings, parse_overrides, parse_tests
    from ptsbench.store import default_run_dir

    targets, size, out, hosts_spec = options["targets"], options["size"], options["out"], options["hosts_spec"]
    one_line(*targets, size, str(out) if out else None, what="TARGET/--size/--out")
    chosen = parse_tests(options["tests"])
    fields = {flag.lstrip("-").replace("-", "_"): name for name, flag in OPTION_NAMES.items()}
    parsed = parse_overrides({fields[param]: values for param, values in options.items()
                              if param in fields and values}, chosen)
    choices = RunChoices(options["active_range"], options["precondition_multiple"], options["wsat_capacity"],
                         _seconds(options["wsat_time"]), options["ramp_time"],
                         _histogram_seconds(options["lat_histogram_time"]), options["precondition"],
                         options["sprandom_op"])
    settings = make_settings(options["profile"], options["spec"], chosen, parsed, choices)
    description = parse_device_info(options["device_info"])
    drops = drop_settings(options["drop_fraction"], options["drop_seconds"], options["min_fraction"])
    if options["fdp_placement"] not in (None, "off") and (hosts_spec is not None or len(targets) > 1):
        raise click.UsageError("--fdp-placement takes one local TARGET (not --hosts, not a fleet)")
    if hosts_spec is not None and len(targets) > 1:
        raise click.UsageError("pts --hosts takes one TARGET (the same path on every host)")
    if options["precondition"] == "sprandom" and hosts_spec is not None:
        raise click.UsageError("--precondition sprandom runs on this machine's fio only (not --hosts)")
    check_precondition_fio(settings)
    profile = options["profile"]
    return PtsRequest(settings, tuple(targets), f"pts-{profile}", out or default_run_dir(f"pts-{profile}"), size=size,
                      destructive=options["destructive"], purge_method=options["purge_method"],
                      purge_scope=options["purge_scope"], dry_run=options["dry_run"], verbose=options["verbose"],
                      measure_rate=options["measure_rate"], hosts_spec=hosts_spec,
                      fdp_placement=options["fdp_placement"], description=description, drops=drops,
                      images=tuple(options["images"]))


def _pts_on_hosts(request: PtsRequest) -> Path | None:
    """`pts TARGET --hosts HOSTS --size SIZE`: pre-flight, plan on the given size, run on every host at once."""
    from dataclasses import asdict

    from ptsbench.hosts.hostlist import parse_hosts
    from ptsbench.hosts.preflight import check_remote_path, remote_target_facts
    from ptsbench.pts.start import RunStart, create_run
    from ptsbench.units import parse_size_bytes

    target = request.targets[0] if request.targets else None
    size, run_dir, dry_run = request.size, request.run_dir, request.dry_run
    if target is None or size is None:
        raise click.UsageError("pts --hosts needs TARGET (a path that exists on every host) and --size (the "
                               "capacity to test: the smallest device's, as the controller cannot read theirs)")
    if request.purge_method not in ("auto", "none"):
        raise click.UsageError(f"--purge {request.purge_method} runs on this machine only: with --hosts the hosts are "
                               "not purged (recorded as a deviation); leave --purge out")
    hosts = parse_hosts(request.hosts_spec or "")
    resolved, infos, engine, note = _remote_target(hosts, target, parse_size_bytes(size), dry_run)
    from ptsbench.pts.plan import make_plan
    from ptsbench.pts.prep_time import assumed_timing
    from ptsbench.pts.start import target_info

    info = target_info(resolved, {}, engine, parse_size_bytes(size), remote=True)
    settings, description = request.settings, dict(request.description)
    if dry_run:
        click.echo(f"# hosts: {', '.join(host.label for host in hosts)} (one fio client per round; pre-flight and "
                   "the ioengine probe run on the hosts when the run starts)")
        print_dry_run(make_plan(settings, info), assumed_timing(), "Purge at run time: none (the hosts' devices "
                       "cannot be purged from here: not a PTS purge, the run will not be PTS-compliant)", False,
                       request.verbose, description)
        guard_verdict(lambda: check_remote_path(resolved.path, request.destructive, hosts, "the PTS run"))
        return None
    check_remote_path(resolved.path, request.destructive, hosts, "the PTS run")
    facts = remote_target_facts(infos, parse_size_bytes(size))
    start = RunStart(ioengine_note=note, purge_method="none", name=request.name,
                     hosts=[asdict(found) for found in infos], device_info=description, timing=assumed_timing())
    store, plan = create_run(run_dir, settings, info, facts, start)
    click.echo(f"ptsbench: run directory {run_dir}", err=True)
    print_plan(plan, assumed_timing())
    store.store.update_manifest(drops=dict(request.drops), report_images=list(request.images))
    _run(store, resolved, request.destructive)
    return run_dir



def _remote_target(hosts: "list[Host]", target: str, size_bytes: int, dry_run: bool,
                   ) -> "tuple[Target, list[HostInfo], str, str]":
    """The target as every host resolves it (pre-flight), their facts, and the ioengine that works on all."""
    from dataclasses import replace

    from ptsbench.hosts.preflight import preflight, probe_remote_engine, unchecked_targets

    if dry_run:
        return replace(unchecked_targets([target])[0], size_bytes=size_bytes), [], "libaio", ""
    click.echo(f"ptsbench: pre-flight on {len(hosts)} host(s)", err=True)
    checked = preflight(hosts, [target], size_bytes=size_bytes)
    resolved = replace(checked.targets[0], size_bytes=size_bytes)
    engine, note = probe_remote_engine(hosts, resolved)
    return resolved, list(checked.hosts), engine, note


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@safety_flag("--destructive", help_text="Allow writing (and purging) a block device again.")
@metrics_options
def resume(run_dir: Path, destructive: bool) -> None:
    """Continue an interrupted PTS run (keeps every stored round, runs only what is missing), sweep (runs only
    the cells without a finished result), replay --steady run (keeps its finished rounds), or run and quick (runs
    only the cases without a finished result). A fleet run continues every target not done; RUN_DIR/devices/NAME
    continues that target alone.

    \b
    Examples:
      ptsbench resume ptsbench-results/20261120T101500Z-pts-enterprise --destructive
      ptsbench resume ptsbench-results/20261120T101500Z-pts-enterprise/devices/nvme1n1 --destructive
    """
    from ptsbench.device.latency_monitor import request_stored
    from ptsbench.pts.params import Settings
    from ptsbench.pts.start import resume_target
    from ptsbench.pts.store import PtsStore
    from ptsbench.store import RunStore, is_steady_replay

    try:  # the latency monitor set again as the run asked (--latency-monitor), before the resume's first reading
        request_stored(RunStore.open(run_dir).manifest.get("latency_monitor_request"))
    except ValueError as problem:
        from ptsbench.errors import PtsbenchError

        raise PtsbenchError(f"{run_dir / 'manifest.json'}: latency_monitor_request {problem}",
                            "restore the manifest from a copy") from None
    if RunStore.open(run_dir).kind == "sweep":
        from ptsbench.cli.sweep import resume_sweep

        resume_sweep(run_dir, destructive)
        return
    if RunStore.open(run_dir).kind == "pts-fleet":
        from ptsbench.cli.fleet import resume_fleet

        resume_fleet(RunStore.open(run_dir), destructive)
        return
    if is_steady_replay(RunStore.open(run_dir).manifest):
        from ptsbench.cli.workload import resume_replay

        resume_replay(run_dir, destructive)
        return
    if RunStore.open(run_dir).kind == "run":  # run and quick (a steady replay is kind "run" too: above)
        from ptsbench.cli.resume_run import resume_run

        resume_run(run_dir, destructive)
        return
    store = PtsStore(RunStore.open(run_dir))
    target, notes = resume_target(store)
    store.check_readable()  # a damaged store is refused before the resume changes anything
    check_precondition_fio(Settings.from_dict(store.store.manifest["settings"]))  # fio may have changed since
    for note in notes:
        click.echo(f"ptsbench: note: {note}", err=True)
    click.echo(f"ptsbench: resuming {run_dir}", err=True)
    _run(store, target, destructive)


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    from ptsbench.pts.settings import OVERRIDE_PARSERS

    value = OVERRIDE_PARSERS["round_time_s"](text)
    assert isinstance(value, float)
    return value


def _histogram_seconds(text: str | None) -> float | None:
    """--lat-histogram-time: a duration, or 0 for no capture."""
    if text is not None and text.strip() in ("0", "0s"):
        return 0.0
    return _seconds(text)


def parse_device_info(items: tuple[str, ...]) -> dict[str, str]:
    """--device-info KEY=VALUE and @FILE (KEY=VALUE lines; blank lines and # comments skipped), later values
    winning: the user's description of the device (form factor, media, interface...), as given."""
    from ptsbench.errors import PtsbenchError
    from ptsbench.textfile import read_user_text

    pairs: list[tuple[str, str]] = []
    for item in items:
        if item.startswith("@"):
            lines = read_user_text(item[1:], "--device-info file", "give a text file of KEY=VALUE lines",
                                   limit_bytes=DEVICE_INFO_MAX_BYTES).splitlines()
            pairs += [(line, item) for line in lines if line.strip() and not line.lstrip().startswith("#")]
        else:
            pairs.append((item, item))
    described: dict[str, str] = {}
    for text, given in pairs:
        key, sep, value = text.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise PtsbenchError(f"--device-info {given}: {text.strip()!r} is not KEY=VALUE",
                                "e.g. --device-info form_factor=U.2 --device-info media=TLC")
        described[key.strip()] = value.strip()
    return described







def _run(store: "PtsStore", target: "Target", destructive: bool) -> None:
    from ptsbench.cli.drops import fail_on_limit, say_pts_drops
    from ptsbench.cli.run_end import write_final_report
    from ptsbench.device.userfile import mark_made, missing
    from ptsbench.pts.engine import run
    from ptsbench.pts.live import LiveReporter, MarkOnLayout
    from ptsbench.pts.start import finish_scratch
    from ptsbench.report.core.terminal import terminal_console
    from ptsbench.report.pts.live import BackgroundReport
    from ptsbench.report.pts.terminal import render_pts

    made = missing([target.path]) if target.kind == "file" else []  # fio makes it: ptsbench's on later runs
    token = (store.store.manifest.get("file_identity") or {}).get("token")  # and this run's (resume checks it)
    images = report_images(store.store)
    try:
        with LiveReporter() as shown, BackgroundReport(store.store.root, shown) as reporter:
            run(store, target, destructive=destructive, reporter=MarkOnLayout(reporter, made, token))
    except Exception:  # a failed round: the report shows what was stored (Ctrl-C skips it: the user wants out)
        if store.store.manifest.get("status") == "failed":  # not a refusal before the run began (in use, guard)
            write_final_report(store.store.root, after_failure=True, images=images)
        raise
    finally:
        mark_made(made, token)
    console = terminal_console()  # on a screen the answer comes last, where the eye is when the run ends; piped
    render_pts(store.store, console, answer_last=console.is_terminal)  # (a log, a pager) first, as `show` has it
    finish_scratch(store)  # first: the report does not need it, and a full disk gets its space back
    write_final_report(store.store.root, images=images)
    fail_on_limit(say_pts_drops(store))
