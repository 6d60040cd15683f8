"""One case run and stored: its job file and command written before fio starts, fio run (on every host), what it
measured, its drive's readings, writes that never reached the device and a device that vanished, and its
result.json written before the next case starts."""

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_json, atomic_write_text
from ptsbench.cases.plan import Case
from ptsbench.cases.records import RESULT, CaseRecord, job_result_dict
from ptsbench.device.case_telemetry import CaseReadings
from ptsbench.device.identity import device_identity, vanished
from ptsbench.device.telemetry import CpuMeter
from ptsbench.device.userfile import mark_made, missing
from ptsbench.device.writeback import WritebackWatch
from ptsbench.fio.intervals import LatencyIntervals, SecondSamples
from ptsbench.fio.output import JobResult, io_span_ms, parse_jobs
from ptsbench.fio.runner import (
    FioInterrupted,
    FioLaunch,
    FioOutcome,
    FioStatus,
    fio_command,
    run_fio,
    shell_line,
)
from ptsbench.hosts.hostlist import Host, write_host_list
from ptsbench.metrics.board import Stream, publish, watched
from ptsbench.store import RunStore, utc_now_ms


def _record(case: Case, outcome: FioOutcome | None, started: str, message: str = "",
            hosts: Sequence[Host] = (), interrupted: bool = False) -> CaseRecord:
    results = parse_jobs(outcome.doc, case.sections) if outcome and outcome.doc else []
    ok = outcome is not None and outcome.ok
    hung = outcome is not None and outcome.hung_s is not None
    record = CaseRecord(
        index=case.index,
        name=case.name,
        source=case.source,
        target=case.target.path if case.target else None,
        status="interrupted" if interrupted else "hung" if hung else "ok" if ok else "failed",
        message=message or ("" if ok or outcome is None else outcome.error_line()),
        started_utc=started,
        ended_utc=utc_now_ms(),
        jobs=[job_result_dict(result) for result in results],
        fio_io_span_ms=io_span_ms(outcome.doc) if outcome and outcome.doc else None,
        repetition=case.repetition,
    )
    if hosts:
        _add_hosts(record, hosts, results, outcome)
    return record


def _client_folder(hosts: Sequence[Host]) -> Path | None:
    """fio's client's working folder for a run on hosts (hosts/ssh.py); None (and SSH's modules not loaded) for a
    run here."""
    if not hosts:
        return None
    from ptsbench.hosts.ssh import client_folder

    return client_folder(hosts)


def _add_hosts(record: CaseRecord, hosts: Sequence[Host], results: list[JobResult], outcome: FioOutcome | None) -> None:
    """Each host's status, and the all-hosts rows (fio's group arithmetic, latency merged from the bins)."""
    from ptsbench.hosts.results import host_outcome

    said = (outcome.stdout_text + "\n" + outcome.stderr_text) if outcome else ""
    found = host_outcome(hosts, results, outcome.doc if outcome else None, said)
    record.jobs = [job_result_dict(result) for result in found.jobs]
    record.hosts = [asdict(status) for status in found.statuses]
    if found.problem and record.status == "ok":
        record.status = "failed"
        record.message = found.problem


def run_case(store: RunStore, case: Case, on_status: Callable[[FioStatus], None] | None,
             readings: CaseReadings, hosts: Sequence[Host] = ()) -> CaseRecord:
    """Write the case's job file and command, run fio (on every host), persist the result before returning; its
    device readings go through `readings` (shared by cases run one after another: device/case_telemetry.py)."""
    case_dir = store.root / "cases" / case.dir_name
    (case_dir / "logs").mkdir(parents=True, exist_ok=True)
    if case.rejected:  # fio's parser rejects the job file: nothing to start
        atomic_write_text(case_dir / "job.fio", case.job_text)
        record = _record(case, None, utc_now_ms(), case.rejected)
        atomic_write_json(case_dir / RESULT, asdict(record))
        return record
    job_path = (case_dir / "job.fio").absolute()  # through SSH, fio's client runs in the tunnel folder
    atomic_write_text(job_path, case.job_text)
    client = str(write_host_list(store.root, hosts)) if hosts else None
    atomic_write_text(case_dir / "command.txt", shell_line(fio_command(job_path, client=client)) + "\n")
    started = utc_now_ms()
    latency = LatencyIntervals(case.lat_log_prefixes)
    samples, cpu = SecondSamples(), CpuMeter()  # per-second data for drop detection, host CPU beside it
    new_file = _new_target_file(case, hosts)
    devices = [] if hosts else [found for path, _ in case.opened() if (found := device_identity(path))]
    # what fio makes here for ptsbench, marked as its own: on hosts only the logs fio's client writes
    made = missing([path for path, _option in case.client_outputs([host.name for host in hosts])] if hosts else
                   [path for path, _written in case.opened()] + [path for path, _option in case.outputs()])
    counters = readings.start([] if hosts else case.opened())  # before fio starts: the case's write amplification
    watch = WritebackWatch.open([] if hosts else case.data_written())  # writes fio counted that never got there

    marked = threading.Event()

    def on_document(document: dict[str, Any]) -> None:
        latency.add(document)
        samples.add(document, {"cpu_busy_pct": None} if hosts else cpu.beside())
        if made and not marked.is_set():  # once fio has laid them out (its first status): a killed run's resume
            marked.set()  # knows them as ptsbench's
            mark_made(made)

    live = Stream(store.root.absolute(), {"test": case.name, "device": case.target.path if case.target else ""},
                  samples, {}, case.expected_s)
    try:
        with publish(live):  # for the metrics exporter, which reads the samples as they come
            outcome = run_fio(job_path, json_path=case_dir / "fio.json", stderr_path=case_dir / "fio.stderr",
                              on_status=on_status, on_document=on_document, status_bins=watched(),
                              launch=FioLaunch(client=client, expected_s=case.expected_s, cwd=_client_folder(hosts)))
    except KeyboardInterrupt as stopped:  # keep what fio measured until then, then let the interrupt go on
        partial = stopped.outcome if isinstance(stopped, FioInterrupted) else None
        watch.close()
        samples.write(case_dir)
        record = _record(case, partial, started, "interrupted by the user", hosts, interrupted=True)
        atomic_write_json(case_dir / RESULT, asdict(record))
        raise
    finally:
        latency.close()
        mark_made(made)
    lost = watch.lost()  # always: it also closes the descriptors
    samples.write(case_dir)
    record = _record(case, outcome, started, hosts=hosts)
    if lost and record.status == "ok":
        record.status, record.message = "failed", f"{case.source}: {lost}"
    record.telemetry = readings.finish(counters)
    gone = next((why for device in devices if (why := vanished(device))), None) if record.status != "ok" else None
    if gone:  # fio blames O_DIRECT or a missing file for it
        record.message = f"{case.source}: {gone}"
    elif outcome.doc is None:  # fio refused the job file or died before its first result: name the file
        record.message = f"{case.source}: {record.message}"
    if new_file is not None and record.status != "ok" and os.path.isfile(new_file):
        os.unlink(new_file)  # half laid out (a full disk, an abort): not left behind taking the space
        record.message += f" (removed {new_file}, which fio had created for this case)"
    atomic_write_json(case_dir / RESULT, asdict(record))
    return record


def _new_target_file(case: Case, hosts: Sequence[Host]) -> str | None:
    """The case's target file when fio is about to create it here (None when it exists, or is on other hosts)."""
    target = case.target
    if hosts or target is None or target.kind != "file" or os.path.lexists(target.path):
        return None
    return target.path
