"""fio job files: render generated ones, read users' ones, and add overrides without rewriting anything else.

A user's job file reaches fio as written: ptsbench only appends `key=value` lines (marked with a comment) at the end
of every job section, so `${VAR}`, `$ncpus`, `[global]`, `stonewall` and the rest keep their meaning.
"""

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ptsbench.errors import JobFileError
from ptsbench.textfile import read_user_text

PERCENTILES = ("50", "90", "95", "99", "99.9", "99.99", "99.999")
# Total-latency percentiles (not only clat) and the list the table shows; json+ adds the bins behind them.
PERCENTILE_OPTIONS: dict[str, str | None] = {
    "lat_percentiles": "1",
    "percentile_list": ":".join(PERCENTILES),
}
# PTS asks fio for six nines too, for the qualification targets that name them (autoval's reach up to p99.9999); such
# a percentile is claimed only where enough IOs lie beyond it (catalog/values.py MIN_TAIL_IOS: 10 beyond p99.9999
# takes 10 million IOs), else it stays "not measured"
PTS_PERCENTILES = (*PERCENTILES, "99.9999")
PTS_PERCENTILE_OPTIONS: dict[str, str | None] = {**PERCENTILE_OPTIONS, "percentile_list": ":".join(PTS_PERCENTILES)}
_PERCENTILE_RE = re.compile(r"^\d+(?:\.\d+)?$")


def percentile_options(sections: Sequence["JobSection"]) -> dict[str, str | None]:
    """PERCENTILE_OPTIONS, with every percentile a job's own percentile_list asks for added to ptsbench's list (it
    replaces the job's, so a p99.9999 the job asked for is still measured); kept in numeric order."""
    asked = {f"{float(text):.6f}".rstrip("0").rstrip(".") for section in sections
             for text in (section.options.get("percentile_list") or "").split(":")
             if _PERCENTILE_RE.match(text.strip()) and 0 < float(text) <= 100}
    wanted = sorted(asked | set(PERCENTILES), key=float)
    return {**PERCENTILE_OPTIONS, "percentile_list": ":".join(wanted)}


# fio 3.33 keeps its jobs in shared-memory segments of 8 and makes at most REAL_MAX_JOBS / 8 - 1 = 511 of them
# (init.c, add_thread_segment): one fio process runs at most 4088 jobs (numjobs clones included); more fail at start
FIO_MAX_JOBS = 4088
# fio reads iodepth as an int, but no device queue or kernel interface holds more IOs in flight than 65536 (an NVMe
# queue, libaio's default aio-max-nr; io_uring 32768), while fio allocates a buffer for each
MAX_IODEPTH = 65536
JOBS_LIMIT = f"fio runs at most {FIO_MAX_JOBS:,} jobs in one process"
IODEPTH_LIMIT = f"use a queue depth of at most {MAX_IODEPTH:,} (no device queue holds more IOs in flight)"
OVERRIDE_MARK = "# added by ptsbench"
MAX_LINE_BYTES = 8191  # fio reads a job file line by line into OPT_LEN_MAX (8192) bytes, its NUL included
JOB_FILE_SUFFIXES = (".fio", ".ini")

_SECTION_RE = re.compile(r"^\s*\[([^\]]+)\]\s*([#;].*)?$")  # fio allows a comment after the header
_DURATION_UNITS_S = {"": 1.0, "s": 1.0, "ms": 0.001, "us": 1e-6, "m": 60.0, "h": 3600.0, "d": 86400.0}
# fio's time options in seconds unless a unit is given (OPT_STR_VAL_TIME), which it reads in microseconds
SECONDS_OPTIONS = ("runtime", "ramp_time", "startdelay", "steadystate_duration", "steadystate_ramp_time")
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|us|s|m|h|d)?\s*$", re.IGNORECASE)


