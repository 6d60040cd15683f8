"""`plot --out` and `compare --out` write only into a folder of ptsbench's own (new, empty, or holding only what an
earlier plot or comparison wrote there, unchanged): a user's files in it stay byte-identical."""

import hashlib
import os
import shutil
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


def test_a_reports_images_never_replace_or_remove_a_users_file(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    """A run's report/figures/ holds the images a report wrote (its ledger lists them): a later report replaces and
    removes only those. A user's PNG dropped there, a figure's image the user changed, figures/ as a link to a
    user's folder of PNGs, or report/ as a link to a user's folder: every user's file stays byte-identical, and a
    report that would overwrite one is refused in one line before writing anything. (--no-static: the same
    removal, without the PDF's cost.)"""
    run = tmp_path / "run"
    shutil.copytree(runs[0], run)
    figures = run / "report" / "figures"
    assert (done := run_cli("report", str(run), "--images", "png")).returncode == 0, done.stderr
    ours = sorted(path.name for path in figures.glob("*.png"))
    assert ours
    (figures / "mine.png").write_bytes(b"a user's picture")
    assert (done := run_cli("report", str(run), "--images", "svg")).returncode == 0, done.stderr
    assert sorted(path.name for path in figures.glob("*.png")) == ["mine.png"] and list(figures.glob("*.svg"))
    assert (done := run_cli("report", str(run), "--no-static")).returncode == 0, done.stderr
    assert _tree(figures) == {"mine.png": hashlib.sha256(b"a user's picture").hexdigest()}
    # a figure's image the user changed is theirs now
    assert (done := run_cli("report", str(run), "--images", "png")).returncode == 0, done.stderr
    (figures / ours[0]).write_bytes(b"edited by hand")
    before = _tree(run / "report")
    refused = run_cli("report", str(run), "--images", "png")
    errors = [line for line in refused.stderr.splitlines() if line.startswith("ptsbench: error:")]
    assert refused.returncode != 0 and len(errors) == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert f"{figures / ours[0]} is not an image this report wrote there" in errors[0]
    assert _tree(run / "report") == before
    assert (done := run_cli("report", str(run), "--no-static")).returncode == 0, done.stderr
    assert (figures / ours[0]).read_bytes() == b"edited by hand" and (figures / "mine.png").is_file()
    # figures/ a link to a folder of the user's PNGs, one of a figure's name
    pictures = tmp_path / "pictures"
    shutil.rmtree(figures)
    pictures.mkdir()
    (pictures / ours[0]).write_bytes(b"holiday")
    (pictures / "other.svg").write_bytes(b"<svg/>")
    figures.symlink_to(pictures)
    kept = _tree(pictures)
    refused = run_cli("report", str(run), "--images", "png")
    assert refused.returncode != 0 and f"{figures} is a link" in refused.stderr and "Traceback" not in refused.stderr
    assert (done := run_cli("report", str(run), "--no-static")).returncode == 0, done.stderr
    assert _tree(pictures) == kept and figures.is_symlink()
    # report/ a link to a user's folder holding a figures/ of their own: never written through (issue 40)
    website = tmp_path / "website"
    (website / "figures").mkdir(parents=True)
    (website / "figures" / ours[0]).write_bytes(b"published")
    figures.unlink()
    shutil.rmtree(run / "report")
    (run / "report").symlink_to(website)
    kept = _tree(website)
    for options in (("--no-static",), ("--images", "png")):
        refused = run_cli("report", str(run), *options)
        assert refused.returncode != 0 and "is a link" in refused.stderr and "Traceback" not in refused.stderr
    assert _tree(website) == kept and os.listdir(website) == ["figures"]


def _bytes_read() -> int:
    """What this process has read through system calls so far (/proc/self/io rchar)."""
    return int(dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())["rchar"])


def test_an_output_file_is_known_as_ptsbenchs_by_its_head_alone(tmp_path: Path) -> None:
    """check_own_file (trends --out, check --junit) finds the mark where ptsbench writes it, in the first
    MARK_WITHIN_BYTES of the pages it makes, and reads no further: a large file of the user's is refused after
    reading its head, even one holding the mark further in."""
    from ptsbench.catalog.junit import JUNIT_MARK, junit_xml
    from ptsbench.catalog.trends import PAGE_MARK, trends_html
    from ptsbench.errors import PtsbenchError
    from ptsbench.outfolder import MARK_WITHIN_BYTES, check_own_file

    for name, text, mark in (("trends.html", trends_html([], [], tmp_path).encode(), PAGE_MARK),
                             ("gates.xml", junit_xml("run", []), JUNIT_MARK)):
        assert text.find(mark.encode()) + len(mark) <= MARK_WITHIN_BYTES
        (tmp_path / name).write_bytes(text)
        check_own_file(tmp_path / name, mark, "--out")  # an earlier output: replaced
    users = tmp_path / "users.img"
    with open(users, "wb") as handle:  # 256 MiB, sparse: the mark only at its end
        handle.truncate(256 * 2**20 - len(PAGE_MARK))
        handle.seek(0, os.SEEK_END)
        handle.write(PAGE_MARK.encode())
    before = _bytes_read()
    with pytest.raises(PtsbenchError, match="is not a file ptsbench wrote"):
        check_own_file(users, PAGE_MARK, "--out")
    assert _bytes_read() - before < 2**20


def _one_error(done: subprocess.CompletedProcess[str], needle: str) -> None:
    errors = [line for line in done.stderr.splitlines() if line.startswith("ptsbench: error:")]
    assert done.returncode != 0 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert needle in errors[0], errors[0]


@pytest.mark.parametrize("options", [(), ("--images", "png"), ("--no-static",)], ids=["pdf", "images", "html"])
def test_a_report_folder_that_is_a_link_is_never_followed(options: tuple[str, ...], runs: tuple[Path, Path],
                                                          tmp_path: Path) -> None:
    """RUN/report as a link to the user's folder (its own index.html, report.pdf, figures/): refused in one line,
    every file there byte-identical, nothing added; without the link the report is made."""
    run = tmp_path / "run"
    shutil.copytree(runs[0], run)
    shutil.rmtree(run / "report", ignore_errors=True)
    victim = tmp_path / "victim"
    (victim / "figures").mkdir(parents=True)
    (victim / "index.html").write_text("<h1>the user's own page</h1>\n")
    (victim / "report.pdf").write_bytes(b"%PDF the user's own")
    (victim / "figures" / "a.png").write_bytes(b"the user's picture")
    before = _tree(victim)
    (run / "report").symlink_to(victim)
    _one_error(run_cli("report", str(run), *options), "is a link")
    assert _tree(victim) == before and sorted(os.listdir(victim)) == ["figures", "index.html", "report.pdf"]
    (run / "report").unlink()
    made = run_cli("report", str(run), *options)
    assert made.returncode == 0, made.stderr
    assert (run / "report" / "index.html").is_file() and not (run / "report").is_symlink()


@pytest.mark.parametrize("command", ["plot", "compare"])
def test_an_out_folder_that_is_a_link_is_refused(command: str, runs: tuple[Path, Path], tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()  # empty: only the link makes it anyone's
    link = tmp_path / "out"
    link.symlink_to(victim)
    args = ("plot", str(runs[0])) if command == "plot" else ("compare", str(runs[0]), str(runs[1]))
    _one_error(run_cli(*args, "--out", str(link)), "is a link")
    assert os.listdir(victim) == []
