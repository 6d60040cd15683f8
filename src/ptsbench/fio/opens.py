"""What a fio job file opens, read by fio's own parser.

`fio --parse-only --debug=parse,file JOB` validates the job file and prints every option of every section as fio
handled it: includes read, `${VAR}` and `$ncpus` expanded, comments cut, aliases resolved (`readwrite` -> `rw`), and
the name of every file a `filename=` option added (with its `directory` in front). What parse-only mode skips is
done here as fio does it when the job is set up: files inherited from [global], names made from `filename_format`
(or from the job's name) under each `directory`, one set per `numjobs` clone, and the regular files under `opendir`.
"""

import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ptsbench.errors import JobFileError
from ptsbench.fio.iolog import replay_redirect_only

PARSE_TIMEOUT_S = 60
FILE_OPTIONS = ("filename", "directory", "filename_format", "opendir")  # what names the files a job opens
READ_ONLY_RW = ("read", "randread")
# engines that change what they open even when the job only reads: fallocate/punch, defragment, truncate, unlink
WRITING_ENGINES = ("falloc", "e4defrag", "ftruncate", "filedelete")
# engines that open exactly the files and devices `filename` names, through the kernel, so the guard can judge them
# (io_uring_cmd and sg: the generic character device, judged as the disk it reaches); fio's "linuxaio" is libaio.
# Every other engine (nbd, rbd, rados, gfapi, http, net, rdma, libblkio, spdk, xnvme, mtd, dev-dax, libpmem,
# external .so files, exec...) reaches its target through a library, a network or a driver of its own.
FILE_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "linuxaio", "io_uring", "io_uring_cmd",
                "posixaio", "mmap", "splice", "sg", "null", "cpuio", "filecreate", "filestat", *WRITING_ENGINES)
DISKLESS_ENGINES = ("null", "cpuio")  # fio opens no file for them (but `unlink` still deletes one)
# the log kinds of each log option (fio's add_job): write_lat_log writes three unless disable_lat/slat/clat
LOG_KINDS = {"write_bw_log": ("bw",), "write_iops_log": ("iops",), "write_lat_log": ("lat", "slat", "clat"),
             "write_hist_log": ("clat_hist",)}
# files fio writes under exactly the name an option gives: an IO log (appended to), a merged blktrace
NAMED_OUTPUTS = ("write_iolog", "merge_blktrace_file")
VERIFY_STATE = "verify_state_save"  # what names a saved verify state (written in fio's working folder)
MAX_LOG_MSEC = 2**32 - 1  # fio keeps log intervals in 32 bits (and wraps larger ones without a word)
_PERCENT_FROM = 2**64 - 101  # fio stores N% as -1 - N in an unsigned 64-bit value (parse_is_percent)
_DEFAULT_FORMAT = "$jobname.$jobnum.$filenum"
_FORMAT_KEYWORDS = ("$jobname", "$jobnum", "$filenum", "$clientuid")
_MAX_CLONES = 4096  # numjobs larger than this is checked on the first clones only (fio caps numjobs itself too)

_LINE_RE = re.compile(r"^(parse|file)\s+(\d+)(.*)$")  # fio's "%-8s %-5u " prefix, then the message
_SECTION_RE = re.compile(r"^Parsing section \[(.*)\]$")
_OPTION_RE = re.compile(r"^handle_option=([^,]*), ptr=(.*)$")
_ADDED_RE = re.compile(r'^file 0x[0-9a-f]+ "(.*)" added at \d+$')
_TYPE_RE = re.compile(r"__handle_option=([^,]*), type=(\w+), ptr=")
NUMBER_TYPES = ("OPT_INT", "OPT_ULL", "OPT_BOOL", "OPT_STR_VAL", "OPT_STR_VAL_ZONE", "OPT_STR_VAL_TIME",
                "OPT_FLOAT_LIST", "OPT_RANGE")
_NUMBER_RE = re.compile(r"^\s*ret=0, out=(\d+)$")  # the value fio read from the last option (a range: two lines)


