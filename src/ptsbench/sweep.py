"""Sweeps: a matrix of fio cells (target x rw x bs x read mix x numjobs x iodepth x loop), each cell run and stored
as a case of the case runner (cases/), so every cell keeps its job file, command line, json+ and logs.

The plan is data written into the manifest before the first cell runs, and every cell's job file is written into
RUN_DIR/sweep/: `ptsbench resume` plans the same cases again from them and runs only the cells without a finished
result.json (a cell killed mid-way is run again from its start).

    RUN_DIR/sweep/CELL.fio       the cell's job file as generated (the case's job.fio adds target, logs, percentiles)
    RUN_DIR/sweep/precondition.fio   the user's precondition job file, copied
    manifest.json "sweep"        spec, targets, hosts and the ordered case list (role, cell parameters)
"""

import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_text
from ptsbench.cases.plan import Case, CaseJob, JobAdditions, case_job, device_job_text, plan_case
from ptsbench.cases.records import RESULT, CaseRecord, read_record
from ptsbench.cases.run import run_case
from ptsbench.cases.schedule import CaseProgress
from ptsbench.confidence import AutoRepeat, repeat_group
from ptsbench.device.case_telemetry import CaseReadings
from ptsbench.device.target import Target
from ptsbench.errors import PtsbenchError
from ptsbench.fio import jobs
from ptsbench.fio.opens import JobOpens, parse_job_text, parse_job_texts
from ptsbench.fio.versions import SS_INTERVAL_DEFAULT_US, ss_window_problem
from ptsbench.hosts.hostlist import Host
from ptsbench.store import RunStore, read_json
from ptsbench.units import format_bs, parse_size_bytes

SWEEP_DIR = "sweep"
# cells of one sweep per target: each is a fio run, a folder of results and, while planning, a parse by fio (about
# 0.1 s of CPU each, side by side on every CPU: 10,000 cells take a quarter of an hour of CPU to plan)
MAX_CELLS = 10_000
PRECONDITION_JOB = "precondition.fio"
MIXED_RW = ("rw", "readwrite", "randrw")
RW_CHOICES = ("read", "write", "randread", "randwrite", *MIXED_RW, "trim", "randtrim", "trimwrite")
# what the sweep itself sets in every cell; --set may not change it
SWEPT_OPTIONS = ("rw", "readwrite", "bs", "blocksize", "iodepth", "numjobs", "rwmixread", "rwmixwrite", "runtime",
                 "ramp_time", "loops", "filename", "directory", "ss", "ss_dur", "ss_ramp", "size", "ioengine",
                 "kb_base")  # kb_base would change how fio reads the sweep's block sizes


@dataclass(frozen=True)
class SweepSpec:
    """What the user asked for: the values of every swept parameter and what every cell shares."""

    rw: tuple[str, ...]
    bs: tuple[str, ...]
    iodepth: tuple[int, ...]
    numjobs: tuple[int, ...]
    rwmixread: tuple[int, ...] = ()
    runtime_s: float = 60.0
    ramp_time_s: float | None = None
    loops: int = 1
    size: str | None = None
    ioengine: str = "libaio"
    direct: bool = True
    ss: str | None = None  # fio's ss= criterion, e.g. iops:0.3%
    ss_dur_s: float | None = None
    ss_ramp_s: float | None = None
    options: tuple[tuple[str, str], ...] = ()  # any other fio option, in every cell's [global]
    precondition: str | None = None  # a job file run on each target before its cells
    precondition_repeat: bool = False  # ... and again before every cell


@dataclass(frozen=True)
class Cell:
    """One point of the matrix on one target."""

    rw: str
    bs: str
    rwmixread: int | None
    iodepth: int
    numjobs: int
    loop: int = 1

    @property
    def name(self) -> str:
        mix = f"-mix{self.rwmixread}" if self.rwmixread is not None else ""
        loop = f"-loop{self.loop}" if self.loop > 1 else ""
        return f"{self.rw}-{self.bs}{mix}-qd{self.iodepth}-nj{self.numjobs}{loop}"