def render_job_file(
    global_options: Mapping[str, str | None], jobs: Sequence[tuple[str, Mapping[str, str | None]]]
) -> str:
    """INI text for fio; an option whose value is None is written as a bare flag (e.g. `stonewall`). JobFileError
    for a name or value holding a line break or NUL: fio would read the rest as options or jobs of their own, which
    no guard has seen (a PTS run's jobs are made again from its stored manifest on resume)."""
    sections = [("global", global_options), *jobs]
    for name, options in sections:
        for text in (name, *options, *(value for value in options.values() if value is not None)):
            if any(character in text for character in "\n\r\0"):
                raise JobFileError(f"a generated fio job would carry a line break or NUL ({text!r} in [{name}])",
                                   "check the run's manifest.json (edited by hand?), or start a new run")
    blocks = []
    for name, options in sections:
        lines = [f"[{name}]"] + [key if value is None else f"{key}={value}" for key, value in options.items()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


@dataclass(frozen=True)
class JobSection:
    """One job section as written, with the options it inherits from the [global] sections above it."""

    name: str
    options: dict[str, str | None] = field(default_factory=dict)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def has(self, key: str) -> bool:
        return key in self.options


def _option(line: str) -> tuple[str, str | None] | None:
    """`key=value` or a bare `flag`; None for blank lines, comments and `include` directives."""
    stripped = line.strip()
    if not stripped or stripped[0] in "#;" or stripped.startswith("include "):
        return None
    key, sep, value = stripped.partition("=")
    return (key.strip(), value.strip() if sep else None)


_INCLUDE_RE = re.compile(r"^(\s*include\s+)(\S.*?)\s*$")
_INCLUDE_DEPTH = 16


def _include_path(name: str, source: str) -> Path:
    """An include file as fio finds it: a relative name is relative to the including job file's folder."""
    path = Path(name)
    return path if path.is_absolute() else Path(source).parent / path


def _lines(text: str, source: str, depth: int = 0) -> list[tuple[str, int, str]]:
    """(source, line number, line) of the job text with the lines of its include files in place of the include
    directives (include files hold options only); an unreadable include is left for fio to report."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _INCLUDE_RE.match(line)
        if match and depth < _INCLUDE_DEPTH:
            path = _include_path(os.path.expandvars(match.group(2)), source)
            try:
                included = read_user_text(path, "included file", "", JobFileError)
            except JobFileError:
                continue
            found += _lines(included, str(path), depth + 1)
            continue
        found.append((source, number, line))
    return found


def parse_job_text(text: str, source: str) -> list[JobSection]:
    """Job sections in file order, each with its effective options ([global] options merged in; the options of
    `include` files where the include stands)."""
    global_options: dict[str, str | None] = {}
    sections: list[JobSection] = []
    current: dict[str, str | None] | None = None
    for where, number, line in _lines(text, source):
        header = _SECTION_RE.match(line)
        if header:
            name = header.group(1).strip()
            if name == "global":
                current = global_options
            else:
                current = dict(global_options)
                sections.append(JobSection(name, current))
            continue
        if line.strip().startswith("["):
            raise JobFileError(f"{where}:{number}: {line.strip()!r} is not a [section] header",
                               "write section names as [name]")
        option = _option(line)
        if option is None:
            continue
        if current is None:
            raise JobFileError(f"{where}:{number}: option outside any [section]", "start with [global] or [jobname]")
        current[option[0]] = option[1]
    if not sections:
        raise JobFileError(f"{source}: no job section", "add at least one [jobname] section")
    return sections


def block_size_text(options: Mapping[str, object]) -> str:
    """How a job's block size was given: bs (or blocksize), bsrange or bssplit; fio's default is 4k. A job that
    replays an IO log (read_iolog) issues the sizes logged, whatever its bs says."""
    if options.get("read_iolog"):
        return "as logged"
    for key in ("bs", "blocksize", "bsrange", "blocksize_range", "bssplit"):
        if options.get(key):
            return str(options[key])
    return "4k"


def rw_text(options: Mapping[str, object]) -> str:
    """A job's rw (or readwrite); fio's default is read. A job that replays an IO log (read_iolog) issues the
    directions logged: it is a replay, whatever its rw says."""
    if options.get("read_iolog"):
        return "replay"
    return str(options.get("rw") or options.get("readwrite") or "read")


def _escape_fio_value(value: str) -> str:
    """fio splits filenames on ':'; escape it so a path is one file."""
    return value.replace(":", "\\:")


def add_overrides(
    text: str, per_section: Sequence[Mapping[str, str | None]], common: Mapping[str, str | None]
) -> str:
    """Append `common` plus `per_section[i]` options at the end of the i-th job section ([global] not counted),
    leaving the rest as written (by position: two sections may share a name)."""
    out: list[str] = []
    section: str | None = None
    jobs_seen = 0

    def close_section() -> None:
        nonlocal jobs_seen
        if section is None or section == "global":
            return
        while out and not out[-1].strip():
            out.pop()
        options = {**common, **(per_section[jobs_seen] if jobs_seen < len(per_section) else {})}
        jobs_seen += 1
        out.append(OVERRIDE_MARK)
        out.extend(key if value is None else f"{key}={value}" for key, value in options.items())
        out.append("")

    for line in text.splitlines():
        header = _SECTION_RE.match(line)
        if header:
            close_section()
            section = header.group(1).strip()
        out.append(line)
    close_section()
    return "\n".join(out).rstrip("\n") + "\n"


def target_options(path: str) -> dict[str, str | None]:
    """Options that point a job at one target path (the job's own file options are removed first). fio cuts a line
    at ';' or '#' and expands '$' words in it: such a path would name another file."""
    odd = [char for char in ";#$" if char in path]
    if odd:
        raise JobFileError(f"target {path!r} holds {odd[0]!r}, which fio reads as part of its job file syntax",
                           "rename the target or point to it through a link without it")
    return {"filename": _escape_fio_value(path)}


def _fio_line(line: str) -> str:
    """A job file line as fio reads it: blanks stripped, cut at the first ';' or '#' (fio's comment marks)."""
    stripped = line.strip()
    cut = min((at for at in (stripped.find(";"), stripped.find("#")) if at >= 0), default=len(stripped))
    return stripped[:cut].rstrip()


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.lstrip()
    return not stripped.strip() or stripped[0] in ";#"


def inline_includes(text: str, source: Path, cwd: str | None = None, depth: int = 0) -> str:
    """The job text with every `include FILE` line replaced by that file's lines, found as fio finds it (FILE as
    given, from fio's working directory `cwd`, else next to the file that includes it): the job file ptsbench
    writes for a case lives elsewhere, and --target must see (and drop) file options that came from an include."""
    if depth > 16:
        raise JobFileError(f"{source}: includes nested more than 16 deep", "does an included file include itself?")
    folder = cwd or os.getcwd()
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        fio_line = "" if _is_blank_or_comment(line) else _fio_line(line)
        if not fio_line.startswith("include"):
            out.append(line)
            continue
        name = fio_line[len("include") + 1:]  # fio skips one character after the word, whatever it is
        path = Path(folder, name) if os.path.exists(os.path.join(folder, name)) else source.parent / name
        if not path.is_file():
            raise JobFileError(f"{source}:{number}: included file {name!r} not found", "fix the include line")
        included = read_job_file(path)
        if any(_fio_line(item).startswith("[") for item in included.splitlines() if not _is_blank_or_comment(item)):
            raise JobFileError(f"{path}: a [section] in an included file", "fio allows options only in includes")
        out.append(f"# include {name}: inlined by ptsbench")
        out.extend(inline_includes(included, path, cwd, depth + 1).splitlines())
    return "\n".join(out) + "\n"


def without_options(text: str, names: Sequence[str]) -> str:
    """The job text without the lines that set one of the options `names` (as fio reads option names)."""
    kept = []
    for line in text.splitlines():
        fio_line = "" if _is_blank_or_comment(line) else _fio_line(line)
        if fio_line.partition("=")[0].strip() not in names:
            kept.append(line)
    return "\n".join(kept) + "\n"


LOG_KINDS = ("bw", "iops", "lat")


def log_options(prefix: str, interval_ms: int, fio_lat_log: bool = False,
                job: JobSection | None = None) -> dict[str, str | None]:
    """Per-interval bw/iops logs averaged over `interval_ms` (fio writes PREFIX_bw.N.log, ...); fio's own latency
    log only when asked: it costs fio a clock read per IO (ptsbench derives per-second latency from fio's status).

    A job's own logging options win: a log kind it writes itself is left to it (fio takes one log per kind), and
    its averaging is never changed. When it logs per IO (its own logs without log_avg_msec, or log_avg_msec=0),
    ptsbench adds no log of its own: at one line per IO, they would slow the job down."""
    own = job.options if job is not None else {}
    own_kinds = {kind for kind in LOG_KINDS if own.get(f"write_{kind}_log") is not None}
    own_average = own.get("log_avg_msec")
    if own_average is not None and own_average.strip() in ("", "0") or own_kinds and own_average is None:
        return {}
    wanted = ["bw", "iops", *(["lat"] if fio_lat_log else [])]
    options: dict[str, str | None] = {f"write_{kind}_log": prefix for kind in wanted if kind not in own_kinds}
    if options and own_average is None:
        options["log_avg_msec"] = str(interval_ms)
    return options


def duration_text(seconds: float) -> str:
    """A duration as fio reads it: whole seconds plainly, anything else in milliseconds (fio drops the fraction of
    a plain number of seconds: runtime=0.5 is runtime=0, and with time_based fio then runs to the end of size)."""
    return str(int(seconds)) if float(seconds).is_integer() else f"{round(seconds * 1000)}ms"  # never 1e+07


def parse_duration_s(text: str) -> float | None:
    """fio time value (seconds by default; s/m/h/ms suffixes) -> seconds; None when not a plain duration."""
    match = _DURATION_RE.match(text)
    if not match:
        return None
    return float(match.group(1)) * _DURATION_UNITS_S[(match.group(2) or "").lower()]


def shortened_times(options: Mapping[str, str | None], numbers_us: Mapping[str, tuple[int, ...]]) -> list[str]:
    """Why a job runs for less (or other) time than its text says: fio reads a time option's number only up to a
    decimal point and then drops the rest, unit included (fio 3.33 and 3.39 read runtime=1.5 and runtime=1.5m alike
    as 1 s, and ramp_time=0.5 as none). `options`: the job's options as written, `numbers_us`: as fio read them
    (fio/opens.py's JobOpens); one line per option fio shortened, with the value that says what was meant."""
    said = []
    for key in SECONDS_OPTIONS:
        text, read_us = options.get(key), numbers_us.get(key)
        written_s = parse_duration_s(text) if text else None
        if written_s is None or not read_us or abs(read_us[0] - written_s * 1e6) < 1:
            continue  # a range (startdelay=1-5) or a time fio reads as written
        read = f"{read_us[0] / 1e6:g} s" if read_us[0] % 1000 == 0 else f"{read_us[0]:,} us"
        if key == "runtime" and read_us[0] == 0:
            read += " (no time limit)"
        meant = next(f"{round(written_s * scale)}{unit}" for scale, unit in ((1, "s"), (1000, "ms"), (1e6, "us"))
                     if abs(written_s * scale - round(written_s * scale)) < 1e-6 or unit == "us")
        said.append(f"fio reads {key}={text} as {read}: it drops a time's decimal fraction and any unit after it "
                    f"(write {key}={meant})")
    return said


def expected_duration_s(sections: Sequence[JobSection],
                        read_us: Mapping[str, Mapping[str, tuple[int, ...]]] | None = None) -> float | None:
    """Upper bound of the run time from runtime/ramp_time, honouring stonewall; None when a job is size-bound (or
    fio reads its runtime as 0, no limit). `read_us`: each job's (by name) numbers as fio read them, which count
    where given (fio reads runtime=1.5m as 1 s: shortened_times)."""
    total_s = 0.0
    segment_s = 0.0
    for index, job in enumerate(sections):
        read = (read_us or {}).get(job.name, {})
        runtime_s = _time_s(job, "runtime", read)
        if not runtime_s:
            return None
        job_s = runtime_s + (_time_s(job, "ramp_time", read) or 0.0)
        waits = job.has("stonewall") or job.has("wait_for_previous")
        if index and waits:
            total_s += segment_s
            segment_s = 0.0
        segment_s = max(segment_s, job_s)
    return total_s + segment_s


def _time_s(job: JobSection, key: str, read_us: Mapping[str, tuple[int, ...]]) -> float | None:
    """A time option of a job in seconds: as fio read it where known, else as written."""
    if read_us.get(key):
        return read_us[key][0] / 1e6
    text = job.get(key)
    return parse_duration_s(text) if text else None


def find_job_files(paths: Sequence[str]) -> list[Path]:
    """Expand files and folders (every *.fio / *.ini inside, in name order) into job file paths."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            group = sorted(p for p in path.iterdir() if p.suffix in JOB_FILE_SUFFIXES and p.is_file())
            if not group:
                raise JobFileError(f"{raw}: folder holds no *.fio or *.ini job file", "put job files in it or name one")
            found.extend(group)
        elif path.is_file():
            found.append(path)
        elif path.exists():
            raise JobFileError(f"{raw}: not a job file", "pass a fio job file or a folder of them")
        else:
            raise JobFileError(f"{raw}: no such job file or folder", "check the path")
    return found


def read_job_file(path: Path) -> str:
    """The job file's text (a regular file of at most 16 MiB), with a clear error when it cannot be read or holds
    a line longer than fio reads as one (fio cuts it into several: it would run options nobody wrote)."""
    text = read_user_text(path, "job file", "pass a fio job file (INI text)", JobFileError)
    if len(text) > MAX_LINE_BYTES:  # only then can a line be too long: a short file costs nothing more
        for number, line in enumerate(text.splitlines(), start=1):
            if len(line.encode()) > MAX_LINE_BYTES:
                raise JobFileError(f"{path}:{number}: a line of {len(line.encode()):,} bytes: fio reads at most "
                                   f"{MAX_LINE_BYTES:,} bytes of a line and takes the rest as further lines",
                                   "split it (a long filename list: several jobs, or a directory)")
    return text
