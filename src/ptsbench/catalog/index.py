"""The catalog: an index of run directories in a database (SQLite file by default, or any SQLAlchemy URL such as
postgresql+psycopg://...). The run directories stay the truth: the index is rebuilt or updated from them, so deleting
it loses nothing.

Tables: runs (one row per run directory, keyed by its absolute path), tags (run, tag) and run_values (run, name,
quantity, value in stored units, noise; for a latency percentile its evidence: samples, the IOs behind it, and
beyond, the IOs slower than it). A run is re-read when its manifest or its report changed since it was indexed.
"""

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptsbench.errors import PtsbenchError, StoreError
from ptsbench.pts.fleet import DEVICES_DIR, FLEET_KIND

_METADATA: Any = None
RUN_COLUMNS = ("path", "kind", "name", "status", "created_utc", "finished_utc", "model", "serial", "firmware",
               "capacity_bytes", "transport", "host", "ptsbench_version", "fio_version", "profile", "tests",
               "compliant", "report", "tags")
FILTERS = ("model", "firmware", "serial", "kind", "test", "tag", "since", "until")


class CatalogError(PtsbenchError):
    """The catalog database cannot be opened or written."""


SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def _tables() -> Any:
    """The schema (built once, on first use: SQLAlchemy is imported only by catalog commands)."""
    global _METADATA
    if _METADATA is None:
        from sqlalchemy import BigInteger, Boolean, Column, Float, ForeignKey, MetaData, String, Table, Text

        metadata = MetaData()
        Table("runs", metadata,
              Column("path", String(1024), primary_key=True), Column("manifest_mtime_ns", BigInteger, nullable=False),
              *(Column(name, String(255)) for name in RUN_COLUMNS[1:9]), Column("capacity_bytes", BigInteger),
              *(Column(name, String(255)) for name in RUN_COLUMNS[10:15]), Column("tests", Text),
              Column("compliant", Boolean), Column("report", String(1024)))
        Table("tags", metadata, Column("path", String(1024), ForeignKey("runs.path"),
                                       primary_key=True), Column("tag", String(255), primary_key=True))
        Table("run_values", metadata,
              Column("path", String(1024), ForeignKey("runs.path"), primary_key=True),
              Column("name", String(512), primary_key=True), Column("quantity", String(8), nullable=False),
              Column("value", Float, nullable=False), Column("noise", Float), Column("samples", BigInteger),
              Column("beyond", BigInteger))
        _METADATA = metadata
    return _METADATA


def _add_evidence_columns(engine: Any) -> None:
    """A catalog made before percentiles carried their evidence gets its two columns (empty until re-read)."""
    from sqlalchemy import inspect, text

    have = {column["name"] for column in inspect(engine).get_columns("run_values")}
    with engine.begin() as connection:
        for name in ("samples", "beyond"):
            if name not in have:
                connection.execute(text(f"ALTER TABLE run_values ADD COLUMN {name} BIGINT"))


def database_url(where: str) -> str:
    """A SQLAlchemy URL from --db: a URL as given, a path as a SQLite file."""
    return where if "://" in where else f"sqlite:///{Path(where).absolute()}"


