"""The report of a sweep (`ptsbench sweep`) or of any fio JSON files (`ptsbench plot`): a headline (best IOPS per
workload, the queue depth at which a latency percentile crosses a stated bound), every run's numbers, and the bar
charts of sweep_charts.py."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ptsbench.report.cases.sweep_charts import ChartOptions, Point, groups, job_points, size_order, sweep_figures
from ptsbench.report.common import environment_section, provenance_line, run_facts
from ptsbench.report.core.fit import unshared
from ptsbench.report.core.model import Block, Column, Report, Section, Table, Text, format_value

DEFAULT_BOUND_US = 1000.0
TABLE_PERCENTILES = ("50", "90", "95", "99", "99.9", "99.99", "99.999")


def _us(value_ns: float | None) -> float | None:
    return None if value_ns is None else value_ns / 1000


def _table_order(point: Point) -> tuple[Any, ...]:
    """Rows by workload, then block size, queue depth and numjobs as numbers (1, 2, 16; not 1, 16, 2)."""
    return (point.source, point.rw, size_order(point.bs), point.rwmixread or 0, point.iodepth, point.numjobs,
            point.label, point.job, point.direction)


def points_table(points: Sequence[Point], shared_once: bool = False) -> Table:
    """Every plotted number: a row per run, job and direction (the job named where a run has several: a job file's
    jobs, each on its own device). `shared_once`: what all runs' names start and end with is said once in the title
    (`plot --json`'s runs are paths such as cases/*/fio)."""
    latency = {p.latency for p in points}
    name = "clat" if latency == {"clat"} else "lat"
    runs = list(dict.fromkeys(p.label for p in points))
    several_jobs = {label for label in runs if len({p.job for p in points if p.label == label}) > 1}
    jobs = (Column("job"),) if several_jobs else ()
    columns = (Column("run"), *jobs, Column("source"), Column("rw"), Column("bs"), Column("read %"),
               Column("QD", "int"), Column("numjobs", "int"), Column("dir"), Column("IOPS", "iops"),
               Column("MB/s", "mbs"), Column(f"{name} mean (µs)", "us"),
               *(Column(f"{name} p{p} (µs)", "us") for p in TABLE_PERCENTILES),
               Column("usr CPU %", "pct"), Column("sys CPU %", "pct"), Column("fio steady state"))
    names, pattern = unshared(runs) if shared_once else (runs, "")
    run = dict(zip(runs, names, strict=True))
    rows = tuple((run[p.label], *((p.job if p.label in several_jobs else "-",) if jobs else ()), p.source, p.rw,
                  p.bs, "-" if p.rwmixread is None else str(p.rwmixread), p.iodepth,
                  p.numjobs, p.direction, p.iops, p.bw_bytes / 1e6, _us(p.lat_mean_ns),
                  *(_us(p.percentiles_ns.get(pct)) for pct in TABLE_PERCENTILES), p.usr_cpu, p.sys_cpu,
                  p.steady)
                 for p in sorted(points, key=_table_order))
    title = "One row per fio run and direction, as fio reported it" + (f" (runs: {pattern})" if pattern else "")
    # the rows are named by run, job and direction, and by source where a run has several (its hosts); a source
    # that follows from the run is a description, shown after the values
    one_source = all(len({p.source for p in points if p.label == label}) == 1 for label in runs)
    source, direction = 1 + len(jobs), 7 + len(jobs)
    keys = (0, *range(1, source), *(() if one_source else (source,)), direction)
    return Table("sweep", title, columns, rows, keys=keys)


def bound_table(points: Sequence[Point], percentile: str, bound_us: float) -> tuple[Table, list[str]]:
    """Per source, workload and numjobs: the highest queue depth whose percentile stays within the bound and the
    first that exceeds it (in queue depth order); and the headline sentences."""
    rows = []
    lines = []
    label = f"p{percentile}"
    for workload, chosen in groups(points).items():
        for source in dict.fromkeys(p.source for p in chosen):
            for numjobs in sorted({p.numjobs for p in chosen if p.source == source}):
                series = sorted((p for p in chosen if p.source == source and p.numjobs == numjobs
                                 and percentile in p.percentiles_ns), key=lambda p: p.iodepth)
                if len(series) < 2:
                    continue
                over = next((p for p in series if p.percentiles_ns[percentile] / 1000 > bound_us), None)
                before = [p for p in series if over is None or p.iodepth < over.iodepth]
                last = before[-1] if before else None  # the highest queue depth before the first one over
                rows.append((source, workload, numjobs, last.iodepth if last else None, last.iops if last else None,
                             over.iodepth if over else None,
                             _us(over.percentiles_ns[percentile]) if over else None))
                where = f"{workload}, numjobs {numjobs}" + (f", {source}" if len({p.source for p in points}) > 1
                                                            else "")
                bound = format_value(bound_us, "us")
                if over is None:
                    top = series[-1]
                    lines.append(f"{where}: {label} stays within {bound} µs up to the highest queue depth run, "
                                 f"{top.iodepth} ({format_value(_us(top.percentiles_ns[percentile]), 'us')} µs).")
                else:
                    lines.append(f"{where}: {label} exceeds {bound} µs at queue depth {over.iodepth} "
                                 f"({format_value(_us(over.percentiles_ns[percentile]), 'us')} µs)" +
                                 (f"; at {last.iodepth} it was within ({format_value(last.iops, 'iops')} IOPS)."
                                  if last else "; it does at every queue depth run."))
    columns = (Column("source"), Column("workload"), Column("numjobs", "int"), Column("last QD within", "int"),
               Column("IOPS there", "iops"), Column("first QD over", "int"), Column(f"{label} there (µs)", "us"))
    title = f"Queue depth at which {label} latency exceeds {format_value(bound_us, 'us')} µs"
    return Table("bound", title, columns, tuple(rows), keys=(0, 1, 2)), lines


def best_lines(points: Sequence[Point]) -> list[str]:
    """The highest IOPS of every workload, and where it was measured."""
    lines = []
    several = len({p.source for p in points}) > 1
    for workload, chosen in groups(points).items():
        best = max(chosen, key=lambda p: p.iops)
        lines.append(f"{workload}: best {format_value(best.iops, 'iops')} IOPS at queue depth {best.iodepth}, "
                     f"numjobs {best.numjobs}" + (f" ({best.source})" if several else "") + ".")
    return lines


def chart_sections(points: Sequence[Point], options: ChartOptions, bound_us: float, caption: str,
                   key: str = "sweep") -> list[Section]:
    """Headline, table and charts of a set of fio runs (`key`: the charts' file names start with it)."""
    bound, bound_lines = bound_table(points, options.percentile, bound_us)
    headline: list[Block] = [Text(line) for line in best_lines(points) + bound_lines]
    if bound.rows:
        headline.append(bound)
    figures = sweep_figures(points, options, key, caption)
    return [Section("headline", "Headline", blocks=tuple(headline)),
            Section("results", "Results", blocks=(points_table(points),)),
            Section("charts", "Charts", blocks=tuple(figures))]


def sweep_points(store: Any, records: Sequence[Any]) -> tuple[list[Point], list[str]]:
    """The points of a sweep's finished cells (its stored `records`), from each cell's fio.json; and the cells that
    failed."""
    from ptsbench.fio.jsonfiles import document_jobs, load_document

    sweep = store.manifest["sweep"]
    entries = {entry["index"]: entry for entry in sweep["cases"]}
    targets = [target["requested"] for target in sweep["targets"]]
    points: list[Point] = []
    failed = []
    for record in records:
        entry = entries.get(record.index)
        if entry is None or entry["role"] != "cell":
            continue
        if record.status != "ok":
            failed.append(f"{record.name}: {record.message}")
            continue
        path = store.root / "cases" / f"{record.index:03d}-{record.name}" / "fio.json"
        doc = load_document(path) if path.is_file() else None
        for found in document_jobs(doc, path) if doc else []:
            source = targets[entry["target"]] if targets else "-"
            if found.result.hostname:
                source += f" on {found.result.hostname}"
            if sweep["spec"]["loops"] > 1:
                source += f" loop {entry['cell']['loop']}"
            points += job_points(found, source, record.name)
    return points, failed


_FACT_NAMES = {"rw": "workloads (rw)", "bs": "block sizes", "iodepth": "queue depths", "numjobs": "numjobs",
               "rwmixread": "read shares (%)", "runtime_s": "runtime per cell", "ramp_time_s": "ramp time per cell",
               "loops": "loops", "size": "size", "ioengine": "I/O engine", "direct": "direct I/O",
               "ss": "fio steady state", "ss_dur_s": "steady state window", "ss_ramp_s": "steady state ramp",
               "options": "other fio options", "precondition": "precondition job",
               "precondition_repeat": "precondition before every cell"}


def _fact(key: str, value: Any) -> tuple[str, str]:
    """A swept setting as people read it: 'direct I/O: yes', 'size: 256.0 MiB', 'runtime per cell: 30 s'."""
    from ptsbench.errors import PtsbenchError
    from ptsbench.units import format_bytes, parse_size_bytes, spoken_duration

    def shown(one: Any) -> str:
        if isinstance(one, bool):
            return "yes" if one else "no"
        if key == "size":
            try:
                return format_bytes(parse_size_bytes(str(one)))
            except PtsbenchError:  # a percentage of the target, or another form fio reads
                return str(one)
        if key.endswith("_s") and isinstance(one, int | float):
            return spoken_duration(float(one))
        if isinstance(one, list | tuple) and len(one) == 2 and key == "options":
            return f"{one[0]}={one[1]}"
        return str(one)

    return _FACT_NAMES.get(key, key), ", ".join(map(shown, value)) if isinstance(value, list) else shown(value)


def sweep_report(store: Any, in_progress: str | None = None) -> Report:
    """Report of a `ptsbench sweep` directory."""
    manifest = store.manifest
    settings: Mapping[str, Any] = manifest["sweep"].get("report") or {}
    from ptsbench.cases.records import load_records

    records = load_records(store)  # the points and the cells' write amplification
    points, failed = sweep_points(store, records)
    options = ChartOptions(percentile=str(settings.get("percentile", "99")))
    caption = "From fio's json+ output of every cell (fio merges the numjobs threads of a cell: group_reporting)."
    sections = chart_sections(points, options, float(settings.get("latency_bound_us", DEFAULT_BOUND_US)), caption)
    from ptsbench.report.cases.report import waf_table_blocks

    waf = waf_table_blocks(records)  # cells that wrote an NVMe namespace (device/case_telemetry.py)
    if waf:
        sections.insert(2, Section("waf", "Write amplification", blocks=tuple(waf)))
    spec = manifest["sweep"]["spec"]
    facts = tuple(_fact(key, value) for key, value in spec.items() if value not in (None, [], ()))
    sections.append(environment_section(manifest))
    from ptsbench.pts.store import PtsStore

    warnings = [f"cell {line}" for line in failed]
    status = PtsStore(store).run_status()  # 'running' that no process holds: killed
    if status != "done" and in_progress is None:
        warnings.append(f"sweep status {status}: `ptsbench resume {store.root}` runs its unfinished cells")
    name = manifest.get("name") or ""
    title = f"ptsbench sweep: {Path(store.root).name}" if name in ("", "sweep") else f"ptsbench sweep: {name}"
    return Report(title, provenance_line(manifest),
                  run_facts(manifest) + facts, tuple(sections), in_progress, tuple(warnings))
