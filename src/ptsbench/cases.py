"""The fio case runner: job files x targets -> cases (planned purely) -> run one by one, or targets at once -> store.

Each case is one fio process on one job file. Its exact job file and command line are written before fio starts,
and its result.json after fio ends, before the next case starts.
"""

import os
import stat
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from ptsbench.atomic import atomic_write_json, atomic_write_text
from ptsbench.case_records import RESULT, CaseRecord, job_result_dict
from ptsbench.confidence import AutoRepeat, base_case_name
from ptsbench.errors import JobFileError
from ptsbench.fio import jobs
from ptsbench.fio.intervals import LatencyIntervals, SecondSamples
from ptsbench.fio.opens import FILE_OPTIONS, NAMED_OUTPUTS, JobOpens, job_count, parse_job_text
from ptsbench.fio.output import JobResult, io_span_ms, parse_jobs
from ptsbench.fio.runner import (
    FioInterrupted,
    FioOutcome,
    FioStatus,
    fio_command,
    fio_version,
    run_fio,
    shell_line,
    stop_all,
)
from ptsbench.fio.versions import job_rule_problems
from ptsbench.hosts.hostlist import Host, write_host_list
from ptsbench.hosts.results import host_outcome
from ptsbench.hosts.ssh import client_folder
from ptsbench.metrics.board import Stream, add_run, publish
from ptsbench.store import RunStore, utc_now_ms
from ptsbench.target.case_telemetry import CaseReadings
from ptsbench.target.claim import claim_targets
from ptsbench.target.identity import device_identity, vanished
from ptsbench.target.target import (
    Target,
    check_has_capacity,
    resolve_target,
)
from ptsbench.target.telemetry import CpuMeter
from ptsbench.target.userfile import mark_made, missing
from ptsbench.target.writeback import WritebackWatch

# a device that vanishes mid-run must not become a regular file that fio makes at its path (in /dev: RAM)
NO_FILE_CREATE: dict[str, str | None] = {"allow_file_create": "0"}
FioParse = Callable[[str, str], list[JobOpens]]  # job text, its source's name -> its jobs as fio's parser reads them


@dataclass(frozen=True)
class Overrides:
    """What the user asked to change in every job."""

    runtime_s: float | None = None
    size: str | None = None
    ioengine: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    def as_options(self) -> dict[str, str | None]:
        options: dict[str, str | None] = {}
        if self.runtime_s is not None:
            options.update(runtime=jobs.duration_text(self.runtime_s), time_based=None)
        if self.size is not None:
            options["size"] = self.size
        if self.ioengine is not None:
            options["ioengine"] = self.ioengine
        options.update(dict(self.options))
        return options


