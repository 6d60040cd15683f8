"""Command-line entry point: a click group whose commands are imported only when used (fast --help)."""

import errno
import importlib
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ptsbench import __version__
from ptsbench.errors import PtsbenchError

# command name -> "module:attribute"; each module holds one command and stays free of logic.
COMMANDS: dict[str, str] = {
    "run": "ptsbench.cli.run:run",
    "quick": "ptsbench.cli.quick:quick",
    "show": "ptsbench.cli.show:show",
    "info": "ptsbench.cli.info:info",
    "report": "ptsbench.cli.report:report",
    "compare": "ptsbench.cli.report:compare",
    "server": "ptsbench.cli.server:server",
    "pts": "ptsbench.cli.pts:pts",
    "resume": "ptsbench.cli.pts:resume",
    "sweep": "ptsbench.cli.sweep:sweep",
    "plot": "ptsbench.cli.plot:plot",
    "check": "ptsbench.cli.check:check",
    "catalog": "ptsbench.cli.catalog:catalog",
    "metrics": "ptsbench.cli.metrics:metrics",
    "capture": "ptsbench.cli.workload:capture",
    "characterise": "ptsbench.cli.workload:characterise",
    "replay": "ptsbench.cli.workload:replay",
}

SHORT_HELP: dict[str, str] = {
    "run": "Run fio job files (or folders of them) against targets.",
    "quick": "CrystalDiskMark-style preset: SEQ1M and RND4K, read and write.",
    "show": "Print a stored run's results again, from its run directory.",
    "info": "Print target and host facts.",
    "report": "Write a run's report: self-contained HTML, PDF and xlsx (figures as images with --images).",
    "compare": "One report putting several runs side by side.",
    "server": "Start or stop a fio server on a Unix socket only root reaches (plain TCP only with --tcp).",
    "pts": "SNIA PTS tests: IOPS, throughput, latency, write saturation (--profile demo: 2 minutes).",
    "resume": "Continue an interrupted PTS run or sweep from its run directory.",
    "sweep": "A matrix of fio runs over rw, block size, mix, iodepth and numjobs (bench-fio's sweeps).",
    "plot": "Charts from fio logs (over time), or bar charts from fio JSON output (over QD and numjobs).",
    "check": "Judge a stored run against gates (limits, compliance, a baseline); exit 1 when one fails.",
    "catalog": "Index every run directory into a database, query it, and write its trends page.",
    "metrics": "Serve stored runs' metrics for Prometheus (OpenMetrics), or push them to InfluxDB.",
    "capture": "Record a block device's IO (blktrace binary) for a time or while a command runs (root).",
    "characterise": "A trace's statistics: IO sizes, mix, outstanding IOs, locality, idle times, IO streams.",
    "replay": "Replay a captured trace (blktrace or fio iolog) onto a target with fio, and compare its IOs.",
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs or shows its help."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SHORT_HELP.get(name, "")) for name in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ptsbench")
def cli() -> None:
    """ptsbench: SNIA PTS storage tests, a fio case runner and fio data plots.

    \b
    Examples:
      ptsbench pts --profile demo         # a 2-minute SNIA PTS run on a scratch file, with its report
      ptsbench pts /dev/nvme0n1 --destructive --dry-run   # what a full PTS run would do, and how long
      ptsbench quick                      # a 1 GiB scratch file in the run directory
      ptsbench run jobs/ --target /dev/nvme0n1 --destructive
      ptsbench sweep /mnt/test --size 4G --iodepth 1,2,...,32 --dry-run
      ptsbench show ptsbench-results/20261120T101500Z-quick
    """


class Seconds(click.ParamType):
    """A duration: seconds, or with a unit (500ms, 2m, 1h); at least fio's 1 ms, at most a year."""

    name = "seconds"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        from ptsbench.errors import PtsbenchError
        from ptsbench.pts.settings import parse_seconds

        try:
            return parse_seconds(str(value))
        except PtsbenchError as error:
            self.fail(str(error), param, ctx)


class Finite(click.FloatRange):
    """A float range that also refuses nan and inf (click's range checks let nan through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number: float = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number

    def _describe_range(self) -> str:
        """No range in the help when there is none (click would show 'x<=None')."""
        return "" if self.min is None and self.max is None else super()._describe_range()


class CommandLineOnly(click.Option):
    """An option that widens what ptsbench may write or skips one of its checks (--destructive, --allow-mounted):
    taken from the command line only, never from a --settings file, so a shared or planted file cannot turn the
    guard off."""


def safety_flag(*declarations: str, help_text: str) -> Callable[[Any], Any]:
    """A --destructive-like flag: command line only (CommandLineOnly)."""
    return click.option(*declarations, is_flag=True, cls=CommandLineOnly, help=help_text)


def text_path(value: Path | None, what: str | None = None) -> Path | None:
    """A path that is text (fio job files and the store's JSON name it): refuse bytes that are not UTF-8."""
    if value is not None:
        try:
            str(value).encode("utf-8")
        except UnicodeEncodeError:
            raise click.BadParameter(f"{str(value).encode('utf-8', 'surrogateescape')!r} is not valid UTF-8 text; "
                                     "choose a name in UTF-8", param_hint=what) from None
    return value


def fail(message: str, exit_code: int = 2) -> None:
    """Print one error line to stderr and exit; the one place errors become exit codes."""
    click.echo(f"ptsbench: error: {message}", err=True)
    sys.exit(exit_code)


NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


def usage_message(message: str) -> str:
    """click's message as one clause: "No such option '--x'. Did you mean '--y'?" -> "No such option '--x' (did you
    mean '--y'?)", so the hint after it does not follow a full stop or question mark."""
    text = message.strip().rstrip(".")
    first, sep, question = text.partition(". Did you mean ")
    if sep:
        return f"{first} (did you mean {question.rstrip('?')}?)"
    return text


def main() -> None:
    """Console-script entry: run the CLI, turning expected errors into one line and an exit code."""
    # Before numpy is imported: its OpenBLAS starts a thread per CPU that spins after the import (about 0.1 s of
    # CPU taken from the work, e.g. a quarter of `ptsbench plot` of a 10 M-line log); ptsbench does no heavy
    # linear algebra. A value the user set stays.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # numpy asks for transparent huge pages for arrays of 4 MiB or more: on the VM measured their first touch (the
    # kernel zeroing 2 MiB at a time) cost more system time than the page faults saved, and varied more
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        fail("interrupted", 130)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except NO_ARGS_IS_HELP as error:  # bare `ptsbench` (click 8.2+; 8.1 prints the help itself)
        click.echo(error.ctx.get_help() if error.ctx else cli.get_help(click.Context(cli)))
    except click.UsageError as error:  # a wrong option or value: one line, like every other error
        command = error.ctx.command_path if error.ctx else "ptsbench"
        fail(f"{usage_message(error.format_message())}: see `{command} --help`", error.exit_code)
    except click.ClickException as error:
        fail(error.format_message(), error.exit_code)
    except click.exceptions.Exit as error:
        sys.exit(error.exit_code)
    except PtsbenchError as error:
        fail(str(error), error.exit_code)
    except PermissionError as error:
        fail(f"permission denied: {error.filename or error}: run as a user allowed to access it (often root)")
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        hint = ": the disk is full: free space or pass --out on another filesystem; finished results are kept" \
            if error.errno == errno.ENOSPC else ""
        fail(f"{error.strerror or error}{where}{hint}")
