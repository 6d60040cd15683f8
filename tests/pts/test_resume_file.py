"""`resume` of a PTS run on a file judges the file again by identity (device/userfile.py check_same_file): a run
killed after its first round, whose file was then replaced by a link to the user's file, a copy of the user's file
or another run's file, refuses every one of them (each proven by its sha256) and resumes on its own file."""

import hashlib
import json
import os
import shutil
from pathlib import Path

from conftest import kill_when, run_cli, start_pts

SMALL = ["--profile", "demo", "--spec", "1.1", "--size", "16M", "--round-time", "0.2", "--max-rounds", "3",
         "--tests", "iops", "--block-sizes", "iops=4k", "--mixes", "iops=0"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _killed_after_round_one(run_dir: Path, target: Path, *extra: str) -> None:
    rounds = run_dir / "pts" / "iops" / "rounds"
    kill_when(start_pts(run_dir, str(target), *SMALL, *extra), lambda: (rounds / "001" / "round.json").exists())


def _refused(run_dir: Path, needle: str) -> None:
    done = run_cli("resume", str(run_dir), "--destructive")
    errors = [line for line in done.stderr.splitlines() if line.startswith("ptsbench: error:")]
    assert done.returncode != 0 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert needle in errors[0], errors[0]


def test_resume_refuses_a_file_put_in_place_of_the_runs_own(tmp_path: Path) -> None:
    run_dir, target = tmp_path / "run", tmp_path / "rs" / "pts.dat"
    target.parent.mkdir()
    thesis = tmp_path / "thesis.dat"
    thesis.write_bytes(os.urandom(16 * 1024 * 1024))  # the user's, as large as the run's file
    before = _digest(thesis)
    _killed_after_round_one(run_dir, target)
    assert json.loads((run_dir / "manifest.json").read_text())["file_identity"]["exists"] is False
    own = tmp_path / "own.dat"
    os.rename(target, own)  # the run's file, kept aside (same inode, its mark) to be put back

    target.symlink_to(thesis)  # ln -sf ~/thesis.dat ~/rs/pts.dat
    _refused(run_dir, "is now a link")
    assert _digest(thesis) == before
    target.unlink()

    shutil.copyfile(thesis, target)  # a copy of the user's file, without ptsbench's mark
    copy = _digest(target)
    _refused(run_dir, "it lacks the mark")
    assert _digest(target) == copy and _digest(thesis) == before
    target.unlink()

    other_run, other = tmp_path / "other-run", tmp_path / "other.dat"  # another run's file: marked, not this run's
    _killed_after_round_one(other_run, other)
    os.rename(other, target)
    other_bytes = _digest(target)
    _refused(run_dir, "made for another run")
    assert _digest(target) == other_bytes
    target.unlink()

    os.rename(own, target)  # its own file back: the run resumes and completes
    done = run_cli("resume", str(run_dir))
    assert done.returncode == 0, done.stderr
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "done"
    assert _digest(thesis) == before


def test_a_run_on_a_users_file_resumes_only_on_that_inode(tmp_path: Path) -> None:
    """pts --destructive on an existing file of the user's: resume accepts that file, not another put there."""
    run_dir, target = tmp_path / "run", tmp_path / "data.dat"
    target.write_bytes(os.urandom(16 * 1024 * 1024))
    _killed_after_round_one(run_dir, target, "--destructive")
    recorded = json.loads((run_dir / "manifest.json").read_text())["file_identity"]
    assert recorded["exists"] is True and recorded["inode"] == target.stat().st_ino
    own = tmp_path / "own.dat"
    os.rename(target, own)
    target.write_bytes(os.urandom(16 * 1024 * 1024))  # another file, same size, same name
    before = _digest(target)
    _refused(run_dir, "another inode")
    assert _digest(target) == before
    os.replace(own, target)
    done = run_cli("resume", str(run_dir), "--destructive")
    assert done.returncode == 0, done.stderr
