"""A PTS run's results on the terminal, from the store alone: `pts_tables` gives the text tables (pure),
`render_pts` prints them with core/terminal.py's text-table printer.

IOPS (block size rows x mix columns), throughput (read and write MB/s per block size), latency (mean, max and
five-nines percentiles of total latency), write saturation summary, and the steady-state determination of every
tracked variable. Values are the averages over each phase's measurement window (the last 5 rounds); a phase that
has not finished shows its latest round, labelled so.

Advanced tests: HIR mean burst IOPS per wait state against the steady-state baseline; XSR per access group
throughput and latency, and the recovery time; CBW / DIRTH / ECW IOPS, mean latency and fio CPU per TC x QD, the
operating points with their response-time percentiles, and the three histograms; HDD zone x workload. Then the
device and host telemetry per phase (temperature, throttling, media errors, data written, host CPU).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.pts.cells import cell_name, mix_label
from ptsbench.pts.phases import PhaseView, load_views, phase_telemetry, xsr_samples
from ptsbench.pts.store import PtsStore
from ptsbench.report.core.terminal import TextTable, print_text_tables
from ptsbench.report.pts.facts import device_description
from ptsbench.report.pts.views import bucket_labels, matrix_of, span, throttled_text
from ptsbench.store import RunStore
from ptsbench.units import format_bs


def _iops(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _mbps(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:,.2f}"


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e3:,.2f}"


def _matrix(view: PhaseView, metric: str, fmt: Any, title: str) -> TextTable:
    """Block size rows (spec order) x mix columns of one metric."""
    sizes, mixes = view.axes()
    matrix = matrix_of(view, lambda found: found.get(metric))  # the report's numbers, as text
    rows = tuple((format_bs(bs), *(fmt(value) for value in row)) for bs, row in zip(sizes, matrix, strict=True))
    source = view.source("maximum over" if metric == "lat_max_ns" else "average over")
    notes = [source] + [f"skipped: {name}" for name in view.plan["skipped"]]
    return TextTable(title, ("block size", *(mix_label(mix) for mix in mixes)), rows, tuple(notes))


def _throughput(views: Sequence[PhaseView]) -> TextTable:
    rows = []
    notes = []
    for view in views:
        values = view.values()
        read: dict[str, Any] = next((values.get(c["name"], {}) for c in view.plan["cells"] if c["read_pct"] == 100), {})
        write: dict[str, Any] = next((values.get(c["name"], {}) for c in view.plan["cells"] if c["read_pct"] == 0), {})
        bs = view.plan["cells"][0]["bs_bytes"]
        rows.append((format_bs(bs), _mbps(read.get("bw_bytes")), _mbps(write.get("bw_bytes"))))
        notes.append(f"{format_bs(bs)}: {view.source()}")
    return TextTable("Throughput (MB/s, sequential)", ("block size", "read", "write"), tuple(rows), tuple(notes))


def _percentiles(view: PhaseView) -> TextTable:
    values = view.values()
    rows = []
    for cell in view.plan["cells"]:
        found = values.get(cell["name"], {}).get("lat_percentiles_ns") or {}
        rows.append((cell["name"], *(_us(found.get(p)) for p in ("99", "99.99", "99.999"))))
    return TextTable("Latency percentiles (us, total latency, all window IOs)", ("cell", "p99", "p99.99", "p99.999"),
                 tuple(rows), (view.source(),))


def _lat_histogram(views: Sequence[PhaseView]) -> list[TextTable]:
    """PTS 2.0's latency histogram capture: the latency by which each share of its IOs completed."""
    view = next((view for view in views if view.plan.get("role") == "histogram" and view.rounds), None)
    if view is None:
        return []
    capture = next((c for c in view.rounds[0]["cells"].values() if c.get("role") == "histogram"), None)
    histogram = (capture or {}).get("histogram")
    if not histogram:
        return []
    found = histogram.get("percentiles_ns") or {}
    cell = view.plan["cells"][0]
    return [TextTable("Latency response-time histogram: confidence levels (us, total latency)",
                  ("workload", "IOs", *(f"{p} %" for p in found), "max"),
                  ((f"{cell['name']} TC{cell['numjobs']}/QD{cell['iodepth']}", f"{int(histogram['n']):,}",
                    *(_us(value) for value in found.values()), _us(histogram.get("max_ns"))),),
                  (f"{cell['runtime_s']:g} s capture after steady state; from fio's json+ latency bins",))]


