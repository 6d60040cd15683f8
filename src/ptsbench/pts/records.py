"""The records of a PTS run, made from fio's results: the plan as plan.json stores it, each round's per-cell
records (one host's, or all hosts' merged), the steady-state determination and the stop rule, and each phase's
summary over its measurement window (window averages, latency merged from fio's bins), and the operating points a
demand-intensity sweep chooses. Pure functions of stored data: nothing here runs fio.
"""

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from ptsbench.errors import FioRunError
from ptsbench.fio.output import DirectionResult, JobResult, merge_directions, merge_latency, parse_jobs
from ptsbench.pts.advanced import demand_cells, response_histogram, select_operating_points
from ptsbench.pts.advanced_specs import sweep_cells
from ptsbench.pts.cells import CellSpec, Phase, ZonedCellSpec
from ptsbench.pts.hostbound import depth_record
from ptsbench.pts.plan import PhasePlan, Plan, RoundJob, SeqStart, handoff_text, next_seq_offset
from ptsbench.pts.specs import TEST_DEFS
from ptsbench.pts.steady import steady_state
from ptsbench.pts.store import PtsStore, host_round

DIRECTIONS = ("read", "write", "total")


# ---------------------------------------------------------------------------------------------------------------
# the plan as stored


def plan_record(plan: Plan) -> dict[str, Any]:
    """The plan as stored in plan.json."""
    return {
        "active_range_bytes": plan.active_range_bytes,
        "align_bytes": plan.align_bytes,
        "segments": asdict(plan.segments) if plan.segments else None,
        "precondition_range_bytes": plan.precondition_range_bytes,
        "worst_case_s": plan.worst_case_s,
        "pending_points": list(plan.pending_points),
        "deviations": list(plan.deviations),
        "notes": list(plan.notes),
        "phases": [
            {
                "key": p.key,
                "test": p.phase.test,
                "title": p.phase.title,
                "role": p.phase.role,
                "meta": dict(p.phase.meta),
                "purge": p.phase.purge,
                "precondition": p.phase.precondition.__dict__ if p.phase.precondition else None,
                "precondition_bytes": p.precondition_bytes,
                "cells": [cell_spec_record(cell) for cell in p.cells],
                "skipped": list(p.skipped),
                "tracked": [{"cell": t.cell, "metric": t.metric} for t in p.phase.tracked],
                "stop": p.phase.stop.__dict__,
                "max_rounds": p.max_rounds,
                "round_s": p.round_s,
                "handoff": handoff_text(p),
                "worst_case_s": p.worst_case_s,
            }
            for p in plan.phases
        ],
    }


def cell_spec_record(cell: CellSpec) -> dict[str, Any]:
    return {
        "name": cell.name,
        "role": cell.role,
        "pattern": cell.pattern,
        "read_pct": cell.read_pct,
        "bs_bytes": cell.bs_bytes,
        "numjobs": cell.numjobs,
        "iodepth": cell.iodepth,
        "runtime_s": cell.runtime_s,
        "fio_options": [list(option) for option in cell.fio_options],
        **zone_record(cell),
    }


def zone_record(cell: CellSpec) -> dict[str, Any]:
    """zone (0 = lowest LBAs) and zones of an HDD zone cell; nothing for other cells."""
    return {"zone": cell.zone, "zones": cell.zones} if isinstance(cell, ZonedCellSpec) else {}


# ---------------------------------------------------------------------------------------------------------------
# round records


def seq_starts(phase: PhasePlan, finished: Sequence[Mapping[str, Any]]) -> dict[str, SeqStart]:
    """Where each sequential cell continues, from the last finished round (0 after preconditioning)."""
    if not finished:
        return {}
    previous = finished[-1]["cells"]
    starts = {}
    for cell in phase.cells:
        if cell.pattern == "seq" and cell.name in previous:
            record = previous[cell.name]
            runtime_s = record["total"]["runtime_ms"] / 1000 if record["total"] else 0
            rate = record["total"]["io_bytes"] / runtime_s / cell.numjobs if runtime_s else None
            starts[cell.name] = SeqStart(record["seq_end_bytes"], rate)
    return starts