@dataclass(frozen=True)
class JobOpens:
    """One job (section) of a job file as fio will run it."""

    name: str
    options: dict[str, str | None]  # last value of every option fio handled, [global] ones included
    paths: tuple[str, ...]  # every file or device fio opens for it (absolute), in fio's order
    writes: bool  # it writes, trims or otherwise changes what it opens
    unknown: tuple[str, ...] = ()  # why fio may open more than `paths` (an IO log replayed, a user-space engine)
    generated: bool = False  # fio made the names up (filename_format or the job's name): no filename given
    cwd: str = "/"
    numbers: dict[str, tuple[int, ...]] = field(default_factory=dict)  # numeric options as fio read them
    thread_number: int = 1  # fio's number of the job's first thread (its numjobs clones follow): it names logs

    def change_to_existing(self, path: str) -> str | None:
        """What this job does to the existing regular file `path` that loses what it holds: it writes to it, fio
        deletes it and lays it out again (smaller than the job's size, fio's setup_files), or deletes it at the end
        (`unlink`). None for a path that is no regular file, an empty file it keeps, or a job that leaves it."""
        try:
            found = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(found.st_mode):
            return None
        if self._flag("unlink") or self._flag("unlink_each_loop"):
            return f"job {self.name} deletes it (unlink)"
        engine = (self.options.get("ioengine") or "").strip()
        if found.st_size == 0 or engine in DISKLESS_ENGINES:
            return None
        if self.writes:
            return f"job {self.name} writes to it"
        needed = self._laid_out_bytes(found.st_size)
        if needed is not None and needed > found.st_size:
            return (f"job {self.name} only reads, but fio deletes it and lays it out again at {needed} bytes "
                    f"(its size, filesize or offset ask for more than the {found.st_size} bytes it holds)")
        return None

    @property
    def changes_paths(self) -> bool:
        """Whether running this job changes what it opens, so that a run must hold its paths against other runs: a
        diskless engine (null, cpuio) opens no file, and only its `unlink` changes one."""
        if (self.options.get("ioengine") or "").strip() in DISKLESS_ENGINES:
            return self._flag("unlink") or self._flag("unlink_each_loop")
        return self.writes

    def _flag(self, key: str, default: int = 0) -> bool:
        return bool(self.numbers.get(key, (default,))[0])

    def _laid_out_bytes(self, size_bytes: int) -> int | None:
        """The size fio needs an existing file of `size_bytes` to have (it lays out a smaller one again), by fio's
        setup_files: `filesize` (its low end) when the file is below it, else offset (+ offset_increment for the last
        numjobs clone) plus `size` shared among nrfiles, or without a size the free space (`fill_device`); a
        percentage of the file fits it. None: no size needed."""
        low = self.numbers.get("filesize", (0,))[0]
        if low and low < _PERCENT_FROM:
            return low
        size = self.numbers.get("size", (0,))[0]
        if not size and (self._flag("fill_device") or self._flag("fill_fs")):
            return 2**63  # fio sizes the file to the free space of its file system
        if not size or size >= _PERCENT_FROM:
            return None
        offset = self.numbers.get("offset", (0,))[0]
        offset = size_bytes * (2**64 - 1 - offset) // 100 if offset >= _PERCENT_FROM else offset
        increment = self.numbers.get("offset_increment", (0,))[0]
        clones = self.numbers.get("numjobs", (1,))[0]
        if increment < _PERCENT_FROM:
            offset += max(clones - 1, 0) * increment
        nrfiles = max(self.numbers.get("nrfiles", (1,))[0], 1)
        return offset + size // nrfiles + size % nrfiles  # fio gives the first files up to a block more

    def log_files(self) -> list[str]:
        """The paths of every log fio writes for this job (see _logs)."""
        return [path for path, _option in self._logs()]

    def _logs(self) -> list[tuple[str, str]]:
        """Every log fio writes for this job and its numjobs clones, as absolute paths, named as fio's add_job names
        them, with the option that asks for each: PREFIX_KIND.THREAD.log (PREFIX_KIND.log with per_job_logs=0;
        .log.fz with log_gz_store), where PREFIX is the option's value or, when it has none, the job's name, and
        THREAD counts every job of the file."""
        found: list[tuple[str, str]] = []
        suffix = "log.fz" if self._flag("log_gz_store") else "log"
        per_job = self.numbers.get("per_job_logs", (1,))[0]
        threads = range(self.thread_number, self.thread_number + self.clones())
        for option, kinds in LOG_KINDS.items():
            if option not in self.options:
                continue
            prefix = (self.options.get(option) or "").strip() or self.options.get("name") or self.name
            for kind in kinds:
                if option == "write_lat_log" and self._flag(f"disable_{kind}"):
                    continue
                names = [f"{prefix}_{kind}.{n}.{suffix}" for n in threads] if per_job else [f"{prefix}_{kind}.{suffix}"]
                found.extend((os.path.join(self.cwd, name), option) for name in names)
        return list(dict.fromkeys(found))

    def beyond_limits(self) -> str | None:
        """What in the job, as fio read it, is past the limits ptsbench holds every run to (fio itself accepts it,
        then stalls or wraps): a queue depth over MAX_IODEPTH, a runtime or ramp_time over a year, a log_avg_msec
        or log_hist_msec past the 32 bits fio keeps it in. None when all are within them."""
        from ptsbench.fio.jobs import IODEPTH_LIMIT, MAX_IODEPTH
        from ptsbench.units import MAX_SECONDS

        iodepth = max(self.numbers.get("iodepth", (1,)))
        if iodepth > MAX_IODEPTH:
            return f"iodepth={iodepth} is over {MAX_IODEPTH:,}: {IODEPTH_LIMIT}"
        for key in ("runtime", "ramp_time"):
            usec = max(self.numbers.get(key, (0,)))  # fio reads times in microseconds
            if usec > MAX_SECONDS * 10**6:
                return f"{key}={self.options.get(key)} is over a year: use a duration of at most 366 days"
        for key in ("log_avg_msec", "log_hist_msec"):
            msec = max(self.numbers.get(key, (0,)))
            if msec > MAX_LOG_MSEC:
                return f"{key}={msec} is over {MAX_LOG_MSEC:,} ms, the most fio keeps (it would wrap it)"
        return None

    def clones(self) -> int:
        """How many threads fio starts for this job (numjobs, as fio read it)."""
        return max(1, min(self.numbers.get("numjobs", (_count(self.options.get("numjobs")),))[0], _MAX_CLONES))

    def outputs(self) -> list[tuple[str, str]]:
        """Every file fio writes for this job under a name the job gives (logs, IO logs, its saved verify state), as
        absolute paths, each with the option that names it."""
        named = [(os.path.join(self.cwd, value), option) for option in NAMED_OUTPUTS
                 if (value := (self.options.get(option) or "").strip())]
        return named + self._logs() + [(os.path.join(self.cwd, name), VERIFY_STATE) for name in self.verify_states()]

    def client_logs(self, host_names: Sequence[str]) -> list[tuple[str, str]]:
        """The logs fio's client writes on this machine for each host when the job runs on fio servers: the name the
        server forms, then '.' and the host as --client names it (fio's fio_client_handle_iolog)."""
        return [(f"{path}.{host}", option) for path, option in self._logs() for host in host_names]

    def verify_states(self, prefix: str = "local") -> list[str]:
        """The verify state files fio saves, in its working folder, at the end of each thread of a job that writes
        with verify set (verify_state_save is on by default): PREFIX-NAME-N-verify.state, NAME the job's name with
        '/' made '.', N counting from 0 over every thread of the file (fio's verify_state_gen_name)."""
        rw = (self.options.get("rw") or "read").partition(":")[0].strip()
        verify = (self.options.get("verify") or "0").strip()
        if rw in ("read", "randread", "trim", "randtrim") or verify in ("0", "none") or \
                not self._flag("verify_state_save", 1):
            return []
        name = (self.options.get("name") or self.name).replace("/", ".")
        first = self.thread_number - 1
        return [f"{prefix}-{name}-{number}-verify.state" for number in range(first, first + self.clones())]

    def paths_on_server(self, client_address: str) -> tuple[str, ...]:
        """The paths a fio server opens for this job when `client_address` sends it: names under `directory` get
        the client's address in front (fio's unique_filename, on by default) and `$clientuid` is that address."""
        names = list(self.paths)
        if self.generated:
            names = [os.path.join(self.cwd, path) for path in
                     _generated_names(self.name, self.options, self.cwd, client_address)]
        if (self.options.get("unique_filename") or "1").strip() == "0":
            return tuple(names)
        folders = [os.path.join(self.cwd, folder) for folder in fio_list(self.options.get("directory"))]
        moved = []
        for path in names:
            folder = next((f for f in folders if path.startswith(f + "/")), None)
            moved.append(f"{folder}/{client_address}.{path[len(folder) + 1:]}" if folder else path)
        return tuple(moved)