def _wsat(view: PhaseView, capacity_bytes: int) -> TextTable:
    rounds = view.rounds
    if not rounds:
        return TextTable("Write saturation", ("round",), (), ("not started",))
    rows = []
    shown = _spread(len(rounds), WSAT_ROWS)
    for record in (rounds[index] for index in shown):
        cell = next(iter(record["cells"].values()))
        totals = record["wsat"]
        rows.append((str(record["round"]), f"{totals['io_time_s']:,.1f}", f"{totals['written_bytes'] / 1e9:,.3f}",
                     f"{totals['written_bytes'] / capacity_bytes:,.2f}", _iops(cell["iops"]), _us(cell["lat_mean_ns"])))
    notes = [view.result["stop_reason"] if view.result else "NOT FINISHED"]
    if len(shown) < len(rounds):
        notes.append(f"{len(shown)} of {len(rounds)} rounds shown, evenly spaced; every round is in "
                     f"pts/{view.key}/rounds/")
    return TextTable("Write saturation (4 KiB random writes)",
                 ("round", "IO time s", "written GB", "drive fills", "IOPS", "mean lat us"), tuple(rows), tuple(notes))


WSAT_ROWS = 25


def _spread(count: int, most: int) -> list[int]:
    """Up to `most` indexes out of range(count), evenly spaced, always the first and the last."""
    if count <= most:
        return list(range(count))
    return sorted({round(i * (count - 1) / (most - 1)) for i in range(most)})


METRIC_UNITS = {"iops": ("IOPS", 1.0), "bw_bytes": ("MB/s", 1e6), "lat_mean_ns": ("us", 1e3), "lat_max_ns": ("us", 1e3)}


def _scaled(metric: str, value: float, digits: int = 1) -> str:
    """A tracked metric in the unit people read it in (IOPS, MB/s, us)."""
    unit, scale = METRIC_UNITS.get(metric, ("", 1.0))
    return f"{value / scale:,.{digits}f} {unit}".rstrip()


def _steady(views: Sequence[PhaseView]) -> TextTable:
    rows = []
    for view in views:
        last = view.rounds[-1]["steady"] if view.rounds else None
        variables = (view.result or {}).get("determination") or (last or {}).get("variables") or {}
        for label, v in variables.items():
            if v is None:
                rows.append((view.plan["title"], label, "-", "-", "-", "-", "-", "needs 5 rounds"))
                continue
            metric, window = v["metric"], v["rounds"]
            cell = f"{v['host']} {v['cell']}" if v.get("host") else v["cell"]  # all hosts: every host's variables
            rows.append((
                view.plan["title"], cell, f"{window[0]}-{window[-1]}", _scaled(metric, v["average"]),
                f"{_scaled(metric, v['data_excursion'])} (max {_scaled(metric, v['allowed_data_excursion'])})",
                f"{_scaled(metric, v['slope_excursion'])} (max {_scaled(metric, v['allowed_slope_excursion'])})",
                f"{_scaled(metric, v['slope'], 3)} x round + {_scaled(metric, v['intercept'])}",
                "reached" if v["steady"] else "NOT reached",
            ))
    return TextTable("Steady-state determination (data excursion <= 20 %, slope excursion <= 10 % of the average)",
                 ("test", "tracked cell", "window", "average", "data excursion", "slope excursion", "fitted line",
                  "steady state"), tuple(rows))


# ---------------------------------------------------------------------------------------------------------------
# advanced tests


def _role(views: Sequence[PhaseView], role: str) -> list[PhaseView]:
    return [view for view in views if view.plan.get("role", "") == role]


def _meta(view: PhaseView, key: str) -> Any:
    return (view.plan.get("meta") or {}).get(key)


def _total(cell: Mapping[str, Any], key: str) -> Any:
    return (cell.get("total") or {}).get(key)


