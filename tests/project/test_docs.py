"""The documentation: the README is a short entrance whose links all resolve, and the docs/ site builds with
`mkdocs build --strict`, so a broken link, a missing anchor or a page left out of the navigation fails here."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 150


def test_readme_is_short_and_starts_with_the_two_setup_commands() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move reference text to docs/"
    first_block = lines[lines.index("```sh") + 1: lines.index("```")]
    assert [line.split("#")[0].strip() for line in first_block] == ["bash scripts/demo.sh", "bash scripts/test.sh"]


def test_readme_links_point_at_files_in_the_repository() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)", (ROOT / "README.md").read_text())
    assert targets, "the README links to its documentation"
    missing = [target for target in targets if "://" not in target and not (ROOT / target).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_docs_site_builds_in_strict_mode(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "safety" / "index.html").is_file()


def test_every_device_lab_check_is_described() -> None:
    """docs/device-lab.md says what each check of the lab and of its Debian 13 and FTL variants asserts (a family of
    checks as `info-*`)."""
    from device_lab_debian13 import CHECKS as DEBIAN13_CHECKS
    from device_lab_ftl import CHECKS as FTL_CHECKS
    from device_lab_guest import CHECKS

    page = (ROOT / "docs" / "device-lab.md").read_text()
    missing = [name for name in (*CHECKS, *DEBIAN13_CHECKS, *FTL_CHECKS)
               if f"`{name}`" not in page and f"`{name.rsplit('-', 1)[0]}-*`" not in page]
    assert not missing, f"checks not described in docs/device-lab.md: {missing}"


def test_no_not_yet_section_names_an_option_the_command_has() -> None:
    """A "Not yet" section of the docs must not list as missing a `ptsbench COMMAND --OPTION` that the command's
    --help shows (docs/multihost.md once listed `pts --hosts` there while it ran)."""
    from click.testing import CliRunner

    from ptsbench.cli import cli

    named = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for section in re.findall(r"^#+ Not yet\n(.*?)(?=^#|\Z)", page.read_text(), re.M | re.S):
            named += [(page.name, *found) for found in re.findall(r"`ptsbench (\w+)[^`]*?(--[\w-]+)", section)]
    shown = [(page, command, option) for page, command, option in named
             if option in CliRunner().invoke(cli, [command, "--help"]).output]
    assert not shown, f"listed under 'Not yet' but in the command's --help: {shown}"


def test_the_benchmarks_page_is_a_page_of_the_site() -> None:
    """docs/benchmarks.md gives the figures and the command of each bench/ script itself, not a pointer elsewhere."""
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    scripts = sorted(path.name for path in (ROOT / "bench").glob("bench_*.py"))
    missing = [name for name in scripts if name not in page]
    assert scripts and not missing, f"docs/benchmarks.md does not describe {missing}"
    assert page.count("\n|") >= 5, "docs/benchmarks.md holds no measured figures"


def test_the_qualify_page_s_beside_the_host_line_is_what_check_prints() -> None:
    """docs/qualify.md's example of a PTS phase's line per bucket (the drive beside the host), made again by the code
    that prints it (catalog/monitor_host.py phase_beside_host) from its numbers: the rounds' stored counts, the
    first round holding them all."""
    from ptsbench.catalog.monitor_host import phase_beside_host

    text = " ".join((ROOT / "docs" / "qualify.md").read_text().split())
    [shown] = re.findall(r"`(beside the host at or above [^`]*added up\))`", text)
    numbers = [int(found.replace(",", "")) for found in re.findall(r"(?:read|write|trim) ([\d,]+)", shown)]
    [threshold_ms] = re.findall(r"at or above (\d+) ms", shown)
    [rounds] = re.findall(r"\((\d+) round\(s\) added up\)", shown)
    drive, host = dict(zip(("read", "write", "trim"), numbers[:3], strict=True)), numbers[3:]

    def record(first: bool) -> dict[str, object]:
        increase = {bucket: {op: count if first and bucket == "0" else 0 for op, count in drive.items()}
                    for bucket in "0123"}
        counts = {op: [count if first else 0, 0, 0, 0] for op, count in zip(drive, host, strict=True)}
        return {"telemetry": {"change": {"latency_monitor": increase},
                              "monitor_host": {"thresholds_ms": [int(threshold_ms), 25, 100, 500], **counts}}}

    made = phase_beside_host([record(index == 0) for index in range(int(rounds))])
    assert made["0"][0] == shown