def host_view(rounds: Sequence[Mapping[str, Any]], host: str) -> list[dict[str, Any]]:
    """Rounds as one host saw them (host ""): the rounds themselves."""
    return [host_round(record, host) if host else dict(record) for record in rounds]


def round_cells(plan: Plan, phase: PhasePlan, job: RoundJob, results: Sequence[JobResult]) -> dict[str, Any]:
    """Every cell's record from one host's (or this machine's) job results of a round."""
    by_name = {result.name: result for result in results}
    cells = {}
    for cell in phase.cells:
        parts = [by_name[name] for name, cell_name in job.jobs if cell_name == cell.name and name in by_name]
        cells[cell.name] = cell_record(cell, [name for name, c in job.jobs if c == cell.name], parts)
        if cell.pattern == "seq":
            start = job.seq_starts.get(cell.name, 0)
            cells[cell.name]["seq_start_bytes"] = start
            moved = cells[cell.name]["total"]["io_bytes"] if cells[cell.name]["total"] else 0
            cells[cell.name]["seq_end_bytes"] = next_seq_offset(plan, phase.phase, cell, start, moved)
    return cells


def host_part(phase: PhasePlan, cells: dict[str, Any], finished: Sequence[Mapping[str, Any]],
               number: int) -> dict[str, Any]:
    """One host's part of a round record: its cells, its own steady-state determination and WSAT totals."""
    part: dict[str, Any] = {"cells": cells,
                            "steady": determination(phase.phase, [*finished, {"round": number, "cells": cells}])}
    if phase.phase.stop.kind == "written":
        part["wsat"] = wsat_totals(phase, finished, cells)
    return part


def aggregate_cells(phase: PhasePlan, jobs: Mapping[str, RoundJob], results: Sequence[JobResult]) -> dict[str, Any]:
    """The all-hosts cells of a round: per direction, each host's cell (its parts in sequence) merged with fio's
    group arithmetic (IOs and bytes summed over the longest runtime), latency merged exactly from the bins."""
    cells = {}
    for cell in phase.cells:
        names: dict[str, None] = {}
        per_host = []
        for host, job in jobs.items():
            mine = [name for name, cell_name in job.jobs if cell_name == cell.name]
            names.update(dict.fromkeys(mine))
            per_host.append([r for r in results if r.hostname == host and r.name in mine])
        directions = {}
        for direction in DIRECTIONS:
            found = [d for parts in per_host if (d := _direction(parts, direction)) is not None]
            directions[direction] = merge_directions(direction, found) if found else None
        cells[cell.name] = _cell_values(cell, list(names), directions, [p for parts in per_host for p in parts])
    return cells


