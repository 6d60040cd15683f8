"""analysis: a replay beside the trace it replayed (replay.json), judged on what fio counts reliably.

fio counts an IO as issued (total_ios) when it submits it, and its bytes (io_bytes), latency and log line when it
reaps its completion. A replay (read_iolog) ends when the log runs out: fio marks the job done there and reaps no
completion after it (its td_io_getevents returns none once the job is done; fio 3.33 to 3.42 alike). The IOs still
in flight at that moment, the trace's last few (at most the queue depth), reach the target and are counted as
IOs, but their bytes, latencies and log lines are not counted. So the judgement is: the same IO count per
direction, and any byte shortfall the bytes of the IOs fio issued and did not reap (its IO count less its latency
samples), as many IOs of the direction's sizes in the trace; anything else is a difference. Which IOs and sizes a
replay issued is checked by capturing it (docs/replay.md).
"""

from collections.abc import Mapping
from typing import Any


def unreaped(trace_part: Mapping[str, Any], fio_part: Mapping[str, Any]) -> dict[str, Any]:
    """One direction's IOs fio issued but did not reap (its IO count less its latency samples) and whether the
    bytes fio did not count fit them: between that many of the direction's smallest and largest trace IOs."""
    sizes = [size for size, _count in trace_part["sizes"]]
    reaped = (fio_part.get("lat") or {}).get("n")
    ios = int(fio_part.get("total_ios", 0))
    count = ios - int(reaped) if reaped is not None else None
    short = trace_part["bytes"] - int(fio_part.get("io_bytes", 0))
    fits = short == 0 or bool(count and sizes and min(sizes) * count <= short <= max(sizes) * count)
    return {"ios": count, "bytes": short, "fits": fits}


def pace_asked(no_stall: bool, rate_percent: int | None) -> dict[str, Any]:
    """The pace a replay was asked for, in words and as a percentage of the captured IO rate (None: as fast as
    possible)."""
    if no_stall:
        return {"text": "as fast as possible", "percent": None}
    return {"text": f"scaled to {rate_percent} %" if rate_percent else "as captured", "percent": rate_percent or 100}


def compare(found: Mapping[str, Any], fio_directions: Mapping[str, Mapping[str, Any]],
            runtime_ms: int, pace: Mapping[str, Any] | None) -> dict[str, Any]:
    """The comparison stored as replay.json: per direction the trace's IOs and bytes (`found`, the stream's
    characterisation) beside fio's (`fio_directions`: direction -> its stored result), the verdict, the IOs fio
    left out of its byte counts, and the pace asked (pace_asked) beside the trace's duration, the duration that pace
    gives it and fio's runtime."""
    rows = []
    for name, part in found["directions"].items():
        done = fio_directions.get(name, {})
        rows.append({"direction": name, "trace_ios": part["io_count"], "trace_bytes": part["bytes"],
                     "replay_ios": int(done.get("total_ios", 0)), "replay_bytes": int(done.get("io_bytes", 0))})
    same_ios = all(row["trace_ios"] == row["replay_ios"] for row in rows)
    left = {name: unreaped(part, fio_directions.get(name, {})) for name, part in found["directions"].items()}
    explained = all(part["fits"] for part in left.values())
    notes = []
    if explained and any(part["bytes"] for part in left.values()):
        said = ", ".join(f"{part['bytes']:,} bytes of {part['ios']} {name} IO{'s' if part['ios'] > 1 else ''}"
                         for name, part in left.items() if part["bytes"])
        notes.append(f"fio's byte counts leave out {said}: issued (in fio's IO counts) but still in flight when "
                     "the replay's log ran out, after which fio reaps no completion (nor latency)")
    elif not explained:
        notes.append("fio's byte counts differ from the trace's by more than the IOs it issued and did not reap")
    if not same_ios:
        notes.append("fio issued another number of IOs than the trace holds")
    return {"rows": rows, "verdict": "same" if same_ios and explained else "different", "unreaped": left,
            "notes": notes, "pace": pace["text"] if pace else None, "trace_duration_s": found["duration_s"],
            "paced_duration_s": found["duration_s"] / (pace["percent"] / 100) if pace and pace["percent"] and
            found["duration_s"] is not None else None, "replay_runtime_s": runtime_ms / 1000}


def summary_lines(comparison: Mapping[str, Any]) -> list[str]:
    """The comparison in a few lines for the terminal."""
    verdict = "same IOs" if comparison.get("verdict") == "same" else "DIFFERENT"
    lines = [f"{row['direction']}: trace {row['trace_ios']:,} IOs {row['trace_bytes']:,} bytes, replay "
             f"{row['replay_ios']:,} IOs {row['replay_bytes']:,} bytes ({verdict})" for row in comparison["rows"]]
    lines += [f"note: {note}" for note in comparison.get("notes", ())]
    lines.append(pace_line(comparison))
    return lines


def pace_line(comparison: Mapping[str, Any]) -> str:
    """The pace asked, the trace's duration, what that pace makes of it and how long fio's replay job ran."""
    pace, paced, runtime = comparison.get("pace"), comparison.get("paced_duration_s"), comparison["replay_runtime_s"]
    scaled = f" ({paced:.3f} s at that pace)" if paced is not None and pace != "as captured" else ""
    off = f", {runtime / paced - 1:+.0%} of the paced duration" if paced else ""
    return (f"pace{f' {pace}' if pace else ''}: the trace spans {comparison['trace_duration_s'] or 0:.3f} s{scaled}, "
            f"the replay ran {runtime:.3f} s (fio's runtime of the replay job{off})")
