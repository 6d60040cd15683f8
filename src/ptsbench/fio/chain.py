"""Jobs back to back without fio's scheduler: one fio process per job, the next one started ahead of time.

fio 3.33 releases a stonewalled job only on a pass of its scheduler (100 ms sleeps, 0.2-0.3 s per hand-off in
practice). Here every job of a job file runs in an fio process of its own (`--section`), and the next process is
started while the current one runs: its job waits in `exec_prerun` on a FIFO (a gate) until the relay releases it,
and the relay does so as soon as every thread of the current job has reported its end from `exec_postrun`. fio's
runtime clock starts after the prerun, so every job still runs exactly as long as planned. (Several gated jobs in
ONE fio process would deadlock fio's `--status-interval` dump, which waits on every job not yet exited; one job per
process avoids that, and only two processes hold IO buffers at a time.)

Nothing can hang: when a process fails or dies the gated one is stopped; on Ctrl-C or any error every gate still
closed is failed (a byte other than `x` fails the prerun); if ptsbench itself dies, its FIFO ends close and a waiting
prerun reads end-of-file and fails the same way, and every fio process gets its parent-death signal (fio/lifetime.py:
each is started by a thread of run_chain that waits for it). Each process's JSON is handed over the moment it exits.
"""

import math
import os
import select
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptsbench.errors import PtsbenchError
from ptsbench.fio.lifetime import kill_fio_processes
from ptsbench.fio.runner import FioLaunch, FioOutcome, FioStatus, run_fio, stop_all

HANDOFF_DIR = "handoff"  # fio's working folder in a chained run: the FIFOs and fio's JOB.prerun.txt files
HANDOFF_PREFIX = "ptsbench-chain-"  # the local folder (handoff_folder) that holds HANDOFF_DIR
DONE_FIFO = "done"
# fio takes 0.1-0.5 s to start on a quiet machine, seconds on a loaded one: a job is started at least this long
# before its release, and longer when fio's start-ups measured lately took more (StartAhead)
START_AHEAD_S = 1.0
STARTUP_MARGIN = 2.0  # the lead is this many times the second slowest recent start-up (one outlier is ignored: a
# lead that chases it starts many fio processes at once, which slows every start-up and lengthens the lead again)
RECENT_STARTUPS = 8  # start-ups remembered: the load of the last few cells, not of an hour ago
MAX_AHEAD = 4  # jobs started ahead at most, whatever the lead: each holds its IO buffers while it waits
GATE_MARGIN_S = 120.0
WAKE_S = 1.0  # the longest the relay and run_chain sleep unwoken (events wake them; this only bounds a lost one)


def gate_options(index: int, round_s: float) -> dict[str, str | None]:
    """The options that chain job `index` of a job file: it waits for its gate (all but the first; at most the
    round's planned time plus GATE_MARGIN_S, so that an fio whose ptsbench died before it opened the gate still ends:
    a gate it did open reads end-of-file then) and reports its start and end on the done FIFO. Paths are relative
    to fio's working folder (HANDOFF_DIR); each thread takes one byte of its gate (`head -c1`: a shell's `read`
    would let two threads split one line); `<>` opens a FIFO without blocking when nobody reads it; the trailing
    `:` takes the `> JOB.prerun.txt` fio appends."""
    done = f"echo e {index} 1<>{DONE_FIFO} && :"
    options: dict[str, str | None] = {"exec_postrun": done}
    if index:
        wait = f"timeout {math.ceil(round_s + GATE_MARGIN_S)} head -c1 gate{index}"
        ready = f"echo r {index} 1<>{DONE_FIFO}"  # fio has started up: how long that took sets the lead
        options["exec_prerun"] = f'{ready} && x=$({wait}) && [ "$x" = x ] && echo s {index} 1<>{DONE_FIFO} && :'
    return options


def handoff_folder() -> Path:
    """A new HANDOFF_DIR for a chained run, on a local file system: under $XDG_RUNTIME_DIR (a tmpfs) when set, else
    the system's temporary folder ($TMPDIR, else /tmp). Not in the run directory: a FIFO made on a 9p, NFS or FUSE
    mount cannot be opened ("No such device or address"), and run directories are often on one."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    parent = runtime if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix=HANDOFF_PREFIX, dir=parent)) / HANDOFF_DIR


def job_document_path(folder: Path, index: int) -> Path:
    """Where job `index` of a round's job file keeps its own fio document once it finished (fio-NN.json)."""
    return folder / f"fio-{index:02d}.json"


class StartAhead:
    """How long before its release a chained job's fio is started: START_AHEAD_S, or STARTUP_MARGIN times the
    second slowest of the last RECENT_STARTUPS start-ups measured (from its process's start to every thread waiting
    at its gate), whichever is longer. One per process (LEAD): a round starts with what the previous rounds
    measured, and a loaded machine's slower start-ups lengthen the lead from the next release on."""

    def __init__(self) -> None:
        self._startups_s: deque[float] = deque(maxlen=RECENT_STARTUPS)
        self._lock = threading.Lock()  # a fleet's chains share it

    def observe(self, startup_s: float) -> None:
        """One fio's measured start-up."""
        with self._lock:
            self._startups_s.append(max(0.0, startup_s))

    def lead_s(self) -> float:
        """How far ahead of its release to start the next fio."""
        with self._lock:
            slowest_s = sorted(self._startups_s)[-2:]
        return max(START_AHEAD_S, STARTUP_MARGIN * slowest_s[0]) if slowest_s else START_AHEAD_S


