"""The report of a case-runner run (`ptsbench run` / `quick`): the results table, then a section per case with
IOPS, MB/s and latency over time from fio's interval logs and the percentile curve from its json+ bins."""

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptsbench.device.waf import case_waf
from ptsbench.fio.output import MIN_TAIL_IOS
from ptsbench.report.cases.tables import RESULT_PERCENTILES, ResultRow, result_rows, steady_state_text
from ptsbench.report.common import (
    case_waf_lines,
    description_facts,
    environment_section,
    fact,
    provenance_line,
    run_facts,
)
from ptsbench.report.core.figure import Figure, Series, percentile_figure
from ptsbench.report.core.model import Block, Chart, Column, Report, Section, Table, Text, drawn_or_said
from ptsbench.report.drops import drop_blocks, drop_regions
from ptsbench.report.glance import case_glance_section, repeat_auto_table
from ptsbench.store import read_text

if TYPE_CHECKING:
    from ptsbench.drops.rule import DropRule
    from ptsbench.drops.stored import Finding

RESULT_COLUMNS = (
    Column("case"), Column("job"), Column("host"), Column("target"), Column("rw"), Column("bs"), Column("dir"),
    Column("status"), Column("QD", "int"), Column("threads", "int"), Column("IOPS", "iops"), Column("MB/s", "mbs"),
    Column("lat mean (µs)", "us"), *(Column(f"lat p{p} (µs)", "us") for p in RESULT_PERCENTILES),
    Column("latency IOs", "int"), Column("done after first host (s)", "number"), Column("runtime (s)", "number"),
    Column("fio steady state"),
    Column("how formed"),
)


WAF_COLUMNS = (Column("write amplification", "number"), Column("WAF source"))  # device/case_telemetry.py


def _us(value_ns: float | None) -> float | None:
    return None if value_ns is None else value_ns / 1000


def results_table(found: Sequence[ResultRow]) -> Table:
    """The case runner's results (tables.py result_rows): one row per job and direction, latencies in µs."""
    waf = any(row.waf is not None for row in found)  # a column only when some case has a number
    rows = tuple(
        (row.case, row.job, row.host or "-", row.target or "-", row.rw, row.bs, row.direction,
         row.status if not row.message else f"{row.status}: {row.message}", row.iodepth or None,
         row.numjobs if row.iodepth else None, row.iops, row.mb_s,
         _us(row.lat_mean_ns), *(_us(row.measured_percentile_ns(p)) for p in RESULT_PERCENTILES),
         row.lat_n, row.done_after_first_s, row.runtime_s, steady_state_text(row), row.note or "-",
         *((row.waf, row.waf_source or "-") if waf else ()))
        for row in found
    )
    return Table("results", "One row per fio job (its threads merged) or group_reporting group, and direction "
                 "(total latency, as fio measures lat; '-' where fio measured none, and for a percentile with "
                 f"fewer than {MIN_TAIL_IOS} IOs slower than it: not measured, the slowest of a handful of IOs; "
                 "latency IOs: the IOs behind the latency figures)",
                 RESULT_COLUMNS + (WAF_COLUMNS if waf else ()), rows,
                 Chart("IOPS per job", "job", "IOPS", columns=_result_columns("IOPS"),
                       category=_result_columns("job")[0]),
                 keys=_result_columns("case", "job", "host", "rw", "bs", "QD", "threads", "dir"),
                 pair=_result_columns("job", "host", "rw", "bs", "dir"),
                 compare=_result_columns("IOPS", "MB/s", "lat mean (µs)", "lat p99 (µs)", "lat p99.999 (µs)"))


def waf_blocks(rows: Sequence[ResultRow]) -> list[Block]:
    """The line on the cases' write amplification under the results (none for cases on files, other devices)."""
    return [Text(line) for line in case_waf_lines(rows)]


def waf_table_blocks(records: Sequence[Any]) -> list[Block]:
    """Each case's write amplification and its source, for a sweep's report (its results are per point): a table
    only when some case has a ratio, and the line on them (none for cases on files, other devices)."""
    found = [(record.name, case_waf(getattr(record, "telemetry", None) or [])) for record in records]
    rows = tuple((name, waf["ratio"], waf["source"] or "-") for name, waf in found if waf is not None)
    table = Table("waf", "Write amplification per case", (Column("case"), WAF_COLUMNS[0], WAF_COLUMNS[1]), rows)
    return ([table] if any(row[1] is not None for row in rows) else []) + waf_blocks(result_rows(records))


def _result_columns(*names: str) -> tuple[int, ...]:
    index = {column.name: position for position, column in enumerate(RESULT_COLUMNS)}
    return tuple(index[name] for name in names)


_LOG_KINDS = (  # (log name, figure key suffix, title, y label, value -> plotted unit)
    ("iops", "iops", "IOPS over time", "IOPS", 1.0),
    ("bw", "mbs", "MB/s over time", "MB/s", 1024 / 1e6),  # fio bw logs are in KiB/s
    ("lat", "lat", "Mean total latency over time", "latency (µs)", 1 / 1000),  # lat logs are in ns
)