def check_spec(spec: SweepSpec) -> None:
    """Refuse a sweep fio could not run as asked, before anything is written."""
    if not (spec.rw and spec.bs and spec.iodepth and spec.numjobs):
        raise PtsbenchError("a sweep needs at least one value of --rw, --bs, --iodepth and --numjobs", "e.g. --rw "
                            "randread --bs 4k --iodepth 1,8,32 --numjobs 1")
    if any(rw in MIXED_RW for rw in spec.rw) and not spec.rwmixread:
        raise PtsbenchError("a mixed --rw (rw, readwrite, randrw) needs --rwmixread", "e.g. --rwmixread 70")
    if any(not 0 <= mix <= 100 for mix in spec.rwmixread):
        raise PtsbenchError("--rwmixread is a read share in percent", "give values from 0 to 100, e.g. 70")
    for bs in spec.bs:  # fio reads 4q and 1.5k as 4 and 1 bytes and runs them: a typo must not sweep tiny blocks
        try:
            bs_bytes = parse_size_bytes(bs)
        except PtsbenchError:
            bs_bytes = 0
        if bs_bytes < 1 or "." in bs:
            raise PtsbenchError(f"--bs {bs!r} is not a block size", "use a whole size like 512, 4k or 1m")
    if any(value < 1 for value in (*spec.iodepth, *spec.numjobs)):
        raise PtsbenchError("--iodepth and --numjobs values must be 1 or more", "e.g. --iodepth 1,2,4 --numjobs 1,2")
    durations = [value for value in (spec.runtime_s, spec.ramp_time_s, spec.ss_dur_s, spec.ss_ramp_s) if value]
    if spec.runtime_s < 0.001 or any(not 0.001 <= value <= 365 * 86400 for value in durations):
        raise PtsbenchError("--runtime, --ramp-time, --ss-dur and --ss-ramp are from 1 ms (fio counts whole "
                            "milliseconds) to a year", "e.g. --runtime 30")
    if spec.ss and not spec.ss_dur_s:
        raise PtsbenchError("--ss needs --ss-dur: fio judges steady state over that window",
                            "e.g. --ss iops:0.3% --ss-dur 30")
    if spec.ss:
        _check_ss_window(spec)
    _check_cell_count(spec)
    taken = sorted({key for key, _ in spec.options} & set(SWEPT_OPTIONS))
    if taken:
        raise PtsbenchError(f"--set {taken[0]}=... would change what the sweep sets in every cell",
                            "use the sweep's own option for it (--rw, --bs, --iodepth, ...)")
    planned = cells(spec)
    if len(set(planned)) != len(planned):
        raise PtsbenchError("a swept value is given twice", "give each --rw, --bs, --iodepth, --numjobs value once")


def _check_ss_window(spec: SweepSpec) -> None:
    """Refuse an --ss-dur window the fio here would refuse when each cell starts (its rules depend on its version)."""
    from ptsbench.fio.runner import fio_version

    interval_s = jobs.parse_duration_s(dict(spec.options).get("ss_interval") or "")
    interval_us = round(interval_s * 1e6) if interval_s else SS_INTERVAL_DEFAULT_US
    problem = ss_window_problem(round((spec.ss_dur_s or 0) * 1e6), interval_us, fio_version())
    if problem:
        raise PtsbenchError(f"--ss-dur {jobs.duration_text(spec.ss_dur_s or 0)}: {problem}",
                            f"give --ss-dur a whole multiple of {interval_us / 1e6:g} s, at least "
                            f"{2 * interval_us / 1e6:g} s (e.g. --ss-dur 30)")


def _check_cell_count(spec: SweepSpec) -> None:
    """Refuse a matrix of more than MAX_CELLS cells before it is listed (a typo in --loops or a series would fill the
    memory planning it)."""
    mixed = sum(len(spec.rwmixread) if rw in MIXED_RW else 1 for rw in spec.rw)
    count = mixed * len(spec.bs) * len(spec.numjobs) * len(spec.iodepth) * spec.loops
    if count > MAX_CELLS:
        raise PtsbenchError(f"the sweep has {count:,} cells ({mixed} rw/mix x {len(spec.bs)} bs x {len(spec.numjobs)} "
                            f"numjobs x {len(spec.iodepth)} iodepth x {spec.loops} loops), over {MAX_CELLS:,}",
                            "sweep fewer values or fewer --loops")


