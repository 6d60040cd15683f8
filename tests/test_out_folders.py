"""`plot --out` and `compare --out` write only into a folder of ptsbench's own (new, empty, or holding only what an
earlier plot or comparison wrote there, unchanged): a user's files in it stay byte-identical."""

import hashlib
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli

LOG = "1000, 2048, 1, 4096, 0\n2000, 4096, 1, 4096, 0\n3000, 1024, 1, 4096, 0\n"
NULL_JOB = "[null]\nioengine=null\nsize=16m\nbs=4k\nrw=randread\n"


def _tree(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _refused(done: subprocess.CompletedProcess[str], name: str) -> None:
    errors = [line for line in done.stderr.splitlines() if line.startswith("ptsbench: error:")]
    assert done.returncode != 0 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"holds {name}, which ptsbench did not write there" in errors[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    job = root / "null.fio"
    job.write_text(NULL_JOB)
    made = []
    for name in ("a", "b"):
        done = run_cli("run", str(job), "--runtime", "0.2", "--out", str(root / name))
        assert done.returncode == 0, done.stderr
        made.append(root / name)
    return made[0], made[1]


def test_plot_writes_again_into_its_own_folder_and_never_over_a_users_file(tmp_path: Path) -> None:
    log = tmp_path / "job_bw.1.log"
    log.write_text(LOG)
    out = tmp_path / "plots"
    assert run_cli("plot", str(log), "--out", str(out)).returncode == 0
    again = run_cli("plot", str(log), "--out", str(out), "--format", "svg")  # an earlier plot's folder: its own
    assert again.returncode == 0, again.stderr
    assert (out / "job_bw.png").is_file() and (out / "job_bw.svg").is_file()
    (out / "summary.csv").write_text("my notes on the summary\n")  # the user edits a file ptsbench wrote
    (out / "results.xlsx").write_bytes(b"the user's workbook")
    before = _tree(out)
    _refused(run_cli("plot", str(log), "--out", str(out)), "results.xlsx")
    assert _tree(out) == before
    (out / "results.xlsx").unlink()
    before = _tree(out)
    _refused(run_cli("plot", str(log), "--out", str(out)), "summary.csv")
    assert _tree(out) == before


def test_plot_into_the_users_log_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "job_bw.1.log").write_text(LOG)
    (tmp_path / "summary.csv").write_text("the user's own summary\n")
    before = _tree(tmp_path)
    _refused(run_cli("plot", str(tmp_path / "job_bw.1.log"), "--out", str(tmp_path)), "job_bw.1.log")
    assert _tree(tmp_path) == before


def test_compare_over_a_fake_earlier_comparison_is_refused(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "compared.json").write_text("{}\n")
    (out / "index.html").write_text("<h1>my page</h1>\n")
    before = _tree(out)
    _refused(run_cli("compare", str(runs[0]), str(runs[1]), "--out", str(out), "--no-static"), "compared.json")
    assert _tree(out) == before


def test_compare_writes_again_into_its_own_comparison_only_while_unchanged(tmp_path: Path,
                                                                          runs: tuple[Path, Path]) -> None:
    out = tmp_path / "cmp"
    compare = ("compare", str(runs[0]), str(runs[1]), "--out", str(out), "--no-static")
    assert run_cli(*compare).returncode == 0
    again = run_cli(*compare)
    assert again.returncode == 0, again.stderr
    (out / "index.html").write_text("<h1>edited by the user</h1>\n")
    before = _tree(out)
    _refused(run_cli(*compare), "index.html")
    assert _tree(out) == before


def test_compare_again_without_images_removes_the_earlier_images(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    """The images of an earlier comparison are ptsbench's own: a comparison written again without --images removes
    them (they would show the earlier data), and the folder stays its own for the next."""
    out = tmp_path / "cmp"
    compare = ("compare", str(runs[0]), str(runs[1]), "--out", str(out))
    assert (done := run_cli(*compare, "--images", "png")).returncode == 0, done.stderr
    suffixes = [path.suffix for path in (out / "figures").iterdir()]
    assert suffixes and set(suffixes) == {".png"}
    assert (done := run_cli(*compare)).returncode == 0, done.stderr
    assert not (out / "figures").exists() and (out / "report.pdf").is_file()
    assert (done := run_cli(*compare, "--no-static")).returncode == 0, done.stderr
