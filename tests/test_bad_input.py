"""Bad input, command by command, as a table: each row must end with a non-zero exit, exactly one
`ptsbench: error:` line, no traceback, and every file made earlier byte-identical.

One small case-runner run and one small PTS run are made once per session (null engine / an 8 MiB scratch file),
then copied and damaged in the ways a store gets damaged (binary garbage, missing files, hand edits).
"""

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import run_cli

NULL_JOB = "[null]\nioengine=null\nsize=16m\nbs=4k\nrw=randread\n"
GARBAGE = b"\xff\xfe\x00\x9c binary \x80 garbage"
DEV_LOG_PREFIX = "/dev/ptsbench-bad-input"  # a log prefix in /dev: fio would make /dev/ptsbench-bad-input_bw.1.log


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
        "devlog": str(root / "devlog.fio"),
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
    full = tmp_path_factory.mktemp("full")  # outside root: a row writes into it
    with socket.socket() as busy, _small_tmpfs(full):  # a port something already listens on; a small disk
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        places["busy_port"] = str(busy.getsockname()[1])
        places["full"] = str(full)
        yield places


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


R, P = "{run}", "{pts}"
# (id, arguments with {placeholders}, a fragment the error line must hold ("" for any))
TABLE: list[tuple[str, tuple[str, ...], str]] = [
    # ---- run ----
    ("run-nothing", ("run",), "Missing argument"),
    ("run-missing-job", ("run", "{root}/nope.fio"), "no such job file"),
    ("run-empty-folder", ("run", "{empty}"), ""),
    ("run-binary-job", ("run", "{binjob}"), ""),
    ("run-job-without-jobs", ("run", "{nojob}", "--dry-run"), ""),
    ("run-fio-refuses", ("run", "{badjob}", "--out", "{tmp}/r"), "failed cases"),
    ("run-runtime-nan", ("run", "{job}", "--runtime", "nan"), "--runtime"),
    ("run-runtime-inf", ("run", "{job}", "--runtime", "inf"), "--runtime"),
    ("run-runtime-minus-inf", ("run", "{job}", "--runtime", "-inf"), "--runtime"),
    ("run-runtime-huge", ("run", "{job}", "--runtime", "1e308"), "--runtime"),
    ("run-runtime-tiny", ("run", "{job}", "--runtime", "1e-9"), "--runtime"),
    ("run-runtime-zero", ("run", "{job}", "--runtime", "0"), "--runtime"),
    ("run-runtime-negative", ("run", "{job}", "--runtime", "-1"), "--runtime"),
    ("run-runtime-word", ("run", "{job}", "--runtime", "soon"), "--runtime"),
    ("run-runtime-empty", ("run", "{job}", "--runtime", ""), "--runtime"),
    ("run-runtime-400-days", ("run", "{job}", "--runtime", "9600h"), "over a year"),
    ("run-runtime-under-1ms", ("run", "{job}", "--runtime", "0.0001"), "1 ms"),
    ("run-images-without-report", ("run", "{job}", "--out", "{tmp}/r", "--images", "png"), "--report"),
    ("run-size-word", ("run", "{job}", "--target", "{tmp}/t", "--size", "big"), "not a size"),
    ("run-size-negative", ("run", "{job}", "--target", "{tmp}/t", "--size", "-1G"), "not a size"),
    ("run-size-unit", ("run", "{job}", "--target", "{tmp}/t", "--size", "1Q"), "not a size"),
    ("run-size-over-free", ("run", "{job}", "--target", "{tmp}/t", "--size", "900T"), "free"),
    ("run-set-no-equals", ("run", "{job}", "--set", "iodepth"), "KEY=VALUE"),
    ("run-set-no-key", ("run", "{job}", "--set", "=3"), "KEY=VALUE"),
    ("run-set-empty", ("run", "{job}", "--set", ""), "KEY=VALUE"),
    ("run-log-interval-zero", ("run", "{job}", "--log-interval", "0"), "--log-interval"),
    ("run-log-interval-negative", ("run", "{job}", "--log-interval", "-5"), "--log-interval"),
    ("run-log-interval-word", ("run", "{job}", "--log-interval", "often"), "--log-interval"),
    ("run-format", ("run", "{job}", "--format", "xml"), "--format"),
    ("run-out-a-run", ("run", "{job}", "--out", R), "already holds a run"),
    ("run-out-a-pts-run", ("run", "{job}", "--out", P), "resume"),
    ("run-out-users-folder", ("run", "{job}", "--out", "{user}"), "not empty"),
    ("run-out-a-file", ("run", "{job}", "--out", "{text}"), "is a file"),
    ("run-out-under-a-file", ("run", "{job}", "--out", "{text}/r"), ""),
    ("run-out-not-utf8", ("run", "{job}", "--out", "{tmp}/\udcff\udcfe"), "UTF-8"),
    ("run-target-not-utf8", ("run", "{job}", "--target", "{tmp}/t\udcff", "--size", "1M"), "UTF-8"),
    ("run-job-not-utf8", ("run", "{tmp}/j\udcff.fio"), "UTF-8"),
    ("quick-target-not-utf8", ("quick", "{tmp}/q\udcff", "--size", "1M"), "UTF-8"),
    ("pts-target-not-utf8", ("pts", "{tmp}/p\udcff", "--profile", "demo", "--size", "16M"), "UTF-8"),
    ("sweep-target-not-utf8", ("sweep", "{tmp}/s\udcff", "--size", "1M"), "UTF-8"),
    ("run-target-missing-folder", ("run", "{job}", "--target", "{tmp}/no/such/t"), "does not exist"),
    ("run-target-empty", ("run", "{job}", "--target", ""), "no target"),
    ("run-target-blank", ("run", "{job}", "--target", "   "), "no target"),
    ("run-hosts-empty", ("run", "{job}", "--hosts", ""), "names no host"),
    ("run-hosts-commas", ("run", "{job}", "--hosts", ",,,"), "names no host"),
    ("run-hosts-port-range", ("run", "{job}", "--hosts", "tcp://127.0.0.1:99999"), "65535"),
    ("run-hosts-port-word", ("run", "{job}", "--hosts", "ssh://127.0.0.1:http"), "not a number"),
    ("run-hosts-twice", ("run", "{job}", "--hosts", "ssh://127.0.0.1,tcp://127.0.0.1"), "listed twice"),
    ("run-hosts-no-transport", ("run", "{job}", "--hosts", "127.0.0.1:8765"), "does not say how to reach"),
    ("run-hosts-unknown-transport", ("run", "{job}", "--hosts", "http://127.0.0.1"), "unknown transport"),
    ("run-hosts-ssh-option-user", ("run", "{job}", "--hosts", "ssh://-oProxyCommand=x@h"), "not a user name"),
    ("run-hosts-unreachable", ("run", "{job}", "--target", "/tmp", "--hosts", "tcp://127.0.0.1:1"), ""),
    ("run-hosts-empty-file", ("run", "{job}", "--hosts", "{root}/empty.hosts"), ""),
    ("run-unknown-option", ("run", "{job}", "--bogus"), "No such option"),
    ("run-option-without-value", ("run", "{job}", "--ioengine"), "requires an argument"),
    ("run-dry-run-missing-job", ("run", "{root}/nope.fio", "--dry-run"), "no such job file"),
    ("run-target-proc-dir", ("run", "{job}", "--target", "/proc/self/fd/0/x"), ""),
    ("run-ioengine-semicolon", ("run", "{job}", "--ioengine", "null;x", "--out", "{tmp}/r"), "';'"),
    ("run-ioengine-hash", ("run", "{job}", "--ioengine", "null #x", "--dry-run"), "'#'"),
    ("run-set-two-equals", ("run", "{job}", "--set", "bs=4k=8k", "--out", "{tmp}/r"), "'='"),
    ("run-set-tab", ("run", "{job}", "--set", "iodepth=4\t8", "--out", "{tmp}/r"), "holds '\\t'"),
    ("run-set-negative-size", ("run", "{job}", "--set", "size=-1m", "--out", "{tmp}/r"), "'-'"),
    ("run-set-semicolon", ("run", "{job}", "--set", "ioengine=null;x", "--dry-run"), "';'"),
    ("run-bw-log-in-dev", ("run", "{devlog}", "--out", "{tmp}/r"), "devtmpfs"),
    ("run-bw-log-in-dev-dry-run", ("run", "{devlog}", "--dry-run"), "devtmpfs"),
    # ---- quick ----
    ("quick-runtime-nan", ("quick", "--runtime", "nan"), "--runtime"),
    ("quick-runtime-inf", ("quick", "--runtime", "inf"), "--runtime"),
    ("quick-runtime-zero", ("quick", "--runtime", "0"), "--runtime"),
    ("quick-runtime-word", ("quick", "--runtime", "abc"), "--runtime"),
    ("quick-size-word", ("quick", "{tmp}", "--size", "abc"), "not a size"),
    ("quick-size-over-free", ("quick", "{tmp}", "--size", "900T"), "free"),
    ("quick-format", ("quick", "--format", "yaml"), "--format"),
    ("quick-out-a-run", ("quick", "--out", R), "already holds a run"),
    ("quick-out-users-folder", ("quick", "--out", "{user}"), "not empty"),
    ("quick-out-not-utf8", ("quick", "--out", "{tmp}/\udcff"), "UTF-8"),
    ("quick-hosts-without-target", ("quick", "--hosts", "ssh://127.0.0.1"), "needs TARGET"),
    ("quick-hosts-empty", ("quick", "{tmp}", "--hosts", ""), "names no host"),
    ("quick-target-missing-folder", ("quick", "{tmp}/no/such/t"), "does not exist"),
    ("quick-log-interval", ("quick", "--log-interval", "0"), "--log-interval"),
    ("quick-two-targets", ("quick", "{tmp}", "{tmp}"), "unexpected extra argument"),
    ("quick-unknown-option", ("quick", "--target", "{tmp}"), "No such option"),
    # ---- pts ----
    ("pts-profile", ("pts", "--profile", "fast"), "--profile"),
    ("pts-spec", ("pts", "--profile", "demo", "--spec", "3.0"), "--spec"),
    ("pts-tests", ("pts", "--profile", "demo", "--tests", "speed"), "speed"),
    ("pts-tests-empty", ("pts", "--profile", "demo", "--tests", ""), ""),
    ("pts-round-time-nan", ("pts", "--profile", "demo", "--round-time", "nan", "--dry-run"), "nan"),
    ("pts-round-time-inf", ("pts", "--profile", "demo", "--round-time", "inf", "--dry-run"), "inf"),
    ("pts-round-time-zero", ("pts", "--profile", "demo", "--round-time", "0", "--dry-run"), "duration"),
    ("pts-round-time-huge", ("pts", "--profile", "demo", "--round-time", "99999999999", "--dry-run"), "year"),
    ("pts-round-time-tiny", ("pts", "--profile", "demo", "--round-time", "0.00001", "--dry-run"), "1 ms"),
    ("pts-round-time-unknown-test", ("pts", "--profile", "demo", "--round-time", "speed=5", "--dry-run"), ""),
    ("pts-max-rounds-zero", ("pts", "--profile", "demo", "--max-rounds", "0", "--dry-run"), ""),
    ("pts-max-rounds-negative", ("pts", "--profile", "demo", "--max-rounds", "-3", "--dry-run"), ""),
    ("pts-max-rounds-word", ("pts", "--profile", "demo", "--max-rounds", "many", "--dry-run"), ""),
    ("pts-iodepth-zero", ("pts", "--profile", "demo", "--iodepth", "0", "--dry-run"), ""),
    ("pts-numjobs-word", ("pts", "--profile", "demo", "--numjobs", "lots", "--dry-run"), ""),
    ("pts-block-sizes", ("pts", "--profile", "demo", "--block-sizes", "4q", "--dry-run"), ""),
    ("pts-mixes", ("pts", "--profile", "demo", "--mixes", "200", "--dry-run"), ""),
    ("pts-active-range-zero", ("pts", "--profile", "demo", "--active-range", "0", "--dry-run"), "--active-range"),
    ("pts-active-range-over", ("pts", "--profile", "demo", "--active-range", "101", "--dry-run"), "--active-range"),
    ("pts-active-range-nan", ("pts", "--profile", "demo", "--active-range", "nan", "--dry-run"), "--active-range"),
    ("pts-precondition-inf", ("pts", "--profile", "demo", "--precondition-multiple", "inf", "--dry-run"), "inf"),
    ("pts-precondition-huge", ("pts", "--profile", "demo", "--precondition-multiple", "1e300", "--dry-run"), ""),
    ("pts-wsat-capacity-nan", ("pts", "--profile", "demo", "--wsat-capacity", "nan", "--dry-run"), "finite"),
    ("pts-ramp-time-inf", ("pts", "--profile", "demo", "--ramp-time", "inf", "--dry-run"), "inf"),
    ("pts-ramp-time-negative", ("pts", "--profile", "demo", "--ramp-time", "-1", "--dry-run"), "--ramp-time"),
    ("pts-wsat-time", ("pts", "--profile", "demo", "--wsat-time", "forever", "--dry-run"), ""),
    ("pts-out-a-run", ("pts", "--profile", "demo", "--out", R), "already holds a run"),
    ("pts-out-a-pts-run", ("pts", "--profile", "demo", "--out", P), "resume"),
    ("pts-out-users-folder", ("pts", "--profile", "demo", "--out", "{user}"), "not empty"),
    ("pts-out-not-utf8", ("pts", "--profile", "demo", "--out", "{tmp}/\udcff"), "UTF-8"),
    ("pts-size-over-free", ("pts", "{tmp}/p.dat", "--profile", "demo", "--size", "900T", "--out", "{tmp}/p"), "free"),
    ("pts-size-word", ("pts", "{tmp}/p.dat", "--profile", "demo", "--size", "huge"), "not a size"),
    ("pts-no-target", ("pts",), "no target"),
    ("pts-hosts-empty", ("pts", "/dev/null", "--size", "1G", "--hosts", ""), "names no host"),
    ("pts-hosts-without-size", ("pts", "/dev/nvme0n1", "--hosts", "ssh://127.0.0.1"), ""),
    ("pts-purge", ("pts", "--profile", "demo", "--purge", "shred", "--dry-run"), ""),
    ("pts-target-missing-folder", ("pts", "{tmp}/no/such/p.dat", "--profile", "demo"), "does not exist"),
    ("pts-zones-on-iops", ("pts", "--profile", "demo", "--zones", "0", "--dry-run"), ""),
    ("pts-proc-file", ("pts", "/proc/self/status", "--profile", "demo"), "kernel's proc"),
    ("pts-proc-file-dry-run", ("pts", "/proc/self/status", "--profile", "demo", "--dry-run"), "kernel's proc"),
    # ---- resume ----
    ("resume-nothing", ("resume",), "Missing argument"),
    ("resume-missing", ("resume", "{root}/nope"), "no such run directory"),
    ("resume-a-file", ("resume", "{text}"), ""),
    ("resume-empty-folder", ("resume", "{empty}"), "missing"),
    ("resume-users-folder", ("resume", "{user}"), "missing"),
    ("resume-a-case-run", ("resume", R), "is not a PTS run or sweep"),
    ("resume-manifest-binary", ("resume", "{p_manifest_bin}"), "damaged"),
    ("resume-round-binary", ("resume", "{p_round_bin}"), "damaged"),
    ("resume-round-edited", ("resume", "{p_round_edit}"), "damaged"),
    ("resume-round-deleted", ("resume", "{p_round1_gone}"), "missing"),
    ("resume-last-round-deleted", ("resume", "{p_round2_gone}"), "missing"),
    ("resume-plan-binary", ("resume", "{p_plan_bin}"), "damaged"),
    ("resume-two-dirs", ("resume", P, P), "unexpected extra argument"),
    ("resume-schema", ("resume", "{d_schema}"), "schema"),
    # ---- show ----
    ("show-nothing", ("show",), "Missing argument"),
    ("show-missing", ("show", "{root}/nope"), "no such run directory"),
    ("show-a-file", ("show", "{text}"), ""),
    ("show-empty-folder", ("show", "{empty}"), "missing"),
    ("show-users-folder", ("show", "{user}"), "missing"),
    ("show-format", ("show", R, "--format", "html"), "--format"),
    ("show-manifest-binary", ("show", "{d_manifest_bin}"), "damaged"),
    ("show-manifest-list", ("show", "{d_manifest_list}"), "damaged"),
    ("show-manifest-cut", ("show", "{d_manifest_cut}"), "damaged"),
    ("show-manifest-gone", ("show", "{d_manifest_gone}"), "missing"),
    ("show-schema", ("show", "{d_schema}"), "schema"),
    ("show-result-binary", ("show", "{d_result_bin}"), "damaged"),
    ("show-result-fields", ("show", "{d_result_fields}"), "damaged"),
    ("show-result-list", ("show", "{d_result_list}"), "damaged"),
    ("show-result-gone", ("show", "{d_result_gone}"), "result.json is missing"),
    ("show-cases-gone", ("show", "{d_cases_gone}"), "cases is missing"),
    ("show-pts-manifest-binary", ("show", "{p_manifest_bin}"), "damaged"),
    ("show-pts-round-binary", ("show", "{p_round_bin}"), "damaged"),
    ("show-pts-round-edited", ("show", "{p_round_edit}"), "damaged"),
    ("show-pts-round-deleted", ("show", "{p_round1_gone}"), "missing"),
    ("show-pts-last-round-deleted", ("show", "{p_round2_gone}"), "missing"),
    ("show-pts-phase-binary", ("show", "{p_phase_bin}"), "damaged"),
    ("show-pts-phase-gone", ("show", "{p_phase_gone}"), "phase.json is missing"),
    ("show-pts-phase-folder-gone", ("show", "{p_phase_dir_gone}"), "phase.json is missing"),
    ("report-pts-phase-folder-gone", ("report", "{p_phase_dir_gone}", "--no-static"), "phase.json is missing"),
    ("resume-pts-phase-folder-gone", ("resume", "{p_phase_dir_gone}"), "phase.json is missing"),
    # ---- report ----
    ("report-nothing", ("report",), "Missing argument"),
    ("report-missing", ("report", "{root}/nope"), "no such run directory"),
    ("report-a-file", ("report", "{text}"), ""),
    ("report-users-folder", ("report", "{user}"), "missing"),
    ("report-manifest-binary", ("report", "{d_manifest_bin}", "--no-static"), "damaged"),
    ("report-manifest-gone", ("report", "{d_manifest_gone}", "--no-static"), "missing"),
    ("report-schema", ("report", "{d_schema}", "--no-static"), "schema"),
    ("report-fio-json-binary", ("report", "{d_fiojson_bin}", "--no-static"), "damaged"),
    ("report-result-binary", ("report", "{d_result_bin}", "--no-static"), "damaged"),
    ("report-result-fields", ("report", "{d_result_fields}", "--no-static"), "damaged"),
    ("report-result-gone", ("report", "{d_result_gone}", "--no-static"), "result.json is missing"),
    ("report-cases-gone", ("report", "{d_cases_gone}", "--no-static"), "cases is missing"),
    ("report-job-binary", ("report", "{d_jobfio_bin}", "--no-static"), "damaged"),
    ("report-command-binary", ("report", "{d_command_bin}", "--no-static"), "damaged"),
    ("report-pts-manifest-binary", ("report", "{p_manifest_bin}", "--no-static"), "damaged"),
    ("report-pts-round-binary", ("report", "{p_round_bin}", "--no-static"), "damaged"),
    ("report-pts-round-edited", ("report", "{p_round_edit}", "--no-static"), "damaged"),
    ("report-pts-round-deleted", ("report", "{p_round1_gone}", "--no-static"), "missing"),
    ("report-pts-last-round-deleted", ("report", "{p_round2_gone}", "--no-static"), "missing"),
    ("report-unknown-option", ("report", R, "--pdf"), "No such option"),
    ("report-images-unknown-format", ("report", R, "--images", "gif"), "--images"),
    ("report-images-without-static", ("report", R, "--no-static", "--images", "png"), "--no-static"),
    # ---- compare ----
    ("compare-nothing", ("compare",), "Missing argument"),
    ("compare-one-run", ("compare", R), "at least two"),
    ("compare-same-run", ("compare", R, R, "--out", "{tmp}/c"), "same run"),
    ("compare-same-run-two-spellings", ("compare", R, "{run}/", "--out", "{tmp}/c"), "same run"),
    ("compare-missing-run", ("compare", R, "{root}/nope", "--out", "{tmp}/c"), "no such run directory"),
    ("compare-users-folder", ("compare", R, "{user}", "--out", "{tmp}/c"), "missing"),
    ("compare-damaged-run", ("compare", R, "{d_result_bin}", "--out", "{tmp}/c"), "damaged"),
    ("compare-kinds", ("compare", R, P, "--out", "{tmp}/c"), "different kinds"),
    ("compare-out-a-run", ("compare", R, "{run2}", "--out", R), "inside the run directory"),
    ("compare-out-a-runs-report", ("compare", R, "{run2}", "--out", "{run}/report"), "inside the run directory"),
    ("compare-out-a-pts-run", ("compare", R, "{run2}", "--out", P), "inside the run directory"),
    ("compare-out-users-folder", ("compare", R, "{run2}", "--out", "{user}"), "not empty"),
    ("compare-out-a-file", ("compare", R, "{run2}", "--out", "{text}"), ""),
    ("compare-out-not-utf8", ("compare", R, "{run2}", "--out", "{tmp}/\udcff"), "UTF-8"),
    ("compare-labels", ("compare", R, "{run2}", "--label", "one"), "--label"),
    ("compare-labels-three", ("compare", R, "{run2}", "--label", "a", "--label", "b", "--label", "c"), "--label"),
    # ---- plot ----
    ("plot-nothing", ("plot",), "Missing argument"),
    ("plot-missing", ("plot", "{root}/nope", "--out", "{tmp}/p"), ""),
    ("plot-empty-folder", ("plot", "{empty}", "--out", "{tmp}/p"), ""),
    ("plot-not-a-log", ("plot", "{text}", "--out", "{tmp}/p"), ""),
    ("plot-binary-log", ("plot", "{badlog}", "--out", "{tmp}/p"), ""),
    ("plot-kind", ("plot", R, "--kind", "temp"), "--kind"),
    ("plot-format", ("plot", R, "--format", "gif"), "--format"),
    ("plot-smooth-nan", ("plot", R, "--smooth", "nan", "--out", "{tmp}/p"), "finite"),
    ("plot-smooth-negative", ("plot", R, "--smooth", "-1", "--out", "{tmp}/p"), "--smooth"),
    ("plot-interval-zero", ("plot", R, "--interval", "0", "--out", "{tmp}/p"), "--interval"),
    ("plot-interval-inf", ("plot", R, "--interval", "inf", "--out", "{tmp}/p"), "finite"),
    ("plot-x", ("plot", R, "--x", "space"), "--x"),
    ("plot-dir", ("plot", R, "--dir", "up"), "--dir"),
    ("plot-percentiles", ("plot", R, "--percentiles", "fifty", "--out", "{tmp}/p"), ""),
    ("plot-percentiles-over-100", ("plot", R, "--percentiles", "150", "--out", "{tmp}/p"), ""),
    ("plot-pattern", ("plot", R, "--pattern", "([", "--out", "{tmp}/p"), ""),
    ("plot-out-a-file", ("plot", R, "--out", "{text}"), ""),
    # ---- info ----
    ("info-nothing", ("info",), "Missing argument"),
    ("info-missing", ("info", "{root}/no/such/thing"), ""),
    ("info-empty", ("info", ""), ""),
    ("info-unknown-option", ("info", "{text}", "--yaml"), "No such option"),
    ("info-two-targets", ("info", "{text}", "{text}"), "unexpected extra argument"),
    # ---- server ----
    ("server-port-zero", ("server", "--port", "0"), "--port"),
    ("server-port-high", ("server", "--port", "70000"), "--port"),
    ("server-port-word", ("server", "--port", "ssh"), "--port"),
    ("server-bind-name", ("server", "--tcp", "--bind", "localhost-ish"), "not an IP address"),
    ("server-bind-foreign", ("server", "--tcp", "--bind", "192.0.2.1"), "cannot listen"),
    ("server-port-in-use", ("server", "--tcp", "--port", "{busy_port}"), "in use"),
    ("server-bind-without-tcp", ("server", "--bind", "127.0.0.1"), "add --tcp"),
    ("server-socket-and-tcp", ("server", "--tcp", "--socket", "{root}/s/fio.sock"), "exclude each other"),
    ("server-socket-in-a-file", ("server", "--socket", "{job}/fio.sock"), "is not a folder"),
    ("server-daemon-without-pidfile", ("server", "--daemon"), "--pidfile"),
    ("server-stop-without-pidfile", ("server", "--stop"), "--pidfile"),
    ("server-stop-missing-pidfile", ("server", "--stop", "--pidfile", "{root}/none.pid"), "pid file"),
    ("server-stop-garbage-pidfile", ("server", "--stop", "--pidfile", "{garbagepid}"), "holds no pid"),
    ("server-stop-not-fio", ("server", "--stop", "--pidfile", "{initpid}"), "not a fio server"),
    ("server-daemon-pidfile-missing-folder", ("server", "--daemon", "--tcp", "--port", "{busy_port}", "--pidfile",
                                              "{tmp}/no/such/fio.pid"), ""),
    ("server-daemon-pidfile-folder", ("server", "--daemon", "--pidfile", "{empty}"), ""),
    # ---- sweep ----
    ("sweep-nothing", ("sweep",), "Missing argument"),
    ("sweep-runtime-nan", ("sweep", "{tmp}/s.dat", "--size", "1M", "--runtime", "nan"), "--runtime"),
    ("sweep-images-without-report", ("sweep", "{tmp}/s.dat", "--size", "1M", "--images", "svg"), "--report"),
    ("sweep-runtime-huge", ("sweep", "{tmp}/s.dat", "--size", "1M", "--runtime", "1e308"), "--runtime"),
    ("sweep-ramp-time-inf", ("sweep", "{tmp}/s.dat", "--size", "1M", "--ramp-time", "inf"), "--ramp-time"),
    ("sweep-ss-ramp-nan", ("sweep", "{tmp}/s.dat", "--size", "1M", "--ss-ramp", "nan"), "finite"),
    ("sweep-iodepth-zero", ("sweep", "{tmp}/s.dat", "--size", "1M", "--iodepth", "0"), "--iodepth"),
    ("sweep-rw", ("sweep", "{tmp}/s.dat", "--size", "1M", "--rw", "sideways"), "--rw"),
    ("sweep-rwmixread", ("sweep", "{tmp}/s.dat", "--size", "1M", "--rwmixread", "150"), "--rwmixread"),
    ("sweep-size-over-free", ("sweep", "{tmp}/s.dat", "--size", "900T"), "free"),
    ("sweep-hosts-empty", ("sweep", "{tmp}/s.dat", "--size", "1M", "--hosts", ""), "names no host"),
    ("sweep-out-a-run", ("sweep", "{tmp}/s.dat", "--size", "1M", "--runtime", "1", "--out", R), "already holds"),
    ("sweep-out-users-folder", ("sweep", "{tmp}/s.dat", "--size", "1M", "--runtime", "1", "--out", "{user}"),
     "not empty"),
    ("sweep-out-not-utf8", ("sweep", "{tmp}/s.dat", "--size", "1M", "--out", "{tmp}/\udcff"), "UTF-8"),
    ("sweep-ioengine-semicolon", ("sweep", "{tmp}/s.dat", "--size", "1M", "--ioengine", "null;x"), "';'"),
    ("sweep-set-two-equals", ("sweep", "{tmp}/s.dat", "--size", "1M", "--set", "rate=1m=2m"), "'='"),
    ("sweep-set-tab", ("sweep", "{tmp}/s.dat", "--size", "1M", "--set", "rate=1m\t2m"), "holds '\\t'"),
    ("sweep-set-negative-time", ("sweep", "{tmp}/s.dat", "--size", "1M", "--set", "thinktime_spin=-5"), "'-'"),
    ("sweep-lat-percentile", ("sweep", "{tmp}/s.dat", "--size", "1M", "--lat-percentile", "101"), "percentile"),
    # ---- issue 24: safety options in a settings file; inputs that ran away (huge counts, endless files) ----
    ("sweep-settings-destructive", ("sweep", "{tmp}/s.dat", "--size", "1M", "--settings", "{unsafe}"),
     "'destructive' is a safety option"),
    ("sweep-settings-allow-mounted", ("sweep", "{tmp}/s.dat", "--size", "1M", "--settings", "{unsafe_table}"),
     "pass --allow-mounted on the command line"),
    ("sweep-settings-dev-zero", ("sweep", "{tmp}/s.dat", "--size", "1M", "--settings", "/dev/zero"),
     "not a regular file"),
    ("sweep-settings-fifo", ("sweep", "{tmp}/s.dat", "--size", "1M", "--settings", "{fifo}"), "not a regular file"),
    ("plot-settings-dev-urandom", ("plot", R, "--settings", "/dev/urandom", "--out", "{tmp}/p"),
     "not a regular file"),
    ("sweep-precondition-dev-zero", ("sweep", "{tmp}/s.dat", "--size", "1M", "--precondition", "/dev/zero",
                                     "--dry-run"), "not a regular file"),
    ("pts-device-info-dev-urandom", ("pts", "--profile", "demo", "--device-info", "@/dev/urandom", "--dry-run"),
     "not a regular file"),
    ("pts-device-info-fifo", ("pts", "--profile", "demo", "--device-info", "@{fifo}", "--dry-run"),
     "not a regular file"),
    ("pts-device-info-huge", ("pts", "--profile", "demo", "--device-info", "@{hugeinfo}", "--dry-run"),
     "larger than 1 MiB"),
    ("run-job-huge", ("run", "{hugejob}", "--dry-run"), "larger than 16 MiB"),
    ("sweep-loops-huge", ("sweep", "{tmp}/s.dat", "--size", "1M", "--loops", "99999999999999999999", "--dry-run"),
     "loops), over 10,000"),
    ("sweep-cells-over", ("sweep", "{tmp}/s.dat", "--size", "1M", "--iodepth", "2,3,...,5000", "--numjobs", "1,2,3",
                          "--dry-run"), "cells"),
    ("sweep-iodepth-series-huge", ("sweep", "{tmp}/s.dat", "--size", "1M", "--iodepth", "2,3,...,9999999999",
                                   "--dry-run"), "--iodepth 9999999999 is over 65,536"),
    ("sweep-iodepth-5000-digits", ("sweep", "{tmp}/s.dat", "--size", "1M", "--iodepth", "9" * 5000, "--dry-run"),
     "--iodepth"),
    ("sweep-iodepth-not-ascii", ("sweep", "{tmp}/s.dat", "--size", "1M", "--iodepth", "\u00b2", "--dry-run"),
     "--iodepth"),
    ("sweep-numjobs-over-fio", ("sweep", "{tmp}/s.dat", "--size", "1M", "--numjobs", "5000", "--dry-run"),
     "fio runs at most 4,088 jobs"),
    ("sweep-numjobs-huge", ("sweep", "{tmp}/s.dat", "--size", "1M", "--numjobs", "100000", "--dry-run"), "4,088"),
    ("run-numjobs-over-fio", ("run", "{job}", "--set", "numjobs=5000", "--dry-run"), "fio runs at most 4,088"),
    ("run-jobs-over-fio", ("run", "{manyjobs}", "--dry-run"), "6,000 jobs"),
    ("pts-numjobs-over-fio", ("pts", "--profile", "demo", "--numjobs", "5000", "--dry-run"), "--numjobs"),
    ("pts-numjobs-5000-digits", ("pts", "--profile", "demo", "--numjobs", "9" * 5000, "--dry-run"), "--numjobs"),
    ("pts-iodepth-huge", ("pts", "--profile", "demo", "--iodepth", "99999999999", "--dry-run"), "65,536"),
    ("pts-max-rounds-huge", ("pts", "--profile", "demo", "--max-rounds", "99999999999", "--dry-run"), "10,000"),
    ("pts-hir-bursts-huge", ("pts", "--profile", "demo", "--tests", "hir", "--hir-bursts", "99999999999",
                             "--dry-run"), "--hir-bursts"),
    ("pts-hir-bursts-over-fio", ("pts", "--profile", "demo", "--tests", "hir", "--hir-bursts", "4000",
                                 "--dry-run"), "fio runs at most 4,088"),
    ("pts-zones-huge", ("pts", "--profile", "demo", "--tests", "hdd-iops", "--zones", "99999999999", "--dry-run"),
     "--zones"),
    ("pts-demand-tcs-over-fio", ("pts", "--profile", "demo", "--tests", "dirth", "--demand-tcs", "1,99999",
                                 "--dry-run"), "--demand-tcs"),
    ("server-stop-pidfile-dev-zero", ("server", "--stop", "--pidfile", "/dev/zero"), "not a regular file"),
    ("server-stop-pidfile-fifo", ("server", "--stop", "--pidfile", "{fifo}"), "not a regular file"),
    ("pts-hosts-round-over-fio", ("pts", "{tmp}/p.dat", "--size", "1G", "--numjobs", "100", "--hosts", "ssh://127.0.0.1",
                                  "--dry-run"), "5,600 jobs"),
    ("plot-out-users-folder", ("plot", R, "--out", "{user}"), "which ptsbench did not write there"),
    ("plot-json-out-users-folder", ("plot", "{run}/cases/001-null/fio.json", "--out", "{user}"), "not empty"),
    ("plot-out-a-log-folder", ("plot", "{run}/cases/001-null/logs", "--out", "{run}/cases/001-null/logs"),
     "not empty"),
    ("compare-out-fake-comparison", ("compare", R, "{run2}", "--out", "{fake_comparison}"),
     "holds compared.json, which ptsbench did not write there"),
    *([("run-report-on-a-full-disk", ("run", "{job}", "--runtime", "0.2", "--out", "{full}/r", "--report"),
        "disk is full")]
      if os.geteuid() == 0 else []),  # the 400 KiB tmpfs needs root
    # ---- gates and the catalog ----
    ("check-nothing", ("check",), "Missing argument"),
    ("check-no-gates", ("check", R), "no gates to check"),
    ("check-gate-unit", ("check", R, "--gate", "iops >= 2ms"), "does not fit its metric"),
    ("check-gate-no-metric", ("check", R, "--gate", "speed >= 2"), "is not a metric"),
    ("check-gates-not-toml", ("check", R, "--gates", "{badjob}"), "--gates"),
    ("check-gates-dev-zero", ("check", R, "--gates", "/dev/zero"), "not a regular file"),
    ("check-baseline-last-alone", ("check", R, "--gate", "iops not worse than baseline by more than 5 %",
                                   "--baseline", "last"), "needs --catalog"),
    ("run-gate-no-unit", ("run", "{job}", "--gate", "p99 <= 2"), "does not fit its metric"),
    ("run-junit-no-gates", ("run", "{job}", "--junit", "{tmp}/j.xml"), "--junit needs gates"),
    ("quick-bad-tag", ("quick", "--tag", " padded"), "is not a label"),
    ("catalog-update-nothing", ("catalog", "update"), "Missing argument"),
    ("catalog-update-missing", ("catalog", "update", "{root}/nope", "--db", "{tmp}/c.sqlite"), "no such folder"),
    ("catalog-bad-url", ("catalog", "runs", "--db", "nosuch://x/y"), "not a database URL"),
    # ---- the group ----
    ("unknown-command", ("benchmark",), "No such command"),
    ("unknown-global-option", ("--fast", "run"), "No such option"),
]


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
    "sweep-images-"))]


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
        result = run_cli(*[_fill(arg, places) for arg in args], cwd=tmp, timeout=120)
        named = {key for key in prepared if any("{" + key + "}" in arg for arg in args)}
        touched = sorted({Path(prepared[key]).relative_to(root).parts[0] for key in named
                          if Path(prepared[key]).is_relative_to(root) and key != "root"})
        leftover = subprocess.run(["pgrep", "-f", f"fio.*{tmp}"], capture_output=True).stdout
        return name, Outcome(result, touched, leftover, sorted(path.name for path in tmp.iterdir()))

    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(pool.map(run_row, TABLE))
    after = digests(root)
    changed = {name for name in before if before[name] != after.get(name)}
    for outcome in done.values():
        outcome.touched = [name for name in outcome.touched if name in changed]
    done["(all)"] = Outcome(subprocess.CompletedProcess([], 0), sorted(changed | (set(after) - set(before))), b"")
    return done


def test_the_prepared_data_is_unchanged(outcomes: dict[str, Outcome]) -> None:
    assert outcomes["(all)"].touched == []


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
