"""The options run, quick and sweep share, built and checked once into a CaseRequest the command gets in their place;
and the checks of values that go into job files (one line, read by fio as typed, --set KEY=VALUE)."""

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli import safety_flag, text_path
from ptsbench.cli.drops import drop_options, drop_settings
from ptsbench.cli.repeat import repeat_options, repeat_rule
from ptsbench.fio.opens import MAX_LOG_MSEC
from ptsbench.report.core.terminal import FORMATS

if TYPE_CHECKING:
    from ptsbench.confidence import RepeatRule

LOG_INTERVAL_HELP = "Interval of fio's bw/iops/lat logs in milliseconds."
HOSTS_HELP = ("Run on these hosts at once: ssh://[USER@]HOST[:PORT],... (ptsbench starts fio's server there through "
              "SSH) or a file with one per line; tcp://HOST[:PORT] reaches a `ptsbench server --tcp` without "
              "authentication. Target paths are paths on the hosts.")


def _request_latency_monitor(_context: click.Context, _param: click.Parameter, value: str) -> None:
    from ptsbench.device.latency_monitor import parse_setting, request_setting

    try:
        request_setting(parse_setting(value))
    except ValueError as problem:
        raise click.BadParameter(str(problem), param_hint="--latency-monitor") from None


LATENCY_MONITOR_OPTION = click.option(
    "--latency-monitor", metavar="A,B,C,D|keep", default="keep", show_default=True, expose_value=False,
    callback=_request_latency_monitor,
    help="Configure the OCP latency monitor (feature C5h) of each NVMe drive read, before its first reading: enabled, "
         "thresholds A-D in ms (multiples of 5, rising, e.g. 5,10,20,50), its bucket timer at the longest; a drive "
         "without it is said once. keep: read it as the drive has it (docs/qualify.md).")


REPORT_OPTION = click.option(
    "--report", "make_report", is_flag=True,
    help="Also write the report (HTML, PDF, xlsx) at the end; without it, `ptsbench report RUN_DIR` "
         "writes it whenever wanted.")
IMAGES_HELP = ("also write every figure as an image file, figures/KEY.FORMAT, for slides and papers; repeat for both "
               "formats (default: none: index.html, report.pdf and the workbook show every figure).")


def images_option(when: str) -> Callable[[Any], Any]:
    """--images FORMAT (repeatable), the one name for it wherever a report is written; `when` opens its help."""
    from ptsbench.report.core.layout import IMAGE_FORMATS

    return click.option("--images", type=click.Choice(IMAGE_FORMATS), multiple=True, help=f"{when}{IMAGES_HELP}")


def check_images(make_report: bool, images: Sequence[str]) -> None:
    """--images only with --report: the images are the report's."""
    if images and not make_report:
        raise click.UsageError("--images is part of the report: add --report (or later: ptsbench report RUN_DIR "
                               "--images FORMAT)")


@dataclass(frozen=True)
class CaseRequest:
    """What a case command (run, quick, sweep; replay too) is asked besides its jobs and targets: built and checked
    once from the options they share, then passed down whole."""

    output_format: str = "table"  # the results on stdout: table, json or csv
    out: Path | None = None  # the run directory; None: a new one under ./ptsbench-results
    destructive: bool = False  # writes to a block device (or a user's file) allowed
    allow_mounted: bool = False  # with destructive: also to a device in use
    fio_lat_log: bool = False  # fio writes its own latency logs too
    log_interval_ms: int = 1000
    dry_run: bool = False
    hosts_spec: str | None = None  # --hosts as typed; None: this machine
    make_report: bool = False
    images: tuple[str, ...] = ()  # the report's figures also as these image formats
    keep_files: bool = False  # the data files fio made outside the run directory stay
    drops: Mapping[str, float | bool | None] | None = None  # the drop rule, as the manifest keeps it
    repeat: int = 1  # the repetitions planned of each case (with --repeat auto: its cap)
    auto: "RepeatRule | None" = None  # --repeat auto's rule; None: every planned repetition runs

    @property
    def permission(self) -> tuple[bool, bool]:
        """(destructive, allow_mounted), as the guard takes them."""
        return self.destructive, self.allow_mounted