def _log_prefixes(case_dir: Path) -> tuple[list[tuple[str, dict[str, str]]], bool]:
    """Per job section in order: its name and, per log kind, the file name prefix of the log ptsbench asked fio to
    write into the case's logs folder (a job's own logs go where the job asked and are not read here); and whether
    fio wrote latency logs itself (else ptsbench derived JOB_lat.log from fio's status output)."""
    from ptsbench.fio.jobs import LOG_KINDS, parse_job_text

    job_path = case_dir / "job.fio"
    if not job_path.is_file():
        return [], False
    found = []
    fio_lat_logs = False
    logs = (case_dir / "logs").resolve()
    for section in parse_job_text(read_text(job_path), str(job_path)):
        kinds = {}
        for kind in LOG_KINDS:
            prefix = section.get(f"write_{kind}_log")
            if prefix and Path(prefix).parent == logs:
                kinds[kind] = Path(prefix).name
        fio_lat_logs = fio_lat_logs or "lat" in kinds
        found.append((section.name, kinds))
    return found, fio_lat_logs


def interval_series(case_dir: Path, prefix: str, log: str, interval_ms: float, host: str | None = None
                    ) -> dict[str, tuple[list[float], list[float]]]:
    """direction -> (time_s, value) of one job's fio log (on one host in client/server runs). One thread: fio's
    samples as written. Several threads (numjobs > 1): merged by time per interval (fio/log_merge.py), rates summed and
    latencies averaged."""
    from ptsbench.fio import log_merge, logs

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
    for merged in log_merge.merge_windowed(read, interval_ms, "mean" if log == "lat" else "sum"):
        result[logs.DDIR_NAMES.get(merged.ddir, str(merged.ddir))] = ((merged.end_ms / 1000).tolist(),
                                                                      merged.value.tolist())
    return result


def _series_name(job: str, host: str | None, direction: str) -> str:
    return f"{job} {host} {direction}" if host else f"{job} {direction}"


def case_figures(case_dir: Path, record: Any, key: str, interval_ms: float,
                 findings: Sequence["Finding"] = ()) -> list[Block]:
    """Per case: IOPS, MB/s and latency over time from the interval logs, each drop found shaded on the figures of
    its metric (or, where the logs hold too few values to show a course, a line saying why there is no chart); the
    percentile curve from json+ bins."""
    blocks = drawn_or_said(_log_figures(case_dir, record, key, interval_ms, findings),
                           "the results table holds each job's numbers over its whole run")
    percentiles = _percentile_figure(case_dir, record, key)
    return blocks + [percentiles] if percentiles is not None else blocks


def _log_figures(case_dir: Path, record: Any, key: str, interval_ms: float,
                 findings: Sequence["Finding"] = ()) -> list[Figure]:
    """One figure per log kind (IOPS, MB/s, latency) with a line per job and direction."""
    figures = []
    sections, fio_lat_logs = _log_prefixes(case_dir)
    for log, suffix, title, y_label, scale in _LOG_KINDS:
        series = []
        seen: dict[tuple[str, str | None], int] = {}
        for job in record.jobs:  # the k-th row of a name (per host) is the k-th section of that name
            row = (job["name"], job.get("hostname"))
            occurrence = seen[row] = seen.get(row, -1) + 1
            same = [kinds for name, kinds in sections if name == job["name"]]
            kinds = same[occurrence] if occurrence < len(same) else {}
            # without fio's own latency logs, ptsbench's derived JOB_lat.log shares the bw/iops prefix
            prefix = kinds.get(log) or (kinds.get("iops") if log == "lat" and not fio_lat_logs else None)
            if prefix is None:
                continue
            host = job.get("hostname")
            for direction, (time_s, values) in interval_series(case_dir, prefix, log, interval_ms, host).items():
                series.append(Series(_series_name(job["name"], host, direction), tuple(time_s),
                                     tuple(v * scale for v in values),
                                     mode="lines+markers" if len(time_s) < 60 else "lines"))
        if series:
            if log != "lat":
                source, merge = f"From fio's {log} logs", "the threads of a job merged by time, summed"
            elif fio_lat_logs:
                source, merge = "From fio's lat logs", ("the threads of a job merged by time: the plain mean of "
                                                        "their means, as fio's fiologparser.py does, not IO-weighted")
            else:
                source, merge = ("Derived from fio's periodic status output (--status-interval; the mean total "
                                 "latency of the IOs completed between two status reports)", "all threads of a job "
                                 "together, IO-weighted")
            figures.append(Figure(f"{key}-{suffix}", f"{record.name}: {title}", "time (s)", y_label, tuple(series),
                                  caption=f"{source} of case {record.name}, per job and direction ({merge}).",
                                  data_sheet=True, regions=drop_regions(findings, log)))
    return figures


