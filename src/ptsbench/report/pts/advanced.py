"""Report blocks of PTS 2.0's advanced tests - HIR, XSR, CBW / DIRTH / ECW, HDD zones - and the per-round
telemetry every PTS test shows, built from the store alone (pts/store.py says what each file holds).

The numbers come from the same analysis functions `ptsbench show` uses (pts/advanced.py, pts/phases.py): HIR's
IOPS against time is `hir_timeline`, XSR's recovery `xsr_recovery` on `xsr_samples`, the demand curves
`demand_variation` / `demand_intensity`; histograms, percentiles and maxima are the stored ones.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ptsbench.report.common import waf_text
from ptsbench.report.core.figure import Figure, Grid, Series
from ptsbench.report.core.model import Block, Chart, Column, Table, Text, Value
from ptsbench.report.pts.views import (
    PtsContext,
    bucket_labels,
    duration_label,
    scaled,
    slug,
    span,
    throttled_text,
)

Views = Sequence[Any]  # pts/phases.py PhaseView


def _role(views: Views, role: str) -> list[Any]:
    return [view for view in views if view.plan.get("role", "") == role]


def _meta(view: Any, key: str) -> Any:
    return (view.plan.get("meta") or {}).get(key)


def _minutes(seconds: float) -> float:
    return seconds / 60


def _ticks(labels: Sequence[str]) -> tuple[tuple[float, str], ...]:
    return tuple((float(index), label) for index, label in enumerate(labels))


# --- HIR ------------------------------------------------------------------------------------------------------


def _hir_baseline(views: Views) -> tuple[Any, float | None]:
    view = next(iter(_role(views, "baseline")), None)
    tracked = view.plan["tracked"] if view is not None else []
    if view is None or not tracked:
        return view, None
    return view, view.values().get(tracked[0]["cell"], {}).get("iops")


def hir_wait_states(views: Views) -> list[Any]:
    """advanced.HirWaitState of every wait state that ran, in run order: its bursts and recovery as fio counted
    them (total IOs and runtime), the recovery's planned length."""
    from ptsbench.pts.advanced import Burst, HirWaitState

    states = []
    for view in _role(views, "wait-state"):
        if not view.rounds:
            continue
        cells = view.rounds[0]["cells"]
        planned = {cell["name"]: cell for cell in view.plan["cells"]}

        def burst(cell: Mapping[str, Any]) -> Any:
            total = cell.get("total") or {}
            return Burst(int(total.get("total_ios") or 0), float(total.get("runtime_ms") or 0.0))

        recovery = next((cell for cell in cells.values() if cell.get("role") == "recovery"), None)
        recovery_s = next((float(c["runtime_s"]) for c in planned.values() if c.get("role") == "recovery"), 0.0)
        states.append(HirWaitState(float(_meta(view, "wait_s")),
                                   tuple(burst(c) for c in cells.values() if c.get("role") == "burst"),
                                   burst(recovery) if recovery is not None else None, recovery_s))
    return states


def _hir_burst_s(views: Views) -> float:
    return next((float(cell["runtime_s"]) for view in _role(views, "wait-state") for cell in view.plan["cells"]
                 if cell.get("role") == "burst"), 0.0)