def _hir(views: Sequence[PhaseView], manifest: Mapping[str, Any]) -> list[TextTable]:
    from ptsbench.pts.advanced import Burst, hir_summary

    baseline_view = next(iter(_role(views, "baseline")), None)
    tracked = baseline_view.plan["tracked"] if baseline_view else []
    baseline = (baseline_view.values().get(tracked[0]["cell"], {}).get("iops") if baseline_view and tracked
                else None)
    bursts: dict[float, list[Burst]] = {}
    recovery: dict[float, float | None] = {}
    for view in _role(views, "wait-state"):
        if not view.rounds:
            continue
        cells = view.rounds[0]["cells"].values()
        wait_s = float(_meta(view, "wait_s"))
        bursts[wait_s] = [Burst(int(_total(c, "total_ios") or 0), float(_total(c, "runtime_ms") or 0))
                          for c in cells if c.get("role") == "burst"]
        recovery[wait_s] = next((c["iops"] for c in cells if c.get("role") == "recovery"), None)
    rows = tuple((f"{row.wait_s:g}", str(row.bursts), _iops(row.mean_iops), _iops(baseline),
                  "-" if baseline is None else f"{row.mean_iops / baseline:,.2f}", _iops(recovery[row.wait_s]))
                 for row in hir_summary(baseline or 0.0, bursts))
    notes = [f"baseline: {baseline_view.source() if baseline_view else 'not run'}",
             "mean burst IOPS: all IOs of the wait state's bursts over their summed runtime"]
    return [TextTable("Host idle recovery (4 KiB random writes)",
                  ("wait s", "bursts", "mean burst IOPS", "baseline IOPS", "burst / baseline", "recovery IOPS"),
                  rows, tuple(notes))]


def _mean(records: Sequence[Mapping[str, Any]], key: str) -> float | None:
    return sum(float(r[key]) for r in records) / len(records) if records else None


def _xsr(views: Sequence[PhaseView], manifest: Mapping[str, Any]) -> list[TextTable]:
    from ptsbench.errors import PtsbenchError
    from ptsbench.pts.advanced import xsr_recovery

    groups = _role(views, "group")
    rows = []
    for view in groups:
        cells = [next(iter(r["cells"].values())) for r in view.rounds]
        rows.append((str(_meta(view, "group")), view.plan["cells"][0]["name"], f"{len(cells)}",
                     _mbps(_mean(cells, "bw_bytes")), _iops(_mean(cells, "iops")), _us(_mean(cells, "lat_mean_ns")),
                     _us(max((float(c["lat_max_ns"]) for c in cells), default=None))))
    tables = [TextTable("Cross stimulus recovery: access groups (1 sample per round)",
                    ("group", "workload", "samples", "mean MB/s", "mean IOPS", "mean lat us", "max lat us"),
                    tuple(rows), tuple(f"group {_meta(v, 'group')}: {v.source()}" for v in groups))]
    if len(groups) == 3 and groups[0].rounds and groups[2].rounds:
        group1, _ = xsr_samples(groups[0])
        group3, ends = xsr_samples(groups[2])
        try:
            recovery = xsr_recovery(group1, group3, group3_ends_s=ends)
        except PtsbenchError:
            return tables
        found = "not recovered" if recovery.recovery_s is None else f"{recovery.recovery_s / 60:,.2f}"
        tables.append(TextTable("Cross stimulus recovery: recovery time",
                            ("group 1 average MB/s", "recovery min", "group 3 samples"),
                            ((_mbps(recovery.baseline_bw_bytes), found, str(len(group3))),),
                            ("from the start of group 3 to the end of its first sample at or above group 1's "
                             "average (sample ends from the rounds' wall times)",)))
    return tables


def _depth_matrix(view: PhaseView, title: str, value: Any, fmt: Any) -> TextTable:
    """TC rows (high to low) x QD columns (high to low) of value(cell spec) for the sweep cells."""
    cells = [c for c in view.plan["cells"] if c.get("role", "") == ""]
    tcs = sorted({c["numjobs"] for c in cells}, reverse=True)
    qds = sorted({c["iodepth"] for c in cells}, reverse=True)
    by_depth = {(c["numjobs"], c["iodepth"]): c for c in cells}
    rows = tuple((f"TC{tc}", *(fmt(value(by_depth[(tc, qd)])) if (tc, qd) in by_depth else "-" for qd in qds))
                 for tc in tcs)
    return TextTable(title, ("TC \\ QD", *(f"QD{qd}" for qd in qds)), rows, (view.source(),))


