"""`ptsbench resume` of a run or quick: its cases planned again from what it stored at its start (the job files'
texts, the targets, the overrides), the finished ones kept, the others run (a case a kill left half-done first
cleared), then the end of a run as usual: results, report, drops. With --repeat auto the rule decides again from the
stored repetitions (its time cap counts from the resume)."""

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ptsbench.cases.plan import Case
    from ptsbench.hosts.hostlist import Host
    from ptsbench.store import RunStore


def stored_cases(store: "RunStore") -> "tuple[dict[str, Any], list[Case], list[Host]]":
    """The stored plan (cli/case_run.py resume_plan), the run's cases planned again from it (the same indices and
    names) and its hosts."""
    from ptsbench.cases.plan import Overrides, plan_cases
    from ptsbench.device.target import Target
    from ptsbench.errors import PtsbenchError
    from ptsbench.hosts.hostlist import parse_hosts

    manifest = store.manifest
    plan = manifest.get("resume_plan")
    if not isinstance(plan, dict):
        raise PtsbenchError(f"{store.root} holds no plan to resume (a run made by a ptsbench that did not store "
                            "one)", "start the run again in a new run directory")
    settings = plan["overrides"]
    overrides = Overrides(settings["runtime_s"], settings["size"], settings["ioengine"],
                          tuple((str(key), str(value)) for key, value in settings["options"]))
    hosts = parse_hosts(",".join(plan["hosts"])) if plan.get("hosts") else []
    texts = {str(path): str(text) for path, text in plan["job_texts"].items()}
    # fio's client prints no status documents to derive latency from: there fio writes its own latency log
    repeat = manifest.get("repeat_max") if manifest.get("repeat") == "auto" else manifest.get("repeat")  # planned
    cases = plan_cases([Path(path) for path in texts], [Target(**target) for target in plan["targets"]], overrides,
                       store.root, int(manifest["log_interval_ms"]), bool(plan["fio_lat_log"]) or bool(hosts),
                       int(repeat or 1), texts=texts)
    return plan, cases, hosts


def resume_run(run_dir: Path, destructive: bool, allow_mounted: bool = False) -> None:
    """Run the cases of a killed or interrupted run or quick that have no finished result."""
    from ptsbench.cases.records import RESULT, load_records, read_record
    from ptsbench.cases.schedule import claim_cases, run_cases
    from ptsbench.cli.case_options import CaseRequest
    from ptsbench.cli.case_run import after_run, check_writes, made_files
    from ptsbench.cli.repeat import stored_rule_of
    from ptsbench.cli.sweep import check_targets_again
    from ptsbench.confidence import base_case_name
    from ptsbench.pts.start import stop_orphan_fio
    from ptsbench.pts.store import PtsStore
    from ptsbench.report.core.progress import TerminalProgress
    from ptsbench.store import RunStore
    from ptsbench.sweep import finished

    store = RunStore.open(run_dir.absolute())
    plan, cases, hosts = stored_cases(store)
    ran = store.manifest.get("cases") or []
    if store.manifest.get("status") == "done" and all(finished(store, case) for case in cases
                                                      if case.dir_name in ran):
        from ptsbench.errors import PtsbenchError  # before anything is written into the run directory

        raise PtsbenchError(f"{run_dir}: every case of this run finished: nothing to resume",
                            f"see its results with `ptsbench show {run_dir}`")
    if not hosts:
        check_targets_again(store, [case.target for case in cases if case.target is not None])
    check_writes(cases, (destructive, allow_mounted), hosts)
    click.echo(f"ptsbench: resuming {run_dir}", err=True)
    parallel = bool(store.manifest.get("parallel"))
    with PtsStore(store).lock(), claim_cases(cases, store.root, allow_mounted, hosts), \
            made_files([str(path) for path in plan["made_files"]], bool(plan["keep_files"])):
        stop_orphan_fio(store.root.absolute())
        done = [case for case in cases if finished(store, case)]
        pending = [case for case in cases if case not in done]
        click.echo(f"ptsbench: {len(done)} of {len(cases)} case(s) finished and kept; running the others", err=True)
        auto = stored_rule_of(store)
        for case in done if auto else ():  # the rule decides again from the stored repetitions
            base = base_case_name(case.name, case.repetition)
            if case.repetition and auto is not None and auto.wants(base):
                last = not any(other.repetition > case.repetition and base_case_name(other.name, other.repetition)
                               == base for other in cases)
                auto.finished(base, read_record(store.root / "cases" / case.dir_name / RESULT), last)
        for case in pending:  # a case a kill left half-done: its folder holds one attempt only
            shutil.rmtree(store.root / "cases" / case.dir_name, ignore_errors=True)
        store.update_manifest(status="running", cases=[case.dir_name for case in cases])
        try:
            with TerminalProgress() as progress:
                records = run_cases(store, pending, parallel, progress, hosts, auto)
        except KeyboardInterrupt:
            store.update_manifest(status="interrupted")
            raise
        ran = {case.index for case in done} | {record.index for record in records}
        store.update_manifest(cases=[case.dir_name for case in cases if case.index in ran], status="done")
    scratch = store.manifest.get("scratch_file")  # quick's own test file in the run directory
    if isinstance(scratch, str):
        Path(scratch).unlink(missing_ok=True)
    request = CaseRequest(make_report=bool(plan["report_at_end"]),  # as started
                          images=tuple(str(suffix) for suffix in plan["report_images"]))
    after_run(store, load_records(store), request, grid=store.manifest.get("name") == "quick")
