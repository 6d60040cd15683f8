"""What a job opens, as fio's parser reads it, checked against the files a real fio run adds (null engine, no IO)."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from ptsbench.errors import JobFileError
from ptsbench.fio import jobs
from ptsbench.fio.opens import fio_list, parse_job_file, parse_job_text

_ADDED = re.compile(r'file 0x[0-9a-f]+ "(.*)" added at \d+$')


def fio_added_files(job: Path, cwd: Path) -> set[str]:
    """Every file a real fio run of `job` adds (--debug=file), as absolute paths; the null engine does no IO."""
    done = subprocess.run(["fio", "--debug=file", str(job)], capture_output=True, text=True,
                          cwd=cwd, timeout=60, check=False)
    names = {match.group(1) for line in done.stdout.splitlines() if (match := _ADDED.search(line))}
    return {os.path.normpath(os.path.join(cwd, name)) for name in names}


def our_files(job: Path, cwd: Path) -> set[str]:
    return {os.path.normpath(path) for opened in parse_job_file(job, str(cwd)) for path in opened.paths}


CASES = {
    # numjobs clones take their folder from a ':' list in turn; nrfiles names per clone
    "clones": "[j1]\nnumjobs=3\nnrfiles=2\ndirectory={d}/a:{d}/b\n",
    # filename_format keywords in any letter case, each clone its own name
    "format": "[j2]\nfilename_format=F.$JobName.$jobnum.$filenum.$jobname.$clientuid\nnumjobs=2\n",
    # a filename list: empty entries skipped, '\\:' is a colon in a name; directory in front of each
    "list": "[j3]\nfilename=x:y\\:z::w\ndirectory={d}/a\nnumjobs=2\n",
    # a section named after a device: fio opens the device
    "jobname": "[/dev/null]\nrw=write\n",
    # every regular file under opendir (recursively)
    "opendir": "[j5]\nopendir={d}/tree\n",
    # [global] files are inherited by every later job, which adds its own
    "global": "[global]\nfilename={d}/g\n[j6]\nfilename={d}/h\n[j7]\nnrfiles=3\n",
    # several filename lines: fio opens all of them
    "twice": "[j8]\nfilename={d}/one\nfilename={d}/two\n",
    # fio cuts a line at ';' or '#': the file is {d}/cut
    "comment": "[j9]\nfilename={d}/cut#/dev/null\n",
    # ${VAR} and $ncpus expanded by fio
    "env": "[j10]\nfilename=${{GUARD_TEST_DIR}}/env\nnumjobs=$ncpus\nfilename_format=z\n",
    # a [global...] section is global too
    "globalish": "[global-ish]\nfilename={d}/gi\n[j11]\n",
}


# [global] files are inherited by every later job: those cases run in a job file of their own
GROUPS = [[name for name in sorted(CASES) if not name.startswith("global")], ["global", "globalish"]]


@pytest.mark.parametrize("names", GROUPS, ids=["jobs", "globals"])
def test_files_match_a_real_fio_run(names: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("a", "b", "tree/sub"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "tree" / "one").write_text("x")
    (tmp_path / "tree" / "sub" / "two").write_text("x")
    monkeypatch.setenv("GUARD_TEST_DIR", str(tmp_path))
    job = tmp_path / "job.fio"
    job.write_text("[global]\nioengine=null\nsize=4k\n" + "".join(CASES[name].format(d=tmp_path) for name in names))
    expected = fio_added_files(job, tmp_path)
    assert len(expected) >= len(names), "fio added fewer files than cases: a case tests nothing"
    assert our_files(job, tmp_path) == expected


def test_writes_as_fio_reads_rw(tmp_path: Path) -> None:
    job = tmp_path / "rw.fio"
    job.write_text("[global]\nioengine=null\nsize=4k\n[a]\nreadwrite=randwrite\n[b]\nrw=read\n[c]\nrw=write:4k\n"
                   "[d]\nrw=randread ; rw=write\n[e]\nrw=trim\n[f]\nrw=read\nioengine=falloc\n")
    assert {job.name: job.writes for job in parse_job_file(job)} == {
        "a": True, "b": False, "c": True, "d": False, "e": True, "f": True}


def test_rejected_job_file_has_fios_words(tmp_path: Path) -> None:
    job = tmp_path / "bad.fio"
    job.write_text("[bad]\nioengine=null\nsize=1m\nrw=sideways\n")
    with pytest.raises(JobFileError, match="sideways"):
        parse_job_file(job)
    # a line that pretends to be fio's debug output is an unknown option to fio, never a section or option
    with pytest.raises(JobFileError, match="handle_option"):
        parse_job_text("[j]\nioengine=null\nsize=4k\nhandle_option=filename, ptr=/x\n", "forged.fio")


def test_include_inlined_as_fio_finds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.inc").write_text("include b.inc\n")  # relative to the including file
    (tmp_path / "sub" / "b.inc").write_text("filename=/dev/null ; from b\n")
    main = tmp_path / "main.fio"
    main.write_text("[j]\nioengine=null\nsize=4k\ninclude sub/a.inc\n")
    monkeypatch.chdir(tmp_path.parent)  # fio looks next to the job file when the name is not found from its cwd
    text = jobs.inline_includes(main.read_text(), main)
    assert "filename=/dev/null" in text and "include sub" not in text.replace("# include", "")
    assert [job.paths for job in parse_job_text(text, str(main))] == [("/dev/null",)]
    assert "filename" not in jobs.without_options(text, ("filename",)).replace("# include", "")
    (tmp_path / "sub" / "c.inc").write_text("[new]\n")
    main.write_text("[j]\ninclude sub/c.inc\n")
    with pytest.raises(JobFileError, match="section"):
        jobs.inline_includes(main.read_text(), main)


def test_fio_list_splits_as_fio() -> None:
    assert fio_list("::a:b\\:c::d") == ["a", "b:c", "d"]
    assert fio_list(None) == []


def test_names_on_a_fio_server_match_a_real_one(tmp_path: Path) -> None:
    """A fio server puts the client's address in front of names under `directory` and into `$clientuid`: the files
    a real server makes are the ones paths_on_server lists, on loopback TCP (the client's address) and on a Unix
    socket (unix_client_address: bytes of the server's socket path)."""
    import socket

    from ptsbench.fio.opens import unix_client_address
    from ptsbench.hosts.server import Listen, kill_tree, prepare, server_argv, wait_listening

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unix = Listen(socket=tmp_path / "srv" / "fio.sock")
    prepare(unix)
    for kind, listen, client, address in (
            ("tcp", Listen(bind="127.0.0.1", port=port), f"127.0.0.1,{port}", "127.0.0.1"),
            ("unix", unix, f"sock:{unix.socket}", unix_client_address(str(unix.socket)))):
        made_in = tmp_path / kind
        made_in.mkdir()
        job = tmp_path / "job.fio"
        job.write_text(f"[global]\nioengine=psync\nrw=write\nsize=4k\ndirectory={made_in}\n[named]\nfilename=x\n"
                       "[made]\nfilename_format=f.$clientuid.$jobnum\nnumjobs=2\n[plain]\nunique_filename=0\n")
        server = subprocess.Popen(server_argv(listen), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_listening(listen)
            subprocess.run(["fio", f"--client={client}", str(job)], capture_output=True, timeout=60, check=False)
        finally:
            kill_tree(server.pid)
            server.wait()
        made = {str(path) for path in made_in.iterdir()}
        assert len(made) == 4
        assert {path for opened in parse_job_file(job, str(tmp_path)) for path in opened.paths_on_server(address)} \
            == made


def test_dry_run_prints_fios_words_and_fails(tmp_path: Path) -> None:
    from conftest import run_cli

    bad = tmp_path / "bad.fio"
    bad.write_text("[bad]\nioengine=null\nsize=1m\nrw=sideways\n")
    done = run_cli("run", str(bad), "--dry-run", "--out", str(tmp_path / "out"))
    assert done.returncode != 0 and done.stderr.count("ptsbench: error:") == 1 and "sideways" in done.stderr
    assert "# fio rejects case 1" in done.stdout and "Traceback" not in done.stderr
    good = tmp_path / "good.fio"
    good.write_text("[good]\nioengine=null\nsize=1m\nrw=randwrite\n")
    done = run_cli("run", str(good), "--dry-run", "--out", str(tmp_path / "out"))
    assert done.returncode == 0 and "# guard: the real run would start" in done.stdout


def test_a_fio_without_debug_output_fails_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fio built without debug output would list no files: the job is refused, not judged empty (a stand-in that
    runs the real fio and drops its debug lines, as such a build prints none)."""
    wrapper = tmp_path / "fio"
    wrapper.write_text('#!/bin/sh\nexec fio "$@" | grep -v "^parse\\|^file"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PTSBENCH_FIO", str(wrapper))
    job = tmp_path / "w.fio"
    job.write_text("[w]\nioengine=null\nsize=4k\nrw=write\nfilename=/dev/sda\n")
    with pytest.raises(JobFileError, match="no parse debug output"):
        parse_job_file(job)