def unix_client_address(server_socket: str) -> str:
    """The address a fio server on a Unix socket gives every client (its unique_filename prefix and `$clientuid`).

    A Unix socket client has no address, so fio 3.33 formats as an IPv4 address whatever the accept() buffer holds
    at the IPv4 address's place: bytes 2-5 of the server's own socket path, left there when it bound the socket.
    """
    raw = (os.fsencode(server_socket) + bytes(6))[2:6]
    return ".".join(str(byte) for byte in raw)


@dataclass
class _State:
    options: dict[str, str | None] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    numbers: dict[str, tuple[int, ...]] = field(default_factory=dict)


def parse_job_file(job_path: Path, cwd: str | None = None) -> list[JobOpens]:
    """Every job of `job_path` as fio parses it, run from `cwd` (fio resolves relative names there); JobFileError
    with fio's own words when fio rejects the file."""
    from ptsbench.fio.runner import fio_binary, fio_version
    from ptsbench.fio.versions import option_hint

    try:
        done = _fio_parse_only([str(job_path)], cwd)
    except subprocess.TimeoutExpired as error:
        raise JobFileError(f"{job_path}: fio did not finish parsing it within {PARSE_TIMEOUT_S} s",
                           "check the job file (an include of itself?)") from error
    if done.returncode != 0:
        said = [line.strip() for line in done.stderr.splitlines() if line.strip() and not line.startswith(" ")]
        words = " | ".join(said[:4]) or f"fio exited with code {done.returncode}"
        why = option_hint(done.stderr, fio_version())
        raise JobFileError(f"{job_path}: fio rejects it: {words}" + (f" ({why})" if why else ""),
                           "fix the job file (fio --parse-only JOB says the same)")
    if not any(line.startswith("parse") and "Parsing ini file" in line for line in done.stdout.splitlines()):
        raise JobFileError(f"{fio_binary()} printed no parse debug output for {job_path} (built without --debug?), "
                           "so ptsbench cannot check what the job opens", "use a fio built with debug output")
    return jobs_from_debug(done.stdout, cwd or os.getcwd())


