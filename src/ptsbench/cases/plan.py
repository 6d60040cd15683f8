"""The case runner's plan: job files x targets -> cases, each with the exact job text fio gets (ptsbench's logs,
the user's overrides, the target) and its jobs as fio's own parser reads them; purely, before anything runs."""

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ptsbench.device.identity import device_identity
from ptsbench.device.target import (
    Target,
    check_has_capacity,
    resolve_target,
)
from ptsbench.errors import JobFileError
from ptsbench.fio import jobs
from ptsbench.fio.opens import FILE_OPTIONS, NAMED_OUTPUTS, JobOpens, job_count, parse_job_text
from ptsbench.fio.runner import (
    fio_version,
)
from ptsbench.fio.versions import job_rule_problems

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
        names = [job.name for job in self.opens]
        read_us = {job.name: job.numbers for job in self.opens} if len(set(names)) == len(names) else None
        return jobs.expected_duration_s(self.sections, read_us)

    def writes(self) -> bool:
        return any(job.writes for job in self.opens)

    def shortened_times(self) -> list[tuple[str, str]]:
        """Where fio reads a job's time options as other than written (fio/jobs.py shortened_times): the job (its
        file and name) and what fio does."""
        return [(f"{self.source}: job {job.name}", said) for job in self.opens
                for said in jobs.shortened_times(job.options, job.numbers)]

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
    adds = JobAdditions(run_dir, log_interval_ms, overrides, fio_lat_log)
    texts = texts if texts is not None else job_texts(job_paths)
    for job_path in job_paths:
        text = texts[str(job_path)]
        for target in list(targets) or [None]:
            name = _case_name(job_path, target, len(targets) > 1)
            for repetition in range(1, repeat + 1) if repeat > 1 else (0,):
                case = plan_case(case_job(len(cases) + 1, f"{name}-r{repetition}" if repetition else name, job_path,
                                          text, target, adds))
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


@dataclass(frozen=True)
class JobAdditions:
    """What ptsbench adds to every job text of a run besides its target: the user's overrides, and its logs (in the
    run directory, averaged over log_interval_ms; latency over time from fio's own latency log with fio_lat_log)."""

    run_dir: Path
    log_interval_ms: int
    overrides: Overrides = Overrides()
    fio_lat_log: bool = False


def case_job(index: int, name: str, job_path: Path, text: str, target: Target | None,
             adds: JobAdditions) -> CaseJob:
    """The job text with ptsbench's options (percentiles, logs, overrides, target) appended. A target replaces the
    job's file options, it never adds to them."""
    overrides, fio_lat_log = adds.overrides, adds.fio_lat_log
    sections = jobs.parse_job_text(text, str(job_path))
    logs = adds.run_dir.resolve() / "cases" / f"{index:03d}-{name}" / "logs"
    names = [section.name for section in sections]
    unique = [_safe(name) if names.index(name) == i else f"{_safe(name)}~{names[:i].count(name) + 1}"
              for i, name in enumerate(names)]  # two sections of one name keep their logs apart
    per_section = [jobs.log_options(str(logs / prefix), adds.log_interval_ms, fio_lat_log, section)
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
    mixed = _jobs_on_devices(job.job_path, opens, len(job.per_section))[1] if job.target is None else ""
    protected = device_job_text(job, opens)
    if protected is not None:
        job_text = protected
        opens, rejected = _fio_parse(job_text, job.job_path, job.target, parse)
    effective = tuple(jobs.parse_job_text(job_text, str(job.job_path)))
    own_logs = tuple(sorted({value for options in job.per_section for key, value in options.items()
                             if key.startswith("write_") and key.endswith("_log") and value}))
    return Case(job.index, job.name, str(job.job_path), job.target, job_text, effective, job.lat_log_prefixes,
                opens, rejected, mixed, own_logs=own_logs)


def device_job_text(job: CaseJob, opens: Sequence[JobOpens]) -> str | None:
    """The job text again with the sections that open a device kept from making files (as a --target device is),
    or None when no section does (or the case has a target); `opens`: the job text's jobs as fio parsed them."""
    on_devices = _jobs_on_devices(job.job_path, opens, len(job.per_section))[0] if job.target is None else []
    if not on_devices:
        return None
    per_section = [{**options, **NO_FILE_CREATE} if index in on_devices else options
                   for index, options in enumerate(job.per_section)]
    return jobs.add_overrides(job.text, per_section, job.common)


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


def resolve_targets(paths: Sequence[str], size: str | None) -> list[Target]:
    from ptsbench.units import parse_size_bytes

    size_bytes = parse_size_bytes(size) if size else None
    targets = [resolve_target(path, size_bytes) for path in paths]
    for target in targets:
        check_has_capacity(target)
    return targets


def job_files(paths: Sequence[str]) -> list[Path]:
    """Job files named on the command line, with a clear error for none."""
    if not paths:
        raise JobFileError("no job file given", "pass one or more fio job files or folders")
    return jobs.find_job_files(paths)


def manifest_settings(overrides: Overrides, log_interval_ms: int, parallel: bool) -> Mapping[str, object]:
    return {"overrides": overrides.as_options(), "log_interval_ms": log_interval_ms, "parallel": parallel}