def _demand(views: Sequence[PhaseView], manifest: Mapping[str, Any]) -> list[TextTable]:
    sweep = next(iter(_role(views, "sweep")), None)
    if sweep is None or not sweep.rounds:
        return []
    values = sweep.values()
    title = sweep.plan["title"]
    tables = [
        _depth_matrix(sweep, f"{title}: demand variation (IOPS)", lambda c: values.get(c["name"], {}).get("iops"),
                      _iops),
        _depth_matrix(sweep, f"{title}: demand intensity (mean latency us)",
                      lambda c: values.get(c["name"], {}).get("lat_mean_ns"), _us),
        _depth_matrix(sweep, f"{title}: fio CPU (usr + sys %)", lambda c: sweep.cpu_pct(c["name"]),
                      lambda v: "-" if v is None else f"{v:,.1f}"),
    ]
    record = (manifest.get("operating_points") or {}).get(sweep.plan["test"])
    if record:
        tables += _operating_points(views, record)
    return tables


def _operating_points(views: Sequence[PhaseView], record: Mapping[str, Any]) -> list[TextTable]:
    """The chosen points with their sweep values, then each point's capture: IOPS and response-time statistics."""
    chosen_rows: list[tuple[str, ...]] = []
    capture_rows: list[tuple[str, ...]] = []
    histograms = {}
    for name, chosen in record["points"].items():
        label = f"{name.capitalize()}IOPS"
        if chosen is None:
            chosen_rows.append((label, f"none: no cell under {record['limit_ns'] / 1e6:g} ms", "-", "-"))
            continue
        chosen_rows.append((label, f"TC{chosen['tc']}/QD{chosen['qd']}", _iops(chosen["iops"]),
                            _us(chosen["lat_mean_ns"])))
        view = next((v for v in _role(views, "point") if _meta(v, "point") == name), None)
        cells = view.rounds[0]["cells"].values() if view is not None and view.rounds else []
        capture = next((c for c in cells if c.get("role") == "histogram"), None)
        if capture is None:
            capture_rows.append((label, "not run yet", "-", "-", "-", "-", "-", "-"))
            continue
        histogram = capture.get("histogram") or {}
        histograms[name] = histogram
        found = histogram.get("percentiles_ns", {})
        capture_rows.append((label, _iops(capture["iops"]), _us(histogram.get("mean_ns")),
                             *(_us(found.get(p)) for p in ("99", "99.9", "99.99", "99.999")),
                             _us(histogram.get("max_ns"))))
    tables = [
        TextTable("Operating points (from the sweep)", ("point", "TC/QD", "IOPS", "mean lat us"), tuple(chosen_rows),
              (f"MaxIOPS: highest IOPS with mean latency under {record['limit_ns'] / 1e6:g} ms; MidIOPS: nearest "
               "to (MaxIOPS + MinIOPS) / 2; MinIOPS: TC1/QD1; from the averages of the sweep's rounds "
               f"{span(record['window_rounds'])}",)),
        TextTable("Response time at the operating points (capture after the pre-write; total latency, us)",
              ("point", "IOPS", "mean", "p99", "p99.9", "p99.99", "p99.999", "max"), tuple(capture_rows)),
    ]
    if any(histograms.values()):
        tables.append(_histograms({name: h for name, h in histograms.items() if h}))
    return tables


def _histograms(histograms: Mapping[str, Mapping[str, Any]]) -> TextTable:
    """IOs per response-time bucket of each operating point's capture (buckets where some point has IOs)."""
    edges = next(iter(histograms.values()))["edges_ns"]
    rows = []
    labels = bucket_labels(edges)
    for index in range(len(edges)):
        counts = [int(h["counts"][index]) for h in histograms.values()]
        if any(counts):
            rows.append((labels[index], *(f"{count:,}" for count in counts)))
    return TextTable("Response-time histograms (IOs per total-latency bucket)",
                 ("latency", *(f"{name.capitalize()}IOPS" for name in histograms)), tuple(rows),
                 tuple(f"{name.capitalize()}IOPS: {int(h['n']):,} IOs" for name, h in histograms.items()))


