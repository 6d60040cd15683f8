"""A fresh machine gets every program the suite starts: each row of scripts/programs.txt is installed and comes from
the package install.sh installs for it, and a program started that is not in the table is caught (programs.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import programs
from exec_audit import exec_record


@pytest.mark.parametrize("row", programs.table(), ids=lambda row: row.name)
def test_each_program_is_installed_from_the_package_install_sh_installs(row: programs.Row) -> None:
    path = row.find()
    assert path, f"{row.program} is missing: scripts/install.sh --test should have installed {row.package}"
    owning = programs.owner(path)
    assert owning and programs.provides(row.package, owning), \
        f"{path} comes from {owning}, not from {row.package} as scripts/programs.txt says"
    assert row.need in ("run", "test")


def test_a_program_a_child_starts_is_recorded_and_an_unlisted_one_fails_the_run(tmp_path: Path) -> None:
    """A Python child (as ptsbench is when the tests run it) records what it starts. apt-config (apt's: on every
    Debian, but neither Essential nor installed by a row) is named; pvcreate (a row), lvs (another program of a
    row's package) and true (coreutils, Essential) are not."""
    log = tmp_path / "started.jsonl"
    script = ("import subprocess\n"
              "for argv in (['apt-config', '--version'], ['pvcreate', '--version'], ['lvs', '--version'], ['true']):\n"
              "    subprocess.run(argv, capture_output=True)\n")
    path = f"{os.environ['PATH']}:/usr/sbin:/sbin"
    subprocess.run([sys.executable, "-c", script], check=True,
                   env={**os.environ, "PTSBENCH_EXEC_LOG": str(log), "PATH": path})
    names = [json.loads(line)["name"] for line in log.read_text().splitlines()]
    assert names == ["apt-config", "pvcreate", "lvs", "true"]
    (said,) = programs.unlisted(log)
    assert said.startswith("apt-config (") and "package apt)" in said
    verdict = programs.verdict(log)
    assert verdict is not None and "scripts/programs.txt" in verdict and "apt-config (" in verdict


def test_the_program_ptsbench_s_launcher_starts_is_recorded() -> None:
    """fio started through the launcher counts as fio (the launcher itself is ptsbench's own)."""
    started = exec_record._programs("subprocess.Popen", ("/x/ptsbench/fio/_bound_exec",
                                                         ["/x/ptsbench/fio/_bound_exec", "1", "15", "/usr/bin/fio"],
                                                         None, None))
    assert [program for program, _, _ in started] == ["/x/ptsbench/fio/_bound_exec", "/usr/bin/fio"]
