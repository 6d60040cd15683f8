"""`--settings FILE`: option values from a TOML file (a team's chart style, a standard sweep), as defaults that the
command line still overrides. Keys are the command's long option names (`max-iops` or `max_iops`), at the top level
or in a table named after the command ([plot], [sweep]); a list stands for a comma-separated value. Safety options
(--destructive, --allow-mounted: CommandLineOnly) are refused in the file: they count only when typed."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ptsbench.cli import CommandLineOnly
from ptsbench.errors import PtsbenchError

SETTINGS = "settings_file"


def _load(ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    if value is None:
        return None
    import tomllib

    from ptsbench.textfile import read_user_text

    text = read_user_text(value, "settings file", "pass a TOML file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PtsbenchError(f"settings file {value}: {error}", "fix the TOML syntax") from error
    command = ctx.command.name or ""
    params: dict[str, click.Option] = {}
    for option in ctx.command.params:
        if isinstance(option, click.Option) and option.name not in (None, SETTINGS):
            params.update({flag[2:].replace("-", "_"): option for flag in option.opts if flag.startswith("--")})
    table: dict[str, Any] = data[command] if isinstance(data.get(command), dict) else {}
    for key in [*data, *table]:  # the command's table and the top level alike, whichever of them is used
        param = params.get(str(key).replace("-", "_"))
        if isinstance(param, CommandLineOnly):
            raise PtsbenchError(f"settings file {value}: {key!r} is a safety option, taken from the command line "
                                "only", f"remove it from the file and pass {param.opts[0]} on the command line")
    data = table if isinstance(data.get(command), dict) else data
    defaults: dict[str, Any] = {}
    for key, setting in data.items():
        param = params.get(key.replace("-", "_"))
        if param is None or param.name is None or key in ("settings",):
            raise PtsbenchError(f"settings file {value}: unknown option {key!r}",
                                f"use the long option names of `ptsbench {command} --help`")
        setting = _as_typed(value, key, setting, param)
        if isinstance(setting, list):  # a list for a comma-separated option: colors = ["teal", "#aa3377"]
            defaults[param.name] = setting if param.multiple else ",".join(setting)
        else:
            defaults[param.name] = [setting] if param.multiple else setting
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return value


def _as_typed(file: Path, key: str, setting: object, param: click.Option) -> str | bool | list[str]:
    """A setting as the command line would give it: a word or number as its text (click then reads it as the option
    does), true/false for a flag, a list of words or numbers for a comma-separated or repeatable option; anything
    else (a table, a list of lists, a date, a boolean for a value, a number for a path: `out = 5`) is refused."""
    if param.is_flag:
        if not isinstance(setting, bool):
            raise PtsbenchError(f"settings file {file}: {key} = {setting!r} is not true or false",
                                f"write {key} = true or {key} = false")
        return setting
    items = setting if isinstance(setting, list) else [setting]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise PtsbenchError(f"settings file {file}: {key} = {setting!r}: {item!r} is not a word or a number",
                                f"write {key} as a string, a number or a list of them, as on the command line")
        if isinstance(param.type, click.Path) and not isinstance(item, str):
            raise PtsbenchError(f"settings file {file}: {key} = {item!r} is a number, not a path",
                                f'write the path as a string: {key} = "..."')
    return [str(item) for item in items] if isinstance(setting, list) else str(setting)


def settings_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """The --settings FILE option (read before the others, so its values become their defaults)."""
    return click.option("--settings", SETTINGS, type=click.Path(exists=True, dir_okay=False, path_type=Path),
                        is_eager=True, expose_value=False, callback=_load,
                        help="TOML file of option values (e.g. a team's style); command-line options win.")(function)
