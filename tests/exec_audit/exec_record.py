"""An audit hook (sys.addaudithook) that appends each program this process starts to a log, one JSON line each:
{"name": the name it was started by, "path": the file found, or null}. Used by the test suite's check that every
program it starts is one scripts/install.sh installs (tests/programs.py)."""

import json
import os
import shutil
import sys
from collections.abc import Mapping
from typing import Any

LAUNCHER = "_bound_exec"  # ptsbench's launcher of fio: argv is [launcher, parent pid, signal, program, ...]


def _found(program: str, env: Mapping[Any, Any] | None, cwd: Any) -> str | None:
    path_var = None
    if env is not None:
        path_var = env.get("PATH", env.get(b"PATH"))
        path_var = os.fsdecode(path_var) if path_var is not None else None
    if os.sep in program:
        full = os.path.join(os.fsdecode(cwd), program) if cwd is not None else program
        return os.path.realpath(full) if os.path.exists(full) else None
    found = shutil.which(program, path=path_var)
    return os.path.realpath(found) if found else None


def _programs(event: str, args: tuple[Any, ...]) -> list[tuple[str, Mapping[Any, Any] | None, Any]]:
    """(program, env, cwd) of an audit event that starts a program; [] for any other event."""
    if event == "subprocess.Popen":
        executable, argv, cwd, env = args
        argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv)
        program = os.fsdecode(executable if executable is not None else argv[0])
        started = [(program, env, cwd)]
        if os.path.basename(program) == LAUNCHER and len(argv) > 3:
            started.append((os.fsdecode(argv[3]), env, cwd))
        return started
    if event in ("os.exec", "os.posix_spawn"):
        return [(os.fsdecode(args[0]), args[2], None)]
    if event == "os.spawn":
        return [(os.fsdecode(args[1]), args[3], None)]
    if event == "os.system":
        return [("sh", None, None)]
    return []


def record_starts(log_path: str) -> None:
    """From now on, append each program this process starts to `log_path`."""

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if not event.startswith(("subprocess.", "os.")):
            return
        started = _programs(event, args)
        if not started:
            return
        lines = "".join(json.dumps({"name": os.path.basename(program), "path": _found(program, env, cwd)}) + "\n"
                        for program, env, cwd in started)
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(lines)

    sys.addaudithook(hook)
