"""Bad input, command by command, as a table: each row must end with a non-zero exit, exactly one
`ptsbench: error:` line, no traceback, and every file made earlier byte-identical.

One small case-runner run and one small PTS run are made once per session (null engine / an 8 MiB scratch file),
then copied and damaged in the ways a store gets damaged (binary garbage, missing files, hand edits).
"""

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bad_input_table import DEV_LOG_PREFIX, TABLE
from conftest import map_in_threads, run_cli

# one worker runs this module's tests, so its module-wide runs (fixtures) are made once, not once per worker
pytestmark = pytest.mark.xdist_group("bad-input")

NULL_JOB = "[null]\nioengine=null\nsize=16m\nbs=4k\nrw=randread\n"
GARBAGE = b"\xff\xfe\x00\x9c binary \x80 garbage"


def _damage(root: Path, source: Path, name: str, path: str, data: bytes | None) -> Path:
    """A copy of `source` with one file replaced by `data` (None: deleted)."""
    copy = root / name
    shutil.copytree(source, copy)
    target = copy / path
    if data is None:
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    else:
        target.write_bytes(data)
    return copy


@pytest.fixture(scope="session")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Placeholders for the table: prepared runs, damaged copies, files and folders of the user's."""
    root = tmp_path_factory.mktemp("prepared")
    job = root / "null.fio"
    job.write_text(NULL_JOB)
    run = root / "run"
    made = run_cli("run", str(job), "--runtime", "0.2", "--out", str(run))
    assert made.returncode == 0, made.stderr
    pts = root / "pts"
    made = run_cli("pts", "--profile", "demo", "--tests", "iops", "--round-time", "0.1", "--max-rounds", "2",
                   "--size", "8M", "--out", str(pts))
    assert made.returncode == 0, made.stderr
    shutil.copytree(run, root / "run2")
    user = root / "user"
    user.mkdir()
    (user / "results.xlsx").write_text("the user's own workbook")
    (root / "empty").mkdir()
    (root / "garbage.bin").write_bytes(GARBAGE)
    (root / "text.txt").write_text("not a job, not a log\n")
    (root / "bad.fio").write_text("[bad]\nioengine=null\nsize=1m\nrw=sideways\n")
    (root / "binary.fio").write_bytes(GARBAGE)
    (root / "nojob.fio").write_text("[global]\nioengine=null\n")
    (root / "garbage.pid").write_text("not a pid\n")
    (root / "init.pid").write_text("1\n")  # a live process that is not a fio server: never to be signalled
    (root / "bad_bw.1.log").write_bytes(GARBAGE)
    (root / "empty.hosts").write_text("# no hosts yet\n")
    # issue 24 (settings files, runaway inputs, --out folders of plot and compare)
    (root / "unsafe.toml").write_text("runtime = 1\ndestructive = true\n")
    (root / "unsafe-table.toml").write_text("[sweep]\nallow-mounted = true\n")
    os.mkfifo(root / "fifo")
    with open(root / "huge.fio", "wb") as handle:  # sparse, over the 16 MiB a job file may have
        handle.truncate(17 * 1024 * 1024)
    with open(root / "huge-info.txt", "wb") as handle:
        handle.truncate(2 * 1024 * 1024)
    (root / "many-jobs.fio").write_text("[a]\nioengine=null\nsize=1m\nnumjobs=3000\n[b]\nioengine=null\n"
                                        "size=1m\nnumjobs=3000\n")
    fake = root / "fake-comparison"  # looks like an earlier comparison, but the page is the user's
    fake.mkdir()
    (fake / "compared.json").write_text("{}\n")
    (fake / "index.html").write_text("<h1>the user's own page</h1>\n")
    (root / "devlog.fio").write_text(NULL_JOB + f"write_bw_log={DEV_LOG_PREFIX}\nlog_avg_msec=100\n")
    # issue 45: IO logs to replay, a good one and one that would delete its target
    (root / "app.iolog").write_text(f"fio version 2 iolog\n{root}/a add\n{root}/a open\n{root}/a write 0 4096\n")
    (root / "unlink.iolog").write_text(f"fio version 2 iolog\n{root}/a add\n{root}/a unlink\n")
    (root / "users-target.dat").write_bytes(b"the user's data" * 1000)
    case = "cases/001-null"
    places = {
        "root": str(root), "job": str(job), "run": str(run), "run2": str(root / "run2"), "pts": str(pts),
        "user": str(user), "empty": str(root / "empty"), "garbage": str(root / "garbage.bin"),
        "text": str(root / "text.txt"), "badjob": str(root / "bad.fio"), "binjob": str(root / "binary.fio"),
        "nojob": str(root / "nojob.fio"), "garbagepid": str(root / "garbage.pid"), "initpid": str(root / "init.pid"),
        "badlog": str(root / "bad_bw.1.log"),
        "unsafe": str(root / "unsafe.toml"), "unsafe_table": str(root / "unsafe-table.toml"),
        "fifo": str(root / "fifo"), "hugejob": str(root / "huge.fio"), "hugeinfo": str(root / "huge-info.txt"),
        "manyjobs": str(root / "many-jobs.fio"), "fake_comparison": str(fake),
        "devlog": str(root / "devlog.fio"), "iolog": str(root / "app.iolog"), "unlinklog": str(root / "unlink.iolog"),
        "userstarget": str(root / "users-target.dat"),
    }
    damaged = {
        "d_manifest_bin": (run, "manifest.json", GARBAGE),
        "d_manifest_list": (run, "manifest.json", b"[1, 2]\n"),
        "d_manifest_cut": (run, "manifest.json", b'{"schema_version": 1, "kind": "ru'),
        "d_manifest_gone": (run, "manifest.json", None),
        "d_schema": (run, "manifest.json", json.dumps({"schema_version": 99, "kind": "run"}).encode()),
        "d_fiojson_bin": (run, f"{case}/fio.json", GARBAGE),
        "d_result_bin": (run, f"{case}/result.json", GARBAGE),
        "d_result_fields": (run, f"{case}/result.json", b'{"index": 1, "name": "null"}'),
        "d_result_list": (run, f"{case}/result.json", b"[]"),
        "d_result_gone": (run, f"{case}/result.json", None),
        "d_cases_gone": (run, "cases", None),
        "d_jobfio_bin": (run, f"{case}/job.fio", GARBAGE),
        "d_command_bin": (run, f"{case}/command.txt", GARBAGE),
        "p_manifest_bin": (pts, "manifest.json", GARBAGE),
        "p_round_bin": (pts, "pts/iops/rounds/001/round.json", GARBAGE),
        "p_round_edit": (pts, "pts/iops/rounds/002/round.json", b'{"round": 7}'),
        "p_round1_gone": (pts, "pts/iops/rounds/001", None),
        "p_round2_gone": (pts, "pts/iops/rounds/002", None),
        "p_plan_bin": (pts, "plan.json", GARBAGE),
        "p_phase_bin": (pts, "pts/iops/phase.json", GARBAGE),
        "p_phase_gone": (pts, "pts/iops/phase.json", None),
        "p_phase_dir_gone": (pts, "pts/iops", None),
    }
    for name, (source, path, data) in damaged.items():
        places[name] = str(_damage(root, source, name, path, data))
    places.update(_issue40_inputs(root, run, job))
    full = tmp_path_factory.mktemp("full")  # outside root: a row writes into it
    with socket.socket() as busy, _small_tmpfs(full), _planted_server(root) as planted:  # a port in use; a small
        busy.bind(("127.0.0.1", 0))  # disk; a fio server whose pid is planted in a pid file
        busy.listen()
        places["busy_port"] = str(busy.getsockname()[1])
        places["full"] = str(full)
        places["plantedpid"] = str(planted)
        yield places