@dataclass
class Catalog:
    """An open catalog (its SQLAlchemy engine)."""

    engine: Any

    @classmethod
    def open(cls, where: str) -> "Catalog":
        from sqlalchemy import create_engine
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

        url = database_url(where)
        try:
            _check_sqlite_file(url, where)
            engine = create_engine(url)
            _tables().create_all(engine)
            _add_evidence_columns(engine)
        except (ArgumentError, NoSuchModuleError) as error:
            raise CatalogError(f"--db {where}: not a database URL or path ({error})",
                               "give a file path or a URL like postgresql+psycopg://user@host/db") from None
        except (SQLAlchemyError, ImportError) as error:
            raise CatalogError(f"cannot open the catalog {where}: {_first_line(error)}",
                               "check the path or URL and that the server is up") from None
        return cls(engine)

    def close(self) -> None:
        self.engine.dispose()

    def update(self, folders: Sequence[Path], rebuild: bool = False) -> tuple[int, int, int]:
        """Index every run directory under `folders`: (added or re-read, unchanged, removed). `rebuild`: empty the
        index first. Runs indexed from these folders whose directory is gone are removed."""
        from sqlalchemy import delete, select

        runs, tags, values = (_tables().tables[name] for name in ("runs", "tags", "run_values"))
        found = {str(path): path for folder in folders for path in run_directories(folder)}
        roots = [str(Path(folder).absolute()) for folder in folders]
        changed = unchanged = removed = 0
        with self.engine.begin() as connection:
            if rebuild:
                for table in (values, tags, runs):
                    connection.execute(delete(table))
            known = dict(connection.execute(select(runs.c.path, runs.c.manifest_mtime_ns)).all())
            for path in known:
                if path not in found and any(path.startswith(root + "/") or path == root for root in roots):
                    _delete_run(connection, path)
                    removed += 1
            for path, run_dir in sorted(found.items()):
                mtime_ns = _changed_ns(run_dir)
                if known.get(path) == mtime_ns:
                    unchanged += 1
                    continue
                try:
                    row, run_tags, run_values = index_run(run_dir)
                except PtsbenchError:  # a damaged or unfinished run is left out until it reads
                    continue
                if path in known:
                    _delete_run(connection, path)
                connection.execute(runs.insert(), [{**row, "manifest_mtime_ns": mtime_ns}])
                if run_tags:
                    connection.execute(tags.insert(), [{"path": path, "tag": tag} for tag in run_tags])
                if run_values:
                    connection.execute(values.insert(), [{"path": path, **value} for value in run_values])
                changed += 1
        return changed, unchanged, removed

    def runs(self, filters: Mapping[str, str | None]) -> list[dict[str, Any]]:
        """Runs matching the filters (model, firmware, serial, kind: exact; test: one of the run's tests or a case
        name; tag: one of its tags; since / until: created on or after / before an ISO date), oldest first."""
        from sqlalchemy import select

        runs, tags = _tables().tables["runs"], _tables().tables["tags"]
        query = select(runs).order_by(runs.c.created_utc, runs.c.path)
        for column in ("model", "firmware", "serial", "kind"):
            if filters.get(column):
                query = query.where(runs.c[column] == filters[column])
        if filters.get("test"):
            query = query.where(runs.c.tests.like(f"%\n{filters['test']}\n%"))
        if filters.get("tag"):
            query = query.where(runs.c.path.in_(select(tags.c.path).where(tags.c.tag == filters["tag"])))
        if filters.get("since"):
            query = query.where(runs.c.created_utc >= filters["since"])
        if filters.get("until"):
            query = query.where(runs.c.created_utc < filters["until"])
        with self.engine.connect() as connection:
            rows = [dict(row._mapping) for row in connection.execute(query)]
            all_tags: dict[str, list[str]] = {}
            for path, tag in connection.execute(select(tags.c.path, tags.c.tag).order_by(tags.c.tag)):
                all_tags.setdefault(path, []).append(tag)
        return [_public(row, all_tags.get(row["path"], [])) for row in rows]

    def values(self, paths: Iterable[str], name: str | None = None) -> list[dict[str, Any]]:
        """The headline values of these runs (all, or those whose name ends with `name`), by run and name."""
        from sqlalchemy import select

        table = _tables().tables["run_values"]
        wanted = set(paths)
        query = select(table).order_by(table.c.path, table.c.name)
        with self.engine.connect() as connection:
            rows = [dict(row._mapping) for row in connection.execute(query) if row.path in wanted]
        if name:
            from ptsbench.catalog.values import names_match

            rows = [row for row in rows if names_match(name, row["name"])]
        return rows


def _check_sqlite_file(url: str, where: str) -> None:
    """Refuse a SQLite catalog at a path that is no regular file (SQLite would write its pages into a device) or on
    the kernel's own file systems (a file made in /dev or /sys is no catalog)."""
    import stat

    from sqlalchemy.engine import make_url

    from ptsbench.device.target import kernel_filesystem

    parsed = make_url(url)
    path = parsed.database
    if parsed.get_backend_name() != "sqlite" or not path or path == ":memory:" or path.startswith("file:"):
        return
    hint = "give --db a new or existing SQLite file on a real file system"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise CatalogError(f"--db {where}: {error.strerror}", hint) from None
    if mode is not None and not stat.S_ISREG(mode):
        what = "a device" if stat.S_ISBLK(mode) or stat.S_ISCHR(mode) else "not a regular file"
        raise CatalogError(f"--db {where}: {path} is {what}, not a catalog file", hint)
    if mode is not None and os.path.islink(path):  # SQLite would write into whatever file it names
        raise CatalogError(f"--db {where}: {path} is a link (to {os.readlink(path)}), not a catalog file", hint)
    if mode is not None:
        _check_own_database(path, where, hint)
    kernel = kernel_filesystem(path)
    if kernel:
        raise CatalogError(f"--db {where}: {path} is on the kernel's {kernel}, not a catalog file", hint)


def _check_own_database(path: str, where: str, hint: str) -> None:
    """An existing --db file is empty or a SQLite database holding no table but the catalog's: a user's other
    file, or another program's database, is never written."""
    import sqlite3

    with open(path, "rb") as handle:
        head = handle.read(len(SQLITE_HEADER))
    if not head:
        return
    if head != SQLITE_HEADER:
        raise CatalogError(f"--db {where}: {path} is not a SQLite file (a file of the user's is never written)", hint)
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
            names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as error:
        raise CatalogError(f"--db {where}: {path} cannot be read as SQLite: {error}", hint) from None
    others = sorted(name for name in names - set(_tables().tables) if not name.startswith("sqlite_"))
    if others:
        raise CatalogError(f"--db {where}: {path} is another program's database (it holds the table {others[0]!r}): "
                           "it is not written", hint)