def cells(spec: SweepSpec) -> list[Cell]:
    """Every cell, rw outermost, then block size, mix, numjobs, iodepth and loop (a QD series runs together)."""
    found = []
    for rw in spec.rw:
        for bs in (format_bs(parse_size_bytes(text)) for text in spec.bs):  # fio's reading of 4KiB is 4000 B
            for mix in (spec.rwmixread if rw in MIXED_RW else (None,)):
                for numjobs in spec.numjobs:
                    for iodepth in spec.iodepth:
                        found += [Cell(rw, bs, mix, iodepth, numjobs, loop) for loop in range(1, spec.loops + 1)]
    return found


def cell_job_text(spec: SweepSpec, cell: Cell) -> str:
    """The cell's job file: everything shared in [global], the swept values in the job section. One job with
    group_reporting, so fio itself merges its numjobs threads into one result."""
    shared: dict[str, str | None] = {"ioengine": spec.ioengine, "direct": "1" if spec.direct else "0",
                                     "time_based": None, "runtime": jobs.duration_text(spec.runtime_s)}
    if spec.ramp_time_s:
        shared["ramp_time"] = jobs.duration_text(spec.ramp_time_s)
    if spec.size:
        shared["size"] = spec.size
    if spec.ss:
        shared.update(ss=spec.ss, ss_dur=jobs.duration_text(spec.ss_dur_s or 0))
        if spec.ss_ramp_s:
            shared["ss_ramp"] = jobs.duration_text(spec.ss_ramp_s)
    shared["group_reporting"] = None
    shared.update(dict(spec.options))
    job: dict[str, str | None] = {"rw": cell.rw, "bs": cell.bs, "iodepth": str(cell.iodepth),
                                  "numjobs": str(cell.numjobs)}
    if cell.rwmixread is not None:
        job["rwmixread"] = str(cell.rwmixread)
    return jobs.render_job_file(shared, [(cell.name, job)])


def plan_entries(spec: SweepSpec, target_count: int) -> list[dict[str, Any]]:
    """The ordered case list the manifest records: per target, its precondition (if any), then its cells (each
    after a precondition of its own with precondition_repeat)."""
    entries: list[dict[str, Any]] = []

    def add(role: str, name: str, job: str, target: int, cell: Cell | None = None) -> None:
        suffix = f"@t{target + 1}" if target_count > 1 else ""
        entries.append({"index": len(entries) + 1, "name": name + suffix, "role": role, "job": job,
                        "target": target, "cell": asdict(cell) if cell else None})

    for target in range(max(target_count, 1)):
        if spec.precondition and not spec.precondition_repeat:
            add("precondition", "precondition", PRECONDITION_JOB, target)
        for cell in cells(spec):
            if spec.precondition and spec.precondition_repeat:
                add("precondition", f"precondition-{cell.name}", PRECONDITION_JOB, target)
            add("cell", cell.name, f"{cell.name}.fio", target, cell)
    return entries


def write_job_files(run_dir: Path, texts: dict[str, str]) -> None:
    """Every cell's job file and the precondition's copy (job_texts, the ones planned) into RUN_DIR/sweep/ before the
    first cell runs."""
    folder = run_dir / SWEEP_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        atomic_write_text(folder / name, text)


def job_texts(spec: SweepSpec) -> dict[str, str]:
    """Job file name -> text, planned from and then written by write_job_files (a dry run writes nothing)."""
    texts = {f"{cell.name}.fio": cell_job_text(spec, cell) for cell in cells(spec)}
    if spec.precondition:
        texts[PRECONDITION_JOB] = jobs.read_job_file(Path(spec.precondition))
    return texts


def plan_cases(entries: Sequence[dict[str, Any]], texts: dict[str, str], targets: Sequence[Target],
               run_dir: Path, log_interval_ms: int, fio_lat_log: bool) -> list[Case]:
    """The case runner's cases of a sweep, the same for the first run and every resume, in order. Each fio start-up
    costs about 0.1 s of CPU (bench-fio parses nothing, and a sweep should not take longer to start than its cells
    take to run), so every cell's job text is built first (cases.case_job) and fio parses them all in one start-up
    (opens.parse_job_texts). A text it could not parse together is parsed alone, side by side, one per CPU, as is a
    cell's second text (the one for a device its job names)."""
    folder = run_dir / SWEEP_DIR
    adds = JobAdditions(run_dir, log_interval_ms, fio_lat_log=fio_lat_log)
    return plan_together([case_job(entry["index"], entry["name"], folder / entry["job"], texts[entry["job"]],
                                   targets[entry["target"]] if targets else None, adds) for entry in entries])