def _issue40_inputs(root: Path, run: Path, job: Path) -> dict[str, str]:
    """Issue 40's bad inputs: settings of the wrong type, a FIFO and hand edits as a manifest, jobs past fio's
    limits or over a user's files with their logs, a report folder that links to the user's, fio JSON holding what
    fio never writes."""
    (root / "out-number.toml").write_text("out = 5\n")
    (root / "tag-nested.toml").write_text("tag = [[1, 2]]\n")
    (root / "deep.fio").write_text(NULL_JOB + "iodepth=1000000000\n")
    logs = root / "userlogs"
    logs.mkdir()
    (logs / "res_bw.1.log").write_text("the user's own results\n")
    (logs / "iolog.txt").write_text("the user's own notes\n")
    (root / "userlog.fio").write_text(NULL_JOB + f"write_bw_log={logs}/res\nlog_avg_msec=100\n")
    (root / "useriolog.fio").write_text(NULL_JOB + f"write_iolog={logs}/iolog.txt\n")
    (root / "long-line.fio").write_text(NULL_JOB + "description=" + "x" * 5_000_000 + "\n")
    (root / "avg.fio").write_text(NULL_JOB + "write_bw_log=avg\nlog_avg_msec=99999999999999\n")
    with contextlib.closing(sqlite3.connect(root / "other.sqlite")) as other:  # another program's database
        other.execute("CREATE TABLE contacts (name TEXT)")
        other.commit()
    (root / "db-link.sqlite").symlink_to(root / "other.sqlite")
    places = {name: str(root / file) for name, file in (
        ("outnum", "out-number.toml"), ("tagnest", "tag-nested.toml"), ("deepjob", "deep.fio"),
        ("userlog", "userlog.fio"), ("useriolog", "useriolog.fio"), ("longline", "long-line.fio"),
        ("avgjob", "avg.fio"), ("otherdb", "other.sqlite"), ("dblink", "db-link.sqlite"))}
    fifo = root / "d_manifest_fifo"
    shutil.copytree(run, fifo)
    (fifo / "manifest.json").unlink()
    os.mkfifo(fifo / "manifest.json")
    manifest = json.loads((run / "manifest.json").read_text())
    for name, edit in (("d_created_word", {"created_utc": "not a date"}), ("d_status_list", {"status": [1, 2]})):
        places[name] = str(_damage(root, run, name, "manifest.json", json.dumps({**manifest, **edit}).encode()))
    victim = root / "victim"
    victim.mkdir()
    (victim / "index.html").write_text("<h1>the user's own page</h1>\n")
    linked = root / "linked"
    shutil.copytree(run, linked)
    shutil.rmtree(linked / "report", ignore_errors=True)
    (linked / "report").symlink_to(victim)
    document = json.loads((run / "cases" / "001-null" / "fio.json").read_text())
    for name, key, value in (("nan", "iops", float("nan")), ("big", "iops", 1e308), ("neg", "bw_bytes", -5),
                             ("iod", "iodepth", "deep")):
        changed = json.loads(json.dumps(document))
        entry = changed["jobs"][0]
        (entry["job options"] if key == "iodepth" else entry["read"])[key] = value
        (root / f"{name}.json").write_text(json.dumps(changed))
        places[f"json_{name}"] = str(root / f"{name}.json")
    return {**places, "d_manifest_fifo": str(fifo), "linked": str(linked)}