def _zones(views: Sequence[PhaseView], manifest: Mapping[str, Any]) -> list[TextTable]:
    """Zone rows (outer to inner) x workload columns: IOPS for the random cells, MB/s for the sequential ones."""
    tables = []
    for view in views:
        values = view.values()
        cells = view.plan["cells"]
        workloads = list(dict.fromkeys(cell_name(c["pattern"], c["bs_bytes"], c["read_pct"]) for c in cells))
        sequential = all(c["pattern"] == "seq" for c in cells)
        by_zone: dict[int, dict[str, float | None]] = {}
        for cell in cells:
            label = cell_name(cell["pattern"], cell["bs_bytes"], cell["read_pct"])
            found = values.get(cell["name"], {})
            by_zone.setdefault(int(cell["zone"]), {})[label] = found.get("bw_bytes" if sequential else "iops")
        fmt = _mbps if sequential else _iops
        rows = tuple((str(zone + 1), *(fmt(by_zone[zone].get(label)) for label in workloads))
                     for zone in sorted(by_zone))
        unit = "MB/s" if sequential else "IOPS"
        tables.append(TextTable(f"{view.plan['title']}: {unit} per zone (zone 1 = lowest LBAs, the outer tracks)",
                            ("zone", *workloads), rows, (view.source(),)))
    return tables


ADVANCED_TABLES = {"hir": _hir, "xsr": _xsr, "cbw": _demand, "ecw": _demand, "dirth": _demand,
                   "hdd-iops": _zones, "hdd-tp": _zones}


def telemetry_summary(view: PhaseView) -> tuple[str, ...] | None:
    """One phase's telemetry over its rounds: rounds, temperature range, throttling, media errors, device data
    written, host CPU busy (mean and max); None when its rounds have none (runs made before telemetry)."""
    found = phase_telemetry(view)
    if found is None:
        return None
    return (
        view.plan["title"], str(found.rounds),
        "-" if found.min_temperature_c is None else f"{found.min_temperature_c}-{found.max_temperature_c}",
        throttled_text(found, "-"),
        "-" if found.media_errors is None else f"+{found.media_errors}",
        "-" if found.written_bytes is None else f"{found.written_bytes / 1e9:,.3f}",
        "-" if found.busy_mean_pct is None else f"{found.busy_mean_pct:,.1f} ({found.busy_max_pct:,.1f})",
    )


def _telemetry(views: Sequence[PhaseView]) -> TextTable | None:
    rows = tuple(row for view in views if (row := telemetry_summary(view)) is not None)
    if not rows:
        return None
    readings = [r["telemetry"]["after"] for view in views for r in view.rounds if r.get("telemetry")]
    notes = list(dict.fromkeys(f"device: {t['note']}" for t in readings if t.get("note")))
    notes += list(dict.fromkeys(f"device read with: {t['command']}" for t in readings if t.get("command")))
    notes.append("per round in pts/PHASE/rounds/NNN/round.json (telemetry: before, after, change, cpu)")
    return TextTable("Telemetry per phase (device before/after each round; host CPU during it)",
                 ("phase", "rounds", "temp C", "throttled", "media errors", "device written GB",
                  "host CPU busy % mean (max)"), rows, tuple(notes))


def pts_tables(store: RunStore, host: str | None = None) -> list[TextTable]:
    """Every PTS table of a run directory, in test order; for a run on hosts, `host` None: all hosts together
    (IOPS and MB/s as fio's group arithmetic: all hosts' IOs over the longest runtime; latency merged from every
    host's bins; steady state of every host), else one host's."""
    pts = PtsStore(store)
    views = load_views(pts, host)
    manifest = store.manifest
    capacity = int(manifest["target_info"]["size_bytes"])
    tables: list[TextTable] = []
    for test in dict.fromkeys(view.plan["test"] for view in views):
        mine = [view for view in views if view.plan["test"] == test]
        if test in ADVANCED_TABLES:
            tables += ADVANCED_TABLES[test](mine, manifest)
        elif test == "iops":
            tables.append(_matrix(mine[0], "iops", _iops, "IOPS (block size x read/write mix)"))
        elif test == "tp":
            tables.append(_throughput(mine))
        elif test == "lat":
            tables.append(_matrix(mine[0], "lat_mean_ns", _us, "Mean latency (us)"))
            tables.append(_matrix(mine[0], "lat_max_ns", _us, "Maximum latency (us)"))
            tables.append(_percentiles(mine[0]))
            tables += _lat_histogram(mine)
        elif test == "wsat":
            tables.append(_wsat(mine[0], capacity))
    if any(view.plan["tracked"] for view in views):
        tables.append(_steady([view for view in views if view.plan["tracked"]]))
    telemetry = _telemetry(views) if host is None else None
    if telemetry is not None:
        tables.append(telemetry)
    return tables