@dataclass(frozen=True)
class Case:
    """One planned fio process: a job file (with overrides applied) against one target."""

    index: int
    name: str
    source: str
    target: Target | None
    job_text: str
    sections: tuple[jobs.JobSection, ...] = field(repr=False)
    lat_log_prefixes: dict[str, Path] = field(default_factory=dict)  # job -> prefix of the derived latency log
    opens: tuple[JobOpens, ...] = field(default=(), repr=False)  # the jobs as fio's own parser reads them
    rejected: str = ""  # fio's words when its parser rejects the job file, or why fio would fail at its start (too
    # many jobs): fio is then not started
    device_and_new_file: str = ""  # a job that opens a device and makes a new file: refused (see _jobs_on_devices)
    repetition: int = 0  # with --repeat N: 1..N (the name ends in -r1 ... -rN); 0: the case runs once
    own_logs: tuple[str, ...] = ()  # the prefixes of the logs ptsbench asks for (in its run directory)

    @property
    def dir_name(self) -> str:
        return f"{self.index:03d}-{self.name}"

    @property
    def expected_s(self) -> float | None:
        return jobs.expected_duration_s(self.sections)

    def writes(self) -> bool:
        return any(job.writes for job in self.opens)

    def opened(self, client_address: str | None = None) -> list[tuple[str, bool]]:
        """Every path fio opens for this case (a fio server: when `client_address` sends it), and whether it is
        written."""
        return [(path, job.writes) for job in self.opens
                for path in (job.paths_on_server(client_address) if client_address else job.paths)] + [
            (path, True) for path, option in self.outputs() if option in NAMED_OUTPUTS]

    def outputs(self) -> list[tuple[str, str]]:
        """Every file fio writes for the case's jobs under names they give (their logs, IO logs), each with the
        option that names it."""
        return self._not_own(output for job in self.opens for output in job.outputs())

    def client_outputs(self, host_names: Sequence[str]) -> list[tuple[str, str]]:
        """The logs fio's client writes on this machine for the case's jobs run on these hosts, each with the option
        that names it (fio's servers write none of them)."""
        return self._not_own(output for job in self.opens for output in job.client_logs(host_names))

    def _not_own(self, outputs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """The outputs, once each, but the logs ptsbench asks for in its run directory."""
        own = tuple(f"{prefix}_" for prefix in self.own_logs)
        return list(dict.fromkeys(output for output in outputs if not (own and output[0].startswith(own))))

    def data_written(self) -> list[str]:
        """The files and devices the case's jobs write data to (not fio's logs)."""
        return [path for job in self.opens if job.writes for path in job.paths]

    def unknown_writes(self) -> list[str]:
        return [f"job {job.name}: {reason}" for job in self.opens if job.writes for reason in job.unknown]

    def changed_files(self) -> list[tuple[str, str]]:
        """The existing regular files the case's jobs change, and how (a user's file needs --destructive)."""
        return [(path, change) for job in self.opens for path in job.paths
                if (change := job.change_to_existing(path)) is not None] + [
            (path, f"fio writes its {option} over it") for path, option in self.outputs() if os.path.isfile(path)]


def _case_name(job_path: Path, target: Target | None, several_targets: bool) -> str:
    name = job_path.stem
    if target is not None and several_targets:  # what the user typed, so two folders' test files differ
        name += "@" + target.requested.strip("/").replace("/", "_")
    return "".join(c if c.isalnum() or c in "-_.@" else "_" for c in name)


def plan_cases(
    job_paths: Sequence[Path],
    targets: Sequence[Target | None],
    overrides: Overrides,
    run_dir: Path,
    log_interval_ms: int,
    fio_lat_log: bool = False,
    repeat: int = 1,
    texts: Mapping[str, str] | None = None,
) -> list[Case]:
    """Every (job file, target) pair as a case, job files outermost, with the exact job text fio will get; with
    `repeat` over 1, each pair that many times in a row (names ending in -r1, -r2, ...). Latency over time comes
    from fio's own latency log when `fio_lat_log`, else from fio's status documents (fio/intervals.py), free for fio.
    `texts`: each job file's text as read before (job_texts; a resume plans from the stored ones)."""
    cases: list[Case] = []
    texts = texts if texts is not None else job_texts(job_paths)
    for job_path in job_paths:
        text = texts[str(job_path)]
        for target in list(targets) or [None]:
            name = _case_name(job_path, target, len(targets) > 1)
            for repetition in range(1, repeat + 1) if repeat > 1 else (0,):
                case = plan_case(case_job(len(cases) + 1, f"{name}-r{repetition}" if repetition else name, job_path,
                                          text, target, overrides, run_dir, log_interval_ms, fio_lat_log))
                cases.append(replace(case, repetition=repetition))
    return cases


def job_texts(job_paths: Sequence[Path]) -> dict[str, str]:
    """Each job file's text with its includes inlined, by path: what a run plans from and stores for its resume."""
    return {str(path): jobs.inline_includes(jobs.read_job_file(path), path) for path in job_paths}


@dataclass(frozen=True)
class CaseJob:
    """A case's job text as ptsbench builds it, before fio's parser reads it (a sweep's all go to one fio start-up)."""

    index: int
    name: str
    job_path: Path
    target: Target | None
    text: str  # its text, without its file options when a target replaces them
    per_section: tuple[dict[str, str | None], ...]  # ptsbench's options of each job section (its logs)
    common: dict[str, str | None]  # ptsbench's options of every section (percentiles, overrides, target)
    lat_log_prefixes: dict[str, Path]  # job -> prefix of the derived latency log
    job_text: str  # the text fio gets


def case_job(index: int, name: str, job_path: Path, text: str, target: Target | None, overrides: Overrides,
             run_dir: Path, log_interval_ms: int, fio_lat_log: bool = False) -> CaseJob:
    """The job text with ptsbench's options (percentiles, logs, overrides, target) appended. A target replaces the
    job's file options, it never adds to them."""
    sections = jobs.parse_job_text(text, str(job_path))
    logs = run_dir.resolve() / "cases" / f"{index:03d}-{name}" / "logs"
    names = [section.name for section in sections]
    unique = [_safe(name) if names.index(name) == i else f"{_safe(name)}~{names[:i].count(name) + 1}"
              for i, name in enumerate(names)]  # two sections of one name keep their logs apart
    per_section = [jobs.log_options(str(logs / prefix), log_interval_ms, fio_lat_log, section)
                   for prefix, section in zip(unique, sections, strict=True)]
    # latency derived from fio's status output is per job name: only for names used once
    prefixes = {name: logs / _safe(name) for name in names if names.count(name) == 1}
    common = {**jobs.percentile_options(sections), **overrides.as_options()}
    if target is not None:
        named = [key for key in overrides.as_options() if key in FILE_OPTIONS]
        if named:
            raise JobFileError(f"--set {named[0]}= and --target both name the files to test", "give one of them")
        text = jobs.without_options(text, FILE_OPTIONS)
        common.update(jobs.target_options(target.path))
        if target.kind != "file":
            common.update(NO_FILE_CREATE)
    return CaseJob(index, name, job_path, target, text, tuple(per_section), common,
                   {} if fio_lat_log else prefixes, jobs.add_overrides(text, per_section, common))


def plan_case(job: CaseJob, parse: FioParse = parse_job_text) -> Case:
    """The case of a job text, its jobs as fio's own parser reads them (`parse`)."""
    job_text = job.job_text
    opens, rejected = _fio_parse(job_text, job.job_path, job.target, parse)
    on_devices, mixed = _jobs_on_devices(job.job_path, opens, len(job.per_section)) if job.target is None else ([], "")
    if on_devices:  # a device a job file names gets the same protection as a --target device
        per_section = [{**options, **NO_FILE_CREATE} if index in on_devices else options
                       for index, options in enumerate(job.per_section)]
        job_text = jobs.add_overrides(job.text, per_section, job.common)
        opens, rejected = _fio_parse(job_text, job.job_path, job.target, parse)
    effective = tuple(jobs.parse_job_text(job_text, str(job.job_path)))
    own_logs = tuple(sorted({value for options in job.per_section for key, value in options.items()
                             if key.startswith("write_") and key.endswith("_log") and value}))
    return Case(job.index, job.name, str(job.job_path), job.target, job_text, effective, job.lat_log_prefixes,
                opens, rejected, mixed, own_logs=own_logs)


def _fio_parse(job_text: str, job_path: Path, target: Target | None,
               parse: FioParse) -> tuple[tuple[JobOpens, ...], str]:
    """The case's jobs as fio's parser reads them, or fio's words rejecting them. With a target, every job must
    open the target and nothing else."""
    try:
        opens = tuple(parse(job_text, str(job_path)))
    except JobFileError as error:
        return (), error.message
    if target is not None:
        for job in opens:
            if job.paths != (target.path,):
                others = ", ".join(path for path in job.paths if path != target.path) or "nothing"
                raise JobFileError(f"{job_path}: job {job.name} would open {others} besides --target "
                                   f"{target.requested}", "remove its file options (filename, directory, "
                                   "filename_format, opendir), or run it without --target")
    too_new = job_rule_problems(opens, fio_version())
    if too_new:
        return opens, f"{job_path}: " + "; ".join(too_new)
    count = job_count(opens)
    if count > jobs.FIO_MAX_JOBS:
        return opens, (f"{job_path}: {count:,} jobs (numjobs summed over its jobs), but fio runs at most "
                       f"{jobs.FIO_MAX_JOBS:,} in one process; lower numjobs")
    return opens, ""


def _jobs_on_devices(job_path: Path, opens: Sequence[JobOpens], section_count: int) -> tuple[list[int], str]:
    """The indexes of the job sections that open a device node (all of them when fio counts the sections
    differently), and why a job is to be refused: fio's allow_file_create holds for all files of a job, so a job that
    opens a device and also makes a new file cannot have it (without it, a device that vanishes mid-run becomes a
    regular file in /dev)."""
    found, mixed = [], ""
    for index, job in enumerate(opens):
        devices = [path for path in job.paths if device_identity(path)]
        if not devices:
            continue
        new = [path for path in job.paths if not os.path.lexists(path)]
        if new and not mixed:
            mixed = f"{job_path}: job {job.name} opens the device {devices[0]} and makes the new file {new[0]}"
        found.append(index)
    return (found if len(opens) == section_count or not found else list(range(section_count))), mixed


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def written_targets(cases: Sequence[Case]) -> list[str]:
    """Every file and device the cases' jobs write (not their logs), once each, in order."""
    return list(dict.fromkeys(path for case in cases if not case.rejected for job in case.opens if job.writes
                              for path in job.paths))


def claim_cases(cases: Sequence[Case], run_dir: Path, allow_mounted: bool,
                hosts: Sequence[Host] = ()) -> AbstractContextManager[None]:
    """The claim (target/claim.py) on everything the cases write, to hold while they run; none for a run on hosts
    (their devices are theirs)."""
    return nullcontext() if hosts else claim_targets(written_targets(cases), run_dir, allow_mounted)


def resolve_targets(paths: Sequence[str], size: str | None) -> list[Target]:
    from ptsbench.units import parse_size_bytes

    size_bytes = parse_size_bytes(size) if size else None
    targets = [resolve_target(path, size_bytes) for path in paths]
    for target in targets:
        check_has_capacity(target)
    return targets



def _expand_keyword(value: str) -> str:
    """fio's reserved keywords, for describing jobs (fio itself expands them in the job file)."""
    return value.replace("$ncpus", str(os.cpu_count() or 1)).replace("$pagesize", str(os.sysconf("SC_PAGE_SIZE")))


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


def _add_hosts(record: CaseRecord, hosts: Sequence[Host], results: list[JobResult], outcome: FioOutcome | None) -> None:
    """Each host's status, and the all-hosts rows (fio's group arithmetic, latency merged from the bins)."""
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
    device readings go through `readings` (shared by cases run one after another: target/case_telemetry.py)."""
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
                              on_status=on_status, on_document=on_document, client=client,
                              expected_s=case.expected_s, cwd=client_folder(hosts), status_bins=False)
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


class CaseProgress(Protocol):
    """Where live progress goes (the terminal in the CLI, nothing in tests)."""

    def start(self, case: Case) -> Callable[[FioStatus], None] | None: ...

    def finish(self, case: Case, record: CaseRecord) -> None: ...


def _run_and_report(store: RunStore, case: Case, progress: CaseProgress | None, hosts: Sequence[Host],
                    readings: CaseReadings) -> CaseRecord:
    record = run_case(store, case, progress.start(case) if progress else None, readings, hosts)
    if progress:
        progress.finish(case, record)
    return record


def _repeat(store: RunStore, case: Case, progress: CaseProgress | None, hosts: Sequence[Host],
            readings: CaseReadings, auto: AutoRepeat | None, cases: Sequence[Case]) -> CaseRecord | None:
    """Run and store the case, unless --repeat auto has stopped its repetitions (None)."""
    if auto is None or not case.repetition:
        return _run_and_report(store, case, progress, hosts, readings)
    base = base_case_name(case.name, case.repetition)
    if not auto.wants(base):
        return None
    record = _run_and_report(store, case, progress, hosts, readings)
    last = not any(other.repetition > case.repetition and base_case_name(other.name, other.repetition) == base
                   for other in cases)
    auto.finished(base, record, last)
    return record


def _target_key(target: Target | None, hosts: Sequence[Host]) -> tuple[object, ...]:
    """What a target is, whatever its spelling: a device by its number, a file by its inode, a file not yet made by
    its folder's inode and its name (on hosts: the path, which is theirs)."""
    if target is None:
        return ("job files",)  # the files a job file names are its own: such cases all run in turn
    if hosts:
        return ("path", target.path)
    try:
        found = os.stat(target.path)
    except OSError:
        try:
            folder = os.stat(os.path.dirname(target.path) or ".")
        except OSError:
            return ("path", os.path.realpath(target.path))
        return ("new", folder.st_dev, folder.st_ino, os.path.basename(target.path))
    if stat.S_ISBLK(found.st_mode) or stat.S_ISCHR(found.st_mode):
        return ("device", found.st_rdev)
    return ("file", found.st_dev, found.st_ino)


def target_groups(cases: Sequence[Case], hosts: Sequence[Host] = ()) -> list[list[Case]]:
    """The cases of each target, in case order: --parallel runs the groups at once and each group's cases in turn."""
    groups: dict[tuple[object, ...], list[Case]] = {}
    for case in cases:
        groups.setdefault(_target_key(case.target, hosts), []).append(case)
    return list(groups.values())


def run_cases(
    store: RunStore, cases: Sequence[Case], parallel: bool, progress: CaseProgress | None = None,
    hosts: Sequence[Host] = (), stop_when: Callable[[list[CaseRecord]], bool] | None = None,
    auto: AutoRepeat | None = None,
) -> list[CaseRecord]:
    """Run cases one after another, or (parallel) the targets at once and each target's cases one after another:
    two cases never share a target at once. Every case is stored when it ends. `stop_when` (cases one after
    another only): asked after each case with the records so far; True leaves the remaining cases unrun. With
    `auto` (--repeat auto), a case's remaining planned repetitions are left out once its rule decided
    (confidence.py).

    With hosts, every case runs on all of them at once through fio's client (one fio server per host).
    """
    add_run(store.root)  # its stored state served by --metrics
    if hosts:
        write_host_list(store.root, hosts)  # once, before parallel cases would race to write it
    if not parallel:
        readings = CaseReadings()  # one after another: a case's last reading is the next one's first
        done: list[CaseRecord] = []
        for case in cases:
            if (record := _repeat(store, case, progress, hosts, readings, auto, cases)) is None:
                continue
            done.append(record)
            if stop_when is not None and stop_when(done):
                break
        return done
    records: dict[int, CaseRecord] = {}
    errors: list[BaseException] = []
    stopping = threading.Event()  # Ctrl-C: no target starts its next case

    def worker(group: list[Case]) -> None:
        try:
            for case in group:
                if stopping.is_set():
                    return
                record = _repeat(store, case, progress, hosts, CaseReadings(), auto, group)  # read afresh
                if record is not None:
                    records[case.index] = record
        except BaseException as error:  # re-raised in the main thread below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(group,), daemon=True) for group in target_groups(cases, hosts)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:  # only this thread hears Ctrl-C: stop every fio, let each case store what it has
        stopping.set()
        while any(thread.is_alive() for thread in threads):
            stop_all()  # again for a fio that started between a worker's check and the first call
            for thread in threads:
                thread.join(0.2)
        raise
    if errors:
        raise errors[0]
    return [records[index] for index in sorted(records)]


def expected_total_s(cases: Sequence[Case], parallel: bool, hosts: Sequence[Host] = ()) -> float | None:
    """Planned duration of all cases (None when a case is size-bound): with parallel, the longest target's."""
    durations = [case.expected_s for case in cases]
    if not durations or any(d is None for d in durations):
        return None
    groups = target_groups(cases, hosts) if parallel else [list(cases)]
    return max(sum(case.expected_s or 0.0 for case in group) for group in groups)


def job_files(paths: Sequence[str]) -> list[Path]:
    """Job files named on the command line, with a clear error for none."""
    if not paths:
        raise JobFileError("no job file given", "pass one or more fio job files or folders")
    return jobs.find_job_files(paths)


def manifest_settings(overrides: Overrides, log_interval_ms: int, parallel: bool) -> Mapping[str, object]:
    return {"overrides": overrides.as_options(), "log_interval_ms": log_interval_ms, "parallel": parallel}