@contextlib.contextmanager
def _planted_server(root: Path) -> Iterator[Path]:
    """A fio server that `ptsbench server --daemon` did not start, its pid in a pid file (a planted one)."""
    folder = Path(tempfile.mkdtemp(prefix="ptsbench-planted-"))
    server = subprocess.Popen(["fio", f"--server=sock:{folder}/fio.sock"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    pidfile = root / "planted.pid"
    pidfile.write_text(f"{server.pid}\n")
    try:
        yield pidfile
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _small_tmpfs(mount: Path) -> Iterator[None]:
    """A 400 KiB tmpfs (as root): a run's results fit on it, its report does not."""
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)],
                                                   check=False).returncode == 0
    try:
        yield
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=False)


def digests(root: Path) -> dict[str, str]:
    """A hash of every top-level entry of root: its files' paths and bytes."""
    found = {}
    for entry in sorted(root.iterdir()):
        total = hashlib.sha256()
        for path in sorted([entry, *entry.rglob("*")] if entry.is_dir() else [entry]):
            if path.is_file() and not path.is_symlink():
                total.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
        found[entry.name] = total.hexdigest()
    return found




def test_the_table_is_large_and_covers_every_command() -> None:
    from ptsbench.cli import COMMANDS

    assert len(TABLE) >= 150 and len({row[0] for row in TABLE}) == len(TABLE)
    assert {args[0] for _id, args, _needle in TABLE if args} >= set(COMMANDS)