def hir_blocks(views: Views, context: PtsContext) -> list[Block]:
    from ptsbench.pts.advanced import hir_summary, hir_timeline

    baseline_view, baseline = _hir_baseline(views)
    states = hir_wait_states(views)
    if not states:
        return [Text("Host idle recovery: no wait state has run yet.")]
    burst_s = _hir_burst_s(views)
    recovery = {state.wait_s: state.recovery.iops if state.recovery else None for state in states}
    summary = {row.wait_s: row for row in hir_summary(baseline or 0.0, {s.wait_s: s.bursts for s in states})}
    rows = tuple((state.wait_s, len(state.bursts), summary[state.wait_s].mean_iops, baseline,
                  summary[state.wait_s].ratio if baseline else None, recovery[state.wait_s])
                 for state in states)
    table = Table("hir", "Host idle recovery: mean IOPS per wait state against the steady-state baseline",
                  (Column("wait state (s)", "number"), Column("bursts", "int"), Column("mean burst IOPS", "iops"),
                   Column("baseline IOPS", "iops"), Column("burst / baseline", "ratio"),
                   Column("recovery IOPS", "iops")), rows, keys=(0,))
    labels = [f"{state.wait_s:g} s" for state in states]
    positions = tuple(float(index) for index in range(len(states)))
    bars: list[Series] = [
        Series("mean burst IOPS", positions, tuple(row[2] for row in rows), mode="bars", color=0),
        Series("recovery IOPS", positions, tuple(row[5] for row in rows), mode="bars", color=2),
    ]
    if baseline is not None:
        bars.append(Series("steady-state baseline", (-0.5, len(states) - 0.5), (baseline, baseline), mode="lines",
                           dash="dash", color=7))
    source = baseline_view.source() if baseline_view is not None else "not run"
    blocks: list[Block] = [
        table,
        Text(f"Baseline: the steady-state IOPS of {baseline_view.plan['title'] if baseline_view else '-'} "
             f"({source}). Mean burst IOPS: all IOs of a wait state's bursts over their summed runtime."),
        Figure("hir-mean-iops", "Host idle recovery: mean IOPS per wait state", "wait state", "IOPS", tuple(bars),
               x_ticks=_ticks(labels),
               caption="Mean IOPS of each wait state's write bursts and of its recovery writes (all IOs over their "
                       "runtime), against the steady-state baseline (dashed)."),
        _hir_timeline_figure(hir_timeline(states, burst_s), states, baseline),
    ]
    return blocks


def _hir_timeline_figure(points: Sequence[tuple[float, float, float, str]], states: Sequence[Any],
                         baseline: float | None) -> Figure:
    """Bursts as markers joined per wait state, each recovery as a segment over its length, the baseline dashed."""
    series = []
    recovery_s = {state.wait_s: state.recovery_s for state in states}
    for index, state in enumerate(states):
        bursts = [(start, iops) for start, iops, wait, kind in points if wait == state.wait_s and kind == "burst"]
        series.append(Series(f"wait {state.wait_s:g} s: bursts", tuple(_minutes(s) for s, _ in bursts),
                             tuple(iops for _, iops in bursts), color=index))
        for start, iops, wait, kind in points:
            if wait == state.wait_s and kind == "recovery":
                series.append(Series(f"wait {state.wait_s:g} s: recovery",
                                     (_minutes(start), _minutes(start + recovery_s[wait])), (iops, iops),
                                     mode="lines", dash="dot", color=index))
    end_s = max((start + (recovery_s[wait] if kind == "recovery" else 0.0) for start, _, wait, kind in points),
                default=0.0)
    if baseline is not None:
        series.append(Series("steady-state baseline", (0.0, _minutes(end_s)), (baseline, baseline), mode="lines",
                             dash="dash", color=7))
    return Figure("hir-iops-vs-time", "Host idle recovery: IOPS vs time across all wait states", "time (min)", "IOPS",
                  tuple(series), data_sheet=True,
                  caption="IOPS of every write burst at its start time, and of each recovery over its length, with "
                          "the wait states run back to back (burst k of wait state W starts k x (burst + W) after "
                          "the wait state began).")


# --- XSR ------------------------------------------------------------------------------------------------------

_XSR_METRICS = (  # (key, round value, title, axis, factor)
    ("tp", "bw_bytes", "throughput", "throughput (MB/s)", 1e-6),
    ("lat-mean", "lat_mean_ns", "mean latency", "mean latency (µs)", 1e-3),
    ("lat-max", "lat_max_ns", "max latency", "max latency (µs)", 1e-3),
)


