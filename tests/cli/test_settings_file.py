"""A --settings file gives option defaults, never a safety option: --destructive and --allow-mounted count only when
typed, so a shared or planted TOML file cannot let ptsbench write a device (checked on a real loop device)."""

import hashlib
from pathlib import Path

import click
import pytest

from conftest import run_cli
from ptsbench.cli import COMMANDS, CommandLineOnly, cli
from ptsbench.cli.settings import SETTINGS

SAFETY_KEYS = ("destructive", "allow-mounted", "allow_mounted")
LOG = "1000, 2048, 1, 4096, 0\n2000, 4096, 1, 4096, 0\n"


def _command(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return command


def _with_settings() -> list[str]:
    return [name for name in COMMANDS if any(param.name == SETTINGS for param in _command(name).params)]


def _safety_keys(name: str) -> set[str]:
    """The keys a settings file could spell a safety option with: every CommandLineOnly option of the command, and
    the guard's two flags even where the command has none."""
    flags = {flag[2:] for param in _command(name).params if isinstance(param, CommandLineOnly)
             for flag in param.opts}
    return flags | set(SAFETY_KEYS)


def test_every_flag_that_widens_writes_is_command_line_only() -> None:
    for name in COMMANDS:
        for param in _command(name).params:
            if param.name in ("destructive", "allow_mounted"):
                assert isinstance(param, CommandLineOnly), (name, param.name)
    assert {"sweep", "plot"} <= set(_with_settings())


def _image_digest(device: str) -> str:
    with open(device, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _arguments(name: str, loop_device: str, tmp_path: Path) -> list[str]:
    """A command line that would write the loop device (sweep) or draw a log (plot) if the file were obeyed."""
    if name == "sweep":
        return ["sweep", loop_device, "--rw", "randwrite", "--iodepth", "1", "--runtime", "0.3", "--out",
                str(tmp_path / "run")]
    if name == "plot":
        log = tmp_path / "job_bw.1.log"
        log.write_text(LOG)
        return ["plot", str(log), "--out", str(tmp_path / "plots")]
    raise AssertionError(f"give {name} a command line here: it takes --settings")


@pytest.mark.parametrize("name", _with_settings())
@pytest.mark.parametrize("table", [False, True], ids=["top-level", "command-table"])
def test_a_settings_file_cannot_set_a_safety_option(name: str, table: bool, loop_device: str,
                                                    tmp_path: Path) -> None:
    before = _image_digest(loop_device)
    for key in sorted(_safety_keys(name)):
        settings = tmp_path / "team.toml"
        settings.write_text(f"[{name}]\n{key} = true\n" if table else f"{key} = true\n")
        done = run_cli(*_arguments(name, loop_device, tmp_path), "--settings", str(settings), timeout=120)
        errors = [line for line in done.stderr.splitlines() if line.startswith("ptsbench: error:")]
        assert done.returncode != 0 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
        assert repr(key) in errors[0]
        if name == "sweep":  # the command has the option: the message says where it belongs
            assert f"pass --{key.replace('_', '-')} on the command line" in errors[0]
        assert not (tmp_path / "run").exists() and not (tmp_path / "plots").exists()
    assert _image_digest(loop_device) == before


def test_the_same_flag_typed_on_the_command_line_is_obeyed(loop_device: str, tmp_path: Path) -> None:
    settings = tmp_path / "team.toml"
    settings.write_text("[sweep]\nbs = \"4k\"\n")
    before = _image_digest(loop_device)
    done = run_cli(*_arguments("sweep", loop_device, tmp_path), "--settings", str(settings), "--destructive",
                   timeout=300)
    assert done.returncode == 0, done.stderr
    assert _image_digest(loop_device) != before  # the check above is able to see a write