def _fill(text: str, places: dict[str, str]) -> str:
    for key, value in places.items():
        text = text.replace("{" + key + "}", value)
    return text


# rows refused before anything is made: their working folder stays empty (no run directory, no test file, no
# temporary folder) and fio writes no log into /dev
MAKES_NOTHING = [name for name, _args, _needle in TABLE if name.startswith((
    "run-ioengine-", "run-set-", "run-bw-log-", "pts-proc-", "sweep-ioengine-", "sweep-set-", "run-images-",
    "sweep-images-", "capture-", "characterise-", "replay-"))]


def _running(pattern: str) -> bytes:
    """The pids of the processes whose command line matches `pattern`, as `pgrep -f` tells them (a line each), read
    from /proc here: a pgrep a row costs 0.016 CPU-s, a sixth of the row."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes().rstrip(b"\0").replace(b"\0", b" ")
            except OSError:  # ended meanwhile
                continue
            if re.search(pattern.encode(), command):
                found.append(entry.name.encode() + b"\n")
    return b"".join(found)


@dataclass
class Outcome:
    result: subprocess.CompletedProcess[str]
    touched: list[str]  # the prepared entries the row names
    leftover_fio: bytes
    made: list[str] = field(default_factory=list)  # what is in the row's working folder afterwards


@pytest.fixture(scope="session")
def outcomes(prepared: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every row run once, four at a time (each in a folder of its own, as its working directory), with the
    prepared data hashed before and after."""
    root = Path(prepared["root"])
    before = digests(root)

    def run_row(row: tuple[str, tuple[str, ...], str]) -> tuple[str, Outcome]:
        name, args, _needle = row
        tmp = tmp_path_factory.mktemp(name)
        places = {**prepared, "tmp": str(tmp)}
        try:
            result = run_cli(*[_fill(arg, places) for arg in args], cwd=tmp, timeout=120)
        except subprocess.TimeoutExpired as hung:  # a read that blocks: this row fails, the others still run
            result = subprocess.CompletedProcess(hung.cmd, -9, "", f"(hung: killed after {hung.timeout:g} s)\n")
        named = {key for key in prepared if any("{" + key + "}" in arg for arg in args)}
        touched = sorted({Path(prepared[key]).relative_to(root).parts[0] for key in named
                          if Path(prepared[key]).is_relative_to(root) and key != "root"})
        leftover = _running(f"fio.*{re.escape(str(tmp))}")
        return name, Outcome(result, touched, leftover, sorted(path.name for path in tmp.iterdir()))

    done = dict(map_in_threads(run_row, TABLE, 4))
    after = digests(root)
    changed = {name for name in before if before[name] != after.get(name)}
    for outcome in done.values():
        outcome.touched = [name for name in outcome.touched if name in changed]
    done["(all)"] = Outcome(subprocess.CompletedProcess([], 0), sorted(changed | (set(after) - set(before))), b"")
    return done


def test_the_prepared_data_is_unchanged(outcomes: dict[str, Outcome]) -> None:
    assert outcomes["(all)"].touched == []


