"""fio's logs and IO logs are judged like targets: the names ptsbench predicts are the names a real fio run makes
(every suffix, every job and clone, per_job_logs, name=, disable_*), and an existing file of the user's at any of
them is refused without --destructive, proven by its sha256 before and after."""

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from ptsbench.device.userfile import MARK
from ptsbench.fio.opens import parse_job_file
from test_hosts import Servers, hosts_arg
from test_hosts import servers as servers  # noqa: PLC0414 - the fixture

NULL = "[global]\nioengine=null\nsize=64k\nbs=4k\n"
# job texts whose logs and IO logs fio names in every way it can
LOG_JOBS = {
    "bw": "[a]\nwrite_bw_log=res\n",
    "bw-no-value": "[a]\nwrite_bw_log\n",
    "bw-empty-value-named": "[a]\nname=other\nwrite_bw_log=\n",
    "iops-clones": "[a]\nwrite_iops_log=res\nnumjobs=3\n",
    "lat-all-three": "[a]\nwrite_lat_log=res\n",
    "lat-no-slat": "[a]\nwrite_lat_log=res\ndisable_slat=1\ndisable_clat=1\n",
    "hist": "[a]\nwrite_hist_log=res\nlog_hist_msec=100\n",
    "shared-log": "[a]\nwrite_bw_log=res\nper_job_logs=0\nnumjobs=2\n",
    "second-job": "[a]\nnumjobs=2\n[b]\nwrite_bw_log=res\nwrite_lat_log=lat\n",
    "global-logs": "[global]\nwrite_iops_log=g\n[a]\n[b]\nnumjobs=2\n",
    "iolog": "[a]\nwrite_iolog=iolog.txt\n",
    # fio saves each writing verify job's state in its working folder, numbered over every thread of the file
    "verify-state": "[r]\nrw=read\nverify=md5\n[a]\nrw=write\nverify=crc32c\nnumjobs=2\n",
    "verify-state-name": "[a]\nname=x/y\nrw=randwrite\nverify=md5\n[b]\nrw=write\nverify=md5\nverify_state_save=0\n",
}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("text", LOG_JOBS.values(), ids=LOG_JOBS.keys())
def test_predicted_names_are_the_files_fio_makes(text: str, tmp_path: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_text(NULL + text)
    work = tmp_path / "cwd"
    work.mkdir()
    predicted = {path for opened in parse_job_file(job, str(work)) for path, _option in opened.outputs()}
    done = subprocess.run(["fio", str(job)], cwd=work, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    made = {str(path) for path in work.iterdir()}
    assert made and predicted == made


# a bare write_bw_log is no log prefix of the job's own to ptsbench: its own bw log (in the run directory) replaces it
REFUSED = {name: text for name, text in LOG_JOBS.items() if name != "bw-no-value"}


@pytest.mark.parametrize("text", REFUSED.values(), ids=REFUSED.keys())
def test_a_users_file_at_every_log_name_is_refused(text: str, tmp_path: Path) -> None:
    """Each name fio would write, one at a time, holds the user's file: refused, byte-identical; --destructive lets
    fio write it (so the refusal guarded a real write)."""
    job = tmp_path / "job.fio"
    job.write_text(NULL + text)
    names = [path for opened in parse_job_file(job, str(tmp_path)) for path, _option in opened.outputs()]
    assert names
    for index, name in enumerate(names):
        users = Path(name)
        users.write_text(f"the user's own file {index}\n")
        before = _digest(users)
        done = run_cli("run", str(job), "--runtime", "0.2", "--out", str(tmp_path / f"r{index}"), cwd=tmp_path)
        assert done.returncode != 0, done.stdout
        assert f"refusing to change {name}" in done.stderr and "--destructive" in done.stderr, done.stderr
        assert _digest(users) == before
        assert not (tmp_path / f"r{index}").exists()
        users.unlink()
    Path(names[-1]).write_text("the user's own file, given up\n")
    before = _digest(Path(names[-1]))
    done = run_cli("run", str(job), "--runtime", "0.2", "--destructive", "--out", str(tmp_path / "rd"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _digest(Path(names[-1])) != before


def test_logs_fio_made_for_ptsbench_are_marked_and_written_again(tmp_path: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_text(NULL + LOG_JOBS["second-job"] + "write_iolog=io.txt\n")
    first = run_cli("run", str(job), "--runtime", "0.2", "--out", str(tmp_path / "r1"), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    names = [path for opened in parse_job_file(job, str(tmp_path)) for path, _option in opened.outputs()]
    assert all(os.getxattr(name, MARK) for name in names)
    again = run_cli("run", str(job), "--runtime", "0.2", "--out", str(tmp_path / "r2"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_a_log_name_that_links_to_a_users_file_is_refused(tmp_path: Path) -> None:
    thesis = tmp_path / "thesis.txt"
    thesis.write_text("years of work\n")
    before = _digest(thesis)
    (tmp_path / "res_bw.1.log").symlink_to(thesis)
    job = tmp_path / "job.fio"
    job.write_text(NULL + f"[a]\nwrite_bw_log={tmp_path}/res\n")
    done = run_cli("run", str(job), "--runtime", "0.2", "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode != 0 and "refusing to change" in done.stderr, done.stderr
    assert _digest(thesis) == before


def test_a_set_log_option_is_judged_too(tmp_path: Path) -> None:
    """--set write_iolog=FILE on a sweep: the same judgement (the issue's write_iolog=~/iolog.txt)."""
    iolog = tmp_path / "iolog.txt"
    iolog.write_text("the user's notes\n")
    before = _digest(iolog)
    done = run_cli("sweep", str(tmp_path / "s.dat"), "--size", "1M", "--runtime", "0.2", "--rw", "randread",
                   "--bs", "4k", "--iodepth", "1", "--set", f"write_iolog={iolog}", "--out", str(tmp_path / "s"),
                   cwd=tmp_path)
    assert done.returncode != 0 and f"refusing to change {iolog}" in done.stderr, done.stderr
    assert _digest(iolog) == before


def test_a_bare_log_option_goes_to_the_run_directory(tmp_path: Path) -> None:
    users = tmp_path / "a_bw.1.log"
    users.write_text("the user's own file\n")
    before = _digest(users)
    job = tmp_path / "job.fio"
    job.write_text(NULL + LOG_JOBS["bw-no-value"])
    done = run_cli("run", str(job), "--runtime", "0.2", "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _digest(users) == before
    assert list((tmp_path / "r").rglob("a_bw.*.log"))


def test_a_log_name_that_links_to_nowhere_is_refused(tmp_path: Path) -> None:
    """A link at a log's name to a file that does not exist: fio would make that file wherever the link points."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "res_bw.1.log").symlink_to(elsewhere / "made-here")
    job = tmp_path / "job.fio"
    job.write_text(NULL + f"[a]\nwrite_bw_log={tmp_path}/res\n")
    done = run_cli("run", str(job), "--runtime", "0.2", "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode != 0 and "which does not exist" in done.stderr, done.stderr
    assert os.listdir(elsewhere) == []


def test_logs_fio_client_writes_for_hosts_are_judged(tmp_path: Path, servers: Servers) -> None:
    """On --hosts, fio's client writes each host's logs here as NAME.HOST: a user's file there is refused without
    --destructive, byte-identical, and fio writes it with the flag (so the refusal guarded a real write)."""
    hosts = servers(1)
    users = tmp_path / f"res_bw.1.log.{hosts[0].name}"
    users.write_text("the user's own file\n")
    before = _digest(users)
    job = tmp_path / "job.fio"
    job.write_text(NULL + f"[a]\nrw=randread\nwrite_bw_log={tmp_path}/res\n")
    done = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--runtime", "0.5", "--out", str(tmp_path / "r"),
                   cwd=tmp_path)
    assert done.returncode != 0 and f"refusing to change {users}" in done.stderr, done.stderr
    assert _digest(users) == before and not (tmp_path / "r").exists()
    done = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--runtime", "0.5", "--destructive", "--out",
                   str(tmp_path / "rd"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _digest(users) != before
    users.unlink()
    made = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--runtime", "0.5", "--out", str(tmp_path / "r2"),
                   cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert os.getxattr(users, MARK)  # fio's client made it for ptsbench: marked, so the job runs again as it is
    again = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--runtime", "0.5", "--out", str(tmp_path / "r3"),
                    cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_verify_state_on_hosts_needs_destructive(tmp_path: Path, servers: Servers) -> None:
    """A fio server saves a writing verify job's state in its own working folder, which ptsbench cannot see: refused
    without --destructive, nothing written there; verify_state_save=0 runs it."""
    server_folder = tmp_path / "server-cwd"
    server_folder.mkdir()
    hosts = servers(1, cwd=server_folder)
    job = tmp_path / "job.fio"
    job.write_text(NULL + f"[v]\nrw=write\nverify=crc32c\nfilename={tmp_path}/data\n")
    done = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--runtime", "0.5", "--out", str(tmp_path / "r"),
                   cwd=tmp_path)
    assert done.returncode != 0 and "local-v-0-verify.state" in done.stderr, done.stderr
    assert os.listdir(server_folder) == []
    done = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--runtime", "0.5", "--set", "verify_state_save=0",
                   "--out", str(tmp_path / "r2"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert os.listdir(server_folder) == []
    done = run_cli("run", str(job), "--hosts", hosts_arg(hosts), "--runtime", "0.5", "--destructive", "--out",
                   str(tmp_path / "r3"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert os.listdir(server_folder) == ["local-v-0-verify.state"]  # the write the refusal kept from the folder
