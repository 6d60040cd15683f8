"""Fleet members (report/fleet.py) from stored runs: a PTS run's tracked variables at steady state, with the
measurement window's data excursion as their noise; a case run's (run, quick, sweep) tests, each the mean of its
repetitions, with their spread as the noise."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ptsbench.confidence import base_case_name
from ptsbench.report.fleet import FACTS, Member, Tracked

TARGET_FACTS = ("model", "serial", "firmware")


def tag_facts(manifest: Mapping[str, Any]) -> dict[str, str]:
    """The run's key=value tags (--tag firmware=1.3) as facts: key -> value."""
    tags = [str(tag) for tag in manifest.get("tags") or []]
    return dict(tag.split("=", 1) for tag in tags if "=" in tag)


def _device_facts(targets: Sequence[Mapping[str, Any]], manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Model, serial and firmware of the run's target(s); where the device does not say (a file on a virtual
    disk), the run's tag of that name (--tag firmware=1.3), marked as a tag; else '-'."""
    tags = tag_facts(manifest)
    facts = []
    for key in TARGET_FACTS:
        values = list(dict.fromkeys(str(target[key]) for target in targets if target.get(key)))
        facts.append((key, ", ".join(values) or (f"{tags[key]} (tag)" if key in tags else "-")))
    return facts


def spread_of(values: Sequence[float | None]) -> float | None:
    """max - min of the known values; None with fewer than two."""
    known = [value for value in values if value is not None]
    return max(known) - min(known) if len(known) > 1 else None


# --- PTS ------------------------------------------------------------------------------------------------------


def _steady_round(view: Any) -> str:
    """Where a phase's steady state was judged: the last round of its window, or why not."""
    if view.result is None:
        return f"running (round {len(view.rounds)})"
    window = view.result.get("window_rounds") or []
    if view.result.get("steady") and window:
        return str(window[-1])
    return f"not reached ({len(view.rounds)} rounds)"


def pts_tracked(views: Sequence[Any]) -> tuple[list[Tracked], str]:
    """Every tracked variable of a PTS run: the window's average, its data excursion (noise), each round's value;
    and the steady-state round of each phase ('5' when all phases agree, else 'IOPS 5, Latency 7')."""
    from ptsbench.report.pts.views import METRIC_NAMES, metric_unit

    values: list[Tracked] = []
    steady: dict[str, str] = {}
    for view in views:
        if not view.plan["tracked"] or not view.rounds:
            continue
        steady[view.plan["title"]] = _steady_round(view)
        window = view.window_rounds()
        for tracked in view.plan["tracked"]:
            cell, metric = tracked["cell"], tracked["metric"]
            unit, factor, kind = metric_unit(metric)

            def value_in(record: Mapping[str, Any], cell: str = cell, metric: str = metric,
                         factor: float = factor) -> float | None:
                found = (record["cells"].get(cell) or {}).get(metric)
                return None if found is None else float(found) * factor

            average = (view.values().get(cell) or {}).get(metric)
            said = METRIC_NAMES.get(metric, metric)
            name = f"{view.plan['title']}: {cell}" + ("" if said == unit else f" {said}")
            values.append(Tracked(name, unit, kind, None if average is None else float(average) * factor,
                                  spread_of([value_in(record) for record in window]),
                                  tuple(int(record["round"]) for record in view.rounds),
                                  tuple(value_in(record) for record in view.rounds)))
    rounds = set(steady.values())
    said = rounds.pop() if len(rounds) == 1 else ", ".join(f"{title} {text}" for title, text in steady.items())
    return values, said or "-"


def pts_member(run_dir: Path, label: str) -> Member:
    from ptsbench.report.pts.views import load_context
    from ptsbench.store import RunStore

    store = RunStore.open(run_dir)
    _context, views = load_context(store)
    values, steady = pts_tracked(views)
    target = store.manifest.get("target") or {}
    return Member(label, (*_device_facts([target], store.manifest), (FACTS[3], steady)), tuple(values))


# --- case runner ----------------------------------------------------------------------------------------------


def repetition_of(record: Any) -> int:
    """A case record's repetition (1, 2, ... with --repeat; 0 when the case ran once)."""
    return int(getattr(record, "repetition", 0) or 0)


def case_tracked(rows: Sequence[Any]) -> list[Tracked]:
    """Per test (case, job, direction) of ResultRow-like rows: IOPS of random jobs, MB/s of the others, the mean over
    the case's repetitions, their spread as the noise and each repetition's value."""
    found: dict[tuple[str, int, str], tuple[str, str, str, dict[int, float]]] = {}
    cases = {base_case_name(row.case, row.repetition) for row in rows}
    for row in rows:
        if row.iops is None or row.direction not in ("read", "write", "trim") or row.host:
            continue
        case = base_case_name(row.case, row.repetition)
        random = "rand" in row.rw
        unit, kind = ("IOPS", "iops") if random else ("MB/s", "mbs")
        value = row.iops if random else (row.bw_bytes or 0.0) / 1e6
        said = row.job if row.job.endswith(f"-{row.direction}") else f"{row.job} {row.direction}"  # quick: -read
        name = (f"{case}: " if len(cases) > 1 else "") + said
        entry = found.setdefault((case, row.job_index, row.direction), (name, unit, kind, {}))
        entry[3][row.repetition] = float(value)
    values = []
    for name, unit, kind, per_repetition in found.values():
        numbers = list(per_repetition.values())
        values.append(Tracked(name, unit, kind, sum(numbers) / len(numbers), spread_of(numbers),
                              tuple(sorted(per_repetition)) if len(numbers) > 1 else (),
                              tuple(per_repetition[n] for n in sorted(per_repetition)) if len(numbers) > 1 else ()))
    return values


def case_member(run_dir: Path, label: str) -> Member:
    from ptsbench.cases.records import load_records
    from ptsbench.report.cases.tables import result_rows
    from ptsbench.store import RunStore

    store = RunStore.open(run_dir)
    records = load_records(store)
    repetitions = max((repetition_of(record) for record in records), default=0)
    facts = (*_device_facts(store.manifest.get("targets") or [], store.manifest), (FACTS[3], "n/a (fio case run)"),
             ("repetitions", str(max(repetitions, 1))))
    return Member(label, facts, tuple(case_tracked(result_rows(records))))


def run_member(run_dir: Path, label: str) -> Member:
    """The member of any stored run."""
    from ptsbench.store import RunStore

    return pts_member(run_dir, label) if RunStore.open(run_dir).kind == "pts" else case_member(run_dir, label)
