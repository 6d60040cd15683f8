"""The steady-state part of every PTS test's section: convergence plots, measurement-window plots and the
determination table; for a run on hosts, each host's own values and steady state next to the all-hosts ones."""

from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.report.core.figure import Figure, Series, measurement_window_figure
from ptsbench.report.core.model import Block, Column, Table, Text, Value
from ptsbench.report.pts.drops import window_drop_text
from ptsbench.report.pts.views import (
    METRIC_NAMES,
    PtsContext,
    cells_of,
    determination_of,
    metric_axis,
    metric_unit,
    mix_of,
    phase_metric,
    scaled,
    slug,
    tracked_metric,
)

DETERMINATION_COLUMNS = (
    Column("phase"), Column("tracked variable"), Column("window rounds"), Column("average", "number"),
    Column("data excursion", "number"), Column("allowed data excursion (20 %)", "number"),
    Column("slope excursion", "number"), Column("allowed slope excursion (10 %)", "number"),
    Column("slope per round", "number"), Column("intercept", "number"),  # the least-squares line: y = slope x +
    Column("steady state"), Column("drops"),  # intercept, written out in its figure; rounds of the window that held
)  #                                            a drop (docs/drops.md)
HOST_STEADY_COLUMNS = (Column("phase"), Column("tracked variable"), Column("host"), Column("window rounds"),
                       Column("average", "number"), Column("unit"), Column("steady state"))
NOT_YET = "not yet: fewer than 5 rounds"


def _round_ticks(view: Any) -> tuple[tuple[int, str], ...]:
    return tuple((int(r["round"]), str(r["round"])) for r in view.rounds)


def _convergence(view: Any, tracked: Mapping[str, Any]) -> Figure:
    """Every cell sharing the tracked cell's mix and pattern, per round (the block sizes converging)."""
    cell = next(c for c in cells_of(view) if c["name"] == tracked["cell"])
    metric = tracked["metric"]
    factor = metric_unit(metric)[1]
    series = []
    for other in cells_of(view):
        if other["read_pct"] != cell["read_pct"] or other["pattern"] != cell["pattern"]:
            continue
        rounds = tuple(int(r["round"]) for r in view.rounds)
        values = tuple(scaled(r["cells"].get(other["name"], {}).get(metric), factor) for r in view.rounds)
        series.append(Series(other["name"], rounds, values, dash="solid" if other is cell else "dash"))
    title = f"{view.plan['title']}: convergence of {METRIC_NAMES.get(metric, metric)}, {cell['pattern']} " \
            f"{mix_of(cell)} (all block sizes)"
    return Figure(slug(view.key, "convergence", tracked["cell"]), title, "round", metric_axis(metric), tuple(series),
                  y_log=metric != "lat_mean_ns" and len(series) > 1, data_sheet=True, x_ticks=_round_ticks(view),
                  caption=f"Each round's value of every block size at mix {mix_of(cell)}; the tracked variable "
                          f"({tracked['cell']}) is the solid line.")


def _determination_rows(view: Any, drops: Mapping[str, list[int]] | None
                        ) -> tuple[list[tuple[Value, ...]], list[Figure]]:
    """A phase's determination table rows (with the window rounds that held a drop in the tracked cell: `drops`,
    cell -> rounds, None without per-second data), and a measurement-window figure per determined tracked
    variable."""
    cells = {f"{tracked['cell']} {tracked['metric']}": tracked["cell"] for tracked in view.plan["tracked"]}
    rows: list[tuple[Value, ...]] = []
    figures = []
    for label, v in determination_of(view).items():
        factor = metric_unit(tracked_metric(view, label, v))[1]
        if v is None:
            rows.append((view.plan["title"], label, "-", *([None] * 7), NOT_YET, "-"))
            continue
        fitted = f"y = {v['slope'] * factor:.6g} x + {v['intercept'] * factor:.6g}"
        rows.append((view.plan["title"], label, _window(v), v["average"] * factor, v["data_excursion"] * factor,
                     v["allowed_data_excursion"] * factor, v["slope_excursion"] * factor,
                     v["allowed_slope_excursion"] * factor, v["slope"] * factor, v["intercept"] * factor,
                     _reached(v), window_drop_text(drops, cells.get(label, label), v["rounds"])))
        figures.append(_window_figure(view, label, v, fitted))
    return rows, figures


def _window(determined: Mapping[str, Any]) -> str:
    return f"{determined['rounds'][0]}-{determined['rounds'][-1]}"


def _reached(determined: Mapping[str, Any]) -> str:
    return "reached" if determined["steady"] else "NOT reached"


def _window_figure(view: Any, label: str, v: Mapping[str, Any], fitted: str) -> Figure:
    """A tracked variable over its measurement window, with its average, band and least-squares line."""
    metric = tracked_metric(view, label, v)
    factor = metric_unit(metric)[1]
    return measurement_window_figure(
        slug(view.key, "window", label), f"{view.plan['title']}: measurement window, {label}",
        metric_axis(metric), v["rounds"], [value * factor for value in v["values"]], v["average"] * factor,
        v["slope"] * factor, v["intercept"] * factor,
        f"Tracked variable {label} in rounds {_window(v)} with its average, the 110 % / 90 % band around it and "
        f"the least-squares line ({fitted}); steady state {_reached(v)}.")