def case_request(options: Mapping[str, Any]) -> CaseRequest:
    """The request of the shared options as click parsed them: --images only with --report, --repeat and its auto
    options to a count and a rule, --out on one line, the drop options as the manifest keeps them."""
    check_images(options["make_report"], options["images"])
    count, rule = repeat_rule(options["repeat"], options["repeat_ci_pct"], options["repeat_max"],
                              options["repeat_max_s"])
    one_line(str(options["out"]) if options["out"] else None, what="--out")
    taken_as_typed = {field.name for field in fields(CaseRequest)} - {"images", "drops", "repeat", "auto"}
    return CaseRequest(**{name: value for name, value in options.items() if name in taken_as_typed},
                       images=tuple(options["images"]), repeat=count, auto=rule,
                       drops=drop_settings(options["drop_fraction"], options["drop_seconds"], options["min_fraction"]))


SHARED_OPTIONS = ("output_format", "out", "destructive", "allow_mounted", "fio_lat_log", "log_interval_ms", "dry_run",
                  "hosts_spec", "make_report", "images", "keep_files", "repeat", "repeat_ci_pct", "repeat_max",
                  "repeat_max_s", "drop_fraction", "drop_seconds", "min_fraction")


def takes_case_request(function: Callable[..., Any]) -> Callable[..., Any]:
    """The command gets `request`, the CaseRequest of the shared options, in place of them (an option a command
    lacks, such as sweep's --keep-files, keeps the request's default)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **options: Any) -> Any:
        shared = {name: options.pop(name) for name in SHARED_OPTIONS if name in options}
        return function(*args, request=case_request({"keep_files": False, **shared}), **options)

    return wrapper


def case_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The shared options of run and quick, handed to the command as one CaseRequest (`request`)."""
    decorators = [
        click.option("--format", "output_format", type=click.Choice(FORMATS), default="table",
                     help="Results on stdout: table, json or csv."),
        click.option("--out", type=click.Path(path_type=Path), callback=lambda _c, _p, value: text_path(value),
                     help="Run directory (default ./ptsbench-results/...)."),
        safety_flag("--destructive", help_text="Allow writes to a block device (refused by default)."),
        safety_flag("--allow-mounted", help_text="With --destructive: allow writes to a device in use (mounted, "
                    "swap, stacked on, a member of a mounted filesystem, held open exclusively; see docs/safety.md)."),
        click.option("--fio-lat-log", is_flag=True,
                     help="Also have fio write its own latency logs (costs fio a clock read per IO; without it, "
                          "latency over time is derived per second from fio's status)."),
        click.option("--log-interval", "log_interval_ms", type=click.IntRange(min=1, max=MAX_LOG_MSEC),
                     default=1000, show_default=True, help=LOG_INTERVAL_HELP),
        click.option("--dry-run", is_flag=True, help="Print each case's job file and fio command; run nothing."),
        click.option("--hosts", "hosts_spec", metavar="HOSTS", help=HOSTS_HELP),
        *repeat_options,
        REPORT_OPTION,
        images_option("With --report: "),
        LATENCY_MONITOR_OPTION,
        click.option("--keep-files", is_flag=True,
                     help="Keep the data files fio made outside the run directory for this run (without it they "
                          "are removed at the end, and the run says which)."),
        drop_options,
    ]
    function = takes_case_request(function)
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def one_line(*values: str | None, what: str) -> None:
    """Refuse a value holding a line break or NUL: in a job file it would start a line of its own (an option the
    guard never saw) and in a path it names something else than the user sees."""
    for value in values:
        if value is not None and any(char in value for char in "\n\r\0"):
            raise click.BadParameter(f"{value!r} holds a line break or NUL character; give it on one line",
                                     param_hint=what)
        if value is not None:  # job files, command lines and the store are UTF-8 text: bytes that are not cannot
            text_path(Path(value), what)  # be written into them


def job_value(value: str | None, what: str) -> None:
    """Refuse a value fio would read otherwise than typed in a job file line: a tab or other control character,
    or ';' and '#', where fio cuts the line (--ioengine 'null;x' would run null)."""
    if value is None:
        return
    odd = next((char for char in value if char in ";#" or ord(char) < 32 or ord(char) == 127), None)
    if odd is not None:
        raise click.BadParameter(f"{value!r} holds {odd!r}, which fio reads as job file syntax (';' and '#' start a "
                                 "comment) or not at all; give the value without it", param_hint=what)


def key_value(item: str) -> tuple[str, str]:
    from ptsbench.fio.opens import misread_value

    one_line(item, what="--set")
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--set")
    # a fio option name: not a [section] header, an include (fio reads any line starting "include" as one) or comment
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()) or key.strip().startswith("include"):
        raise click.BadParameter(f"{key.strip()!r} is not a fio option name", param_hint="--set")
    job_value(value.strip(), "--set")
    misread = misread_value(key.strip(), value.strip())
    if misread:
        raise click.BadParameter(f"{item!r}: {misread}", param_hint="--set")
    return key.strip(), value.strip()