def _percentile_figure(case_dir: Path, record: Any, key: str) -> Figure | None:
    """The total latency percentile curve of every job and direction, from fio.json's json+ bins."""
    from ptsbench.fio.jobs import parse_job_text
    from ptsbench.fio.output import parse_jobs
    from ptsbench.store import read_fio_json

    if not (case_dir / "fio.json").is_file():
        return None
    job_path = case_dir / "job.fio"
    sections = parse_job_text(read_text(job_path), str(job_path)) if job_path.is_file() else []
    curves = [(_series_name(job.name, job.hostname, direction.direction), direction.lat.bins)
              for job in parse_jobs(read_fio_json(case_dir / "fio.json"), sections)
              for direction in job.directions if direction.direction != "total" and direction.lat.bins]
    if not curves:
        return None
    return percentile_figure(
        f"{key}-percentiles", f"{record.name}: total latency percentiles", curves,
        f"Computed from fio's json+ latency bins of case {record.name}: the share of IOs at or below each "
        "latency.")


def case_section(store_root: Path, record: Any, interval_ms: float, rule: "DropRule | None" = None) -> Section:
    from ptsbench.drops.rule import DropRule
    from ptsbench.drops.stored import folder_findings

    case_dir = store_root / "cases" / f"{record.index:03d}-{record.name}"
    findings = folder_findings(case_dir, rule or DropRule())
    facts = (("case", record.name), ("job file", record.source), ("target", fact(record.target)),
             ("status", record.status), ("started (UTC)", record.started_utc), ("ended (UTC)", record.ended_utc))
    blocks: list[Block] = []
    if record.status != "ok":
        blocks.append(Text(f"Case failed: {record.message or 'see fio.stderr'}", "warning"))
    command = case_dir / "command.txt"
    if command.is_file():
        blocks.append(Text(read_text(command).strip(), "code"))
    blocks.extend(error_log_blocks(record))
    blocks.extend(monitor_blocks(case_dir, record))
    blocks.extend(drop_blocks(f"case{record.index:03d}", record.name, case_dir, findings, rule or DropRule()))
    blocks.extend(case_figures(case_dir, record, f"case{record.index:03d}", interval_ms, findings))
    return Section(f"case{record.index:03d}", f"Case {record.index}: {record.name}", facts, tuple(blocks))


def error_log_blocks(record: Any) -> list[Block]:
    """The NVMe error log entries new during the case, per drive, each in words (target/error_log.py)."""
    from ptsbench.device.error_log import entries_texts

    blocks: list[Block] = []
    for entry in getattr(record, "telemetry", None) or []:
        change = entry.get("change") or {}
        lines = entries_texts(change.get("error_log_new"), change.get("error_log_entries"))
        if lines:
            blocks.append(Text(f"The drive's error log ({entry.get('device')}) gained entries during the case: " +
                               "; ".join(lines) + ".", "warning"))
    return blocks


def monitor_blocks(case_dir: Path, record: Any) -> list[Block]:
    """Where the drive's OCP C3h latency monitor and fio's latencies of the case differ, per direction at the longest
    latency they do (catalog/monitor_host.py)."""
    from ptsbench.catalog.monitor_host import disagreements, most_specific

    said = most_specific(disagreements(case_dir, getattr(record, "telemetry", None) or []))
    return [Text("The drive's latency monitor (OCP C3h) and the host differ over the case: " + "; ".join(said) + ".",
                 "warning")] if said else []


def case_run_report(store: Any, in_progress: str | None = None) -> Report:
    """Report of a `ptsbench run` / `quick` directory."""
    from ptsbench.cases.records import load_records

    manifest = store.manifest
    records = load_records(store)
    warnings = tuple(f"case {record.name} failed: {record.message}" for record in records if record.status != "ok")
    from ptsbench.pts.store import PtsStore

    status = PtsStore(store).run_status()  # 'running' that no process holds: killed
    if status != "done" and in_progress is None and manifest.get("resume_plan"):
        warnings += (f"run status {status}: `ptsbench resume {store.root}` runs its unfinished cases",)
    rows = result_rows(records)  # the glance, the results table and the line on write amplification
    repeat_auto = repeat_auto_table(records, manifest)
    sections = [case_glance_section(rows, () if repeat_auto is None else (repeat_auto,)),
                Section("results", "Results", blocks=(results_table(rows), *waf_blocks(rows)))]
    interval_ms = float(manifest.get("log_interval_ms") or 1000)
    from ptsbench.drops.stored import stored_rule

    rule, _ = stored_rule(manifest)
    sections += [case_section(store.root, record, interval_ms, rule) for record in records]
    sections.append(environment_section(manifest))
    from ptsbench.report.core.style import short_device_name

    devices = ", ".join(dict.fromkeys(short_device_name(target) for target in manifest.get("targets") or []))
    title = f"{manifest.get('name', store.root.name)}: {devices}" if devices else str(manifest.get("name"))
    return Report(title, provenance_line(manifest),
                  (*description_facts(manifest), *run_facts(manifest)), tuple(sections), in_progress, warnings)

