"""The report of a run directory (HTML, PDF, xlsx, figures), made from the store alone; and comparisons of runs.

    build_report(run_dir)                       -> RUN_DIR/report/ with everything
    write_report(run_dir, in_progress="...")    -> the call made during runs (HTML and xlsx only, fast) and at their end
    build_compare([run_dir, ...], out_dir)      -> one report putting several runs side by side

A report is first assembled as data - Report -> Sections -> Text / Table / Figure blocks - from the store; html.py,
pdf.py, workbook.py and figures.py only draw that data, so every format shows the same numbers, and a new kind of
section (a new PTS test) appears in every format at once.
"""

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ptsbench.errors import PtsbenchError
from ptsbench.report.figures import Figure, Series, percentile_figure

Value = str | float | int | None
REPORT_DIR = "report"
HTML_NAME, PDF_NAME, XLSX_NAME, FIGURES_DIR = "index.html", "report.pdf", "results.xlsx", "figures"


# --- the report as data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A table column: its header (with unit) and how its numbers are written (see format_value)."""

    name: str
    kind: str = "text"  # text, int, iops, mbs, us, number, ratio


@dataclass(frozen=True)
class Chart:
    """A native xlsx chart of a table: the first column as categories, the chosen numeric columns as series."""

    title: str
    x_label: str
    y_label: str
    y_log: bool = False
    columns: tuple[int, ...] = ()  # empty: every numeric column


@dataclass(frozen=True)
class Table:
    key: str  # stable across runs (compare matches tables by it); the xlsx sheet name is derived from it
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Value, ...], ...]
    chart: Chart | None = None
    keys: tuple[int, ...] = (0,)  # columns that identify a row (compare matches rows by them)
    compare: tuple[int, ...] | None = None  # columns a comparison shows per run (default: all but the keys)

    def label_count(self) -> int:
        """Leading text columns that identify a row."""
        count = 0
        for column in self.columns:
            if column.kind != "text":
                break
            count += 1
        return count


@dataclass(frozen=True)
class Text:
    text: str
    kind: str = "p"  # "p", "warning" (a visible banner) or "code"


Block = Text | Table | Figure


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    facts: tuple[tuple[str, str], ...] = ()  # shown at the top of the section, and on every PDF page of it
    blocks: tuple[Block, ...] = ()

    def tables(self) -> list[Table]:
        return [block for block in self.blocks if isinstance(block, Table)]

    def figures(self) -> list[Figure]:
        return [block for block in self.blocks if isinstance(block, Figure)]


@dataclass(frozen=True)
class Report:
    title: str
    provenance: str  # ptsbench and fio version, device, date: in every figure's caption and metadata
    facts: tuple[tuple[str, str], ...]
    sections: tuple[Section, ...]
    in_progress: str | None = None
    warnings: tuple[str, ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict)

    def tables(self) -> list[Table]:
        return [table for section in self.sections for table in section.tables()]

    def figures(self) -> list[Figure]:
        return [figure for section in self.sections for figure in section.figures()]


# --- numbers for people (the one formatting rule of every report format) -------------------------------------

NUMBER_FORMATS: dict[str, tuple[str, str]] = {  # kind -> (Python format, xlsx num_format)
    "int": ("{:,.0f}", "#,##0"),
    "iops": ("{:,.1f}", "#,##0.0"),
    "mbs": ("{:,.2f}", "#,##0.00"),
    "number": ("{:,.3f}", "#,##0.000"),
    "pct": ("{:,.1f}", "#,##0.0"),
    "ratio": ("{:.3f}×", '0.000"×"'),
    "us": ("", "[<10]0.000;[<1000]0.00;#,##0"),
}


def format_value(value: Value, kind: str) -> str:
    """A cell as text: '-' for no value; µs with 3 decimals under 10, 2 under 1000, none above (as the terminal)."""
    if value is None:
        return "-"
    if kind == "text" or isinstance(value, str):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "-"
    if kind == "us":
        return f"{value:,.{3 if abs(value) < 10 else 2 if abs(value) < 1000 else 0}f}"
    return NUMBER_FORMATS.get(kind, NUMBER_FORMATS["number"])[0].format(value)


# --- shared pieces ---------------------------------------------------------------------------------------------


def provenance_line(manifest: Mapping[str, Any]) -> str:
    """What made the numbers: ptsbench and fio versions, device(s), date."""
    from ptsbench.report import style

    return str(style.provenance(manifest))


