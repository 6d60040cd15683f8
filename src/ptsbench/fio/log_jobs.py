"""The log interval the job behind a fio log asked for (log_avg_msec, log_hist_msec), read from fio's JSON output or
the job file beside the log, one folder up (a ptsbench case keeps them beside its logs/ folder), or named by the user.

A job writes PREFIX_KIND[.N].log for write_KIND_log=PREFIX (clat and slat logs come with write_lat_log; a bare
write_KIND_log names them after the job). fio's time stamps drift from the interval asked (log_avg_msec=250 logs at
386, 636, 887, ...): the job's value is the interval; the time stamps are only a guess at it.
"""

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ptsbench.errors import PtsbenchError
from ptsbench.fio.jobs import JOB_FILE_SUFFIXES, parse_job_text, read_job_file
from ptsbench.fio.jsonfiles import load_document
from ptsbench.fio.logs import parse_log_name
from ptsbench.fio.output import job_entries
from ptsbench.textfile import MAX_TEXT_BYTES, not_found_reason

LOG_OPTIONS = {"bw": "write_bw_log", "iops": "write_iops_log", "lat": "write_lat_log", "clat": "write_lat_log",
               "slat": "write_lat_log", "hist": "write_hist_log"}

Job = tuple[str, Mapping[str, str | None]]  # a job's name and its options (global ones merged in)
MAX_JSON_BYTES = 256 * 1024 * 1024  # a fio JSON output read for its jobs' options; larger ones are not read


@dataclass(frozen=True)
class AskedInterval:
    """What the job that wrote a log set for its interval."""

    option: str  # log_avg_msec, or log_hist_msec for histogram logs
    interval_ms: int | None  # as the job set it (0: not set, a line per IO); None: not known, see `missing`
    source: Path | None = None  # the file the job's options were read from
    missing: str = ""  # why the interval is not known
    fio_ios: Mapping[str, int] | None = None  # direction -> IOs fio's JSON output counted for the job(s)
    fio_ios_source: Path | None = None  # that JSON output


class JobOptions:
    """The jobs of the fio JSON output and job files beside logs (or named by the user), each file read once."""

    def __init__(self, named: Sequence[Path] = ()) -> None:
        self.named = [(path, _named_jobs(path)) for path in named]
        self.folders: dict[Path, list[tuple[Path, list[Job]]]] = {}
        self.skipped: dict[Path, str] = {}  # files beside logs not read, with why
        self.ios: dict[Path, dict[str, dict[str, int]]] = {}  # JSON output -> job -> direction -> IOs (final)

    def asked(self, log: Path, kind: str) -> AskedInterval:
        """The interval the job writing `log` (a log of `kind`) asked for."""
        option = "log_hist_msec" if kind == "hist" else "log_avg_msec"
        name = parse_log_name(log)
        if name is None:
            return AskedInterval(option, None, missing="the file's name is not one fio gives its logs")
        prefix = log.resolve().parent / Path(name.prefix).name
        if self.named:  # the user said which jobs: matched by the log's name alone
            searched = [(self.named, 0)]
        else:  # beside the log; one folder up only a job writing into a folder of the log folder's name
            searched = [(self._files(prefix.parent), 0), (self._files(prefix.parent.parent), 1)]
        files = [path for found, _ in searched for path, _ in found]
        for found, depth in searched:
            matches = [(path, job, options) for path, jobs in found for job, options in jobs
                       if _writes(job, options, LOG_OPTIONS[kind], prefix, depth)]
            if matches:
                interval = _interval(option, [(path, options) for path, _, options in matches])
                counted = next((path for path, _, _ in matches if path in self.ios), None)
                if counted is None:
                    return interval
                ios: dict[str, int] = {}
                for job_name in {job for path, job, _ in matches if path == counted}:
                    for direction, count in self.ios[counted].get(job_name, {}).items():
                        ios[direction] = ios.get(direction, 0) + count
                return replace(interval, fio_ios=ios, fio_ios_source=counted)
        skipped = [f"{path} ({why})" for path, why in self.skipped.items() if path.parent in
                   (prefix.parent, prefix.parent.parent) and not self.named]
        unread = f"; not read: {', '.join(skipped[:3])}" if skipped else ""
        if not files:
            return AskedInterval(option, None,
                                 missing=f"no fio JSON output or job file beside the log, nor one folder up{unread}")
        shown = ", ".join(str(path) for path in files[:3]) + (", ..." if len(files) > 3 else "")
        return AskedInterval(option, None, missing=f"no job in {shown} writes {prefix.name}_{kind} logs{unread}")

    def _files(self, folder: Path) -> list[tuple[Path, list[Job]]]:
        if folder not in self.folders:
            candidates = _candidates(folder)
            self.skipped.update({path: why for path in candidates if (why := _unreadable(path))})
            self.folders[folder] = [(path, jobs) for path in candidates if (jobs := _jobs(path, self.ios))]
        return self.folders[folder]


