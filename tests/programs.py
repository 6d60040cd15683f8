"""What the test suite may start: scripts/programs.txt (the programs scripts/install.sh installs) and the programs of
Debian's Essential packages. Every program the suite starts is recorded (exec_audit/); a system program that is
neither makes the run fail, even on a machine where someone installed it by hand, since a fresh machine would not
have it."""

import fnmatch
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "scripts" / "programs.txt"
SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/", "/lib/")  # where packages put programs (not venvs, /opt or tmp)


@dataclass(frozen=True)
class Row:
    program: str  # a name, or an absolute path pattern
    package: str
    need: str  # run or test

    @property
    def name(self) -> str:
        return os.path.basename(self.program)

    def find(self) -> str | None:
        """Where the program is on this machine, as install.sh looks for it; None when it is not."""
        if self.program.startswith("/"):
            return next(iter(sorted(map(str, Path("/").glob(self.program.lstrip("/"))))), None)
        return shutil.which(self.program) or next(
            (path for path in (f"/usr/sbin/{self.program}", f"/sbin/{self.program}") if os.access(path, os.X_OK)),
            None)


def table() -> list[Row]:
    rows = []
    for line in TABLE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            program, package, need, *_ = line.split()
            rows.append(Row(program, package, need))
    return rows


def _owner_candidates(path: str) -> list[str]:
    """The paths dpkg may know a file by: as found and resolved, each also without /usr (merged /usr)."""
    paths = list(dict.fromkeys((path, os.path.realpath(path))))
    return paths + [p.removeprefix("/usr") for p in paths if p.startswith("/usr/")]


@cache
def owner(path: str) -> str | None:
    """The Debian package holding the program at `path`; None when dpkg knows no package for it."""
    for candidate in _owner_candidates(path):
        found = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.split(":", 1)[0].split(",")[0].strip()
    return None


@cache
def _field(package: str, field: str) -> str:
    found = subprocess.run(["dpkg-query", "-W", "-f", f"${{{field}}}", package], capture_output=True, text=True)
    return found.stdout if found.returncode == 0 else ""


def essential(package: str) -> bool:
    """Debian's Essential packages are on every Debian system: their programs need no row."""
    return _field(package, "Essential") == "yes"


def _depends(package: str) -> set[str]:
    fields = _field(package, "Pre-Depends") + "," + _field(package, "Depends")
    return {alt.split()[0].split(":")[0] for part in fields.split(",") for alt in part.split("|") if alt.strip()}


def provides(package: str, owning: str, depth: int = 2) -> bool:
    """The program's owning package is `package` or one installing it installs (postgresql -> postgresql-15,
    python3 -> python3.11 -> python3.11-minimal), within `depth` steps of its dependencies."""
    if owning == package:
        return True
    return depth > 0 and any(provides(each, owning, depth - 1) for each in _depends(package))


def unlisted(log: Path) -> list[str]:
    """Each system program the log records that is neither a row of the table, nor from a package a row installs,
    nor from an Essential package, with the package that holds it."""
    names = {row.name for row in table()}
    packages = {row.package for row in table()}
    patterns = [row.program for row in table() if row.program.startswith("/")]
    found: dict[str, str] = {}
    for line in log.read_text().splitlines() if log.exists() else ():
        start = json.loads(line)
        path = start["path"]
        if path is None or not path.startswith(SYSTEM_DIRS) or start["name"] in names or path in found:
            continue
        if any(fnmatch.fnmatch(path, pattern) for pattern in patterns):
            continue
        package = owner(path)  # another name of a program a row installs (a link called fio-copy, mke2fs) is fine
        if package is None or not (essential(package) or any(provides(each, package) for each in packages)):
            found[path] = f"{start['name']} ({path}, package {package or 'unknown to dpkg'})"
    return sorted(found.values())


def verdict(log: Path) -> str | None:
    """The line that fails the run, or None when every program started is one install.sh guarantees."""
    if shutil.which("dpkg-query") is None:
        return None  # not Debian: the packages cannot be told (CI runs on Debian)
    missing = unlisted(log)
    if not missing:
        return None
    return ("the tests started programs scripts/install.sh does not install (add a row to scripts/programs.txt): "
            + "; ".join(missing))
