"""A PTS round whose cells are chained (fio/chain.py): one fio process per job of the round's job file, each started
ahead and released by the previous job's end, so the device is idle only milliseconds between cells.

The round folder keeps what a stonewalled round keeps: job.fio (the whole round, gated), command.txt (one fio
command per job), fio.json (every job's document merged into one, as one fio process would have printed it) and
fio.stderr. Each process's own fio-NN.json is stored (atomically) the moment it exits, so a kill loses only the cell
under way; that is the only write per finished cell, whatever the round's length. Once the round is complete the
merged files replace them.
"""

import json
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_text
from ptsbench.fio.chain import (
    HANDOFF_DIR,
    HANDOFF_PREFIX,
    ChainJob,
    ChainOutcome,
    job_document_path,
    merged_document,
    run_chain,
)
from ptsbench.fio.runner import FioOutcome, FioStatus, fio_command
from ptsbench.metrics.board import watched
from ptsbench.pts.plan import CELL_HANDOFF_S, PhasePlan, RoundJob, handoff_text


def run_chained_round(folder: Path, job: RoundJob, phase: PhasePlan, ramp_s: float,
                      on_status: Callable[[FioStatus], None],
                      on_document: Callable[[dict[str, Any]], None] | None = None
                      ) -> tuple[FioOutcome, dict[str, Any]]:
    """Run a round's jobs chained in `folder`; the outcome of the whole round (fio.json merged; a failed job's own
    outcome) and its hand-off record. `on_document` gets every status document of every job."""
    cells = {cell.name: cell for cell in phase.cells}
    chain = [ChainJob(name, cells[cell].numjobs, cells[cell].runtime_s + ramp_s) for name, cell in job.jobs]
    job_path = folder / "job.fio"
    atomic_write_text(job_path, job.text)
    atomic_write_text(folder / "command.txt", "".join(
        f"(cd $TMPDIR/{HANDOFF_PREFIX}XXXXXXXX/{HANDOFF_DIR} && "
        f"{shlex.join(fio_command(job_path.absolute(), [f'--section={one.section}']))})\n"
        for one in chain))
    started = time.monotonic()
    docs: list[dict[str, Any]] = []

    def keep(_index: int, outcome: FioOutcome) -> None:  # run_fio stored it as fio-NN.json already
        if outcome.ok and outcome.doc is not None:
            docs.append(outcome.doc)

    def status(_index: int, found: FioStatus) -> None:  # the round's clock, not each process's
        on_status(replace(found, elapsed_s=time.monotonic() - started))

    ran = run_chain(job_path, chain, folder=folder, on_status=status, on_finished=keep, on_document=on_document,
                    status_bins=watched())  # the per-second p99 of a watched run
    record = chained_record(phase, ran)
    failed = next((outcome for outcome in ran.outcomes if not outcome.ok), None)
    if failed is not None or len(ran.outcomes) < len(chain):
        # the error names fio.stderr, as for any round: the jobs' own fio-NN.stderr stay beside it
        atomic_write_text(folder / "fio.stderr", "".join(outcome.stderr_text for outcome in ran.outcomes))
        return failed or FioOutcome(1, None, "", "\n".join(ran.notes)), record
    merged = merged_document(docs)
    # one line: json's C encoder is skipped when indenting, which made this dump most of a round's CPU (0.8 s for 56
    # json+ cells)
    atomic_write_text(folder / "fio.json", json.dumps(merged) + "\n")
    atomic_write_text(folder / "fio.stderr", "".join(outcome.stderr_text for outcome in ran.outcomes))
    for index in range(len(chain)):
        job_document_path(folder, index).unlink(missing_ok=True)
        job_document_path(folder, index).with_suffix(".stderr").unlink(missing_ok=True)
    stdout = "".join(outcome.stdout_text for outcome in ran.outcomes)
    return FioOutcome(0, merged, stdout, "".join(outcome.stderr_text for outcome in ran.outcomes)), record


def discard_gates(folder: Path) -> None:
    """Remove the FIFOs a killed chained round left in its folder (a copy or backup of the run would block reading
    them): rounds stored before the FIFOs moved to a local folder of their own (fio/chain.py handoff_folder)."""
    shutil.rmtree(folder / HANDOFF_DIR, ignore_errors=True)


def chained_record(phase: PhasePlan, ran: ChainOutcome) -> dict[str, Any]:
    """How a chained round handed off: the gap before each job after the first, as the relay saw each thread's
    end and start (ms), and what went wrong, if anything."""
    gaps = ran.gaps_ms()
    measured = [gap for gap in gaps if gap is not None]
    return {"way": "chained", "text": handoff_text(phase), "gaps_ms": gaps,
            "max_gap_ms": max(measured) if measured else None, "notes": list(ran.notes)}


def stonewall_record(phase: PhasePlan, reason: str | None = None) -> dict[str, Any]:
    """How a stonewalled round handed off: through fio's scheduler, gaps not measured (about CELL_HANDOFF_S)."""
    text = (f"cells stonewalled (fio's scheduler, about {CELL_HANDOFF_S:g} s per hand-off): {reason}" if reason
            else handoff_text(phase))
    return {"way": "stonewall", "text": text, "gaps_ms": None, "max_gap_ms": None, "notes": []}