def plan_together(built: Sequence[CaseJob]) -> list[Case]:
    """The cases of job texts built for them, fio's parser started once for all (see plan_cases)."""
    from concurrent.futures import ThreadPoolExecutor

    job_texts = [job.job_text for job in built]
    together = dict(zip(job_texts, parse_job_texts(job_texts), strict=True))
    # the texts for the devices the jobs name (cases.device_job_text), also in one start-up
    protected = [text for job in built if (opens := together[job.job_text]) is not None
                 and (text := device_job_text(job, opens)) is not None]
    together.update(zip(protected, parse_job_texts(protected), strict=True))

    def parse(text: str, source: str) -> list[JobOpens]:
        found = together.get(text)
        return parse_job_text(text, source) if found is None else found

    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="plan")
    try:
        return list(pool.map(lambda job: plan_case(job, parse), built))  # the first cell in order that fails raises
    finally:
        pool.shutdown(cancel_futures=True)  # after a failure, no further cell is parsed


def stored_plan(store: RunStore) -> tuple[dict[str, Any], list[Target], list[Host], list[Case]]:
    """What a sweep's run directory says it runs: its settings, targets, hosts and cases (for resume)."""
    from ptsbench.hosts.hostlist import parse_hosts

    manifest = store.manifest
    sweep = manifest.get("sweep")
    if manifest.get("kind") != "sweep" or not isinstance(sweep, dict):
        raise PtsbenchError(f"{store.root} is not a sweep run directory", "pass a folder made by ptsbench sweep")
    targets = [Target(**target) for target in sweep["targets"]]
    hosts = parse_hosts(",".join(sweep["hosts"])) if sweep.get("hosts") else []
    texts = {}
    for entry in sweep["cases"]:
        path = store.root / SWEEP_DIR / entry["job"]
        if entry["job"] not in texts:
            texts[entry["job"]] = jobs.read_job_file(path)
    cases = plan_cases(sweep["cases"], texts, targets, store.root, int(manifest["log_interval_ms"]),
                       bool(sweep.get("fio_lat_log")))
    return sweep, targets, hosts, cases


def finished(store: RunStore, case: Case) -> bool:
    """A case whose result.json says it ended well; a failed or interrupted one runs again on resume."""
    path = store.root / "cases" / case.dir_name / RESULT
    return path.is_file() and read_json(path).get("status") == "ok"


def run_sweep(store: RunStore, cases: Sequence[Case], progress: CaseProgress | None,
              hosts: Sequence[Host] = (), auto: AutoRepeat | None = None) -> list[CaseRecord]:
    """Run every unfinished case in order, each stored before the next starts. A case left half-done by a killed
    run is cleared first, so its folder holds one attempt only. With `auto` (--repeat auto) a cell's loops stop
    once its rule decided; a resume decides again from the finished loops (the time cap counts from the resume)."""
    from ptsbench.hosts.hostlist import write_host_list
    from ptsbench.metrics.board import add_run

    add_run(store.root)  # its stored state served by --metrics
    if hosts:
        write_host_list(store.root, hosts)
    records = []
    readings = CaseReadings()  # a cell's last device reading is the next cell's first
    groups = [_group(case) for case in cases]
    for position, case in enumerate(cases):
        group = groups[position]
        if auto is not None and not auto.wants(group):
            continue
        last = auto is not None and group not in groups[position + 1:]
        if finished(store, case):
            if auto is not None and not case.name.startswith("precondition"):
                auto.finished(group, read_record(store.root / "cases" / case.dir_name / RESULT), last)
            continue
        shutil.rmtree(store.root / "cases" / case.dir_name, ignore_errors=True)
        record = run_case(store, case, progress.start(case) if progress else None, readings, hosts)
        if progress:
            progress.finish(case, record)
        records.append(record)
        if auto is not None and not case.name.startswith("precondition"):
            auto.finished(group, record, last)
    return records


def _group(case: Case) -> str:
    """The --repeat auto group of a sweep's case: its cell without the loop (a cell's precondition with it)."""
    return repeat_group(case.name.removeprefix("precondition-"), 0, sweep=True)
