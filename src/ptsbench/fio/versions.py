"""What depends on fio's version: the oldest fio ptsbench supports (docs/fio-versions.md lists those tested), and
the option rules a newer fio enforces only when its jobs start (`fio --parse-only` takes them), checked before
anything runs."""

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

MIN_FIO_VERSION = (3, 19)  # RHEL / Rocky 8's fio, the oldest one ptsbench was run with
# From 3.35 fio checks steady state every ss_interval (default 1 s, at least 1 s) and wants the ss_dur window to be
# a whole multiple of it and longer than it; older fio checks once a second and takes any window.
SS_INTERVAL_SINCE = (3, 35)
SS_INTERVAL_DEFAULT_US = 1_000_000
_VERSION_RE = re.compile(r"^fio-(\d+)\.(\d+)")
# fio's data placement options (NVMe FDP on io_uring_cmd) came in 3.34 as fdp / fdp_pli, later spelled
# dataplacement / plids (the old names stay as aliases)
DATA_PLACEMENT_SINCE = (3, 34)
DATA_PLACEMENT_OPTIONS = ("fdp", "fdp_pli", "fdp_pli_select", "dataplacement", "plids", "plid_select", "dp_scheme")
# fio's sprandom preconditioning (--precondition sprandom) came in 3.41; whether a fio has it is asked of that fio
# (fio_has_option), as a build may differ from its version
SPRANDOM_OPTIONS = ("sprandom", "spr_op", "spr_num_regions", "spr_cs")
SPRANDOM_MISSING = "{version} has no sprandom option (fio 3.41 added it)"
SPRANDOM_HINT = "install fio 3.41 or newer (or point PTSBENCH_FIO at one), or leave --precondition out (PTS's WIPC)"
_BAD_OPTION_RE = re.compile(r"Bad option <([A-Za-z_]+)")


class ParsedJob(Protocol):
    """A job as fio's parser read it (fio/opens.py's JobOpens): its name and its numeric options' values."""

    @property
    def name(self) -> str: ...

    @property
    def numbers(self) -> Mapping[str, tuple[int, ...]]: ...


def version_tuple(version: str) -> tuple[int, int] | None:
    """(major, minor) of fio's version string ('fio-3.39', 'fio-3.36-12-gabc'); None when it is no fio version."""
    match = _VERSION_RE.match(version.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def ss_window_problem(duration_us: int, interval_us: int, version: str) -> str | None:
    """Why `version` of fio would refuse a steady-state window (ss_dur) of `duration_us` checked every `interval_us`
    (ss_interval) when its job starts, in plain words; None when it takes it (or steady state is off)."""
    parsed = version_tuple(version)
    if not duration_us or parsed is None or parsed < SS_INTERVAL_SINCE:
        return None
    if interval_us < 1_000_000:
        return f"{version} checks steady state at most once a second (ss_interval is {interval_us / 1e6:g} s)"
    if duration_us <= interval_us or duration_us % interval_us:
        return (f"{version} judges steady state every {interval_us / 1e6:g} s (ss_interval) and needs a window "
                f"longer than that and a whole multiple of it, not {duration_us / 1e6:g} s")
    return None


def job_rule_problems(jobs: Sequence[ParsedJob], version: str) -> list[str]:
    """Why `version` of fio would refuse these jobs (one job file, as fio's parser read them) when they start though
    its parse-only check took them: one line per problem, naming the job."""
    problems = []
    intervals = {job.name: job.numbers.get("steadystate_check_interval", (SS_INTERVAL_DEFAULT_US,))[0]
                 for job in jobs}
    if len(set(intervals.values())) > 1:
        problems.append(f"{version} needs one ss_interval for all jobs of a file, these give "
                        + ", ".join(f"{us / 1e6:g} s ({name})" for name, us in intervals.items()))
    for job in jobs:
        duration_us = job.numbers.get("steadystate_duration", (0,))[0]
        problem = ss_window_problem(duration_us, intervals[job.name], version)
        if problem:
            problems.append(f"job {job.name}: {problem}")
    return problems


def option_hint(fio_said: str, version: str) -> str | None:
    """Why an older fio rejected an option a newer one has (fio says only 'Bad option <...>'); None otherwise."""
    said = set(_BAD_OPTION_RE.findall(fio_said))
    if said & set(SPRANDOM_OPTIONS):
        return f"{SPRANDOM_MISSING.format(version=version)}: {SPRANDOM_HINT}"
    rejected = said & set(DATA_PLACEMENT_OPTIONS)
    parsed = version_tuple(version)
    if not rejected or parsed is None or parsed >= DATA_PLACEMENT_SINCE:
        return None
    return (f"{', '.join(sorted(rejected))}: fio's data placement options need fio 3.34 or newer, this is {version}; "
            "install a newer fio (docs/waf-fdp.md)")


def data_placement_problem(version: str) -> str | None:
    """Why `version` of fio cannot place writes by FDP placement handle (io_uring_cmd's fdp / fdp_pli); None when it
    can."""
    parsed = version_tuple(version)
    if parsed is not None and parsed >= DATA_PLACEMENT_SINCE:
        return None
    return (f"fio's data placement options (fdp, fdp_pli) need fio {'.'.join(map(str, DATA_PLACEMENT_SINCE))} or "
            f"newer, this is {version}")
