"""Option rules that depend on fio's version, checked against the fio that runs them before anything runs: the
steady-state window of fio >= 3.35 (ss_dur a whole multiple of ss_interval, longer than it), for `sweep --ss-dur` and
for job files. The CLI tests run on this machine's fio and, in CI, on Debian 13's fio 3.39 (scripts/test-debian13.sh):
each asserts what the fio it runs on does."""

from pathlib import Path

import pytest

from ptsbench.fio.opens import JobOpens
from ptsbench.fio.runner import fio_version
from ptsbench.fio.versions import (
    DATA_PLACEMENT_SINCE,
    SS_INTERVAL_SINCE,
    job_rule_problems,
    option_hint,
    ss_window_problem,
    version_tuple,
)

SECOND_US = 1_000_000
STRICT = (version_tuple(fio_version()) or (0, 0)) >= SS_INTERVAL_SINCE  # this fio refuses a 1 s window


def test_version_strings() -> None:
    assert version_tuple("fio-3.39") == (3, 39) and version_tuple("fio-3.36-12-gabcdef") == (3, 36)
    assert version_tuple("fio-3.9") == (3, 9) < (3, 19) and version_tuple("3.39") is None


@pytest.mark.parametrize(("duration_us", "interval_us", "version", "refused"), [
    (SECOND_US, SECOND_US, "fio-3.33", False),  # before 3.35 any window goes
    (1_500_000, SECOND_US, "fio-3.34", False),
    (SECOND_US, SECOND_US, "fio-3.35", True),  # not longer than the interval
    (1_500_000, SECOND_US, "fio-3.39", True),  # no whole multiple
    (2 * SECOND_US, SECOND_US, "fio-3.39", False),
    (2 * SECOND_US, 2 * SECOND_US, "fio-3.42", True),
    (3 * SECOND_US, 2 * SECOND_US, "fio-3.42", True),
    (4 * SECOND_US, 2 * SECOND_US, "fio-3.42", False),
    (3 * SECOND_US, 500_000, "fio-3.39", True),  # fio checks at most once a second
    (0, SECOND_US, "fio-3.39", False),  # no window: steady state is off
])
def test_ss_window_rule(duration_us: int, interval_us: int, version: str, refused: bool) -> None:
    problem = ss_window_problem(duration_us, interval_us, version)
    assert (problem is not None) == refused
    assert problem is None or problem.startswith(version)


def test_jobs_of_one_file_need_one_ss_interval() -> None:
    """fio >= 3.35 compares ss_interval over every job it runs (3.33 here does not know the option, so the jobs are
    given as fio 3.39's parser reads them)."""
    jobs = [JobOpens("a", {}, (), False, numbers={"steadystate_check_interval": (SECOND_US,)}),
            JobOpens("b", {}, (), False, numbers={"steadystate_check_interval": (2 * SECOND_US,),
                                                   "steadystate_duration": (4 * SECOND_US,)})]
    assert job_rule_problems(jobs, "fio-3.39") == [
        "fio-3.39 needs one ss_interval for all jobs of a file, these give 1 s (a), 2 s (b)"]
    assert job_rule_problems(jobs[1:], "fio-3.39") == []


def test_a_job_file_with_a_one_second_window_is_judged_by_the_running_fio(cli, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("ss.fio", "[steady]\nioengine=null\nsize=16m\nrw=randread\nss=iops_slope:50%\nss_dur=1\n"
                              "runtime=1\ntime_based\n")
    done = cli("run", str(job), "--dry-run")
    if STRICT:
        assert done.returncode != 0 and f"job steady: {fio_version()} judges steady state every 1 s" in done.stdout
        assert "not 1 s" in done.stdout and "ss_duration" not in done.stdout + done.stderr  # ptsbench's words
    else:
        assert done.returncode == 0, done.stdout + done.stderr
    job.write_text(job.read_text().replace("ss_dur=1\n", "ss_dur=2\n"))
    assert cli("run", str(job), "--dry-run").returncode == 0


def test_sweep_ss_dur_of_one_second_is_refused_where_fio_refuses_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    def sweep(window: str) -> "object":
        return cli("sweep", str(tmp_path / "null.dat"), "--ioengine", "null", "--size", "16M", "--runtime", "0.3",
                   "--rw", "randread", "--iodepth", "1", "--ss", "iops:50%", "--ss-dur", window,
                   "--out", str(tmp_path / f"sweep-{window}"), "--format", "json")

    refused = sweep("1")
    if STRICT:
        assert refused.returncode == 2 and refused.stderr == (
            f"ptsbench: error: --ss-dur 1: {fio_version()} judges steady state every 1 s (ss_interval) and needs a "
            "window longer than that and a whole multiple of it, not 1 s: give --ss-dur a whole multiple of 1 s, at "
            "least 2 s (e.g. --ss-dur 30)\n")
        assert not (tmp_path / "sweep-1").exists()
    else:
        assert refused.returncode == 0, refused.stderr
    accepted = sweep("2")
    assert accepted.returncode == 0 and '"iops"' in accepted.stdout, accepted.stderr



def test_data_placement_options_on_an_older_fio_say_which_fio_has_them() -> None:
    said = "Bad option <fdp=1>\nBad option <plids=0,1>\nfio: job global dropped\n"
    assert option_hint(said, "fio-3.33") == ("fdp, plids: fio's data placement options need fio 3.34 or newer, this "
                                             "is fio-3.33; install a newer fio (docs/waf-fdp.md)")
    assert option_hint(said, "fio-3.39") is None  # a newer fio rejecting them has another reason
    assert option_hint("Bad option <bogus=1>\n", "fio-3.33") is None


def test_a_data_placement_job_is_judged_by_the_running_fio(cli, write_job) -> None:  # type: ignore[no-untyped-def]
    job = write_job("fdp.fio", "[w]\nioengine=io_uring_cmd\ncmd_type=nvme\nfilename=/dev/ng0n1\nrw=randwrite\n"
                               "bs=4k\nsize=1m\nfdp=1\nfdp_pli=0,1\n")
    done = cli("run", str(job), "--dry-run")
    if (version_tuple(fio_version()) or (0, 0)) < DATA_PLACEMENT_SINCE:
        assert done.returncode != 0
        assert "fdp, fdp_pli: fio's data placement options need fio 3.34 or newer" in done.stdout + done.stderr
    else:  # taken by fio's parser; the dry run judges /dev/ng0n1 like its namespace (absent here)
        assert "Bad option" not in done.stdout + done.stderr
