"""Job files: parsing, overrides that leave the rest as written, durations, folders."""

from pathlib import Path

import pytest

from ptsbench.errors import JobFileError
from ptsbench.fio import jobs

TEXT = """; a comment
[global]
ioengine=null
size=${SIZE}
runtime=2
time_based

[first]
rw=randread
numjobs=$ncpus

[second]
stonewall
rw=write
runtime=3
ramp_time=1
"""


def test_parse_merges_global_into_each_job() -> None:
    first, second = jobs.parse_job_text(TEXT, "t.fio")
    assert (first.name, first.get("rw"), first.get("size"), first.get("numjobs")) == ("first", "randread", "${SIZE}",
                                                                                        "$ncpus")
    assert second.has("stonewall") and second.get("runtime") == "3" and second.has("time_based")


def test_overrides_are_appended_per_job_section_and_leave_the_text_as_written() -> None:
    text = jobs.add_overrides(TEXT, [{"write_bw_log": "/x/first"}], {"runtime": "9", "time_based": None})
    assert text.startswith(TEXT.split("[first]")[0])  # everything before the first job is untouched
    assert "size=${SIZE}" in text and "numjobs=$ncpus" in text
    first, second = jobs.parse_job_text(text, "t.fio")
    assert first.get("runtime") == "9" and second.get("runtime") == "9"
    assert first.get("write_bw_log") == "/x/first" and second.get("write_bw_log") is None
    assert text.count(jobs.OVERRIDE_MARK) == 2


def test_target_path_with_colon_is_escaped_for_fio() -> None:
    assert jobs.target_options("/mnt/a:b/file") == {"filename": "/mnt/a\\:b/file"}


def test_expected_duration_honours_stonewall_and_ramp_time() -> None:
    sections = jobs.parse_job_text(TEXT, "t.fio")
    assert jobs.expected_duration_s(sections) == 2 + 3 + 1
    parallel = jobs.parse_job_text("[a]\nruntime=5\n[b]\nruntime=1m\n", "p.fio")
    assert jobs.expected_duration_s(parallel) == 60
    assert jobs.expected_duration_s(jobs.parse_job_text("[a]\nsize=1g\n", "s.fio")) is None
    # as fio read the times (in us), where known: runtime=1.5m is 1 s to fio, runtime=0.5 no limit at all
    read = jobs.parse_job_text("[a]\nruntime=1.5m\nramp_time=0.5\n[b]\nstonewall\nruntime=2\n", "r.fio")
    assert jobs.expected_duration_s(read) == 90.5 + 2
    assert jobs.expected_duration_s(read, {"a": {"runtime": (1_000_000,), "ramp_time": (0,)}}) == 1 + 2
    assert jobs.expected_duration_s(read, {"b": {"runtime": (0,)}}) is None


@pytest.mark.parametrize(("written", "read_us", "said"), [
    ("1.5m", 1_000_000, "as 1 s: it drops a time's decimal fraction and any unit after it (write ramp_time=90s)"),
    ("0.3", 0, "as 0 s: it drops a time's decimal fraction and any unit after it (write ramp_time=300ms)"),
    ("2.0005", 2_000_000, "as 2 s: it drops a time's decimal fraction and any unit after it "
                          "(write ramp_time=2000500us)"),
    ("2.0", 2_000_000, None), ("1500ms", 1_500_000, None), ("1-5", 1_000_000, None)])
def test_a_time_fio_reads_as_other_than_written_is_named_with_what_to_write(written: str, read_us: int,
                                                                             said: str | None) -> None:
    """(fio's own reading of such values is checked in tests/cli/test_run_cli.py, against its runtime.)"""
    found = jobs.shortened_times({"ramp_time": written}, {"ramp_time": (read_us,)})
    assert found == ([f"fio reads ramp_time={written} {said}"] if said else [])


def test_render_job_file_round_trips() -> None:
    text = jobs.render_job_file({"ioengine": "null"}, [("a", {"rw": "read", "stonewall": None})])
    (section,) = jobs.parse_job_text(text, "r.fio")
    assert section.options == {"ioengine": "null", "rw": "read", "stonewall": None}


def test_folder_runs_job_files_in_name_order(tmp_path: Path) -> None:
    for name in ("b.fio", "a.ini", "c.txt", "10.fio"):
        (tmp_path / name).write_text("[j]\n")
    assert [p.name for p in jobs.find_job_files([str(tmp_path)])] == ["10.fio", "a.ini", "b.fio"]


def test_bad_job_paths_and_text_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(JobFileError, match="no such job file"):
        jobs.find_job_files([str(tmp_path / "missing.fio")])
    with pytest.raises(JobFileError, match="holds no"):
        jobs.find_job_files([str(tmp_path)])
    with pytest.raises(JobFileError, match="outside any"):
        jobs.parse_job_text("rw=read\n[j]\n", "x.fio")
    with pytest.raises(JobFileError, match="no job section"):
        jobs.parse_job_text("[global]\nrw=read\n", "x.fio")
    with pytest.raises(JobFileError, match=r"x.fio:2: '\[seq' is not a \[section\] header"):
        jobs.parse_job_text("[j]\n[seq\nrw=read\n", "x.fio")
    assert [section.name for section in jobs.parse_job_text("[j] # a comment\nrw=read\n", "x.fio")] == ["j"]