def xsr_blocks(views: Views, context: PtsContext) -> list[Block]:
    from ptsbench.pts.phases import xsr_samples

    groups = sorted(_role(views, "group"), key=lambda view: int(_meta(view, "group")))
    rows: list[tuple[Value, ...]] = []
    timeline: list[tuple[str, list[float], list[Mapping[str, Any]]]] = []
    offset_s = 0.0
    for view in groups:
        cells = [next(iter(record["cells"].values())) for record in view.rounds]
        _bandwidths, ends = xsr_samples(view)
        timeline.append((f"group {_meta(view, 'group')}: {view.plan['cells'][0]['name']}",
                         [_minutes(offset_s + end) for end in ends], cells))
        offset_s += ends[-1] if ends else 0.0
        rows.append((str(_meta(view, "group")), view.plan["cells"][0]["name"], len(cells),
                     _mean(cells, "bw_bytes", 1e-6), _mean(cells, "iops"), _mean(cells, "lat_mean_ns", 1e-3),
                     scaled(max((c["lat_max_ns"] for c in cells), default=None), 1e-3)))
    blocks: list[Block] = [Table(
        "xsr-groups", "Cross stimulus recovery: access groups (one sample per round)",
        (Column("group"), Column("workload"), Column("samples", "int"), Column("mean MB/s", "mbs"),
         Column("mean IOPS", "iops"), Column("mean latency (µs)", "us"), Column("max latency (µs)", "us")),
        tuple(rows))]
    blocks += _xsr_recovery(groups)
    for key, metric, title, axis, factor in _XSR_METRICS:
        series = tuple(Series(name, tuple(x), tuple(scaled(c[metric], factor) for c in cells))
                       for name, x, cells in timeline if x)
        blocks.append(Figure(f"xsr-{key}-vs-time", f"Cross stimulus recovery: {title} vs time", "time (min)", axis,
                             series, data_sheet=True,
                             caption=f"The {title} of every sample (round) at its end; time runs across the three "
                                     "access groups, from the rounds' measured wall times."))
    return blocks


def _mean(cells: Sequence[Mapping[str, Any]], key: str, factor: float = 1.0) -> float | None:
    found = [float(cell[key]) for cell in cells if cell.get(key) is not None]
    return sum(found) / len(found) * factor if found else None


def _xsr_recovery(groups: Sequence[Any]) -> list[Block]:
    from ptsbench.errors import PtsbenchError
    from ptsbench.pts.advanced import xsr_recovery
    from ptsbench.pts.phases import xsr_samples

    if len(groups) != 3 or not groups[0].rounds or not groups[2].rounds:
        return [Text("Recovery time: not yet (needs samples of groups 1 and 3).")]
    group1, _ = xsr_samples(groups[0])
    group3, ends = xsr_samples(groups[2])
    try:
        recovery = xsr_recovery(group1, group3, group3_ends_s=ends)
    except PtsbenchError as error:
        return [Text(f"Recovery time: {error}")]
    sample = None if recovery.recovered_sample is None else recovery.recovered_sample + 1
    return [Table("xsr-recovery", "Cross stimulus recovery: recovery time",
                  (Column("group 1 average MB/s", "mbs"), Column("group 3 samples", "int"),
                   Column("recovered at sample", "int"), Column("recovery time (min)", "number"), Column("result")),
                  ((recovery.baseline_bw_bytes * 1e-6, len(group3), sample, recovery.recovery_min,
                    "recovered" if sample else "not recovered"),), keys=(4,), compare=(0, 3)),
            Text("Recovery time: from the start of group 3 to the end of its first sample at or above group 1's "
                 "average throughput (sample ends from the rounds' wall times).")]


# --- CBW / DIRTH / ECW ------------------------------------------------------------------------------------------

POINT_NAMES = {"max": "MaxIOPS", "mid": "MidIOPS", "min": "MinIOPS"}


def _depth_table(key: str, title: str, cells: Sequence[Mapping[str, Any]], value: Callable[[Any], Value],
                 kind: str) -> Table:
    """TC rows x QD columns (both high to low) of the sweep's cells."""
    tcs = sorted({int(c["numjobs"]) for c in cells}, reverse=True)
    qds = sorted({int(c["iodepth"]) for c in cells}, reverse=True)
    by_depth = {(int(c["numjobs"]), int(c["iodepth"])): c for c in cells}
    rows = tuple((f"TC{tc}", *(value(by_depth[(tc, qd)]) if (tc, qd) in by_depth else None for qd in qds))
                 for tc in tcs)
    return Table(key, title, (Column("TC \\ QD"), *(Column(f"QD{qd}", kind) for qd in qds)), rows)


