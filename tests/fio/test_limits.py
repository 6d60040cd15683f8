"""Limits taken from fio itself, and inputs that used to run away or fail on their length: fio's job limit is what the
installed fio refuses, a long --hosts list is a list of hosts."""

import subprocess
from pathlib import Path

from conftest import run_cli
from ptsbench.fio.jobs import FIO_MAX_JOBS
from ptsbench.fio.runner import fio_binary


def _fio_jobs(numjobs: int) -> subprocess.CompletedProcess[str]:
    """fio running `numjobs` null-engine threads of one 4 KiB read each."""
    argv = [fio_binary(), "--name=limit", "--ioengine=null", "--size=4k", "--bs=4k", "--thread",
            f"--numjobs={numjobs}", "--output-format=terse"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)


def test_fio_max_jobs_is_the_installed_fios_limit() -> None:
    assert _fio_jobs(FIO_MAX_JOBS).returncode == 0
    refused = _fio_jobs(FIO_MAX_JOBS + 1)
    assert refused.returncode != 0 and "maximum number of jobs" in refused.stderr + refused.stdout


def test_fios_job_limit_is_checked_in_the_dry_run(tmp_path: Path) -> None:
    sweep = ["sweep", str(tmp_path / "s.dat"), "--size", "1M", "--rw", "randread", "--iodepth", "1", "--dry-run"]
    done = run_cli(*sweep, "--numjobs", f"{FIO_MAX_JOBS},{FIO_MAX_JOBS + 1}", cwd=tmp_path)
    assert done.returncode == 2 and f"--numjobs {FIO_MAX_JOBS + 1} is over" in done.stderr
    done = run_cli(*sweep, "--numjobs", str(FIO_MAX_JOBS), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    job = tmp_path / "two.fio"  # two jobs whose clones together pass the limit
    job.write_text(f"[a]\nioengine=null\nsize=1m\nnumjobs={FIO_MAX_JOBS}\n[b]\nioengine=null\nsize=1m\n")
    done = run_cli("run", str(job), "--dry-run", cwd=tmp_path)
    assert done.returncode == 2 and f"{FIO_MAX_JOBS + 1:,} jobs" in done.stderr


def test_a_hosts_list_longer_than_a_file_name_is_a_list(tmp_path: Path) -> None:
    hosts = ",".join(f"ssh://10.0.{index // 250}.{index % 250 + 1}" for index in range(60))
    assert len(hosts) > 255  # NAME_MAX: as a file name it fails with "File name too long"
    job = tmp_path / "null.fio"
    job.write_text("[null]\nioengine=null\nsize=1m\n")
    done = run_cli("run", str(job), "--hosts", hosts, "--dry-run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "10.0.0.1" in done.stdout and "10.0.0.60" in done.stdout
