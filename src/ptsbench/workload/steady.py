"""analysis: steady state on a replayed workload (RWSW): rounds of the replay judged by the PTS criterion
(pts/steady.py) on the replay's IOPS and mean latency, over the last five rounds.

RWSW purges the drive, preconditions it independently of the workload (sequential 128 KiB writes over twice its
capacity), then applies the captured workload until the drive is steady on it. Here each round replays the whole
trace (one case of the run, a repetition), with the deviations from the technical position named in DEVIATIONS,
and a purge that was none or only a discard named as one too.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.pts.steady import WINDOW_ROUNDS, steady_state
from ptsbench.workload.blktrace import DIRECTIONS

REPLAY_JOB = "replay"
NOT_PURGED = "no purge before the preconditioning"
NO_PTS_PURGE = "no PTS purge before the preconditioning"
NOT_PRECONDITIONED = ("no purge and no workload-independent preconditioning before the rounds (--no-precondition): "
                      "the replay's own rounds precondition the drive")
DEVIATIONS = (
    "a round is one replay of the whole trace, however long it lasts (not a fixed round time)",
    "IOPS and mean latency are fio's over the whole round, all directions together",
)


def round_values(jobs: Sequence[Mapping[str, Any]]) -> tuple[float, float] | None:
    """(IOPS, mean latency in ns) of a round's replay job from its stored results, or None when it measured
    nothing (no IO completed)."""
    replay = next((job for job in jobs if job.get("name") == REPLAY_JOB), None)
    if replay is None:
        return None
    parts = [part for part in replay.get("directions", ())  # each direction once (fio's "total" sums them)
             if part.get("total_ios") and part.get("direction") in DIRECTIONS]
    ios = sum(part["total_ios"] for part in parts)
    if not ios or any(part["lat"].get("mean_ns") is None for part in parts):
        return None
    iops = sum(part["iops"] for part in parts)
    mean_ns = sum(part["lat"]["mean_ns"] * part["total_ios"] for part in parts) / ios
    return iops, mean_ns


def purge_deviations(preconditioned: bool, purge: Mapping[str, Any] | None) -> list[str]:
    """How what preceded the rounds departs from RWSW's purge and preconditioning: nothing after a PTS purge; the
    purge's own words when it was none (a file) or a discard; no purge recorded (a run of an older ptsbench)."""
    if not preconditioned:
        return [NOT_PRECONDITIONED]
    if purge is None:
        return [NOT_PURGED]
    return [f"{NO_PTS_PURGE}: {purge['message']}"] if purge.get("is_deviation") else []


def judge(rounds: Sequence[Sequence[Mapping[str, Any]]], preconditioned: bool = True,
          purge: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The steady-state determination after the given rounds (each its stored jobs): per-round values, and once
    there are WINDOW_ROUNDS rounds, the PTS criterion on IOPS and on mean latency over the last of them.
    `preconditioned`: whether the workload-independent preconditioning ran before the rounds; `purge`: the last
    purge before it (purge.json's attempt)."""
    values = [round_values(jobs) for jobs in rounds]
    found: dict[str, Any] = {"rounds": len(rounds), "window_rounds": WINDOW_ROUNDS,
                             "iops": [value[0] if value else None for value in values],
                             "mean_lat_ns": [value[1] if value else None for value in values],
                             "steady": False, "preconditioned": preconditioned,
                             "purge": dict(purge) if purge and preconditioned else None,
                             "deviations": [*purge_deviations(preconditioned, purge), *DEVIATIONS]}
    window = values[-WINDOW_ROUNDS:]
    if len(window) < WINDOW_ROUNDS or any(value is None for value in window):
        return found
    numbers = list(range(len(values) - WINDOW_ROUNDS + 1, len(values) + 1))
    iops = steady_state([value[0] for value in window if value], numbers)
    latency = steady_state([value[1] for value in window if value], numbers)
    found.update(iops_steady=iops.to_dict(), lat_steady=latency.to_dict(), steady=iops.steady and latency.steady,
                 window=numbers)
    return found