def _changed_ns(run_dir: Path) -> int:
    """When the run last changed as the index sees it: its manifest, or its report written later."""
    report = run_dir / "report" / "index.html"
    return max((run_dir / "manifest.json").stat().st_mtime_ns, report.stat().st_mtime_ns if report.is_file() else 0)


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _delete_run(connection: Any, path: str) -> None:
    from sqlalchemy import delete

    for name in ("run_values", "tags", "runs"):
        table = _tables().tables[name]
        connection.execute(delete(table).where(table.c.path == path))


def _public(row: Mapping[str, Any], tags: list[str]) -> dict[str, Any]:
    """A run row as shown: tests as a list, tags added, the bookkeeping column left out."""
    shown = {name: row[name] for name in RUN_COLUMNS if name in row}
    shown["tests"] = [test for test in (row["tests"] or "").split("\n") if test]
    shown["tags"] = tags
    return shown


def run_directories(folder: Path) -> Iterator[Path]:
    """Every run directory (a folder with manifest.json) under `folder`, not looking inside run directories (a fleet's
    device runs are its parts: they are listed, the fleet itself is not)."""
    folder = Path(folder).absolute()
    if not folder.is_dir():
        raise StoreError(f"{folder}: no such folder", "name a folder that holds run directories")
    if (folder / "manifest.json").is_file():
        if not _is_fleet(folder):
            yield folder
            return
        folder = folder / DEVICES_DIR  # a fleet: one PTS run per device under devices/
    try:
        entries = sorted(entry for entry in folder.iterdir() if entry.is_dir() and not entry.is_symlink())
    except OSError:
        return
    for entry in entries:
        yield from run_directories(entry)


def _is_fleet(folder: Path) -> bool:
    from ptsbench.store import RunStore

    try:
        return RunStore.open(folder).kind == FLEET_KIND
    except PtsbenchError:  # damaged: index_run leaves it out
        return False


def _tag_value(tags: Sequence[str], key: str) -> str | None:
    return next((tag.split("=", 1)[1] for tag in tags if tag.startswith(f"{key}=")), None)


def index_run(run_dir: Path) -> tuple[dict[str, Any], list[str], list[dict[str, Any]]]:
    """A run directory as catalog rows: its run row, its tags and its headline values. Device facts the device
    does not report (a file's model or firmware) may come from tags model=, serial=, firmware=."""
    from ptsbench.catalog.values import run_capacity_bytes, run_values
    from ptsbench.store import RunStore

    store = RunStore.open(run_dir)
    manifest = store.manifest
    kind = store.kind
    tags = [str(tag) for tag in manifest.get("tags") or ()]
    target = manifest.get("target") if kind == "pts" else (manifest.get("targets") or [{}])[0]
    target = target or {}
    settings = manifest.get("settings") or {}
    if kind == "pts":
        tests = [str(phase) for phase in settings.get("tests") or ()]
        compliant = bool((manifest.get("compliance") or {}).get("compliant"))
    else:
        tests = [str(case) for case in manifest.get("cases") or ()]
        compliant = None
    capacity = run_capacity_bytes(store)
    report = run_dir / "report" / "index.html"
    row = {
        "path": str(run_dir), "kind": kind, "name": str(manifest.get("name", run_dir.name)),
        "status": manifest.get("status"), "created_utc": manifest.get("created_utc"),
        "finished_utc": manifest.get("finished_utc"),
        **{fact: target.get(fact) or _tag_value(tags, fact) for fact in ("model", "serial", "firmware")},
        "capacity_bytes": capacity, "transport": target.get("transport"),
        "host": (manifest.get("host") or {}).get("hostname"), "ptsbench_version": manifest.get("ptsbench_version"),
        "fio_version": manifest.get("fio_version"), "profile": settings.get("profile"),
        "tests": "\n" + "".join(f"{test}\n" for test in tests), "compliant": compliant,
        "report": str(report) if report.is_file() else None,
    }
    values = [{"name": value.name, "quantity": value.quantity, "value": value.value, "noise": value.noise,
               "samples": value.samples, "beyond": value.beyond} for value in run_values(store)]
    return row, list(dict.fromkeys(tags)), values


def last_run_of_same_model(where: str, run_dir: Path) -> Path | None:
    """The catalog's latest run of the same device model created before `run_dir` (None: there is none)."""
    row, _tags, _values = index_run(Path(run_dir).absolute())
    if not row["model"]:
        raise CatalogError(f"{run_dir}: its device reports no model",
                           "tag the runs with model=NAME, or give --baseline RUN_DIR")
    catalog = Catalog.open(where)
    try:
        earlier = [run for run in catalog.runs({"model": row["model"], "until": row["created_utc"]})
                   if run["path"] != row["path"] and run["status"] == "done"]
    finally:
        catalog.close()
    return Path(earlier[-1]["path"]) if earlier else None