def demand_blocks(views: Views, context: PtsContext) -> list[Block]:
    from ptsbench.pts.advanced import demand_cells, demand_intensity, demand_variation

    sweep = next(iter(_role(views, "sweep")), None)
    if sweep is None or not sweep.rounds:
        return [Text("The TC x QD sweep has not run yet.")]
    test, title = sweep.plan["test"], sweep.plan["title"]
    values = sweep.values()
    specs = [cell for cell in sweep.plan["cells"] if cell.get("role", "") == ""]
    iops = _depth_table(f"{test}-iops", f"{title}: demand variation, IOPS per TC x QD", specs,
                        lambda c: values.get(c["name"], {}).get("iops"), "iops")
    latency = _depth_table(f"{test}-lat-mean", f"{title}: demand intensity, mean latency (µs) per TC x QD", specs,
                           lambda c: scaled(values.get(c["name"], {}).get("lat_mean_ns"), 1e-3), "us")
    cpu_table = _depth_table(f"{test}-cpu", f"{title}: fio CPU utilisation (usr + sys %) per TC x QD", specs,
                             lambda c: sweep.cpu_pct(c["name"]), "pct")
    cells = demand_cells(specs, values)
    qds = sorted({cell.qd for cell in cells})
    variation = tuple(Series(f"TC{tc}", tuple(float(qd) for qd, _ in points), tuple(v for _, v in points))
                      for tc, points in demand_variation(cells).items())
    intensity = tuple(Series(f"TC{tc}", tuple(v for v, _ in points), tuple(lat / 1000 for _, lat in points))
                      for tc, points in demand_intensity(cells).items())
    blocks: list[Block] = [
        iops, latency, Text(f"{title}: {sweep.source()}."),
        Figure(f"{test}-demand-variation", f"{title}: demand variation (IOPS vs QD per TC)", "queue depth (QD)",
               "IOPS", variation, x_log=True, x_ticks=tuple((float(qd), str(qd)) for qd in qds),
               caption="Average IOPS of every TC x QD cell over the sweep's measurement window, one line per thread "
                       "count."),
        Figure(f"{test}-demand-intensity", f"{title}: demand intensity (mean latency vs IOPS per TC)", "IOPS",
               "mean latency (µs)", intensity,
               caption="Mean total latency against IOPS of every TC x QD cell, one line per thread count, points "
                       "in increasing queue depth."),
        cpu_table,
        _depth_bars(f"{test}-cpu-3d", f"{title}: fio CPU utilisation per TC x QD", cpu_table,
                    "fio's usr + sys CPU of every cell, averaged over the sweep's measurement window rounds."),
    ]
    record = (context.manifest.get("operating_points") or {}).get(test)
    if not record:
        blocks.append(Text("Operating points: not chosen yet (after the sweep reaches steady state or its last "
                           "round)."))
        return blocks
    return blocks + operating_point_blocks(views, record, title, test)


def _depth_bars(key: str, title: str, table: Table, caption: str) -> Figure:
    bars = Grid(tuple(column.name for column in table.columns[1:]), tuple(str(row[0]) for row in table.rows),
                  tuple(tuple(v if isinstance(v, int | float) else None for v in row[1:]) for row in table.rows))
    return Figure(key, title, "queue depth", "thread count", grid=bars, kind="bars3d", z_label="CPU %", caption=caption)


def _capture(views: Views, point: str) -> Mapping[str, Any] | None:
    """The histogram cell of an operating point's capture round, or None before it ran."""
    view = next((v for v in _role(views, "point") if _meta(v, "point") == point), None)
    if view is None or not view.rounds:
        return None
    return next((cell for cell in view.rounds[0]["cells"].values() if cell.get("role") == "histogram"), None)


PERCENTILES = ("99", "99.9", "99.99", "99.999")