def _fact(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return " ".join(str(item) for item in value)
    return str(value)


def run_facts(manifest: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Facts every report starts with."""
    return (
        ("run", _fact(manifest.get("name"))),
        ("kind", _fact(manifest.get("kind"))),
        ("started (UTC)", _fact(manifest.get("created_utc"))),
        ("ptsbench", _fact(manifest.get("ptsbench_version"))),
        ("fio", _fact(manifest.get("fio_version"))),
        ("command line", _fact(manifest.get("command_line"))),
        ("store schema", _fact(manifest.get("schema_version"))),
    )


def environment_section(manifest: Mapping[str, Any]) -> Section:
    """Host and target facts as recorded in the manifest."""
    from ptsbench.units import format_bytes

    host = manifest.get("host") or {}
    host_rows = tuple((key, _fact(format_bytes(value) if key == "memory_bytes" and value else value))
                      for key, value in host.items())
    blocks: list[Block] = [Table("host", "Host", (Column("fact"), Column("value")), host_rows)]
    targets = manifest.get("targets") or []
    if targets:
        keys = list(dict.fromkeys(key for target in targets for key in target))
        columns = (Column("fact"), *(Column(f"target {number}") for number in range(1, len(targets) + 1)))
        rows = tuple((key, *(_fact(target.get(key)) for target in targets)) for key in keys)
        blocks.append(Table("targets", "Targets", columns, rows))
    return Section("environment", "Environment", blocks=tuple(blocks))


# --- case-runner runs ------------------------------------------------------------------------------------------

RESULT_PERCENTILES = ("50", "90", "95", "99", "99.9", "99.99", "99.999")
RESULT_COLUMNS = (
    Column("case"), Column("job"), Column("host"), Column("target"), Column("rw"), Column("bs"), Column("QDxT"),
    Column("dir"),
    Column("status"), Column("IOPS", "iops"), Column("MB/s", "mbs"), Column("lat mean (µs)", "us"),
    *(Column(f"lat p{p} (µs)", "us") for p in RESULT_PERCENTILES),
)


def _us(value_ns: float | None) -> float | None:
    return None if value_ns is None else value_ns / 1000


def results_table(records: Sequence[Any]) -> Table:
    """The case runner's results: one row per job and direction, latencies in µs."""
    from ptsbench.report.tables import result_rows

    rows = tuple(
        (row.case, row.job, row.host or "-", row.target or "-", row.rw, row.bs,
         f"{row.iodepth}x{row.numjobs}" if row.iodepth else "-", row.direction,
         row.status if not row.message else f"{row.status}: {row.message}", row.iops, row.mb_s,
         _us(row.lat_mean_ns), *(_us(row.lat_percentiles_ns.get(p)) for p in RESULT_PERCENTILES))
        for row in result_rows(records)
    )
    return Table("results", "One row per job and direction (total latency, as fio measures lat)", RESULT_COLUMNS, rows,
                 Chart("IOPS per job", "job", "IOPS", columns=_result_columns("IOPS")),
                 keys=_result_columns("case", "job", "host", "rw", "bs", "QDxT", "dir"),
                 compare=_result_columns("IOPS", "MB/s", "lat mean (µs)", "lat p99 (µs)", "lat p99.999 (µs)"))


def _result_columns(*names: str) -> tuple[int, ...]:
    index = {column.name: position for position, column in enumerate(RESULT_COLUMNS)}
    return tuple(index[name] for name in names)


_LOG_KINDS = (  # (log name, figure key suffix, title, y label, value -> plotted unit)
    ("iops", "iops", "IOPS over time", "IOPS", 1.0),
    ("bw", "mbs", "MB/s over time", "MB/s", 1024 / 1e6),  # fio bw logs are in KiB/s
    ("lat", "lat", "Mean total latency over time", "latency (µs)", 1 / 1000),  # lat logs are in ns
)


def _log_prefixes(case_dir: Path) -> dict[str, str]:
    """Job name -> the file name prefix of its logs, from the job file fio ran."""
    from ptsbench.fio.jobs import parse_job_text

    job_path = case_dir / "job.fio"
    if not job_path.is_file():
        return {}
    prefixes = {}
    for section in parse_job_text(job_path.read_text(), str(job_path)):
        prefix = section.get("write_iops_log")
        if prefix:
            prefixes[section.name] = Path(prefix).name
    return prefixes


def interval_series(case_dir: Path, prefix: str, log: str, interval_ms: float, host: str | None = None
                    ) -> dict[str, tuple[list[float], list[float]]]:
    """direction -> (time_s, value) of one job's fio log (on one host in client/server runs). One thread: fio's
    samples as written. Several threads (numjobs > 1): merged by time per interval (fio/logs.py), rates summed and
    latencies averaged."""
    from ptsbench.fio import logs

    paths = [path for path in sorted((case_dir / "logs").glob(f"{prefix}_{log}.*"))
             if (name := logs.parse_log_name(path)) is not None and name.kind == log and name.host == host]
    read = [logs.read_log(path, log) for path in paths if path.stat().st_size]
    result: dict[str, tuple[list[float], list[float]]] = {}
    if len(read) == 1:
        only = read[0]
        for direction in sorted(set(only.ddir.tolist())):
            chosen = only.ddir == direction
            result[logs.DDIR_NAMES.get(direction, str(direction))] = (
                (only.time_ms[chosen] / 1000).tolist(), only.value[chosen].astype(float).tolist())
        return result
    for merged in logs.merge_windowed(read, interval_ms, "mean" if log == "lat" else "sum"):
        result[logs.DDIR_NAMES.get(merged.ddir, str(merged.ddir))] = ((merged.end_ms / 1000).tolist(),
                                                                      merged.value.tolist())
    return result


def _series_name(job: str, host: str | None, direction: str) -> str:
    return f"{job} {host} {direction}" if host else f"{job} {direction}"


def case_figures(case_dir: Path, record: Any, key: str, interval_ms: float) -> list[Figure]:
    """Per case: IOPS, MB/s and latency over time from the interval logs; the percentile curve from json+ bins."""
    from ptsbench.fio.output import parse_jobs
    from ptsbench.store import read_json

    figures = []
    prefixes = _log_prefixes(case_dir)
    for log, suffix, title, y_label, scale in _LOG_KINDS:
        series = []
        for job in record.jobs:
            prefix = prefixes.get(job["name"])
            if prefix is None:
                continue
            host = job.get("hostname")
            for direction, (time_s, values) in interval_series(case_dir, prefix, log, interval_ms, host).items():
                series.append(Series(_series_name(job["name"], host, direction), tuple(time_s),
                                     tuple(v * scale for v in values),
                                     mode="lines+markers" if len(time_s) < 60 else "lines"))
        if series:
            figures.append(Figure(f"{key}-{suffix}", f"{record.name}: {title}", "time (s)", y_label, tuple(series),
                                  caption=f"From fio's {log} logs of case {record.name}, per job and direction "
                                          "(the threads of a job merged by time).",
                                  data_sheet=True))
    if (case_dir / "fio.json").is_file():
        curves = [(_series_name(job.name, job.hostname, direction.direction), direction.lat.bins)
                  for job in parse_jobs(read_json(case_dir / "fio.json"))
                  for direction in job.directions if direction.direction != "total"]
        if curves:
            figures.append(percentile_figure(
                f"{key}-percentiles", f"{record.name}: total latency percentiles", curves,
                f"Computed from fio's json+ latency bins of case {record.name}: the share of IOs at or below each "
                "latency."))
    return figures


def case_section(store_root: Path, record: Any, interval_ms: float) -> Section:
    case_dir = store_root / "cases" / f"{record.index:03d}-{record.name}"
    facts = (("case", record.name), ("job file", record.source), ("target", _fact(record.target)),
             ("status", record.status), ("started (UTC)", record.started_utc), ("ended (UTC)", record.ended_utc))
    blocks: list[Block] = []
    if record.status != "ok":
        blocks.append(Text(f"Case failed: {record.message or 'see fio.stderr'}", "warning"))
    command = case_dir / "command.txt"
    if command.is_file():
        blocks.append(Text(command.read_text().strip(), "code"))
    blocks.extend(case_figures(case_dir, record, f"case{record.index:03d}", interval_ms))
    return Section(f"case{record.index:03d}", f"Case {record.index}: {record.name}", facts, tuple(blocks))


def case_run_report(store: Any, in_progress: str | None = None) -> Report:
    """Report of a `ptsbench run` / `quick` directory."""
    from ptsbench.cases import load_records

    manifest = store.manifest
    records = load_records(store)
    warnings = tuple(f"case {record.name} failed: {record.message}" for record in records if record.status != "ok")
    sections = [Section("results", "Results", blocks=(results_table(records),))]
    interval_ms = float(manifest.get("log_interval_ms") or 1000)
    sections += [case_section(store.root, record, interval_ms) for record in records]
    sections.append(environment_section(manifest))
    return Report(f"ptsbench run: {manifest.get('name', store.root.name)}", provenance_line(manifest),
                  run_facts(manifest), tuple(sections), in_progress, warnings)


# --- PTS runs -------------------------------------------------------------------------------------------------
# A section per test, built from data: the common part (header facts, banners, convergence, measurement window,
# steady-state determination) for every test, then the blocks TEST_BLOCKS names for the test. A test without an
# entry (a later one: HIR, XSR, CBW, DIRTH) still gets the common part and a table of every cell.

SPEC_NAMES = {"2.0": "SNIA PTS 2.0.2", "1.1": "SNIA PTS-E 1.1"}
# metric -> (unit, factor from the stored value, number kind)
METRIC_UNITS: dict[str, tuple[str, float, str]] = {
    "iops": ("IOPS", 1.0, "iops"),
    "bw_bytes": ("MB/s", 1e-6, "mbs"),
    "lat_mean_ns": ("µs", 1e-3, "us"),
    "lat_max_ns": ("µs", 1e-3, "us"),
}
METRIC_NAMES = {"iops": "IOPS", "bw_bytes": "throughput", "lat_mean_ns": "mean latency", "lat_max_ns": "max latency"}


def metric_axis(metric: str) -> str:
    """Axis label of a tracked metric with its unit: 'IOPS', 'throughput (MB/s)', 'mean latency (µs)'."""
    from ptsbench.report.style import axis_label

    unit = METRIC_UNITS.get(metric, ("", 1.0, ""))[0]
    name = METRIC_NAMES.get(metric, metric)
    return name if name == unit else axis_label(name, unit)


@dataclass(frozen=True)
class PtsContext:
    """What every PTS section reads: the manifest, the plan, and the store for per-phase files."""

    manifest: Mapping[str, Any]
    plan: Mapping[str, Any]
    pts: Any  # PtsStore
    hosts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # run on hosts: host -> phase key -> view

    @property
    def capacity_bytes(self) -> int:
        return int(self.manifest["target_info"]["size_bytes"])


def _key(*parts: str) -> str:
    text = "-".join(parts).lower()
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-")


def _scaled(value: Any, factor: float) -> float | None:
    return None if value is None else float(value) * factor


def _bs_label(bs_bytes: int) -> str:
    from ptsbench.units import format_bs

    return format_bs(int(bs_bytes))


def _cells(view: Any) -> list[dict[str, Any]]:
    return list(view.plan["cells"])


def _axes_of(view: Any) -> tuple[list[int], list[int]]:
    """Block sizes and mixes (read %) of a phase, in the order the spec runs them."""
    cells = _cells(view)
    return list(dict.fromkeys(c["bs_bytes"] for c in cells)), list(dict.fromkeys(c["read_pct"] for c in cells))


def _matrix(view: Any, value_of: Any) -> list[list[float | None]]:
    """rows: block sizes, columns: mixes; value_of(cell values dict) -> number or None."""
    sizes, mixes = _axes_of(view)
    values = view.values()
    by_key = {(c["bs_bytes"], c["read_pct"]): values.get(c["name"]) for c in _cells(view)}
    return [[value_of(by_key[(bs, mix)]) if by_key.get((bs, mix)) else None for mix in mixes] for bs in sizes]


def _matrix_table(key: str, title: str, view: Any, value_of: Any, kind: str, unit: str, chart: bool) -> Table:
    from ptsbench.pts.specs import mix_label

    sizes, mixes = _axes_of(view)
    matrix = _matrix(view, value_of)
    columns = (Column("block size"), *(Column(f"{mix_label(mix)} ({unit})", kind) for mix in mixes))
    rows = tuple((_bs_label(bs), *row) for bs, row in zip(sizes, matrix, strict=True))
    return Table(key, title, columns, rows,
                 Chart(title, "block size", unit, y_log=True) if chart else None)


def _bars(key: str, title: str, view: Any, value_of: Any, unit: str, caption: str) -> Figure:
    from ptsbench.pts.specs import mix_label
    from ptsbench.report.figures import Bars3D

    sizes, mixes = _axes_of(view)
    matrix = _matrix(view, value_of)
    bars = Bars3D(tuple(mix_label(m) for m in mixes), tuple(_bs_label(bs) for bs in sizes),
                  tuple(tuple(row) for row in matrix))
    return Figure(key, title, "read/write mix", "block size", bars3d=bars, z_label=unit, caption=caption)


def _percentile(p: str) -> Any:
    return lambda cell: _scaled((cell.get("lat_percentiles_ns") or {}).get(p), 1e-3)


def _metric(metric: str, factor: float = 1.0) -> Any:
    return lambda cell: _scaled(cell.get(metric), factor)


def _source_note(view: Any) -> Text:
    return Text(f"{view.plan['title']}: {view.source()}.")


def _convergence(view: Any, tracked: Mapping[str, Any]) -> Figure:
    """Every cell sharing the tracked cell's mix and pattern, per round (the block sizes converging)."""
    cell = next(c for c in _cells(view) if c["name"] == tracked["cell"])
    metric = tracked["metric"]
    factor = METRIC_UNITS.get(metric, (metric, 1.0, "number"))[1]
    series = []
    for other in _cells(view):
        if other["read_pct"] != cell["read_pct"] or other["pattern"] != cell["pattern"]:
            continue
        rounds = tuple(int(r["round"]) for r in view.rounds)
        values = tuple(_scaled(r["cells"].get(other["name"], {}).get(metric), factor) for r in view.rounds)
        series.append(Series(other["name"], rounds, values, dash="solid" if other is cell else "dash"))
    title = f"{view.plan['title']}: convergence of {METRIC_NAMES.get(metric, metric)}, {cell['pattern']} " \
            f"{_mix(cell)} (all block sizes)"
    return Figure(_key(view.key, "convergence", tracked["cell"]), title, "round", metric_axis(metric), tuple(series),
                  y_log=metric != "lat_mean_ns" and len(series) > 1, data_sheet=True,
                  x_ticks=tuple((int(r["round"]), str(r["round"])) for r in view.rounds),
                  caption=f"Each round's value of every block size at mix {_mix(cell)}; the tracked variable "
                          f"({tracked['cell']}) is the solid line.")


def _mix(cell: Mapping[str, Any]) -> str:
    from ptsbench.pts.specs import mix_label

    return mix_label(int(cell["read_pct"]))


def _determination(view: Any) -> dict[str, Any]:
    """Tracked variable -> its steady-state determination: the phase's final one, or after the latest round."""
    if view.result is not None:
        return dict(view.result.get("determination") or {})
    if view.rounds:
        return dict((view.rounds[-1].get("steady") or {}).get("variables") or {})
    return {}


def _determination_rows(view: Any) -> tuple[list[tuple[Value, ...]], list[Figure]]:
    from ptsbench.report.figures import measurement_window_figure

    rows: list[tuple[Value, ...]] = []
    figures = []
    for label, v in _determination(view).items():
        metric = _tracked_metric(view, label, v)
        factor = METRIC_UNITS.get(metric, (metric, 1.0, "number"))[1]
        if v is None:
            rows.append((view.plan["title"], label, "-", *([None] * 7), "-", "not yet: fewer than 5 rounds"))
            continue
        window = f"{v['rounds'][0]}-{v['rounds'][-1]}"
        fitted = f"y = {v['slope'] * factor:.6g} x + {v['intercept'] * factor:.6g}"
        rows.append((view.plan["title"], label, window, v["average"] * factor, v["data_excursion"] * factor,
                     v["allowed_data_excursion"] * factor, v["slope_excursion"] * factor,
                     v["allowed_slope_excursion"] * factor, v["slope"] * factor, v["intercept"] * factor, fitted,
                     "reached" if v["steady"] else "NOT reached"))
        figures.append(measurement_window_figure(
            _key(view.key, "window", label), f"{view.plan['title']}: measurement window, {label}",
            metric_axis(metric), v["rounds"], [value * factor for value in v["values"]], v["average"] * factor,
            v["slope"] * factor, v["intercept"] * factor,
            f"Tracked variable {label} in rounds {window} with its average, the 110 % / 90 % band around it and "
            f"the least-squares line ({fitted}); steady state {'reached' if v['steady'] else 'NOT reached'}."))
    return rows, figures


def _tracked_metric(view: Any, label: str, determined: Mapping[str, Any] | None) -> str:
    """A tracked variable's metric: as determined (a run on hosts labels it "HOST CELL METRIC"), else the plan's."""
    if determined and determined.get("metric"):
        return str(determined["metric"])
    tracked = next((t for t in view.plan["tracked"] if f"{t['cell']} {t['metric']}" == label), None)
    return str(tracked["metric"]) if tracked else "iops"


DETERMINATION_COLUMNS = (
    Column("phase"), Column("tracked variable"), Column("window rounds"), Column("average", "number"),
    Column("data excursion", "number"), Column("allowed data excursion (20 %)", "number"),
    Column("slope excursion", "number"), Column("allowed slope excursion (10 %)", "number"),
    Column("slope per round", "number"), Column("intercept", "number"), Column("fitted line"),
    Column("steady state"),
)


def steady_blocks(test: str, views: Sequence[Any]) -> list[Block]:
    """Convergence plots, measurement-window plots and the steady-state determination of a test's phases."""
    blocks: list[Block] = []
    rows: list[tuple[Value, ...]] = []
    windows: list[Figure] = []
    for view in views:
        if not view.plan["tracked"] or not view.rounds:
            continue
        seen_mixes = set()
        for tracked in view.plan["tracked"]:
            cell = next(c for c in _cells(view) if c["name"] == tracked["cell"])
            if (cell["read_pct"], cell["pattern"]) not in seen_mixes:
                seen_mixes.add((cell["read_pct"], cell["pattern"]))
                blocks.append(_convergence(view, tracked))
        found, figures = _determination_rows(view)
        rows += found
        windows += figures
    blocks += windows
    if rows:
        blocks.append(Table(_key(test, "steady-state"), "Steady-state determination (values in the tracked "
                            "variable's unit: IOPS, MB/s or µs)", DETERMINATION_COLUMNS, tuple(rows), keys=(0, 1),
                            compare=(2, 3, 4, 6, 11)))
    return blocks


def _phase_metric(view: Any) -> str:
    """The metric a phase is judged on: its first tracked variable's, else IOPS."""
    return str(view.plan["tracked"][0]["metric"]) if view.plan["tracked"] else "iops"


def host_blocks(test: str, views: Sequence[Any], context: PtsContext) -> list[Block]:
    """A run on hosts: each host's own numbers next to the all-hosts ones - every cell's value of the phase's
    tracked metric per host, each host's steady state per tracked variable, and each tracked variable round by round
    with one line per host."""
    if not context.hosts:
        return []
    hosts = list(context.hosts)
    started = [view for view in views if view.rounds]
    blocks: list[Block] = [Text(f"Per host ({', '.join(hosts)}): the tables and figures above are all hosts "
                                "together (IOPS and MB/s summed, latency merged from every host's fio bins); below, "
                                "each host's own numbers.")]
    for metric in dict.fromkeys(_phase_metric(view) for view in started):
        unit, factor, kind = METRIC_UNITS.get(metric, (metric, 1.0, "number"))
        rows = []
        for view in (view for view in started if _phase_metric(view) == metric):
            per_host = [context.hosts[host][view.key].values() for host in hosts]
            for cell in _cells(view):
                found = [values.get(cell["name"]) or {} for values in (*per_host, view.values())]
                if any(found):
                    rows.append((view.plan["title"], cell["name"],
                                 *(_scaled(one.get(metric), factor) for one in found)))
        columns = (Column("phase"), Column("cell"), *(Column(f"{host} ({unit})", kind) for host in hosts),
                   Column(f"all hosts ({unit})", kind))
        blocks.append(Table(_key(test, "hosts", metric), f"Per host: {METRIC_NAMES.get(metric, metric)} of every "
                            f"cell ({unit}; window averages, or the latest round while running)", columns,
                            tuple(rows), keys=(0, 1)))
    rows = []
    figures: list[Block] = []
    for view in started:
        for tracked in view.plan["tracked"]:
            label = f"{tracked['cell']} {tracked['metric']}"
            unit, factor, _ = METRIC_UNITS.get(tracked["metric"], (tracked["metric"], 1.0, "number"))
            for host in hosts:
                v = _determination(context.hosts[host][view.key]).get(label)
                rows.append((view.plan["title"], label, host, f"{v['rounds'][0]}-{v['rounds'][-1]}" if v else "-",
                             v["average"] * factor if v else None, unit,
                             ("reached" if v["steady"] else "NOT reached") if v else "not yet: fewer than 5 rounds"))
            figures.append(_host_convergence(view, tracked, context))
    if rows:
        blocks.append(Table(_key(test, "hosts-steady"), "Per host: steady state of every tracked variable (each host "
                            "judged on its own rounds)",
                            (Column("phase"), Column("tracked variable"), Column("host"), Column("window rounds"),
                             Column("average", "number"), Column("unit"), Column("steady state")), tuple(rows),
                            keys=(0, 1, 2), compare=(3, 4, 6)))
    return blocks + figures


def _host_convergence(view: Any, tracked: Mapping[str, Any], context: PtsContext) -> Figure:
    """A tracked variable round by round, one line per host."""
    metric = tracked["metric"]
    factor = METRIC_UNITS.get(metric, (metric, 1.0, "number"))[1]
    series = []
    for host, views in context.hosts.items():
        rounds = views[view.key].rounds
        series.append(Series(host, tuple(int(r["round"]) for r in rounds),
                             tuple(_scaled(r["cells"].get(tracked["cell"], {}).get(metric), factor) for r in rounds)))
    return Figure(_key(view.key, "hosts", tracked["cell"], metric),
                  f"{view.plan['title']}: {METRIC_NAMES.get(metric, metric)} of {tracked['cell']} per host", "round",
                  metric_axis(metric), tuple(series), data_sheet=True,
                  x_ticks=tuple((int(r["round"]), str(r["round"])) for r in view.rounds),
                  caption=f"The tracked variable ({tracked['cell']}) in every round as each host measured it.")


def iops_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    from ptsbench.pts.specs import mix_label

    view = views[0]
    sizes, mixes = _axes_of(view)
    matrix = _matrix(view, _metric("iops"))
    series = tuple(Series(mix_label(mix), tuple(bs / 1024 for bs in sizes), tuple(row[column] for row in matrix))
                   for column, mix in enumerate(mixes))
    return [
        _matrix_table("iops", "IOPS: block size x read/write mix (read + write IOPS)", view, _metric("iops"), "iops",
                      "IOPS", chart=True),
        _source_note(view),
        Figure("iops-vs-bs", "IOPS vs block size per read/write mix", "block size (KiB)", "IOPS", series,
               x_log=True, y_log=True, x_ticks=tuple((bs / 1024, _bs_label(bs)) for bs in sizes),
               caption="Average IOPS (read + write) over the measurement window, per mix."),
        _bars("iops-3d", "IOPS by block size and read/write mix", view, _metric("iops"), "IOPS",
              "Average IOPS over the measurement window."),
    ]


def tp_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    rows = []
    for view in views:
        values = view.values()
        for cell in _cells(view)[:1]:
            read = next((values.get(c["name"]) or {} for c in _cells(view) if c["read_pct"] == 100), {})
            write = next((values.get(c["name"]) or {} for c in _cells(view) if c["read_pct"] == 0), {})
            rows.append((_bs_label(cell["bs_bytes"]), _scaled(read.get("bw_bytes"), 1e-6),
                         _scaled(write.get("bw_bytes"), 1e-6)))
    blocks: list[Block] = [
        Table("tp", "Throughput: sequential MB/s per block size", (Column("block size"), Column("read (MB/s)", "mbs"),
              Column("write (MB/s)", "mbs")), tuple(rows), Chart("Throughput", "block size", "MB/s")),
        *(_source_note(view) for view in views),
    ]
    for read_pct, name in ((100, "read"), (0, "write")):
        series = []
        for view in views:
            for cell in _cells(view):
                if cell["read_pct"] != read_pct:
                    continue
                rounds = tuple(int(r["round"]) for r in view.rounds)
                values = tuple(_scaled(r["cells"][cell["name"]].get("bw_bytes"), 1e-6) for r in view.rounds)
                series.append(Series(_bs_label(cell["bs_bytes"]), rounds, values))
        blocks.append(Figure(f"tp-{name}-convergence", f"Throughput: {name} convergence (sequential {name}s)",
                             "round", "MB/s", tuple(series),
                             caption=f"Sequential {name} MB/s of every round, per block size."))
    return blocks


def lat_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    view = views[0]
    blocks: list[Block] = []
    for key, title, value_of in (
        ("lat-mean", "Mean total latency", _metric("lat_mean_ns", 1e-3)),
        ("lat-max", "Maximum total latency", _metric("lat_max_ns", 1e-3)),
        ("lat-p99999", "99.999th percentile total latency (five nines)", _percentile("99.999")),
    ):
        blocks.append(_matrix_table(key, f"{title} (µs): block size x read/write mix", view, value_of, "us", "µs",
                                    chart=False))
        blocks.append(_bars(f"{key}-3d", f"{title} by block size and read/write mix", view, value_of, "µs",
                            f"{title} over the measurement window (the maximum and the percentile over all of its "
                            "IOs, merged from fio's json+ bins)."))
    blocks.insert(3, _source_note(view))
    return blocks


def wsat_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    view = views[0]
    rows = []
    for record in view.rounds:
        cell = next(iter(record["cells"].values()))
        totals = record.get("wsat") or {}
        written = totals.get("written_bytes")
        rows.append((str(record["round"]), _scaled(totals.get("io_time_s"), 1 / 60), _scaled(written, 1e-9),
                     _scaled(written, 1 / context.capacity_bytes), cell.get("iops"),
                     _scaled(cell.get("lat_mean_ns"), 1e-3), _scaled(cell.get("lat_max_ns"), 1e-3)))
    columns = (Column("round"), Column("IO time (min)", "number"), Column("written (GB)", "number"),
               Column("drive fills", "number"), Column("IOPS", "iops"), Column("mean latency (µs)", "us"),
               Column("max latency (µs)", "us"))
    table = Table("wsat", "Write saturation: every round (4 KiB random writes)", columns, tuple(rows),
                  Chart("Write saturation IOPS per round", "round", "IOPS", columns=(4,)))
    iops = tuple(row[4] for row in rows)
    blocks: list[Block] = [table, _source_note(view)]
    for index, (name, label) in enumerate((("time", "IO time (min)"), ("gb", "total written (GB)"),
                                           ("fills", "drive fills (written / capacity)")), start=1):
        x = tuple(float(row[index] or 0.0) for row in rows)
        blocks.append(Figure(f"wsat-iops-vs-{name}", f"Write saturation: IOPS vs {label.split(' (')[0]}", label,
                             "IOPS", (Series("4k random write", x, iops),), data_sheet=True,
                             caption="IOPS of each 4 KiB random-write round, from fresh-out-of-box."))
    blocks.append(Figure("wsat-lat-vs-time", "Write saturation: mean latency vs time", "IO time (min)",
                         "mean latency (µs)", (Series("4k random write", tuple(float(r[1] or 0) for r in rows),
                                                      tuple(r[5] for r in rows)),),
                         caption="Mean total latency of each round."))
    return blocks


def cells_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    """Any test: every cell's values (window averages, or the latest round while running)."""
    blocks: list[Block] = []
    for view in views:
        values = view.values()
        rows = tuple((c["name"], f"TC{c['numjobs']}/QD{c['iodepth']}", values.get(c["name"], {}).get("iops"),
                      _scaled(values.get(c["name"], {}).get("bw_bytes"), 1e-6),
                      _scaled(values.get(c["name"], {}).get("lat_mean_ns"), 1e-3),
                      _scaled(values.get(c["name"], {}).get("lat_max_ns"), 1e-3),
                      _percentile("99.999")(values.get(c["name"], {})))
                     for c in _cells(view))
        columns = (Column("cell"), Column("TC/QD"), Column("IOPS", "iops"), Column("MB/s", "mbs"),
                   Column("mean latency (µs)", "us"), Column("max latency (µs)", "us"), Column("p99.999 (µs)", "us"))
        blocks += [Table(_key(view.key, "cells"), f"{view.plan['title']}: every cell", columns, rows, keys=(0, 1)),
                   _source_note(view)]
    return blocks


TEST_BLOCKS: dict[str, Any] = {"iops": iops_blocks, "tp": tp_blocks, "lat": lat_blocks, "wsat": wsat_blocks}


def _job_options(context: PtsContext, phase_key: str) -> dict[str, str | None]:
    from ptsbench.fio.jobs import parse_job_text

    # job.fio, or job-HOST.fio per host when hosts carry their own sequential offsets (same options otherwise)
    paths = sorted(context.pts.round_dir(phase_key, 1).glob("job*.fio"))
    if not paths:
        return {}
    path = paths[0]
    sections = parse_job_text(path.read_text(), str(path))
    return dict(sections[0].options) if sections else {}


def _data_pattern(options: Mapping[str, str | None]) -> str:
    if "refill_buffers" in options:
        return "random data, refilled for every IO (fio refill_buffers)"
    if "scramble_buffers" in options or not options:
        return "fio default buffers (scrambled); not the random data PTS asks for" if options else "-"
    return "fio default buffers"


def _device(target: Mapping[str, Any]) -> str:
    from ptsbench.report.style import device_name

    return device_name(target)


def _purge_fact(context: PtsContext, views: Sequence[Any]) -> str:
    found = []
    for view in views:
        for attempt in context.pts.purge_attempts(view.key):
            text = f"{attempt['method']}: {attempt['message']}" + (" (a deviation)" if attempt["is_deviation"] else "")
            if not attempt["ok"]:
                text += " (FAILED)"
            found.append(text)
    return "; ".join(dict.fromkeys(found)) or ("none" if not any(v.plan["purge"] for v in views) else "not yet")


def _write_cache_fact(manifest: Mapping[str, Any]) -> str:
    records = manifest.get("write_cache") or []
    wanted = (manifest.get("settings") or {}).get("write_cache", "-")
    if not records:
        return f"{wanted} required; not recorded"
    last = records[-1]
    state = {True: "enabled", False: "disabled", None: "unknown"}.get(last.get("after"), str(last.get("after")))
    return f"{wanted} required; device {state} ({last.get('message')})"


def _precondition_fact(context: PtsContext, views: Sequence[Any]) -> str:
    parts = []
    for view in views:
        pre = view.plan.get("precondition")
        if not pre:
            continue
        done = context.pts.precondition_result(view.key)
        written = f", {done['written_bytes'] / 1e9:,.3f} GB written" if done else ", not finished"
        parts.append(f"WIPC: sequential {_bs_label(pre['bs_bytes'])} writes, {pre['multiple']:g} x active range at "
                     f"TC{pre['numjobs']}/QD{pre['iodepth']}{written}")
    return "; ".join(dict.fromkeys(parts)) or "none (from fresh-out-of-box)"


def _rounds_fact(views: Sequence[Any]) -> str:
    return "; ".join(f"{view.plan['title']}: {len(view.rounds)} of at most {view.plan['max_rounds']}"
                     for view in views)


def _steady_fact(views: Sequence[Any]) -> str:
    parts = []
    for view in views:
        if not view.plan["tracked"]:
            parts.append(f"{view.plan['title']}: not applicable (no tracked variable)")
        elif view.result is None:
            parts.append(f"{view.plan['title']}: in progress")
        elif view.result.get("steady"):
            window = view.result["window_rounds"]
            parts.append(f"{view.plan['title']}: reached in rounds {window[0]}-{window[-1]}")
        else:
            parts.append(f"{view.plan['title']}: NOT reached")
    return "; ".join(parts)


def _dates_fact(views: Sequence[Any]) -> str:
    rounds = [r for view in views for r in view.rounds]
    if not rounds:
        return "not started"
    return f"{rounds[0].get('started_utc', '-')} to {rounds[-1].get('finished_utc', '-')}"


def test_title(test: str, views: Sequence[Any]) -> tuple[str, str]:
    """(title, spec section) of a test: the basic tests' and the advanced ones' rows; else its phases' name."""
    from ptsbench.pts.advanced_specs import ADVANCED_DEFS
    from ptsbench.pts.specs import TEST_DEFS

    definition = TEST_DEFS.get(test) or ADVANCED_DEFS.get(test)
    if definition is not None:
        return definition.title, definition.section
    return str(views[0].plan["title"]).split(":")[0], ""


def _option(cell: Mapping[str, Any], name: str) -> str | None:
    return next((str(value) for key, value in cell.get("fio_options") or () if key == name), None)


def _workload(cells: Sequence[Mapping[str, Any]]) -> str:
    """Block sizes of cells as run: a bssplit (CBW's JESD219 mix) and LBA zones when the cells have them."""
    bssplit = _option(cells[0], "bssplit") if cells else None
    if bssplit is None:
        return f"block sizes {', '.join(dict.fromkeys(_bs_label(c['bs_bytes']) for c in cells))}"
    sizes = ", ".join(f"{_bs_label(int(size))} {share} %" for size, share in
                      (part.split("/") for part in bssplit.split(":")))
    zones = _option(cells[0], "random_distribution")
    return f"JESD219 block-size mix (fio bssplit: {sizes})" + (f", LBA zones {zones}" if zones else "")


def test_loop(test: str, views: Sequence[Any]) -> str:
    """What a test's rounds run, as PTS's 'test loop parameters'."""
    from ptsbench.pts.specs import mix_label

    cells = [c for view in views for c in _cells(view)]
    measured = [c for c in cells if c.get("role", "") in ("", "burst", "histogram")] or cells
    mixes = ", ".join(dict.fromkeys(mix_label(c["read_pct"]) for c in measured))
    roles = {view.plan.get("role", "") for view in views}
    if "wait-state" in roles:
        waits = [view for view in views if view.plan.get("role") == "wait-state"]
        bursts = [c for c in _cells(waits[0]) if c.get("role") == "burst"]
        recovery = next((c for c in _cells(waits[0]) if c.get("role") == "recovery"), None)
        seconds = ", ".join(f"{float((view.plan.get('meta') or {}).get('wait_s', 0)):g}" for view in waits)
        return (f"{mixes} random {_bs_label(bursts[0]['bs_bytes'])} writes: steady state (baseline), then per wait "
                f"state ({seconds} s) "
                f"{len(bursts)} x ({bursts[0]['runtime_s']:g} s of writes + the wait state), then "
                f"{recovery['runtime_s'] if recovery else 0:g} s of continuous writes")
    if "group" in roles:
        return "; ".join(f"{view.plan['title'].split(': ', 1)[-1]}: {view.plan['max_rounds']} samples of "
                         f"{_cells(view)[0]['runtime_s']:g} s" for view in views)
    if "sweep" in roles:
        sweep = next(view for view in views if view.plan.get("role") == "sweep")
        grid = [c for c in _cells(sweep) if c.get("role", "") == ""]
        tcs = ",".join(str(tc) for tc in dict.fromkeys(c["numjobs"] for c in grid))
        qds = ",".join(str(qd) for qd in dict.fromkeys(c["iodepth"] for c in grid))
        prewrite = next((c for c in _cells(sweep) if c.get("role") == "pre-write"), None)
        return (f"random, read/write {mix_label(grid[0]['read_pct'])}, {_workload(grid)}; each round a "
                f"{prewrite['runtime_s'] if prewrite else 0:g} s pre-write, then TC {tcs} x QD {qds} (from the "
                "highest outstanding IO down); then MaxIOPS, MidIOPS, MinIOPS: pre-write and histogram capture")
    if "zones" in roles:
        zones = max(int(c.get("zones") or 1) for c in cells)
        return f"{zones} zones (outer to inner) x mixes {mixes} x {_workload(cells)}"
    return f"mixes (read/write) {mixes} x {_workload(cells)}"


def pts_test_facts(context: PtsContext, test: str, views: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """The header facts PTS asks for on every page of a test."""
    from ptsbench.units import format_bytes

    manifest, settings = context.manifest, context.manifest.get("settings") or {}
    host, target = manifest.get("host") or {}, manifest.get("target") or {}
    info = manifest.get("target_info") or {}
    title, section = test_title(test, views)
    cells = [c for view in views for c in _cells(view)]
    depths = ", ".join(dict.fromkeys(f"TC{c['numjobs']}/QD{c['iodepth']}" for c in cells))
    round_times = ", ".join(dict.fromkeys(f"{c['runtime_s']:g} s" for c in cells))
    options = _job_options(context, views[0].key)
    rotational = target.get("rotational")
    capacity = int(info.get("size_bytes") or target.get("size_bytes") or 0)
    active = context.plan.get("active_range_bytes")
    return (
        ("test", title + (f"; {section}" if section else "")),
        ("specification", f"{SPEC_NAMES.get(str(settings.get('spec')), settings.get('spec'))}, "
                          f"{settings.get('profile')} profile ({settings.get('kind')})"),
        ("test date (UTC)", _dates_fact(views)),
        ("platform", f"{host.get('cpu_model', '-')} x {host.get('cpu_count', '-')}, "
                     f"{format_bytes(host['memory_bytes']) if host.get('memory_bytes') else '-'} memory, "
                     f"{host.get('os', '-')}, kernel {host.get('kernel', '-')}"),
        ("test software", f"ptsbench {manifest.get('ptsbench_version')}, {manifest.get('fio_version')}, "
                          f"ioengine {info.get('ioengine', '-')}"),
        ("device", _device(target)),
        ("serial / firmware", f"{target.get('serial') or '-'} / {target.get('firmware') or '-'}"),
        ("capacity", f"{capacity / 1e9:,.3f} GB ({capacity:,} bytes)"),
        ("interface / media", f"{target.get('transport') or '-'} / "
                              f"{'-' if rotational is None else 'rotational' if rotational else 'solid state'}"),
        ("sectors", f"{info.get('logical_sector_bytes') or '-'} B logical, "
                    f"{info.get('physical_sector_bytes') or '-'} B physical"),
        ("purge", _purge_fact(context, views)),
        ("write cache", _write_cache_fact(manifest)),
        ("data pattern", _data_pattern(options)),
        ("LBA generator", f"{options.get('random_generator') or 'fio default'}, seed per round "
                          f"(base seed {manifest.get('base_seed', '-')})"),
        ("active range", f"{settings.get('active_range_pct', '-')} %"
                         + (f" ({active / 1e9:,.3f} GB)" if active else "")),
        ("preconditioning", _precondition_fact(context, views)),
        ("TC / QD", depths),
        ("round time", f"{round_times} per cell"),
        ("test loop", test_loop(test, views)),
        ("rounds", _rounds_fact(views)),
        ("steady state", _steady_fact(views)),
        ("stop", "; ".join(f"{v.plan['title']}: {v.result['stop_reason']}" for v in views if v.result) or
                 "not finished"),
    )


def _reasons_for(reasons: Sequence[str], test: str, views: Sequence[Any], context: PtsContext) -> list[str]:
    """The compliance reasons that concern one test: its own ("IOPS: ...", "Host idle recovery, Cross stimulus
    recovery: ...", "Throughput 1m: ...") and the run-wide ones (no test named before the colon)."""
    from ptsbench.pts.advanced_specs import ADVANCED_DEFS
    from ptsbench.pts.specs import TEST_DEFS

    known = {d.title for d in TEST_DEFS.values()} | {d.title for d in ADVANCED_DEFS.values()}
    known |= {str(phase["title"]).split(":")[0] for phase in context.plan.get("phases", [])}
    own = {test_title(test, views)[0]} | {str(view.plan["title"]).split(":")[0] for view in views}
    found = []
    for reason in reasons:
        names = {name.strip() for name in reason.split(":", 1)[0].split(",")} if ":" in reason else set()
        if names and names <= known and not names & own:
            continue
        found.append(reason)
    return found


def pts_test_section(context: PtsContext, test: str, views: Sequence[Any]) -> Section:
    from ptsbench.report.advanced import ADVANCED_BLOCKS, telemetry_blocks

    blocks: list[Block] = []
    compliance = context.manifest.get("compliance") or {}
    if not compliance.get("compliant", False):
        reasons = _reasons_for(compliance.get("reasons") or [], test, views, context)
        blocks.append(Text(f"NOT PTS-compliant: {'; '.join(reasons) or 'see the summary'}", "warning"))
    for view in views:
        if view.result is not None and view.plan["tracked"] and not view.result.get("steady"):
            blocks.append(Text(f"{view.plan['title']}: steady state not reached ({view.result['stop_reason']}); "
                               f"values are the last {len(view.result['window_rounds'])} rounds.", "warning"))
        if view.result is None:
            blocks.append(Text(f"{view.plan['title']}: {view.source()}", "warning"))
    blocks += steady_blocks(test, views)
    blocks += TEST_BLOCKS.get(test, ADVANCED_BLOCKS.get(test, cells_blocks))(views, context)
    blocks += host_blocks(test, views, context)
    blocks += telemetry_blocks(test, views)
    return Section(_key("test", test), test_title(test, views)[0], pts_test_facts(context, test, views),
                   tuple(blocks))


def pts_summary_section(context: PtsContext, groups: Sequence[tuple[str, Sequence[Any]]]) -> Section:
    manifest = context.manifest
    rows = tuple((view.plan["title"], str(len(view.rounds)), str(view.plan["max_rounds"]),
                  ("n/a" if not view.plan["tracked"] else "in progress" if view.result is None else
                   "reached" if view.result.get("steady") else "NOT reached"),
                  view.result["stop_reason"] if view.result else view.source())
                 for _test, views in groups for view in views)
    blocks: list[Block] = [Table("summary", "Tests", (Column("phase"), Column("rounds"), Column("max rounds"),
                                                        Column("steady state"), Column("stop")), rows,
                                 compare=(1, 3, 4))]
    compliance = manifest.get("compliance") or {}
    reasons = compliance.get("reasons") or []
    if reasons:
        blocks.append(Table("deviations", "Why this run is not PTS-compliant", (Column("deviation"),),
                            tuple((reason,) for reason in reasons)))
    notes = manifest.get("notes") or []
    if notes:
        blocks.append(Table("notes", "Notes", (Column("note"),), tuple((note,) for note in notes)))
    blocks.append(Text("Steady state (PTS 2.0.2 section 2.1.24): over the measurement window (the last 5 rounds) "
                       "the tracked variable's range (max - min) is at most 20 % of its average, and the "
                       "least-squares line through the window changes by at most 10 % of the average across the "
                       "window. 'At most' is read as <=. Reported values are averages over the window rounds."))
    return Section("summary", "Summary", blocks=tuple(blocks))


def pts_report(store: Any, in_progress: str | None = None) -> Report:
    """Report of a `ptsbench pts` directory: a summary, a section per test that ran (in run order), the environment."""
    from ptsbench.pts.store import PtsStore
    from ptsbench.pts.tables import load_views
    from ptsbench.store import read_json

    manifest = store.manifest
    pts = PtsStore(store)
    hosts = [str(host["host"]) for host in manifest.get("hosts") or ()]
    context = PtsContext(manifest, read_json(store.root / "plan.json"), pts,
                         {host: {view.key: view for view in load_views(pts, host)} for host in hosts})
    views = [view for view in load_views(pts)]
    groups: dict[str, list[Any]] = {}
    for view in views:
        groups.setdefault(view.plan["test"], []).append(view)
    started = [(test, mine) for test, mine in groups.items() if any(view.rounds for view in mine)]
    sections = [pts_summary_section(context, list(groups.items()))]
    sections += [pts_test_section(context, test, mine) for test, mine in started]
    sections.append(environment_section({**manifest, "targets": [manifest.get("target") or {}]}))
    settings = manifest.get("settings") or {}
    status = manifest.get("status")
    if in_progress is None and status == "running":
        in_progress = "the run was still running when this report was made"
    warnings = []
    compliance = manifest.get("compliance") or {}
    if not compliance.get("compliant", False):
        reasons = compliance.get("reasons") or []
        warnings.append(f"NOT PTS-compliant: {len(reasons)} deviation(s) from the specification, listed in the "
                        "summary; each test says which concern it.")
    if status in ("interrupted", "failed"):
        warnings.append(f"The run {status}: `ptsbench resume {store.root}` continues it.")
    facts = (("specification", f"{SPEC_NAMES.get(str(settings.get('spec')), settings.get('spec'))}, "
                               f"{settings.get('profile')} profile"),
             ("device", _device(manifest.get("target") or {})), ("status", _fact(status)), *run_facts(manifest))
    return Report(f"ptsbench PTS report: {_device(manifest.get('target') or {})}", provenance_line(manifest), facts,
                  tuple(sections), in_progress, tuple(warnings))


# --- comparisons --------------------------------------------------------------------------------------------
# Several runs' reports merged: sections, tables and figures are matched by key, so every test type (and every
# later one) compares the same way: tables show each run's value and its ratio to the first run, figures overlay
# the runs (colour per series as in one run, line style per run), 3D bars are shown run by run.

RUN_DASHES = ("solid", "dash", "dot")


def _row_key(table: Table, row: Sequence[Value]) -> tuple[Value, ...]:
    return tuple(row[index] for index in table.keys if index < len(row))


def compare_table(tables: Sequence[Table | None], labels: Sequence[str]) -> Table:
    """One table of several runs: key columns, then per compared column each run's value and its ratio to the
    first run's (numbers only). Tables without value columns list each run's rows."""
    base = next(table for table in tables if table is not None)
    values = [i for i in (base.compare if base.compare is not None else range(len(base.columns))) if i not in base.keys]
    if not values:
        listed = tuple((label, *row) for label, table in zip(labels, tables, strict=True) if table
                       for row in table.rows)
        return Table(base.key, base.title, (Column("run"), *base.columns), listed, keys=(0, 1))
    found: dict[tuple[Value, ...], list[Sequence[Value] | None]] = {}
    for position, table in enumerate(tables):
        for row in table.rows if table else ():
            found.setdefault(_row_key(base, row), [None] * len(tables))[position] = row
    columns: list[Column] = [base.columns[i] for i in base.keys]
    for index in values:
        column = base.columns[index]
        columns += [Column(f"{column.name} [{label}]", column.kind) for label in labels]
        if column.kind != "text":
            columns += [Column(f"{column.name} {label}/{labels[0]}", "ratio") for label in labels[1:]]
    rows: list[tuple[Value, ...]] = []
    for key, per_run in found.items():
        merged: list[Value] = list(key)
        for index in values:
            cells = [run[index] if run is not None and index < len(run) else None for run in per_run]
            merged += cells
            if base.columns[index].kind != "text":
                first = cells[0]
                merged += [other / first if isinstance(other, int | float) and isinstance(first, int | float) and first
                           else None for other in cells[1:]]
        rows.append(tuple(merged))
    return Table(base.key, f"{base.title}: {' vs '.join(labels)}", tuple(columns), tuple(rows),
                 keys=tuple(range(len(base.keys))))


def compare_figure(figures: Sequence[Figure | None], labels: Sequence[str]) -> list[Figure]:
    """Line figures overlaid (series colour as in one run, line style per run); 3D bars one per run."""
    base = next(figure for figure in figures if figure is not None)
    if base.bars3d is not None:
        return [replace(figure, key=f"{figure.key}-run{position + 1}", title=f"{label}: {figure.title}")
                for position, (label, figure) in enumerate(zip(labels, figures, strict=True)) if figure is not None]
    series = []
    for position, (label, figure) in enumerate(zip(labels, figures, strict=True)):
        for index, one in enumerate(figure.series if figure else ()):
            series.append(replace(one, name=f"{label}: {one.name}", color=one.color if one.color is not None else index,
                                  dash=RUN_DASHES[position % len(RUN_DASHES)] if position else one.dash))
    styles = ", ".join(f"{label} {RUN_DASHES[i % len(RUN_DASHES)]}" for i, label in enumerate(labels))
    return [replace(base, series=tuple(series), caption=f"{base.caption} Runs: {styles}.".strip())]


def _facts_compared(facts: Sequence[Sequence[tuple[str, str]]], labels: Sequence[str]) -> tuple[tuple[str, str], ...]:
    merged: dict[str, list[str]] = {}
    for position, run_facts_ in enumerate(facts):
        for label, value in run_facts_:
            merged.setdefault(label, ["-"] * len(facts))[position] = value
    return tuple((label, values[0] if len(set(values)) == 1 else
                  " | ".join(f"{run}: {value}" for run, value in zip(labels, values, strict=True)))
                 for label, values in merged.items())


def compare_section(sections: Sequence[Section | None], labels: Sequence[str]) -> Section:
    base = next(section for section in sections if section is not None)
    blocks: list[Block] = []
    for block in base.blocks:
        if isinstance(block, Text):
            if block.kind == "warning":
                blocks += [Text(f"{label}: {text.text}", "warning") for label, section in zip(labels, sections,
                           strict=True) if section for text in section.blocks
                           if isinstance(text, Text) and text.kind == "warning" and text.text == block.text]
            elif block.kind == "p":
                blocks.append(block)
            continue
        peers = [_find_block(section, block) if section else None for section in sections]
        if isinstance(block, Table):
            blocks.append(compare_table(peers, labels))  # type: ignore[arg-type]
        else:
            blocks += compare_figure(peers, labels)  # type: ignore[arg-type]
    for label, section in zip(labels[1:], sections[1:], strict=True):
        for text in section.blocks if section else ():
            if isinstance(text, Text) and text.kind == "warning" and text not in base.blocks:
                blocks.append(Text(f"{label}: {text.text}", "warning"))
    facts = _facts_compared([section.facts if section else () for section in sections], labels)
    return Section(base.key, base.title, facts, tuple(blocks))


def _find_block(section: Section, block: Table | Figure) -> Table | Figure | None:
    return next((other for other in section.blocks if type(other) is type(block) and other.key == block.key), None)


def compare_reports(reports: Sequence[Report], labels: Sequence[str], run_dirs: Sequence[Path]) -> Report:
    """Several runs' reports side by side."""
    keys = list(dict.fromkeys(section.key for report in reports for section in report.sections))
    sections = []
    for key in keys:
        found = [next((s for s in report.sections if s.key == key), None) for report in reports]
        sections.append(compare_section(found, labels))
    runs = Table("runs", "Runs compared (ratios are to the first run)",
                 (Column("run"), Column("directory"), Column("report"), Column("provenance")),
                 tuple((label, str(path), report.title, report.provenance)
                       for label, path, report in zip(labels, run_dirs, reports, strict=True)))
    warnings = tuple(f"{label}: {warning}" for label, report in zip(labels, reports, strict=True)
                     for warning in report.warnings)
    progress = [f"{label}: {report.in_progress}" for label, report in zip(labels, reports, strict=True)
                if report.in_progress]
    return Report(f"ptsbench comparison: {' vs '.join(labels)}",
                  "; ".join(f"{label}: {report.provenance}" for label, report in zip(labels, reports, strict=True)),
                  (("runs", ", ".join(labels)),), (Section("runs", "Runs", blocks=(runs,)), *sections),
                  "; ".join(progress) or None, warnings)


def run_labels(run_dirs: Sequence[Path]) -> list[str]:
    """Default names of compared runs: their folder names, numbered when two are the same."""
    names = [Path(path).resolve().name for path in run_dirs]
    return [f"{name} ({index})" if names.count(name) > 1 else name for index, name in enumerate(names, start=1)]


def build_compare(run_dirs: Sequence[Path], out_dir: Path, labels: Sequence[str] | None = None,
                  static: bool = True) -> Path:
    """One report putting several runs side by side, written to out_dir; returns out_dir."""
    from ptsbench.store import RunStore

    run_dirs = [Path(path) for path in run_dirs]
    kinds = {RunStore.open(path).kind for path in run_dirs}
    if len(kinds) > 1:
        raise PtsbenchError(f"cannot compare runs of different kinds ({', '.join(sorted(kinds))})",
                            "compare PTS runs with PTS runs, and case-runner runs with case-runner runs")
    labels = list(labels) if labels else run_labels(run_dirs)
    reports = [load_report(path) for path in run_dirs]
    return render(compare_reports(reports, labels, run_dirs), Path(out_dir), static)


# --- assembling and writing ---------------------------------------------------------------------------------------


def load_report(run_dir: Path, in_progress: str | None = None) -> Report:
    """The report of one run directory, as data."""
    from ptsbench.store import RunStore

    store = RunStore.open(run_dir)
    if store.kind == "pts":
        return pts_report(store, in_progress)
    return case_run_report(store, in_progress)


FIGURE_WORKERS_MIN_FIGURES = 8  # below this, starting worker processes costs more than it saves


def _figure_workers(count: int) -> int:
    """Worker processes for the figure files: one core stays with the PDF, the others draw figures."""
    return 0 if count < FIGURE_WORKERS_MIN_FIGURES else max(1, min((os.cpu_count() or 1) - 1, 3))


def write_static(report: Report, out_dir: Path) -> None:
    """report.pdf, and every figure's PNG and SVG at the same time in worker processes (matplotlib is
    single-threaded and a PTS report has dozens of figures). Workers take figures from the front of the list, this
    process from the back once the PDF is done; a claim file per figure keeps each drawn once. Workers are plain
    `python -m ptsbench.report.figures` processes: unlike multiprocessing they never re-run the caller's script."""
    import pickle
    import shutil
    import subprocess
    import sys
    import tempfile

    from ptsbench.report import pdf
    from ptsbench.report.figures import write_figure_batch

    figures_dir = out_dir / FIGURES_DIR
    figures_dir.mkdir(exist_ok=True)
    figures = report.figures()
    claims = Path(tempfile.mkdtemp(prefix=".claims-", dir=figures_dir))
    processes = []
    try:
        for _ in range(_figure_workers(len(figures))):
            process = subprocess.Popen([sys.executable, "-m", "ptsbench.report.figures"], stdin=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            assert process.stdin is not None
            process.stdin.write(pickle.dumps((figures, str(figures_dir), report.provenance, str(claims))))
            process.stdin.close()
            processes.append(process)
        pdf.write_pdf(report, out_dir / PDF_NAME)
        write_figure_batch(figures[::-1], figures_dir, report.provenance, claims)
        for process in processes:
            _wait_worker(process, out_dir)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        shutil.rmtree(claims, ignore_errors=True)


def _wait_worker(process: Any, out_dir: Path) -> None:
    stderr = process.stderr.read()
    process.stderr.close()
    if process.wait():
        last = (stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise PtsbenchError(f"writing the figures failed: {last}", f"run `ptsbench report {out_dir.parent}`")


def render(report: Report, out_dir: Path, static: bool = True) -> Path:
    """Write the report's files into out_dir: index.html and results.xlsx; with static, report.pdf and figures/."""
    from ptsbench.report import html, workbook

    out_dir.mkdir(parents=True, exist_ok=True)
    workbook.write_workbook(report, out_dir / XLSX_NAME)
    if static:
        write_static(report, out_dir)
    html.write_html(report, out_dir / HTML_NAME, static=static)
    return out_dir


def build_report(run_dir: Path, static: bool = True, in_progress: str | None = None) -> Path:
    """RUN_DIR/report/ from the store alone; returns the report directory."""
    run_dir = Path(run_dir)
    return render(load_report(run_dir, in_progress), run_dir / REPORT_DIR, static)


def write_report(run_dir: Path, in_progress: str | None = None, static: bool | None = None) -> Path:
    """Write (or rewrite) a run's report; safe to call during a run, after every round.

    `in_progress` says where the run is (e.g. "IOPS round 3 of at most 25"): the report is marked so. `static`
    (default: only when the run is finished) adds report.pdf and the PNG/SVG figures, which take longer.
    Every file is replaced atomically, so a reader never sees half of one. Raises PtsbenchError when the report
    cannot be made; the run's results are untouched either way.
    """
    try:
        return build_report(Path(run_dir), static=in_progress is None if static is None else static,
                            in_progress=in_progress)
    except PtsbenchError:
        raise
    except Exception as error:  # a report bug must not end a benchmark: report it as one line
        raise PtsbenchError(f"cannot write the report of {run_dir}: {type(error).__name__}: {error}",
                            f"the results are safe; retry with `ptsbench report {run_dir}`") from error

