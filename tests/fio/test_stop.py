"""A Ctrl-C stops every fio, also one that lost the SIGINT ptsbench sent it (fio/runner.py stop_all, _final_document).

A SIGINT that reaches fio's process between its fork and its exec is caught by Python's handler, inherited for that
moment, and lost; fio then runs to the end of its runtime, and ptsbench with it. Real parts cannot lose a signal on
demand, so a stand-in (the fault injector this file writes) runs the real fio under it and drops the first SIGINT it
is sent, passing on every later one. ptsbench must ask again: fio then ends as a Ctrl-C ends it, its final document
stored, long before its runtime is up."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ptsbench.fio.lifetime import fio_pids

RUNTIME_S = 300  # fio's runtime: a run that waits for it is far past the limit below
END_LIMIT_S = 120.0  # generous: asked again within a second, fio ends within a second or two of that

LOSES_FIRST_SIGINT = '''#!{python}
"""fio, but the first SIGINT sent to it is lost (as one that arrives between fork and exec): later ones reach fio."""
import signal, subprocess, sys
record = open({record!r}, "a")
heard = []
def on_sigint(number, frame):
    if heard:
        child.send_signal(signal.SIGINT)
    heard.append(number)
    record.write("sigint\\n"); record.flush()
signal.signal(signal.SIGINT, on_sigint)
child = subprocess.Popen([{fio!r}, *sys.argv[1:]])
code = child.wait()
if heard:  # the runs ptsbench stopped (not its --version or --parse-only calls)
    record.write(f"exit {{code}}\\n"); record.flush()
sys.exit(code if code >= 0 else 128 - code)
'''


@pytest.mark.parametrize("parallel", [False, True], ids=["one-target", "parallel"])
def test_a_fio_that_lost_the_sigint_is_asked_again(tmp_path: Path, parallel: bool) -> None:
    record = tmp_path / "signals.txt"
    wrapper = tmp_path / "bin" / "fio"
    wrapper.parent.mkdir()
    fio = shutil.which("fio")
    assert fio
    wrapper.write_text(LOSES_FIRST_SIGINT.format(python=sys.executable, record=str(record), fio=fio))
    wrapper.chmod(0o755)
    job = tmp_path / "long.fio"
    job.write_text(f"[long]\nioengine=null\nsize=1m\ntime_based\nruntime={RUNTIME_S}\nrw=read\n")
    out = tmp_path / "r"
    targets = ["--parallel", "--target", str(tmp_path / "t1"), "--target", str(tmp_path / "t2")] if parallel else []
    process = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(job), *targets, "--size", "1m",
                                "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PTSBENCH_FIO": str(wrapper)},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    cases = 2 if parallel else 1
    deadline = time.monotonic() + END_LIMIT_S
    while sum(len(fio_pids(case)) >= 2 for case in (out / "cases").glob("*")) < cases:  # fio and its job: running
        assert process.poll() is None and time.monotonic() < deadline, "fio never started"
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)  # as the terminal's Ctrl-C, to ptsbench alone: fio hears only ptsbench
    try:
        _, stderr = process.communicate(timeout=END_LIMIT_S)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    events = record.read_text().split("\n")
    exits = [line for line in events if line.startswith("exit")]
    assert len(exits) == cases and events.count("sigint") >= 2 * cases, events  # lost one, then asked again
    assert all(line != f"exit {-signal.SIGKILL}" for line in exits), events  # fio ended on the SIGINT, not killed
    for result in sorted(out.glob("cases/*/result.json")):
        assert json.loads(result.read_text())["status"] == "interrupted"
        assert (result.parent / "fio.json").exists()  # what fio measured until then, kept