def operating_point_blocks(views: Views, record: Mapping[str, Any], title: str, test: str) -> list[Block]:
    """The chosen points (from the sweep), each point's capture statistics, and its response-time histogram."""
    limit_ms = float(record["limit_ns"]) / 1e6
    chosen_rows: list[tuple[Value, ...]] = []
    capture_rows: list[tuple[Value, ...]] = []
    histograms: dict[str, Mapping[str, Any]] = {}
    for point, chosen in record["points"].items():
        name = POINT_NAMES.get(point, point)
        if chosen is None:
            chosen_rows.append((name, f"none: no cell under {limit_ms:g} ms", None, None))
            continue
        depth = f"TC{chosen['tc']}/QD{chosen['qd']}"
        chosen_rows.append((name, depth, chosen["iops"], scaled(chosen.get("lat_mean_ns"), 1e-3)))
        capture = _capture(views, point)
        histogram = (capture or {}).get("histogram") or {}
        if histogram:
            histograms[point] = histogram
        found = histogram.get("percentiles_ns") or {}
        capture_rows.append((name, depth, capture["iops"] if capture else None,
                             histogram.get("n"), scaled(histogram.get("mean_ns"), 1e-3),
                             *(scaled(found.get(p), 1e-3) for p in PERCENTILES),
                             scaled(histogram.get("max_ns"), 1e-3)))
    middle = record.get("middle_iops")
    notes = [f"MaxIOPS: the highest IOPS with mean latency under {limit_ms:g} ms; MidIOPS: the nearest to "
             f"(MaxIOPS + MinIOPS) / 2 = {'-' if middle is None else f'{middle:,.1f}'} IOPS; MinIOPS: TC1/QD1; "
             f"from the sweep's averages over rounds {span(record.get('window_rounds') or [])}."]
    if record.get("note"):
        notes.append(str(record["note"]))
    blocks: list[Block] = [
        Table(f"{test}-points", f"{title}: operating points (from the sweep)",
              (Column("point"), Column("TC/QD"), Column("IOPS", "iops"), Column("mean latency (µs)", "us")),
              tuple(chosen_rows)),
        Text(" ".join(notes)),
        Table(f"{test}-response", f"{title}: response time at the operating points (capture after the pre-write; "
                                  "total latency, µs)",
              (Column("point"), Column("TC/QD"), Column("IOPS", "iops"), Column("IOs", "int"),
               Column("mean (µs)", "us"), *(Column(f"p{p} (µs)", "us") for p in PERCENTILES),
               Column("max (µs)", "us")), tuple(capture_rows)),
    ]
    if histograms:
        blocks.append(histogram_table(f"{test}-histograms", title, histograms))
        blocks += [histogram_figure(f"{test}-histogram-{point}", title, POINT_NAMES.get(point, point), histogram)
                   for point, histogram in histograms.items()]
    else:
        blocks.append(Text("Response-time histograms: no operating point has been captured yet."))
    return blocks


def histogram_table(key: str, title: str, histograms: Mapping[str, Mapping[str, Any]]) -> Table:
    """IOs per total-latency bucket of each point's capture: the buckets where some point has IOs."""
    edges = list(next(iter(histograms.values()))["edges_ns"])
    labels = bucket_labels(edges, "µs")
    rows: list[tuple[Value, ...]] = []
    for index, label in enumerate(labels):
        counts = [int(h["counts"][index]) for h in histograms.values()]
        if any(counts):
            rows.append((label, *counts))
    return Table(key, f"{title}: response-time histograms (IOs per total-latency bucket)",
                 (Column("latency"), *(Column(f"{POINT_NAMES.get(p, p)} (IOs)", "int") for p in histograms)),
                 tuple(rows))


def histogram_figure(key: str, title: str, name: str, histogram: Mapping[str, Any]) -> Figure:
    """One point's histogram: IOs per bucket from the first to the last bucket with IOs, log count axis."""
    counts = [int(count) for count in histogram["counts"]]
    used = [index for index, count in enumerate(counts) if count]
    low, high = (used[0], used[-1]) if used else (0, 0)
    labels = [duration_label(edge, "µs") for edge in list(histogram["edges_ns"])[low:high + 1]]
    found = histogram.get("percentiles_ns") or {}
    stats = ", ".join(f"p{p} {found[p] / 1e3:,.2f} µs" for p in PERCENTILES if found.get(p) is not None)
    return Figure(key, f"{title}: response-time histogram, {name}", "total latency (bucket from its lower edge)",
                  "IOs",
                  (Series(name, tuple(float(i) for i in range(len(labels))), tuple(counts[low:high + 1]),
                          mode="bars"),),
                  y_log=True, x_ticks=_ticks(labels),
                  caption=f"{name}: {int(histogram.get('n') or 0):,} IOs of the capture; mean "
                          f"{float(histogram['mean_ns']) / 1e3:,.2f} µs, {stats}, maximum "
                          f"{float(histogram['max_ns']) / 1e3:,.2f} µs (fio's json+ bins).")


# --- HDD zones --------------------------------------------------------------------------------------------------