def steady_blocks(test: str, views: Sequence[Any], drops: Mapping[str, Mapping[str, list[int]]] | None = None
                  ) -> list[Block]:
    """Convergence plots, measurement-window plots and the steady-state determination of a test's phases (`drops`:
    phase key -> cell -> rounds that held a drop; None without per-second data)."""
    blocks: list[Block] = []
    rows: list[tuple[Value, ...]] = []
    windows: list[Figure] = []
    for view in views:
        if not view.plan["tracked"] or not view.rounds:
            continue
        seen_mixes = set()
        for tracked in view.plan["tracked"]:
            cell = next(c for c in cells_of(view) if c["name"] == tracked["cell"])
            if (cell["read_pct"], cell["pattern"]) not in seen_mixes:
                seen_mixes.add((cell["read_pct"], cell["pattern"]))
                blocks.append(_convergence(view, tracked))
        found, figures = _determination_rows(view, None if drops is None else drops.get(view.key, {}))
        rows += found
        windows += figures
    blocks += windows
    if rows:
        blocks.append(Table(slug(test, "steady-state"), "Steady-state determination (values in the tracked "
                            "variable's unit: IOPS, MB/s or µs)", DETERMINATION_COLUMNS, tuple(rows), keys=(0, 1),
                            compare=(2, 3, 4, 6, 11)))
    return blocks


def host_blocks(test: str, views: Sequence[Any], context: PtsContext) -> list[Block]:
    """A run on hosts: each host's own numbers next to the all-hosts ones - every cell's value of the phase's
    tracked metric per host, each host's steady state per tracked variable, and each tracked variable round by round
    with one line per host."""
    if not context.hosts:
        return []
    hosts = list(context.hosts)
    started = [view for view in views if view.rounds]
    blocks: list[Block] = [Text(f"Per host ({', '.join(hosts)}): the tables and figures above are all hosts "
                                "together (all hosts' IOs over the longest runtime, latency merged from every "
                                "host's fio bins); below, each host's own numbers.")]
    blocks += [_host_values(test, metric, [view for view in started if phase_metric(view) == metric], context)
               for metric in dict.fromkeys(phase_metric(view) for view in started)]
    rows: list[tuple[Value, ...]] = []
    figures: list[Block] = []
    for view in started:
        for tracked in view.plan["tracked"]:
            rows += _host_steady_rows(view, tracked, context)
            figures.append(_host_convergence(view, tracked, context))
    if rows:
        blocks.append(Table(slug(test, "hosts-steady"), "Per host: steady state of every tracked variable (each host "
                            "judged on its own rounds)", HOST_STEADY_COLUMNS, tuple(rows),
                            keys=(0, 1, 2), compare=(3, 4, 6)))
    return blocks + figures


def _host_values(test: str, metric: str, views: Sequence[Any], context: PtsContext) -> Table:
    """Every cell's value of one metric per host and for all hosts, for the phases judged on that metric."""
    hosts = list(context.hosts)
    unit, factor, kind = metric_unit(metric)
    rows = []
    for view in views:
        per_host = [context.hosts[host][view.key].values() for host in hosts]
        for cell in cells_of(view):
            found = [values.get(cell["name"]) or {} for values in (*per_host, view.values())]
            if any(found):
                rows.append((view.plan["title"], cell["name"], *(scaled(one.get(metric), factor) for one in found)))
    columns = (Column("phase"), Column("cell"), *(Column(f"{host} ({unit})", kind) for host in hosts),
               Column(f"all hosts ({unit})", kind))
    return Table(slug(test, "hosts", metric), f"Per host: {METRIC_NAMES.get(metric, metric)} of every "
                 f"cell ({unit}; window averages, or the latest round while running)", columns, tuple(rows),
                 keys=(0, 1))


def _host_steady_rows(view: Any, tracked: Mapping[str, Any], context: PtsContext) -> list[tuple[Value, ...]]:
    """One tracked variable's steady state as each host judged it on its own rounds."""
    label = f"{tracked['cell']} {tracked['metric']}"
    unit, factor, _ = metric_unit(tracked["metric"])
    rows: list[tuple[Value, ...]] = []
    for host in context.hosts:
        v = determination_of(context.hosts[host][view.key]).get(label)
        rows.append((view.plan["title"], label, host, _window(v) if v else "-",
                     v["average"] * factor if v else None, unit, _reached(v) if v else NOT_YET))
    return rows


def _host_convergence(view: Any, tracked: Mapping[str, Any], context: PtsContext) -> Figure:
    """A tracked variable round by round, one line per host."""
    metric = tracked["metric"]
    factor = metric_unit(metric)[1]
    series = []
    for host, views in context.hosts.items():
        rounds = views[view.key].rounds
        series.append(Series(host, tuple(int(r["round"]) for r in rounds),
                             tuple(scaled(r["cells"].get(tracked["cell"], {}).get(metric), factor) for r in rounds)))
    return Figure(slug(view.key, "hosts", tracked["cell"], metric),
                  f"{view.plan['title']}: {METRIC_NAMES.get(metric, metric)} of {tracked['cell']} per host", "round",
                  metric_axis(metric), tuple(series), data_sheet=True, x_ticks=_round_ticks(view),
                  caption=f"The tracked variable ({tracked['cell']}) in every round as each host measured it.")
