"""The guard beyond devices: engines that reach their target without a path (a real nbdkit export), and a user's
existing files (real fio deletes, lays out and unlinks them), with ptsbench's own files still free to reuse."""

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli
from ptsbench.device.userfile import MARK
from ptsbench.errors import JobFileError
from ptsbench.fio.opens import parse_job_file

MIB = 1024 * 1024


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _user_file(path: Path, size_bytes: int = MIB) -> str:
    """A file of the user's (random bytes, made without ptsbench) and its checksum."""
    path.write_bytes(os.urandom(size_bytes))
    return _digest(path)


# ---------------------------------------------------------------------------------------------------------------
# engines the guard cannot judge


@pytest.fixture
def nbd_export(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An ext4 image exported by a real nbdkit on a Unix socket: (the NBD URI, the image)."""
    if shutil.which("nbdkit") is None or shutil.which("mkfs.ext4") is None:
        pytest.skip("nbdkit or mkfs.ext4 not installed (scripts/install.sh --test installs them)")
    image = tmp_path / "export.img"
    with open(image, "wb") as handle:
        handle.truncate(16 * MIB)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    socket = tmp_path / "nbd.sock"
    server = subprocess.Popen(["nbdkit", "-f", "-U", str(socket), "file", str(image)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not socket.exists() and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.05)
        assert socket.exists(), "nbdkit did not start"
        yield f"nbd+unix:///?socket={socket}", image
    finally:
        server.terminate()
        server.wait(timeout=30)


def _nbd_job(tmp_path: Path, uri: str, name: str = "nbd.fio") -> Path:
    job = tmp_path / name
    job.write_text(f"[wipe]\nioengine=nbd\nuri={uri}\nrw=write\nbs=64k\nsize=1m\n")
    return job


@pytest.mark.parametrize("way", ["run", "sweep-ioengine", "sweep-precondition"])
def test_an_nbd_export_is_refused_without_both_flags(way: str, tmp_path: Path, nbd_export: tuple[str, Path]) -> None:
    uri, image = nbd_export
    before = _digest(image)
    sweep = ("sweep", str(tmp_path / "cells.dat"), "--size", "1M", "--rw", "write", "--iodepth", "1",
             "--runtime", "1")
    args = {
        "run": ("run", str(_nbd_job(tmp_path, uri))),
        "sweep-ioengine": (*sweep, "--ioengine", "nbd", "--set", f"uri={uri}"),
        "sweep-precondition": (*sweep, "--ioengine", "psync", "--precondition", str(_nbd_job(tmp_path, uri))),
    }[way]
    for flags in ((), ("--destructive",)):
        dry = run_cli(*args, *flags, "--dry-run", cwd=tmp_path)
        assert dry.returncode != 0
        assert "# guard: the real run would be refused" in dry.stdout
        assert "ioengine nbd" in dry.stdout and "cannot be judged" in dry.stdout
        real = run_cli(*args, *flags, "--out", str(tmp_path / f"out{len(flags)}"), cwd=tmp_path)
        assert real.returncode != 0
        errors = [line for line in real.stderr.splitlines() if line.startswith("ptsbench: error:")]
        assert len(errors) == 1 and "ioengine nbd" in errors[0] and "--destructive --allow-mounted" in errors[0]
        assert _digest(image) == before
    allowed = run_cli(*args, "--destructive", "--allow-mounted", "--dry-run", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert "its target cannot be judged (allowed by --destructive --allow-mounted)" in allowed.stdout


def test_the_nbd_export_is_really_written_when_both_flags_allow_it(tmp_path: Path,
                                                                   nbd_export: tuple[str, Path]) -> None:
    """What the refusals above keep from happening: fio's nbd engine writes the export (the ext4 is gone)."""
    uri, image = nbd_export
    before = _digest(image)
    done = run_cli("run", str(_nbd_job(tmp_path, uri)), "--destructive", "--allow-mounted", "--out",
                   str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _digest(image) != before


def test_only_engines_that_open_paths_are_judged(tmp_path: Path) -> None:
    for engine, judged in (("psync", True), ("libaio", True), ("linuxaio", True), ("null", True), ("nbd", False),
                           ("rbd", False), ("http", False), ("net", False), ("exec", False), ("dev-dax", False)):
        job = tmp_path / f"{engine}.fio"
        job.write_text(f"[read]\nioengine={engine}\nrw=read\nsize=1m\nfilename={tmp_path}/f\n")
        try:
            [opens] = parse_job_file(job, str(tmp_path))
        except Exception:  # an engine this fio lacks: fio rejects the job, nothing runs
            continue
        assert (not opens.unknown) is judged, engine
        assert opens.writes or judged, engine  # a job through an engine that cannot be judged counts as writing


# ---------------------------------------------------------------------------------------------------------------
# a user's file is data


READ_JOB = "[read]\nfilename={path}\nioengine=psync\nrw=read\nbs=4k\n{extra}"


@pytest.mark.parametrize(("extra", "given", "why"), [
    ("", ("--size", "2M", "--runtime", "0.2"), "lays it out again at 2097152 bytes"),  # fio makes a new 2 MiB file
    ("unlink=1\nsize=256k\n", ("--runtime", "0.2"), "deletes it (unlink)"),
    ("unlink_each_loop=1\nloops=2\nsize=256k\n", (), "deletes it (unlink)"),
], ids=["size", "unlink", "unlink_each_loop"])
def test_a_read_job_that_would_destroy_a_users_file_needs_destructive(extra: str, given: tuple[str, ...], why: str,
                                                                      tmp_path: Path) -> None:
    path = tmp_path / "thesis.dat"
    before = _user_file(path)
    job = tmp_path / "read.fio"
    job.write_text(READ_JOB.format(path=path, extra=extra))
    args = ("run", str(job), *given)
    dry = run_cli(*args, "--dry-run", cwd=tmp_path)
    assert dry.returncode != 0 and "# guard: the real run would be refused" in dry.stdout and why in dry.stdout
    real = run_cli(*args, "--out", str(tmp_path / "refused"), cwd=tmp_path)
    errors = [line for line in real.stderr.splitlines() if line.startswith("ptsbench: error:")]
    assert real.returncode != 0 and len(errors) == 1, real.stderr
    assert str(path) in errors[0] and why in errors[0] and "--destructive" in errors[0]
    assert _digest(path) == before and not (tmp_path / "refused").exists()
    allowed = run_cli(*args, "--destructive", "--out", str(tmp_path / "allowed"), cwd=tmp_path)
    assert "refusing" not in allowed.stderr  # (a read job whose file fio deleted after its first loop fails)
    assert not path.exists() or _digest(path) != before  # what the refusal kept: real fio destroys the file


def test_writing_to_a_users_file_and_a_pts_run_on_it_need_destructive(tmp_path: Path) -> None:
    path = tmp_path / "thesis.dat"
    before = _user_file(path)
    write = tmp_path / "write.fio"
    write.write_text(f"[write]\nfilename={path}\nioengine=psync\nrw=randwrite\nbs=4k\nsize=512k\n")
    for args in (("run", str(write)), ("quick", str(path), "--runtime", "0.2"),
                 ("sweep", str(path), "--rw", "write", "--iodepth", "1", "--runtime", "1"),
                 ("pts", str(path), "--profile", "demo", "--tests", "iops")):
        dry = run_cli(*args, "--dry-run", cwd=tmp_path)
        assert dry.returncode != 0 and "ptsbench did not make" in dry.stdout, (args, dry.stdout, dry.stderr)
        real = run_cli(*args, "--out", str(tmp_path / "refused"), cwd=tmp_path)
        errors = [line for line in real.stderr.splitlines() if line.startswith("ptsbench: error:")]
        assert real.returncode != 0 and len(errors) == 1 and "ptsbench did not make" in errors[0], real.stderr
        # a folder instead is offered only for a target the user named, not for a file a job file names
        assert ("or a folder" in errors[0]) == (args[0] != "run"), errors[0]
        assert _digest(path) == before and path.stat().st_size == MIB and not (tmp_path / "refused").exists()


def test_reading_within_a_users_file_and_an_empty_file_are_free(tmp_path: Path) -> None:
    path = tmp_path / "data.dat"
    before = _user_file(path)
    job = tmp_path / "read.fio"
    job.write_text(READ_JOB.format(path=path, extra="offset=256k\n"))
    done = run_cli("run", str(job), "--size", "512k", "--runtime", "0.2", "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _digest(path) == before
    empty = tmp_path / "empty.dat"
    empty.touch()
    write = tmp_path / "write.fio"
    write.write_text(f"[write]\nfilename={empty}\nioengine=psync\nrw=write\nbs=4k\nsize=256k\n")
    done = run_cli("run", str(write), "--out", str(tmp_path / "w"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("options", [
    "size=512k", "size=2m", "offset=768k\nsize=512k", "offset=512k\nsize=512k", "filesize=2m", "filesize=512k-4m",
    "size=50%", "offset=50%\nsize=768k", "numjobs=2\noffset_increment=512k\nsize=512k",
    "numjobs=2\noffset_increment=768k\nsize=512k", "nrfiles=1\nsize=1m", "fill_device=1\nsize=512k",
])
def test_the_guard_says_a_file_is_laid_out_again_exactly_when_fio_does_it(options: str, tmp_path: Path) -> None:
    """Each job only reads a 1 MiB file; real fio either leaves it alone or deletes it and makes a new one (a new
    inode or new bytes): the guard must predict which."""
    path = tmp_path / "data.dat"
    before = _user_file(path)
    inode = path.stat().st_ino
    job = tmp_path / "read.fio"
    job.write_text(READ_JOB.format(path=path, extra=options + "\nio_size=64k\n"))
    [opens] = parse_job_file(job, str(tmp_path))
    predicted = opens.change_to_existing(str(path)) is not None
    subprocess.run(["fio", "--output-format=terse", str(job)], cwd=tmp_path, capture_output=True, timeout=120,
                   check=False)
    changed = not path.exists() or path.stat().st_ino != inode or _digest(path) != before
    assert predicted == changed, (options, opens.change_to_existing(str(path)))


def test_fill_device_without_a_size_lays_a_file_out_again(tmp_path: Path) -> None:
    """(Not run: fio would allocate the whole free space of the file system for the new file.)"""
    path = tmp_path / "data.dat"
    _user_file(path)
    job = tmp_path / "read.fio"
    job.write_text(READ_JOB.format(path=path, extra="fill_device=1\n"))
    [opens] = parse_job_file(job, str(tmp_path))
    assert "lays it out again" in (opens.change_to_existing(str(path)) or "")


def test_ptsbenchs_own_files_are_used_again_without_flags(tmp_path: Path) -> None:
    """A folder's test file, a new --target file, a job's own new file and a PTS file, each made by ptsbench, are
    written again by later runs (and a resumed sweep) with no flag; a copy of one is the user's."""
    write = tmp_path / "write.fio"
    write.write_text("[write]\nioengine=psync\nrw=write\nbs=64k\nsize=512k\n")
    own = tmp_path / "own.dat"
    named = tmp_path / "named.fio"
    named.write_text(f"[write]\nfilename={tmp_path}/named.dat\nioengine=psync\nrw=write\nbs=64k\nsize=512k\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    runs = [("run", str(write), "--target", str(folder)), ("run", str(write), "--target", str(own), "--size", "512k"),
            ("run", str(named)), ("run", str(write), "--keep-files"),  # fio's made-up name write.0.0 in the
            # working folder: removed at the end of the run unless kept (test_run_cli)
            ("pts", str(tmp_path / "pts.dat"), "--profile", "demo", "--tests", "iops", "--size", "8M",
             "--round-time", "0.1", "--max-rounds", "2")]
    for number in range(2):
        for index, args in enumerate(runs):
            done = run_cli(*args, "--out", str(tmp_path / f"out{number}-{index}"), cwd=tmp_path)
            assert done.returncode == 0, (args, done.stderr)
    for path in (own, tmp_path / "named.dat", tmp_path / "write.0.0", tmp_path / "pts.dat"):
        assert os.getxattr(path, MARK)
    sweep = run_cli("sweep", str(own), "--rw", "write", "--iodepth", "1,2", "--runtime", "0.2", "--out",
                    str(tmp_path / "sweep"), cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    (next((tmp_path / "sweep" / "cases").glob("002-*")) / "result.json").unlink()  # as if killed in the last cell
    resumed = run_cli("resume", str(tmp_path / "sweep"), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    shutil.copyfile(own, tmp_path / "copy.dat")  # a copy has no mark: it is the user's
    refused = run_cli("run", str(write), "--target", str(tmp_path / "copy.dat"), "--out", str(tmp_path / "c"),
                      cwd=tmp_path)
    assert refused.returncode != 0 and "ptsbench did not make" in refused.stderr


def test_a_pts_start_judges_its_target_once_before_probing_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pts` judges its target before planning probes it (fio writes a probe file in the target's folder), and not
    again before the run exists; a user's file is refused before any probe; a dry run judges only when its verdict
    is asked for. The guard and the probe are the real ones, watched."""
    import ptsbench.device.guard as guard
    import ptsbench.fio.runner as runner
    from ptsbench.cli.pts_steps import Prepared, PtsRequest, prepare_target
    from ptsbench.errors import UnsafeTargetError
    from ptsbench.pts.settings import make_settings

    events: list[str] = []
    judge, probe = guard.check_path_allowed, runner.probe_engine
    monkeypatch.setattr(guard, "check_path_allowed", lambda *args: (events.append("guard"), judge(*args))[1])
    monkeypatch.setattr(runner, "probe_engine", lambda path: (events.append("probe"), probe(path))[1])
    settings = make_settings("demo", "2.0", ("iops",))

    def start(target: Path, dry_run: bool) -> Prepared:
        events.clear()
        request = PtsRequest(settings, (str(target),), "pts-demo", tmp_path / "run", size="8M")
        return prepare_target(request, str(target), request.run_dir, 8 * MIB, dry_run)

    for dry_run, expected in ((True, ["probe"]), (False, ["guard", "probe"])):
        prepared = start(tmp_path / "pts.dat", dry_run)
        assert events == expected
        prepared.check()  # a dry run's verdict, a fleet's judging before it starts
        assert events == [*expected, "guard"]
    users = tmp_path / "users.dat"
    _user_file(users)
    with pytest.raises(UnsafeTargetError, match="ptsbench did not make"):
        start(users, False)
    assert events == ["guard"]


def test_the_engine_probe_writes_only_its_own_file_in_a_folder_named_with_a_colon(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine probe (`pts`, `run`, `quick` and `sweep` on a file, a dry run too) writes a probe file in the
    target's folder. fio splits an unescaped ':' in a filename into two files: in a folder `data:b`, next to a user's
    file `data` and a link `b` to that folder, real fio wrote half the probe into the user's file."""
    from ptsbench.fio.runner import probe_engine

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "data:b"
    folder.mkdir()
    (tmp_path / "b").symlink_to("data:b")
    users = _user_file(tmp_path / "data")
    plain = tmp_path / "plain"
    plain.mkdir()
    assert probe_engine(str(folder / "pts.dat"))[0] == probe_engine(str(plain / "pts.dat"))[0]
    assert _digest(tmp_path / "data") == users
    assert list(folder.iterdir()) == []
    dollar = tmp_path / "a$b"
    dollar.mkdir()
    with pytest.raises(JobFileError, match=r"a\$b/pts\.dat' holds '\$'"):  # by the target's name, not the probe's
        probe_engine(str(dollar / "pts.dat"))