def zones_blocks(views: Views, context: PtsContext) -> list[Block]:
    """Per phase: zone rows (outer to inner) x workload columns, IOPS for random cells, MB/s for sequential ones,
    and the same as lines against the zone."""
    from ptsbench.pts.cells import cell_name

    blocks: list[Block] = []
    for view in views:
        values = view.values()
        cells = view.plan["cells"]
        sequential = all(cell["pattern"] == "seq" for cell in cells)
        metric, unit, kind, factor = ("bw_bytes", "MB/s", "mbs", 1e-6) if sequential else ("iops", "IOPS", "iops", 1.0)
        workloads = list(dict.fromkeys(cell_name(c["pattern"], c["bs_bytes"], c["read_pct"]) for c in cells))
        by_zone: dict[int, dict[str, float | None]] = {}
        for cell in cells:
            found = values.get(cell["name"], {})
            by_zone.setdefault(int(cell["zone"]), {})[cell_name(cell["pattern"], cell["bs_bytes"], cell["read_pct"])] \
                = scaled(found.get(metric), factor)
        zones = sorted(by_zone)
        rows = tuple((str(zone + 1), *(by_zone[zone].get(w) for w in workloads)) for zone in zones)
        title = f"{view.plan['title']}: {unit} per zone"
        blocks += [
            Table(slug(view.key, "zones"), f"{title} (zone 1 = the lowest LBAs, the outer tracks)",
                  (Column("zone"), *(Column(f"{w} ({unit})", kind) for w in workloads)), rows,
                  Chart(title, "zone", unit)),
            Text(f"{view.plan['title']}: {view.source()}."),
            Figure(slug(view.key, "vs-zone"), f"{title}, outer to inner", "zone (1 = outer)", unit,
                   tuple(Series(w, tuple(float(z + 1) for z in zones), tuple(by_zone[z].get(w) for z in zones))
                         for w in workloads),
                   x_ticks=tuple((float(z + 1), str(z + 1)) for z in zones) if len(zones) <= 16 else (),
                   caption=f"{unit} of every workload in every zone of the LBA range, from the outer tracks (low "
                           "LBAs) to the inner ones."),
        ]
    return blocks


ADVANCED_BLOCKS: dict[str, Callable[[Views, PtsContext], list[Block]]] = {
    "hir": hir_blocks, "xsr": xsr_blocks, "cbw": demand_blocks, "dirth": demand_blocks, "ecw": demand_blocks,
    "hdd-iops": zones_blocks, "hdd-tp": zones_blocks,
}


# --- telemetry (every PTS test) ---------------------------------------------------------------------------------


def telemetry_blocks(test: str, views: Views) -> list[Block]:
    """Per phase: device temperature, throttling, media errors and data written over its rounds, and the host CPU
    during them; a figure per round when the device or host gave numbers; 'not available' otherwise."""
    rounds = [(view, record) for view in views for record in view.rounds]
    recorded = [(view, record, record["telemetry"]) for view, record in rounds if record.get("telemetry")]
    if not recorded:
        return [Text("Telemetry (device temperature, throttling, host CPU): not available - this run's rounds "
                     "have none (made before ptsbench recorded telemetry).")] if rounds else []
    from ptsbench.pts.phases import phase_telemetry

    rows: list[tuple[Value, ...]] = []
    for view in views:
        found = phase_telemetry(view)
        if found is None:
            continue
        rows.append((view.plan["title"], found.rounds, found.min_temperature_c, found.max_temperature_c,
                     throttled_text(found, "not available"), found.media_errors,
                     None if found.written_bytes is None else found.written_bytes / 1e9, found.busy_mean_pct,
                     found.busy_max_pct, found.waf))
    blocks: list[Block] = [Table(
        slug(test, "telemetry"), "Telemetry per phase (device before / after each round; host CPU during it)",
        (Column("phase"), Column("rounds", "int"), Column("min temperature (°C)", "int"),
         Column("max temperature (°C)", "int"), Column("throttled"), Column("media errors (increase)", "int"),
         Column("device data written (GB)", "number"), Column("host CPU busy, mean (%)", "pct"),
         Column("host CPU busy, max (%)", "pct"), Column("write amplification (media / host bytes)", "ratio")),
        tuple(rows), keys=(0,), compare=(2, 3, 4, 7, 9))]
    notes = list(dict.fromkeys(str(t["after"]["note"]) for _v, _r, t in recorded if (t.get("after") or {}).get("note")))
    if notes:
        blocks.append(Text("Device telemetry: " + "; ".join(notes) + "."))
    blocks.append(Text(waf_text([t["change"].get("waf") or {} for _v, _r, t in recorded])))
    # figures first: they sit beside the test's last chart
    return [*_telemetry_figures(test, recorded), *blocks, *host_bound_blocks(test, rounds)]