LEAD = StartAhead()


def jobs_to_start(expected_s: Sequence[float], running: int, lead_s: float) -> int:
    """The last job to have started while job `running` runs: every job that would be released within `lead_s`
    (their predecessors' planned seconds from `running` on), the next one at least, MAX_AHEAD at most."""
    lead, index = 0.0, running
    while index + 1 < len(expected_s) and index - running < MAX_AHEAD and (index == running or lead < lead_s):
        lead += expected_s[index]
        index += 1
    return index


@dataclass(frozen=True)
class ChainJob:
    """One job of a chained run: its section name in the job file, its threads (numjobs) and planned seconds."""

    section: str
    threads: int
    expected_s: float


@dataclass
class ChainOutcome:
    """What a chained run left: each started job's fio outcome (in order; a job never started has none), and the
    hand-off times the relay saw (unix seconds: each thread's end and start)."""

    outcomes: list[FioOutcome] = field(default_factory=list)
    ends: dict[int, list[float]] = field(default_factory=dict)
    starts: dict[int, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    launched: dict[int, float] = field(default_factory=dict)  # when each job's fio was started (unix seconds)
    readies: dict[int, list[float]] = field(default_factory=dict)  # each thread at its gate (unix seconds)
    startups_s: dict[int, float] = field(default_factory=dict)  # a gated job's start-up: launched to its last ready

    def gaps_ms(self) -> list[float | None]:
        """Per hand-off: from the last thread's end of job N-1 to the first thread's start of job N, as the relay
        saw them (None where one is missing)."""
        count = len(self.outcomes)
        return [round((min(self.starts[k]) - max(self.ends[k - 1])) * 1000, 2)
                if self.starts.get(k) and self.ends.get(k - 1) else None for k in range(1, count)]


class _Relay:
    """Holds both ends of every FIFO (so no open blocks and no byte is lost) and opens gate N when every thread of
    job N-1 has reported its end."""

    def __init__(self, folder: Path, jobs: Sequence[ChainJob], outcome: ChainOutcome, lead: StartAhead) -> None:
        self.folder, self.jobs, self.outcome, self.lead = folder, list(jobs), outcome, lead
        folder.mkdir(parents=True, exist_ok=True)
        opened: list[int] = []
        try:
            for index in range(len(self.jobs)):  # 0: the done FIFO, N: job N's gate
                name = f"gate{index}" if index else DONE_FIFO
                os.mkfifo(folder / name)
                opened.append(os.open(folder / name, os.O_RDWR | os.O_NONBLOCK))
        except OSError as error:
            for fd in opened:
                os.close(fd)
            _remove(folder)
            raise PtsbenchError(f"the cells of a round cannot be chained: a FIFO in {folder} does not open "
                                f"({error.strerror})", "set TMPDIR to a folder on a local file system (FIFOs do "
                                "not work on 9p, NFS or FUSE mounts)") from None
        self.done, *gates = opened
        self.gates: dict[int, int] = dict(enumerate(gates, start=1))
        self.released: dict[int, threading.Event] = {index: threading.Event() for index in range(len(self.jobs))}
        self.released[0].set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.progress = threading.Event()  # a gate opened or a job's thread ended: what run_chain waits for
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        pending = b""
        while not self.stop.is_set():
            if not select.select([self.done], [], [], WAKE_S)[0]:  # close() wakes it at once
                continue
            now = time.time()
            try:
                pending += os.read(self.done, 65536)
            except BlockingIOError:
                continue
            *lines, pending = pending.split(b"\n")
            for line in lines:
                kind, _, number = line.decode(errors="replace").partition(" ")
                if not number.isdigit():
                    continue
                index = int(number)
                if index >= len(self.jobs):
                    continue
                times = {"e": self.outcome.ends, "s": self.outcome.starts, "r": self.outcome.readies}.get(kind)
                if times is None:
                    continue
                times.setdefault(index, []).append(now)
                if kind == "e" and len(self.outcome.ends[index]) >= self.jobs[index].threads:
                    self.open(index + 1, True)
                if (kind == "r" and len(self.outcome.readies[index]) == self.jobs[index].threads
                        and index in self.outcome.launched):
                    startup_s = now - self.outcome.launched[index]
                    self.outcome.startups_s[index] = startup_s
                    self.lead.observe(startup_s)
                    self.progress.set()  # a longer lead starts more of the next jobs at once

    def open(self, index: int, go: bool) -> None:
        """Release job `index` (go) or fail its prerun; once only."""
        with self.lock:
            if index not in self.gates or self.released[index].is_set():
                return
            self.released[index].set()
            self.progress.set()
            os.write(self.gates[index], (b"x" if go else b"q") * self.jobs[index].threads)  # one byte per thread

    def close(self) -> None:
        """Fail every gate still closed, stop reading, remove the FIFOs and fio's prerun/postrun files."""
        for index in self.gates:
            self.open(index, False)
        self.stop.set()
        os.write(self.done, b"\n")  # wakes the relay's select: a line that is no token
        self.thread.join()
        for fd in (self.done, *self.gates.values()):
            os.close(fd)
        _remove(self.folder)


def _remove(folder: Path) -> None:
    """Remove a chained run's HANDOFF_DIR and the folder handoff_folder made for it."""
    shutil.rmtree(folder.parent if folder.parent.name.startswith(HANDOFF_PREFIX) else folder, ignore_errors=True)


def run_chain(
    job_path: Path,
    jobs: Sequence[ChainJob],
    *,
    folder: Path,
    on_status: Callable[[int, FioStatus], None] | None = None,
    on_finished: Callable[[int, FioOutcome], None] | None = None,
    on_document: Callable[[dict[str, Any]], None] | None = None,
    status_bins: bool = False,
    lead: StartAhead = LEAD,
) -> ChainOutcome:
    """Run every job of `job_path` (written with gate_options) back to back, one fio process each, its documents in
    `folder` (fio-NN.json and fio-NN.stderr per job), its FIFOs in a local folder of their own (handoff_folder).
    `on_finished` gets each job's outcome the moment its process exits, `on_document` every status document of
    every process (from their threads; without latency bins, which only the outcomes' final documents keep, unless
    `status_bins`). The next jobs' fio processes are started `lead`'s lead_s ahead of their release. The run stops
    at the first job that fails: the one started ahead is stopped, later ones never start."""
    job_path = Path(job_path).absolute()
    outcome = ChainOutcome()
    relay = _Relay(handoff_folder(), jobs, outcome, lead)
    results: dict[int, FioOutcome | BaseException] = {}
    threads: dict[int, threading.Thread] = {}

    def one(index: int) -> None:
        def status(found: FioStatus) -> None:
            if on_status is not None:
                on_status(index, found)

        json_path = job_document_path(folder, index)
        outcome.launched[index] = time.time()  # before fio can report ready
        try:
            launch = FioLaunch(extra_args=[f"--section={jobs[index].section}"], expected_s=jobs[index].expected_s,
                               cwd=relay.folder, released=relay.released[index])
            results[index] = run_fio(
                job_path, json_path=json_path, stderr_path=json_path.with_suffix(".stderr"), on_status=status,
                on_document=on_document, status_bins=status_bins, launch=launch)
        except BaseException as error:  # re-raised in the calling thread
            results[index] = error
        finally:
            relay.progress.set()

    def start(index: int) -> None:
        if index < len(jobs) and index not in threads:
            threads[index] = threading.Thread(target=one, args=(index,), daemon=True)
            threads[index].start()

    def start_ahead(running: int) -> None:
        """The jobs after `running` that would be released before a process started now is ready (one at least)."""
        for index in range(running + 1, jobs_to_start(expected_s, running, lead.lead_s()) + 1):
            start(index)

    expected_s = [job.expected_s for job in jobs]

    finished = False
    try:
        start(0)
        start_ahead(0)
        for index in range(len(jobs)):
            following = relay.released.get(index + 1)
            while True:  # until the next job is released or this one's thread ended (cleared before the check)
                relay.progress.clear()
                if following is None or following.is_set() or index in results:  # set before one() signals
                    break
                relay.progress.wait(WAKE_S)
                start_ahead(index)  # the lead may have grown meanwhile
            if following is not None and following.is_set():
                start_ahead(index + 1)  # they wait at their gates while job index + 1 runs
            threads[index].join()
            result = results[index]
            if isinstance(result, BaseException):
                raise result
            outcome.outcomes.append(result)
            if on_finished is not None:
                on_finished(index, result)
            if not result.ok:
                if index + 1 < len(jobs):
                    outcome.notes.append(f"{jobs[index].section} failed: {jobs[index + 1].section} and later did "
                                         "not run")
                break
            relay.open(index + 1, True)  # normally done already by its end tokens
            start_ahead(index + 1)
        finished = True
    except KeyboardInterrupt:
        stop_all()
        raise
    finally:
        relay.close()  # a job still waiting at its gate fails its prerun
        if not finished or len(outcome.outcomes) < len(jobs):  # the job started ahead may have been released
            kill_fio_processes(job_path)
        for thread in threads.values():
            thread.join()
    return outcome


def merged_document(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The JSON documents of a chained run's processes as one fio document: the first one's header (version, time,
    global options), every job in order, and the disk use of the last."""
    merged = dict(docs[0])
    merged["jobs"] = [job for doc in docs for job in doc.get("jobs", [])]
    if "disk_util" in docs[-1]:
        merged["disk_util"] = docs[-1]["disk_util"]
    return merged