def test_a_planted_fio_server_is_left_running(prepared: dict[str, str], outcomes: dict[str, Outcome]) -> None:
    pid = int(Path(prepared["plantedpid"]).read_text())
    assert outcomes["server-stop-planted-pid"].result.returncode != 0
    assert b"--server=sock:" in Path(f"/proc/{pid}/cmdline").read_bytes()  # the same fio server, still running


@pytest.mark.parametrize(("name", "needle"), [(row[0], row[2]) for row in TABLE], ids=[row[0] for row in TABLE])
def test_bad_input_is_one_error_line_and_changes_nothing(name: str, needle: str, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[name]
    result = outcome.result
    said = result.stdout + result.stderr
    assert result.returncode != 0, said
    assert "Traceback" not in said and "Exception ignored" not in said, said
    errors = [line for line in result.stderr.splitlines() if line.startswith("ptsbench: error:")]
    assert len(errors) == 1, result.stderr
    assert needle in errors[0], errors[0]
    assert outcome.touched == []  # what the row named, made earlier, is byte-identical
    assert outcome.leftover_fio == b""  # no fio left running


@pytest.mark.parametrize("name", MAKES_NOTHING)
def test_refused_before_anything_is_made(name: str, outcomes: dict[str, Outcome]) -> None:
    assert outcomes[name].made == []
    assert not Path(DEV_LOG_PREFIX + "_bw.1.log").exists() and not Path(DEV_LOG_PREFIX + "_bw.log").exists()


def test_another_users_daemon_server_is_left_running() -> None:
    """A fio server another user started as `ptsbench server --daemon --pidfile F` does (its command line names F):
    `server --stop --pidfile F` run by root leaves it running, in one error line (issue 40: stop only a server of
    this user's)."""
    folder = Path(tempfile.mkdtemp(prefix="ptsbench-other-"))  # under /tmp: a folder nobody can reach
    os.chmod(folder, 0o755)
    os.chown(folder, 65534, 65534)  # nobody's
    pidfile = folder / "fio.pid"
    subprocess.run(["fio", f"--server=sock:{folder}/fio.sock", f"--daemonize={pidfile}"], user=65534, group=65534,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    pid = int(pidfile.read_text())
    try:
        done = run_cli("server", "--stop", "--pidfile", str(pidfile))
        assert done.returncode != 0 and "another user" in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert Path(f"/proc/{pid}/status").read_text().count("\nUid:\t65534") == 1  # the same server, still running
    finally:
        os.kill(pid, 9)
        shutil.rmtree(folder, ignore_errors=True)


WORKLOAD_ROWS = [name for name, _args, _needle in TABLE if name.startswith(("capture-", "characterise-", "replay-"))]


@pytest.mark.parametrize("name", WORKLOAD_ROWS)
def test_workload_hints_name_what_exists(name: str, outcomes: dict[str, Outcome]) -> None:
    """Every `ptsbench COMMAND` and --option an error of capture, characterise or replay names exists: a command,
    and an option of the refused command or of the command the hint names (a hint that outlived its option
    misleads); and no replay error offers a folder as the target (replay refuses one)."""
    import click

    from ptsbench.cli import COMMANDS, cli

    context = click.Context(cli)

    def options(command: str) -> set[str]:
        found = cli.get_command(context, command)
        assert found is not None, command
        return {option for param in found.params for option in param.opts}

    command = next(args[0] for row, args, _needle in TABLE if row == name)
    [line] = [line for line in outcomes[name].result.stderr.splitlines() if line.startswith("ptsbench: error:")]
    said = re.sub(r"no such option: --\S+", "", line)  # the typo itself, named as one
    named = re.findall(r"(?:`|python -m )ptsbench ([a-z]+)", said)
    assert set(named) <= set(COMMANDS), line
    allowed = options(command).union({"--help"}, *(options(other) for other in named))
    assert set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", said)) <= allowed, line
    assert command != "replay" or "or a folder" not in said, line