def host_bound_blocks(test: str, rounds: Sequence[tuple[Any, Any]]) -> list[Block]:
    """The rounds flagged possibly host-bound (host CPU saturated, planned queue depth not reached), with the rule;
    nothing for rounds stored before ptsbench judged it."""
    from ptsbench.pts.hostbound import RULE

    judged = [(view, record, record["host_bound"]) for view, record in rounds if record.get("host_bound")]
    if not judged:
        return []
    flagged = [(view.plan["title"], int(record["round"]), verdict.get("host_cpu_busy_pct"),
                max(verdict.get("fio_cpu_pct", {}).values(), default=None), "; ".join(verdict["reasons"]))
               for view, record, verdict in judged if verdict.get("possibly")]
    if not flagged:
        return [Text(f"No round was possibly host-bound: {RULE}.")]
    return [Table(slug(test, "host-bound"), f"Rounds possibly host-bound ({len(flagged)} of {len(judged)})",
                  (Column("phase"), Column("round", "int"), Column("host CPU busy (%)", "pct"),
                   Column("fio CPU, busiest cell (usr + sys %)", "pct"), Column("why")), tuple(flagged),
                  keys=(0, 1)),
            Text(f"Possibly host-bound: {RULE}; such a round may measure the host rather than the device.")]


def _telemetry_figures(test: str, recorded: Sequence[tuple[Any, Any, Any]]) -> list[Figure]:
    """Host CPU busy and device temperature of every round, rounds numbered in run order across the test."""
    x = tuple(float(index) for index in range(1, len(recorded) + 1))
    figures = []
    busy = tuple((t.get("cpu") or {}).get("busy_pct") for _v, _r, t in recorded)
    temperature = tuple((t.get("after") or {}).get("temperature_c") for _v, _r, t in recorded)
    caption = "Rounds numbered in run order across the test's phases; pts/PHASE/rounds/NNN/round.json holds each."
    if any(value is not None for value in busy):
        figures.append(Figure(slug(test, "cpu-per-round"), "Host CPU busy per round", "round (run order)",
                              "CPU busy (%)", (Series("host CPU busy", x, busy),), data_sheet=True, y_range=(0, 100),
                              caption=f"Share of all CPUs busy during each round's fio process. {caption}"))
    if any(value is not None for value in temperature):
        throttled = tuple(float(index) for index, (_v, _r, t) in enumerate(recorded, start=1)
                          if t["change"].get("throttled"))
        series = [Series("device temperature after the round", x, temperature)]
        if throttled:
            series.append(Series("throttled", throttled, tuple(temperature[int(i) - 1] for i in throttled),
                                 mode="markers", color=1))
        figures.append(Figure(slug(test, "temperature-per-round"), "Device temperature per round",
                              "round (run order)", "temperature (°C)", tuple(series), data_sheet=True,
                              caption=f"The device's temperature after each round; rounds with thermal throttling "
                                      f"marked. {caption}"))
    figures.extend(_waf_figures(test, recorded, x, caption))
    return figures


def _waf_figures(test: str, recorded: Sequence[tuple[Any, Any, Any]], x: tuple[float, ...],
                 caption: str) -> list[Figure]:
    """Write amplification per round, against the round and against the host data written so far."""
    wafs = [t["change"].get("waf") or {} for _v, _r, t in recorded]
    ratios = tuple(w.get("ratio") for w in wafs)
    if all(ratio is None for ratio in ratios):
        return []
    written_gb, total = [], 0
    for waf in wafs:
        total += waf.get("host_written_bytes") or 0
        written_gb.append(total / 1e9)
    source = ", ".join(sorted({str(w["source"]) for w in wafs if w.get("source")}))
    return [Figure(slug(test, "waf-per-round"), "Write amplification per round", "round (run order)",
                   "media / host bytes", (Series(f"write amplification ({source})", x, ratios),), data_sheet=True,
                   caption=f"Media bytes written ({source}) over host bytes written (SMART log) in each round; a "
                           f"gap is a round under one host data unit. {caption}"),
            Figure(slug(test, "waf-over-written"), "Write amplification over host data written",
                   "host data written so far (GB)", "media / host bytes",
                   (Series(f"write amplification ({source})", tuple(written_gb), ratios),), data_sheet=True,
                   caption="Each round's write amplification at the host data written by the end of that round.")]