def parse_job_texts(texts: Sequence[str], cwd: str | None = None) -> list[list[JobOpens] | None]:
    """Each job text's jobs as parse_job_text reads them, from one fio start-up for all (fio calibrates its clock at
    every start, 0.1 s of CPU). fio parses several job files as it parses each alone: it sets [global] back to its
    defaults before each next file ("filling default options"), and only the first job of each next file differs, by
    a stonewall outside the debug output. None where one parse cannot stand for that text's own: a text with an
    include (its file's debug lines interleave), or every text when fio rejects one of them or its output does not
    split into one part per file; parse that text alone, so fio's error names it."""
    found: list[list[JobOpens] | None] = [None] * len(texts)
    together = [index for index, text in enumerate(texts)
                if not any(line.strip().startswith("include") for line in text.splitlines())]
    if len(together) < 2:
        return found
    with tempfile.TemporaryDirectory(prefix="ptsbench-parse-") as folder:
        paths = [str(Path(folder) / f"job{index}.fio") for index in together]
        for index, path in zip(together, paths, strict=True):
            Path(path).write_text(texts[index])
        try:
            done = _fio_parse_only(paths, cwd)
        except subprocess.TimeoutExpired:
            return found
    parts = _parts_per_file(done.stdout, paths) if done.returncode == 0 else None
    for index, part in zip(together, parts, strict=True) if parts is not None else ():
        found[index] = jobs_from_debug(part, cwd or os.getcwd())
    return found