def _candidates(folder: Path) -> list[Path]:
    """fio JSON output first (what fio ran, command-line options included), then job files, each in name order
    (FIFOs, devices and broken links too: _unreadable says why they are not read)."""
    try:
        files = sorted(path for path in folder.iterdir() if not path.is_dir())
    except OSError:
        return []
    return [path for path in files if path.suffix == ".json"] + [path for path in files
                                                                  if path.suffix in JOB_FILE_SUFFIXES]


def _jobs(path: Path, ios: dict[Path, dict[str, dict[str, int]]] | None = None) -> list[Job]:
    """The jobs of a fio JSON output or job file (told apart by content unless the name says which); none when it
    is neither, or cannot be read (not a regular file, or a JSON output over MAX_JSON_BYTES). A JSON output's IO
    counts per job and direction (its threads added up) go into `ios`."""
    try:
        if _unreadable(path):
            return []
        doc = load_document(path) if path.suffix not in JOB_FILE_SUFFIXES else None
        if doc is not None:
            if ios is not None:
                ios[path] = _ios(doc)
            return [(str(entry["jobname"]), _options(doc.get("global options"), entry.get("job options")))
                    for entry in job_entries(doc)]
        if path.suffix == ".json":
            return []
        return [(section.name, section.options) for section in parse_job_text(read_job_file(path), str(path))]
    except PtsbenchError:
        return []


def _ios(doc: Mapping[str, object]) -> dict[str, dict[str, int]]:
    """Job name -> direction -> the IOs fio counted (total_ios), its entries (numjobs copies) added up."""
    counted: dict[str, dict[str, int]] = {}
    for entry in job_entries(doc):
        job = counted.setdefault(str(entry.get("jobname")), {})
        for direction in ("read", "write", "trim"):
            stats = entry.get(direction)
            count = stats.get("total_ios") if isinstance(stats, Mapping) else None
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                job[direction] = job.get(direction, 0) + count
    return counted


def _options(*maps: object) -> dict[str, str | None]:
    """Job options from a fio JSON document's option maps, later ones winning (anything not a map is ignored: the
    document may be damaged or hostile)."""
    merged: dict[str, str | None] = {}
    for options in maps:
        if isinstance(options, Mapping):
            merged.update({str(key): None if value is None else str(value) for key, value in options.items()})
    return merged


def _unreadable(path: Path) -> str:
    """Why `path` is not read for jobs (a FIFO or device would block or never end, a huge file fill the memory);
    empty when it is read."""
    try:
        found = os.stat(path)
    except OSError:
        return not_found_reason(path)
    if not stat.S_ISREG(found.st_mode):
        return "not a regular file"
    limit_bytes = MAX_TEXT_BYTES if path.suffix in JOB_FILE_SUFFIXES else MAX_JSON_BYTES
    if found.st_size > limit_bytes:
        return f"larger than {limit_bytes // (1024 * 1024)} MiB"
    return ""


def _named_jobs(path: Path) -> list[Job]:
    if problem := _unreadable(path):
        raise PtsbenchError(f"--job {path}: {problem}", "name the job file fio ran, or the JSON output it printed")
    jobs = _jobs(path)
    if not jobs:
        raise PtsbenchError(f"--job {path}: not a fio job file or fio JSON output with jobs",
                            "name the job file fio ran, or the JSON output it printed (--output-format=json)")
    return jobs


def _writes(job: str, options: Mapping[str, str | None], log_option: str, prefix: Path, depth: int) -> bool:
    """Whether the job writes the logs of `prefix`: the last 1 + depth parts of its log path match."""
    if log_option not in options:
        return False
    written = Path(options[log_option] or job)
    return written.parts[-1 - depth:] == prefix.parts[-1 - depth:] and len(written.parts) > depth


def _interval(option: str, matches: Iterable[tuple[Path, Mapping[str, str | None]]]) -> AskedInterval:
    """The interval the matching jobs agree on (several numjobs copies, a JSON output and its job file)."""
    values: dict[str, Path] = {}
    for path, options in matches:
        values.setdefault((options.get(option) or "0").strip(), path)
    if len(values) > 1:
        shown = ", ".join(f"{value} in {path}" for value, path in values.items())
        return AskedInterval(option, None, missing=f"the jobs writing the log disagree ({shown})")
    value, path = next(iter(values.items()))
    if not value.isdigit():
        return AskedInterval(option, None, path, f"{option}={value} in {path} is not a whole number of ms")
    return AskedInterval(option, int(value), path)
