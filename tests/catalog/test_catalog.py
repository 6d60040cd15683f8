"""The catalog of a lab's real runs (case runs, sweeps, quick and a PTS run, some tagged with a model and firmware):
indexed into SQLite and into a real PostgreSQL server, queried by model and firmware, rebuilt from scratch with
identical results; and its trends page in chromium."""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from labruns import Lab
from test_report_browser import Browser, shared_browser

# the run lab (a session fixture of 40 runs) is made once, on one worker, for the modules that read it
pytestmark = pytest.mark.xdist_group("run-lab")


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return shared_browser(tmp_path_factory.getbasetemp() / "chromium-profile")


def query(db: str, *args: str) -> Any:
    done = run_cli("catalog", *args, "--db", db, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def expected_paths(run_lab: Lab, **tags: str) -> set[str]:
    """Run directories whose manifest carries every KEY=VALUE tag, read from the manifests themselves."""
    found = set()
    for manifest in run_lab.folder.glob("*/manifest.json"):
        stored = json.loads(manifest.read_text()).get("tags") or []
        if all(f"{key}={value}" in stored for key, value in tags.items()):
            found.add(str(manifest.parent))
    return found


def test_catalog_of_a_lab_queried_by_model_and_firmware_and_rebuilt(run_lab: Lab, tmp_path: Path) -> None:
    db = str(tmp_path / "lab.sqlite")
    done = run_cli("catalog", "update", str(run_lab.folder), "--db", db)
    assert done.returncode == 0 and f"{run_lab.count} runs indexed" in done.stderr, done.stderr
    runs = query(db, "runs")
    assert len(runs) == run_lab.count >= 50
    assert {run["kind"] for run in runs} == {"pts", "run", "sweep"}
    assert {run["name"] for run in runs} >= {"quick", "sweep", "pts-demo"}
    by_model = query(db, "runs", "--model", "LAB-A")
    assert {run["path"] for run in by_model} == expected_paths(run_lab, model="LAB-A") and len(by_model) > 20
    by_firmware = query(db, "runs", "--model", "LAB-A", "--firmware", "2.0")
    assert {run["path"] for run in by_firmware} == expected_paths(run_lab, model="LAB-A", firmware="2.0")
    assert {run["firmware"] for run in by_firmware} == {"2.0"}
    nightly = {str(path.parent) for path in run_lab.folder.glob("*/manifest.json")
               if "nightly" in json.loads(path.read_text()).get("tags", [])}
    assert {run["path"] for run in query(db, "runs", "--tag", "nightly")} == nightly and len(nightly) == 20
    (pts,) = query(db, "runs", "--kind", "pts")
    assert pts["tests"] == ["iops", "tp", "lat", "wsat"] and pts["compliant"] is False
    assert query(db, "runs", "--test", "lat") == [pts]
    values = query(db, "values", "read iops", "--model", "LAB-A", "--firmware", "2.0")
    assert len(values) == len(by_firmware) and all(value["value"] > 0 for value in values)
    capped = next(v for v in values if v["path"] == str(run_lab.capped))
    stored = json.loads(next((run_lab.capped / "cases").glob("*/result.json")).read_text())
    assert capped["value"] == stored["jobs"][0]["directions"][0]["iops"]  # fio's number, as stored
    every_value = query(db, "values")
    units = {"iops": "IOPS", "mbs": "bytes/s", "lat": "ns"}  # each value names the unit it is kept in
    assert every_value and all(value["unit"] == units[value["quantity"]] for value in every_value)
    assert run_cli("catalog", "update", str(run_lab.folder), "--db", db).stderr.count(f"{run_lab.count} unchanged") == 1
    Path(db).unlink()  # deleting the index loses nothing: the run folders are the truth
    assert run_cli("catalog", "update", str(run_lab.folder), "--db", db, "--rebuild").returncode == 0
    assert query(db, "runs") == runs and query(db, "values") == every_value
    csv_text = run_cli("catalog", "runs", "--db", db, "--model", "LAB-B", "--format", "csv").stdout
    assert csv_text.splitlines()[0].startswith("path,kind,name") and len(csv_text.splitlines()) == 1 + len(
        query(db, "runs", "--model", "LAB-B"))


def test_the_same_catalog_on_postgresql(run_lab: Lab, postgres_url: str, tmp_path: Path) -> None:
    sqlite = str(tmp_path / "lab.sqlite")
    for db in (sqlite, postgres_url):
        assert run_cli("catalog", "update", str(run_lab.folder), "--db", db, "--rebuild").returncode == 0
    for args in (("runs",), ("runs", "--model", "LAB-A", "--firmware", "1.1"), ("values", "p99")):
        assert query(postgres_url, *args) == query(sqlite, *args)
    assert len(query(postgres_url, "runs")) == run_lab.count
    moved = tmp_path / "gone"
    shutil.copytree(run_lab.folder / "run-00", moved / "run-00")
    assert run_cli("catalog", "update", str(moved), "--db", postgres_url).returncode == 0
    assert len(query(postgres_url, "runs")) == run_lab.count + 1
    shutil.rmtree(moved / "run-00")
    done = run_cli("catalog", "update", str(moved), "--db", postgres_url)
    assert "1 removed" in done.stderr and len(query(postgres_url, "runs")) == run_lab.count


def test_a_bad_database_is_one_error_line(tmp_path: Path) -> None:
    done = run_cli("catalog", "runs", "--db", "nosuchdialect://x/y")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a database URL" in done.stderr
    done = run_cli("catalog", "update", str(tmp_path / "missing"), "--db", str(tmp_path / "c.sqlite"))
    assert done.returncode == 2 and "no such folder" in done.stderr and not (tmp_path / "c.sqlite").exists()


def test_a_catalog_never_writes_into_a_device(tmp_path: Path, loop_device: str) -> None:
    """--db names a SQLite file: a block device (as a path or in a sqlite:// URL), a folder, or a new name under /dev
    is refused in one line, and the device stays byte-identical (SQLite wrote its pages into it)."""
    import hashlib

    (tmp_path / "runs").mkdir()
    before = hashlib.sha256(Path(loop_device).read_bytes()).hexdigest()
    for db in (loop_device, f"sqlite:///{loop_device}", str(tmp_path), "/dev/ptsbench-attack-catalog.sqlite"):
        done = run_cli("catalog", "update", str(tmp_path / "runs"), "--db", db)
        assert done.returncode != 0 and done.stderr.count("\n") == 1 and "not a catalog file" in done.stderr, \
            done.stderr
    assert hashlib.sha256(Path(loop_device).read_bytes()).hexdigest() == before
    assert not Path("/dev/ptsbench-attack-catalog.sqlite").exists()


def test_trends_page_replaces_only_an_earlier_trends_page(tmp_path: Path) -> None:
    """catalog page --out over a user's file or a device node is refused and leaves it as it was (the page replaced
    the node with a file: /dev/sdb would have become HTML); over an earlier trends page it writes again."""
    import os
    import stat

    db = str(tmp_path / "c.sqlite")
    mine, node, page = tmp_path / "thesis.tex", tmp_path / "node", tmp_path / "trends.html"
    mine.write_text("my words")
    os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(7, 250))
    for out in (mine, node):
        done = run_cli("catalog", "page", "--db", db, "--out", str(out))
        assert done.returncode != 0 and done.stderr.count("\n") == 1 and "not a file ptsbench wrote" in done.stderr, \
            done.stderr
    assert mine.read_text() == "my words" and stat.S_ISBLK(node.lstat().st_mode)
    for _again in range(2):
        assert run_cli("catalog", "page", "--db", db, "--out", str(page)).returncode == 0
    assert "ptsbench catalog" in page.read_text()