def _fio_parse_only(paths: Sequence[str], cwd: str | None) -> subprocess.CompletedProcess[str]:
    """`fio --parse-only` of the job files `paths`, run from `cwd`, with the debug lines that name what each job opens
    (raises TimeoutExpired after PARSE_TIMEOUT_S). A clock source is named: at its start fio otherwise tests whether
    the CPU's clock runs the same on every CPU, about 0.05 CPU-s of the 0.12 a parse costs, for a clock a parse
    never reads (fio's output is the same)."""
    from ptsbench.fio.lifetime import run_bound
    from ptsbench.fio.runner import fio_binary

    return run_bound([fio_binary(), "--parse-only", "--clocksource=clock_gettime", "--debug=parse,file", *paths],
                     capture_output=True, text=True, errors="replace", timeout=PARSE_TIMEOUT_S, cwd=cwd,
                     stdin=subprocess.DEVNULL, check=False)


def _parts_per_file(text: str, paths: Sequence[str]) -> list[str] | None:
    """fio's debug output of several job files, cut into what each file's own parse prints: from its "Parsing ini
    file" line to the "filling default options" line that resets [global] for the next file. None when the lines do
    not name exactly these files, in order, each reset once. Only the lines that hold either text are looked at
    one by one (fio prints some 470 lines of defaults per file after each reset: millions for a large sweep)."""
    starts: list[int] = []  # where each file's part begins
    ends: list[int] = []  # where each reset line begins
    for at in _marked_lines(text):
        end = text.find("\n", at)
        kind, payload = _debug_line(text[at:end if end >= 0 else len(text)])
        if kind == "parse" and payload.startswith("Parsing ini file "):
            if len(starts) >= len(paths) or payload != f"Parsing ini file {paths[len(starts)]}" or \
                    len(ends) != len(starts):
                return None
            starts.append(at)
        elif kind == "parse" and payload == "filling default options":
            ends.append(at)
    if len(starts) != len(paths) or len(ends) != len(paths) - 1:
        return None
    return [text[start:end].rstrip("\n") for start, end in zip(starts, [*ends, len(text)], strict=True)]


def _marked_lines(text: str) -> list[int]:
    """The start of every line holding "Parsing ini file " or "filling default options", in order."""
    found = set()
    for marker in ("Parsing ini file ", "filling default options"):
        at = text.find(marker)
        while at >= 0:
            found.add(text.rfind("\n", 0, at) + 1)
            at = text.find(marker, at + len(marker))
    return sorted(found)


def _debug_line(line: str) -> tuple[str, str]:
    """fio's debug line -> (its kind, parse or file, and its message as printed), ("", "") for any other line."""
    match = _LINE_RE.match(line)
    if not match:
        return "", ""
    return match.group(1), match.group(3)[max(0, 5 - len(match.group(2))) + 1:]  # a raw line keeps its blanks


def parse_job_text(text: str, source: str, cwd: str | None = None) -> list[JobOpens]:
    """parse_job_file for job text not in a file yet (it holds no relative include: see inline_includes)."""
    with tempfile.TemporaryDirectory(prefix="ptsbench-parse-") as folder:
        path = Path(folder) / "job.fio"
        path.write_text(text)
        try:
            return parse_job_file(path, cwd)
        except JobFileError as error:
            raise JobFileError(error.message.replace(str(path), source), error.hint) from None