def combined_determination(phase: Phase, per_host: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The steady state of a run on hosts: steady when every host is; its variables are every host's, labelled
    'HOST CELL METRIC' and carrying the host (the window is the same on every host: the rounds ran together)."""
    first = next(iter(per_host.values()))
    combined: dict[str, Any] = {
        "window_rounds": first["window_rounds"],
        "variables": {f"{host} {label}": None if value is None else {**value, "host": host}
                      for host, found in per_host.items() for label, value in found["variables"].items()},
        "steady": None if first["steady"] is None else all(found["steady"] for found in per_host.values()),
    }
    if "rounds_needed" in first:
        combined["rounds_needed"] = first["rounds_needed"]
    return combined


def wsat_totals(phase: PhasePlan, finished: Sequence[Mapping[str, Any]], cells: Mapping[str, Any]) -> dict[str, Any]:
    """Running totals of write saturation: bytes written and IO time so far, this round included."""
    previous = finished[-1]["wsat"] if finished else {"written_bytes": 0, "io_time_s": 0.0}
    written = sum((cell["write"] or {}).get("io_bytes", 0) for cell in cells.values())
    io_time_s = sum((cell["total"] or {}).get("runtime_ms", 0) for cell in cells.values()) / 1000
    return {"written_bytes": previous["written_bytes"] + written, "io_time_s": previous["io_time_s"] + io_time_s}


# ---------------------------------------------------------------------------------------------------------------
# results of one cell


def _in_sequence(direction: str, parts: Sequence[DirectionResult]) -> DirectionResult:
    """Parts of one cell that ran one after another (sequential parts a and b): rates over the summed runtime."""
    if len(parts) == 1:
        return parts[0]
    runtime_ms = sum(part.runtime_ms for part in parts)
    io_bytes = sum(part.io_bytes for part in parts)
    total_ios = sum(part.total_ios for part in parts)
    return DirectionResult(
        direction=direction,
        iops=total_ios * 1000 / runtime_ms if runtime_ms else 0.0,
        bw_bytes=io_bytes * 1000 / runtime_ms if runtime_ms else 0.0,
        io_bytes=io_bytes,
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        lat=merge_latency([part.lat for part in parts]),
    )


def _direction(parts: Sequence[JobResult], name: str) -> DirectionResult | None:
    found = [part.total() if name == "total" else part.get(name) for part in parts]
    present = [d for d in found if d is not None]
    return _in_sequence(name, present) if present else None


def direction_record(result: DirectionResult | None) -> dict[str, Any] | None:
    """One direction as stored: counts, rates, runtime and total latency (mean, min, max, percentiles)."""
    if result is None:
        return None
    return {
        "iops": result.iops,
        "bw_bytes": result.bw_bytes,
        "io_bytes": result.io_bytes,
        "total_ios": result.total_ios,
        "runtime_ms": result.runtime_ms,
        "lat_n": result.lat.n,
        "lat_mean_ns": result.lat.mean_ns,
        "lat_min_ns": result.lat.min_ns,
        "lat_max_ns": result.lat.max_ns,
        "lat_percentiles_ns": result.lat.percentiles_ns,
        "lat_beyond": result.lat.beyond,
    }


def cell_record(cell: CellSpec, job_names: Sequence[str], parts: Sequence[JobResult]) -> dict[str, Any]:
    """One cell's results: read, write and total (read + write summed), and the tracked metrics at top level; a
    histogram cell adds its response-time histogram."""
    if not parts:
        raise FioRunError(f"fio reported nothing for cell {cell.name}", "see the round's fio.json")
    return _cell_values(cell, job_names, {name: _direction(parts, name) for name in DIRECTIONS}, parts)


def _cell_values(cell: CellSpec, job_names: Sequence[str], directions: Mapping[str, DirectionResult | None],
                 parts: Sequence[JobResult]) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": cell.name, "role": cell.role, **zone_record(cell), "pattern": cell.pattern,
        "read_pct": cell.read_pct, "bs_bytes": cell.bs_bytes, "numjobs": cell.numjobs, "iodepth": cell.iodepth,
        "runtime_s": cell.runtime_s, "jobs": list(job_names), "error": max(part.error for part in parts),
        "usr_cpu": sum(part.usr_cpu for part in parts) / len(parts),
        "sys_cpu": sum(part.sys_cpu for part in parts) / len(parts), **depth_record(cell.iodepth, parts),
    }
    for name, result in directions.items():
        record[name] = direction_record(result)
    total = record["total"] or {}
    for metric in ("iops", "bw_bytes", "lat_mean_ns", "lat_max_ns"):
        record[metric] = total.get(metric, 0.0)
    if cell.role == "histogram":
        found = directions["total"]
        record["histogram"] = asdict(response_histogram(found.lat)) if found is not None else None
    return record


# ---------------------------------------------------------------------------------------------------------------
# steady state and stopping


def determination(phase: Phase, rounds: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The steady-state determination after the last of `rounds`, for every tracked variable of the phase."""
    window = phase.stop.window
    if not phase.tracked or phase.stop.kind != "steady":
        return {"window_rounds": [], "variables": {}, "steady": None}
    if len(rounds) < window:
        return {"window_rounds": [], "variables": {t.label: None for t in phase.tracked}, "steady": False,
                "rounds_needed": window - len(rounds)}
    last = rounds[-window:]
    numbers = [int(r["round"]) for r in last]
    variables = {
        t.label: {"cell": t.cell, "metric": t.metric,
                  **steady_state([float(r["cells"][t.cell][t.metric]) for r in last], numbers).to_dict()}
        for t in phase.tracked
    }
    return {"window_rounds": numbers, "variables": variables,
            "steady": all(v["steady"] for v in variables.values())}


def stop_reason(plan: Plan, phase: PhasePlan, rounds: Sequence[Mapping[str, Any]]) -> str | None:
    """Why the phase stops after these rounds, or None to run another round."""
    if not rounds:
        return None
    stop = phase.phase.stop
    last = rounds[-1]
    if stop.kind == "steady" and last["steady"]["steady"]:
        window = last["steady"]["window_rounds"]
        return f"steady state reached in rounds {window[0]}-{window[-1]}"
    if stop.kind == "written":
        totals = _wsat_progress(last)
        if totals["written_bytes"] >= stop.capacity_multiple * plan.target.size_bytes:
            return f"{stop.capacity_multiple:g} x capacity written"
        if totals["io_time_s"] >= stop.max_time_s:
            return f"time limit of {stop.max_time_s:g} s reached"
    if stop.kind == "rounds" and len(rounds) >= phase.max_rounds:
        return f"all {len(rounds)} round(s) run"
    if len(rounds) >= phase.max_rounds:
        steady = stop.kind == "steady" and phase.phase.tracked
        return f"maximum of {phase.max_rounds} rounds reached" + ("; steady state NOT reached" if steady else "")
    return None


def _wsat_progress(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """Write saturation totals to stop on: the round's, or on hosts each host against its own capacity (the
    least written) and the longest IO time."""
    if "hosts" not in record:
        return dict(record["wsat"])
    totals = [part["wsat"] for part in record["hosts"].values()]
    return {"written_bytes": min(t["written_bytes"] for t in totals), "io_time_s": max(t["io_time_s"] for t in totals)}


# ---------------------------------------------------------------------------------------------------------------
# phase summaries


def phase_result(
    pts: PtsStore, phase: PhasePlan, rounds: Sequence[Mapping[str, Any]], stop: str | None
) -> dict[str, Any]:
    """The phase summary: stop reason, steady state, and each cell's values over the measurement window (on
    hosts: all hosts together, and under "hosts" each host's own)."""
    result = _phase_summary(pts, phase, rounds, stop)
    if "hosts" in rounds[-1]:
        keys = ("steady", "determination", "window", "wsat")
        result["hosts"] = {host: {key: value for key, value in
                                  _phase_summary(pts, phase, host_view(rounds, host), stop, host).items()
                                  if key in keys}
                           for host in rounds[-1]["hosts"]}
    return result


def _phase_summary(pts: PtsStore, phase: PhasePlan, rounds: Sequence[Mapping[str, Any]], stop: str | None,
                   host: str | None = None) -> dict[str, Any]:
    last = rounds[-1]
    every = phase.phase.stop.kind == "rounds"  # a fixed schedule (HIR, XSR, HDD, operating points): all its rounds
    window_numbers = last["steady"]["window_rounds"] or [
        int(r["round"]) for r in (rounds if every else rounds[-phase.phase.stop.window:])]
    window = [r for r in rounds if int(r["round"]) in window_numbers]
    result: dict[str, Any] = {
        "phase": phase.key, "test": phase.phase.test, "title": phase.phase.title, "stop_reason": stop,
        "rounds": len(rounds), "steady": last["steady"]["steady"], "window_rounds": window_numbers,
        "determination": last["steady"]["variables"],
        "window": window_values(pts, phase, window, host),
    }
    if "wsat" in last:
        result["wsat"] = last["wsat"]
    return result


def window_values(pts: PtsStore, phase: PhasePlan, window: Sequence[Mapping[str, Any]],
                  host: str | None = None) -> dict[str, Any]:
    """Per cell over the window rounds: the average of each round's value (as PTS reports), and the total latency
    of all their IOs merged exactly from fio's json+ bins (max and percentiles over the whole window). On hosts,
    `host` None: every host's IOs, else that host's (its rounds as host_view gives them)."""
    merged = _window_latency(pts, phase, window, host)
    values: dict[str, Any] = {}
    for cell in phase.cells:
        records = [r["cells"][cell.name] for r in window]
        cell_values: dict[str, Any] = {m: _average(records, "", m) for m in ("iops", "bw_bytes", "lat_mean_ns")}
        for direction in ("read", "write"):
            for metric in ("iops", "bw_bytes", "lat_mean_ns"):
                cell_values[f"{direction}_{metric}"] = _average(records, direction, metric)
        latency = merged.get(cell.name)
        cell_values["lat_max_ns"] = max(float(rec["lat_max_ns"]) for rec in records)
        cell_values["lat_percentiles_ns"] = latency.percentiles_ns if latency else {}
        cell_values["lat_n"] = latency.n if latency else None  # the IOs behind the window's percentiles
        cell_values["lat_beyond"] = latency.beyond if latency else {}
        values[cell.name] = cell_values
    return values


def _average(records: Sequence[Mapping[str, Any]], direction: str, metric: str) -> float | None:
    """The average of a metric over rounds (direction "" = the cell's top-level value); None when absent."""
    sources = [rec[direction] if direction else rec for rec in records]
    found = [float(source[metric]) for source in sources if source]
    return sum(found) / len(found) if found else None


def _window_latency(pts: PtsStore, phase: PhasePlan, window: Sequence[Mapping[str, Any]],
                    host: str | None) -> dict[str, Any]:
    from ptsbench.store import read_json

    per_cell: dict[str, list[Any]] = {}
    for record in window:
        path = pts.round_dir(phase.key, int(record["round"])) / "fio.json"
        if not path.exists():
            return {}
        results: dict[str, list[JobResult]] = {}
        for result in parse_jobs(read_json(path)):
            if host is None or result.hostname == host:
                results.setdefault(result.name, []).append(result)
        for cell_name, cell in record["cells"].items():
            for job in cell["jobs"]:
                totals = [total.lat for result in results.get(job, []) if (total := result.total()) is not None]
                if totals:
                    per_cell.setdefault(cell_name, []).extend(totals)
    return {name: merge_latency(parts) for name, parts in per_cell.items()}


# ---------------------------------------------------------------------------------------------------------------
# operating points (CBW, DIRTH, ECW)


def operating_points_record(phase: PhasePlan, result: Mapping[str, Any]) -> dict[str, Any]:
    """MaxIOPS, MidIOPS and MinIOPS of a finished sweep phase, chosen from its window averages (advanced.py's
    rules), as stored in the manifest."""
    specs = [cell_spec_record(cell) for cell in sweep_cells(phase.cells)]  # the cells as they ran
    points = select_operating_points(demand_cells(specs, result["window"]))
    chosen = {"max": points.max, "mid": points.mid, "min": points.min}
    note = None
    if points.max is None:
        note = (f"{TEST_DEFS[phase.phase.test].title}: no TC x QD cell has a mean response time under "
                f"{points.limit_ns / 1e6:g} ms, so MaxIOPS and MidIOPS do not exist; only MinIOPS (TC1/QD1) runs")
    return {
        "phase": phase.key, "window_rounds": list(result["window_rounds"]), "limit_ns": points.limit_ns,
        "middle_iops": points.middle_iops, "note": note,
        "points": {name: None if cell is None else {"name": cell.name, "tc": cell.tc, "qd": cell.qd,
                                                    "iops": cell.iops, "lat_mean_ns": cell.lat_mean_ns}
                   for name, cell in chosen.items()},
    }
