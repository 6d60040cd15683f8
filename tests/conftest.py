"""Shared fixtures: run the real CLI as a user would, write job files, find fio."""

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

if shutil.which("fio") is None:
    pytest.exit("fio is not installed: run `bash scripts/test.sh`, which installs it", returncode=3)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -m ptsbench ARGS` in a subprocess, as a user runs it."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "ptsbench", *args], capture_output=True, text=True, cwd=cwd,
                          env=full_env, timeout=timeout)


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


@pytest.fixture
def write_job(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a job file into the test's folder and return its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return write


def fio_json(case_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((case_dir / "fio.json").read_text())