def jobs_from_debug(text: str, cwd: str) -> list[JobOpens]:
    """Jobs from fio's parse/file debug lines: options and files belong to the last 'Parsing section' line."""
    default = _State()
    sections: list[tuple[str, _State]] = []
    current: _State | None = None
    last_option = ""
    for line in text.splitlines():
        kind, payload = _debug_line(line)
        section = _SECTION_RE.match(payload)
        if kind == "parse" and section:
            name = section.group(1)
            if name.startswith("global"):  # fio: any section whose name starts with "global"
                current = default
            else:
                current = _State(dict(default.options), list(default.files), dict(default.numbers))
                sections.append((name, current))
            continue
        option = _OPTION_RE.match(payload) if kind == "parse" else None
        number = _NUMBER_RE.match(payload) if kind == "parse" else None
        if number and current is not None and last_option:
            current.numbers[last_option] = (*current.numbers.get(last_option, ()), int(number.group(1)))
            continue
        if option and current is not None:
            value = option.group(2)
            last_option = option.group(1)
            current.options[last_option] = None if value == "(null)" else value
            current.numbers.pop(last_option, None)
            if option.group(1) == "opendir" and value != "(null)":
                current.files.extend(_opendir_files(value, current.options.get("directory"), cwd))
            continue
        added = _ADDED_RE.match(payload) if kind == "file" else None
        if added and current is not None:
            current.files.append(added.group(1))
    found: list[JobOpens] = []
    thread_number = 1  # fio numbers every job it adds, numjobs clones right after their job (get_new_job)
    for name, state in sections:
        found.append(_job(name, state, cwd, thread_number))
        thread_number += found[-1].clones()
    return found


def _job(name: str, state: _State, cwd: str, thread_number: int = 1) -> JobOpens:
    options = state.options
    unknown = []
    files = list(state.files)
    replay = bool(options.get("read_iolog"))
    if replay and not options.get("replay_redirect"):
        unknown.append(f"it replays the IO log {options['read_iolog']}, which names its own files and writes")
    elif replay:  # every IO of the log goes to the redirect target, unless the log does more than IO (unlink)
        unknown.extend(reason for reason in [replay_redirect_only(os.path.join(cwd, options["read_iolog"] or ""))]
                       if reason)
    generated = not replay and not files and options.get("filename") is None
    if generated:
        files = _generated_names(name, options, cwd)
    engine = (options.get("ioengine") or "").strip()
    opaque = bool(engine) and engine not in FILE_ENGINES
    if opaque:
        unknown.append(f"its ioengine {engine} reaches its target through a library, network or driver of its "
                       "own, not a path: its target cannot be judged")
    programs = [key for key in ("exec_prerun", "exec_postrun") if options.get(key)] + (["the exec engine"]
                                                                                       if engine == "exec" else [])
    if programs:
        unknown.append(f"it runs a program ({', '.join(programs)}), which may write anything")
    if options.get("replay_redirect"):
        files.append(options["replay_redirect"] or "")
    paths = tuple(dict.fromkeys(os.path.join(cwd, path) for path in files if path))
    return JobOpens(name, dict(options), paths, opaque or replay or bool(programs) or writes(options),
                    tuple(unknown), generated, cwd, dict(state.numbers), thread_number)


def misread_value(key: str, value: str) -> str | None:
    """Why fio would take only part of `value` for option `key` without a word (fio's number parser stops at the
    first character it does not know, bs=4k=8k is 4k, and reads a leading '-' as a range, size=-1m is 1m), else
    None. Asks fio's own parser which options are numbers."""
    with tempfile.TemporaryDirectory(prefix="ptsbench-parse-") as folder:
        path = Path(folder) / "option.fio"
        path.write_text(f"[option]\n{key}={value}\n")
        try:
            done = _fio_parse_only([str(path)], None)
        except subprocess.TimeoutExpired:
            return None
    kind = next((found[2] for line in done.stdout.splitlines() if (found := _TYPE_RE.search(line))
                 and found[1] == key), "")
    if kind in NUMBER_TYPES and "=" in value:
        return f"fio reads {key} as a number and ignores what follows the '=' in {value!r}"
    if kind in NUMBER_TYPES and value.lstrip().startswith("-"):
        return f"fio reads {key} as a number and the '-' of {value!r} as a range mark, not a minus sign"
    return None