def test_trends_page_filters_sorts_and_links_to_reports(run_lab: Lab, tmp_path: Path, browser: Browser) -> None:
    reported = run_lab.folder / "run-01"
    assert run_cli("report", str(reported)).returncode == 0
    db = str(tmp_path / "lab.sqlite")
    assert run_cli("catalog", "update", str(run_lab.folder), "--db", db).returncode == 0
    page = tmp_path / "pages" / "trends.html"
    assert run_cli("catalog", "page", "--db", db, "--out", str(page)).returncode == 0
    script = """(() => {
      const all = document.querySelectorAll('#runs tbody tr').length;
      const filter = document.getElementById('filter');
      filter.value = 'LAB-B'; filter.dispatchEvent(new Event('input'));
      const rows = [...document.querySelectorAll('#runs tbody tr')].map(r => r.cells[3].textContent);
      filter.value = ''; filter.dispatchEvent(new Event('input'));
      const links = [...document.querySelectorAll('#runs a')].map(a => a.href);
      const value = document.getElementById('value');
      value.value = 'lab-null/null read iops'; value.dispatchEvent(new Event('change'));
      const points = document.querySelectorAll('#chart circle.point').length;
      return JSON.stringify({all, rows, links, points});
    })()"""
    result = browser.open_page(page, script=script)
    assert not result.errors and not result.network_requests
    seen = result.script_result
    lab_b = json.loads(run_cli("catalog", "runs", "--db", db, "--model", "LAB-B", "--format", "json").stdout)
    assert seen["all"] == run_lab.count and seen["rows"] == ["LAB-B"] * len(lab_b)
    assert seen["points"] == len(json.loads(run_cli("catalog", "values", "lab-null/null read iops", "--db", db,
                                                    "--format", "json").stdout))
    assert seen["links"] == [(reported / "report" / "index.html").as_uri()]
    report = browser.open_page(Path(seen["links"][0].removeprefix("file://")))
    assert not report.errors and "lab-null" in report.text
    (tmp_path / "catalog-trends.png").write_bytes(result.screenshot_png)  # docs/screenshots/ has one like it