def compliance_lines(manifest: Mapping[str, Any]) -> list[str]:
    """The compliance banner: 'PTS-compliant' or 'NOT PTS-compliant' with every reason."""
    compliance = manifest.get("compliance") or {}
    if compliance.get("compliant"):
        return ["PTS-compliant"]
    return ["NOT PTS-compliant:", *(f"  - {reason}" for reason in compliance.get("reasons", []))]


def header_lines(manifest: Mapping[str, Any], status: str | None = None) -> list[str]:
    """The run and its target; `status` the run's status now (PtsStore.run_status), else the manifest's."""
    settings, target, info = manifest["settings"], manifest.get("target") or {}, manifest["target_info"]
    device = " ".join(str(target[k]) for k in ("vendor", "model", "serial", "firmware") if target.get(k))
    status = status or str(manifest.get("status"))
    if status == "interrupted" and manifest.get("status") in ("running", "created"):
        status = "interrupted (killed while running: `ptsbench resume` continues it)"
    return [
        f"PTS {settings['spec']} {settings['profile']} profile, run {manifest.get('name')} created "
        f"{manifest.get('created_utc')}, status {status}",
        f"target {info['path']} ({info['kind']}, {info['size_bytes'] / 1e9:,.2f} GB{', ' + device if device else ''}), "
        f"ioengine {info['ioengine']}, active range {settings['active_range_pct']:g} %, "
        f"fio {manifest.get('fio_version')}",
        *([f"device description: {device_description(manifest)}"] if manifest.get("device_info") else []),
        *([f"on {len(manifest['hosts'])} hosts at once (rounds in lockstep): "
           + ", ".join(f"{h['host']}:{h['port']} ({h['hostname']}, {h['fio_version']})" for h in manifest["hosts"])]
          if manifest.get("hosts") else []),
    ]


def _headline(store: RunStore) -> TextTable:
    """The answer first: every tracked value at steady state with its verdict (report/glance.py's rows)."""
    from ptsbench.report.core.model import format_column
    from ptsbench.report.glance import PTS_COLUMNS, pts_headline_rows

    rows = pts_headline_rows(load_views(PtsStore(store)))
    cells = [format_column([row[index] for row in rows], column.kind) for index, column in enumerate(PTS_COLUMNS)]
    return TextTable("At a glance: tracked values at steady state (window averages)",
                 tuple(column.name for column in PTS_COLUMNS),
                 tuple(tuple(column[position] for column in cells) for position in range(len(rows))))


def render_pts(store: RunStore, console: Any) -> None:
    """Print a PTS run's results with rich: header, the headline values and the compliance verdict, the tables (on
    hosts: all hosts, then each host), then the deviations and notes in full."""

    manifest = store.manifest
    for line in header_lines(manifest, PtsStore(store).run_status()):
        console.print(line, highlight=False)
    print_text_tables([_headline(store)], console)
    banner = compliance_lines(manifest)
    style = "bold green" if manifest.get("compliance", {}).get("compliant") else "bold yellow"
    reasons = len(banner) - 1
    console.print(banner[0].rstrip(":") + (f" ({reasons} deviation{'s' if reasons != 1 else ''}, listed at the end)"
                                             if reasons else ""), style=style, highlight=False)
    hosts = [str(h["host"]) for h in manifest.get("hosts") or ()]
    sections: list[tuple[str | None, str]] = [(None, "")]
    if hosts:
        sections = [(None, f"All {len(hosts)} hosts: IOs over the longest runtime (fio's group arithmetic), "
                           "latency merged from every host's fio bins; steady state judged per host"),
                    *((h, f"Host {h}") for h in hosts)]
    for host, heading in sections:
        if heading:
            console.rule(heading)
        print_text_tables(pts_tables(store, host), console)
    if reasons:
        console.print(banner[0], style=style, highlight=False)
        for line in banner[1:]:
            console.print(line, highlight=False)
    for note in manifest.get("notes", []):
        console.print(f"note: {note}", highlight=False)