def writes(options: Mapping[str, str | None]) -> bool:
    """Whether a job writes: rw (fio's `readwrite` too) other than read/randread, with or without an offset
    modifier (`rw=write:4k`), or an engine that changes files while reading."""
    rw = (options.get("rw") or "read").partition(":")[0].strip()
    engine = (options.get("ioengine") or "").strip()
    return rw not in READ_ONLY_RW or engine in WRITING_ENGINES


def fio_list(value: str | None) -> list[str]:
    """A ':'-separated fio value as fio splits it: leading colons skipped, '\\:' is a colon inside a name."""
    parts: list[str] = []
    current = ""
    text = (value or "").lstrip(":")
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and text[index + 1:index + 2] == ":":
            current += ":"
            index += 2
            continue
        if char == ":":
            parts.append(current)
            current = ""
        else:
            current += char
        index += 1
    parts.append(current)
    return [part for part in parts if part]


def job_count(opens: Sequence[JobOpens]) -> int:
    """How many jobs fio starts for these jobs: every job's numjobs clones (to hold against FIO_MAX_JOBS)."""
    total = 0
    for job in opens:
        value = (job.options.get("numjobs") or "1").strip()
        total += int(value) if value.isdigit() and len(value) < 19 else 1  # longer: fio's parser refused it
    return total


def _count(value: str | None) -> int:
    try:
        return max(1, min(int(value or "1"), _MAX_CLONES))
    except ValueError:
        return 1


def _in_directory(options: Mapping[str, str | None], name: str, job_number: int) -> str:
    """fio's directory prefix: clone N uses the N-th entry (modulo the count) of a ':' list."""
    folders = fio_list(options.get("directory"))
    if not folders:
        return name
    return f"{folders[job_number % len(folders)]}/{name}"


def _generated_names(job: str, options: Mapping[str, str | None], cwd: str, client: str = "") -> list[str]:
    """The files fio makes up for a job that names none: the job's own name when that exists and is not a regular
    file (e.g. a section called [/dev/sdb]), else `filename_format` for each clone and file number."""
    nrfiles = _count(options.get("nrfiles"))
    names = []
    for number in range(_count(options.get("numjobs"))):
        if nrfiles == 1 and _exists_not_regular(os.path.join(cwd, job)):
            names.append(_in_directory(options, job, number))
            continue
        for file_number in range(nrfiles):
            names.append(_in_directory(options, _format_name(options, job, number, file_number, client), number))
    return names


def _exists_not_regular(path: str) -> bool:
    """fio's test on a job's name: it exists (lstat, a symlink counts as itself) and is not a regular file."""
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _format_name(options: Mapping[str, str | None], job: str, number: int, file_number: int, client: str) -> str:
    """fio's make_filename: each keyword, in order, replaced wherever it occurs (any letter case)."""
    text = options.get("filename_format") or _DEFAULT_FORMAT
    values = {"$jobname": job, "$jobnum": str(number), "$filenum": str(file_number), "$clientuid": client}
    for keyword in _FORMAT_KEYWORDS:
        for _ in range(16):  # a job name holding the keyword itself would make fio loop forever
            at = text.lower().find(keyword)
            if at < 0:
                break
            text = text[:at] + values[keyword] + text[at + len(keyword):]
    return text


def _opendir_files(folder: str, directory: str | None, cwd: str) -> list[str]:
    """fio's opendir: regular files (by lstat) under `folder`, recursing into everything else it can list (a
    symlink to a folder too), each with fio's directory prefix."""
    found: list[str] = []
    seen: set[str] = set()

    def walk(path: str) -> None:
        real = os.path.realpath(path)
        if real in seen or len(found) > _MAX_CLONES:
            return
        seen.add(real)
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return
        for name in names:
            entry = os.path.join(path, name)
            try:
                regular = stat.S_ISREG(os.lstat(entry).st_mode)
            except OSError:
                continue
            if regular:
                found.append(_in_directory({"directory": directory}, entry, 0))
            else:
                walk(entry)

    walk(os.path.join(cwd, folder))
    return found
