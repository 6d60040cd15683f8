"""The options run, quick and sweep share (and replay's values), each checked where it is read: values on one
line, job file values fio reads as typed, --set KEY=VALUE, --images only with --report."""


import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ptsbench.cli import safety_flag, text_path
from ptsbench.cli.drops import drop_options
from ptsbench.cli.repeat import repeat_options
from ptsbench.fio.opens import MAX_LOG_MSEC
from ptsbench.report.core.terminal import FORMATS

if TYPE_CHECKING:
    pass


LOG_INTERVAL_HELP = "Interval of fio's bw/iops/lat logs in milliseconds."


HOSTS_HELP = ("Run on these hosts at once: ssh://[USER@]HOST[:PORT],... (ptsbench starts fio's server there through "
              "SSH) or a file with one per line; tcp://HOST[:PORT] reaches a `ptsbench server --tcp` without "
              "authentication. Target paths are paths on the hosts.")


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


def case_options(function: click.decorators.FC) -> click.decorators.FC:
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
        click.option("--keep-files", is_flag=True,
                     help="Keep the data files fio made outside the run directory for this run (without it they "
                          "are removed at the end, and the run says which)."),
        drop_options,
    ]
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
