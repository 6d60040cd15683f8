"""Report blocks of PTS's basic tests - IOPS, throughput, latency, write saturation - and of a test without blocks
of its own (a table of every cell), built from the phases' views (pts/views.py)."""

import math
from collections.abc import Sequence
from typing import Any

from ptsbench.report.core.figure import Figure, Grid, Series
from ptsbench.report.core.model import Block, Chart, Column, Table, Text, drawn_or_said
from ptsbench.report.pts.views import PtsContext, axes_of, bs_label, cells_of, matrix_of, scaled, slug


def source_note(view: Any, how: str = "average over") -> Text:
    """Where a phase's values come from: its measurement window, or the latest round while running."""
    return Text(f"{view.plan['title']}: {view.source(how)}.")


def _matrix_table(key: str, title: str, view: Any, value_of: Any, kind: str, unit: str, chart: bool) -> Table:
    """A block size x mix table of value_of(cell values)."""
    from ptsbench.pts.cells import mix_label

    sizes, mixes = axes_of(view)
    matrix = matrix_of(view, value_of)
    columns = (Column("block size"), *(Column(f"{mix_label(mix)} ({unit})", kind) for mix in mixes))
    rows = tuple((bs_label(bs), *row) for bs, row in zip(sizes, matrix, strict=True))
    return Table(key, title, columns, rows,
                 Chart(title, "block size", unit, y_log=True) if chart else None)


def _bars(key: str, title: str, view: Any, value_of: Any, unit: str, caption: str) -> Figure:
    """3D bars of value_of(cell values) over mixes and block sizes."""
    from ptsbench.pts.cells import mix_label

    sizes, mixes = axes_of(view)
    rows = sorted(zip(sizes, matrix_of(view, value_of), strict=True), key=lambda row: row[0])  # small to large,
    #                                                                      as axes are read (the spec runs 1m first)
    bars = Grid(tuple(mix_label(m) for m in mixes), tuple(bs_label(bs) for bs, _ in rows),
                tuple(tuple(values) for _, values in rows))
    return Figure(key, title, "read/write mix", "block size", grid=bars, kind="bars3d", z_label=unit, caption=caption)


def _percentile(p: str) -> Any:
    """value_of for a total latency percentile in µs."""
    return lambda cell: scaled((cell.get("lat_percentiles_ns") or {}).get(p), 1e-3)


def _metric(metric: str, factor: float = 1.0) -> Any:
    """value_of for a stored metric, scaled by factor."""
    return lambda cell: scaled(cell.get(metric), factor)


def iops_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    """IOPS: the block size x mix table, IOPS against block size per mix, and 3D bars."""
    from ptsbench.pts.cells import mix_label

    view = views[0]
    sizes, mixes = axes_of(view)
    matrix = matrix_of(view, _metric("iops"))
    series = tuple(Series(mix_label(mix), tuple(bs / 1024 for bs in sizes), tuple(row[column] for row in matrix))
                   for column, mix in enumerate(mixes))
    return [
        _matrix_table("iops", "IOPS: block size x read/write mix (read + write IOPS)", view, _metric("iops"), "iops",
                      "IOPS", chart=True),
        source_note(view),
        Figure("iops-vs-bs", "IOPS vs block size per read/write mix", "block size (KiB)", "IOPS", series,
               x_log=True, y_log=True, x_ticks=tuple((bs / 1024, bs_label(bs)) for bs in sizes),
               caption="Average IOPS (read + write) over the measurement window, per mix."),
        _bars("iops-3d", "IOPS by block size and read/write mix", view, _metric("iops"), "IOPS",
              "Average IOPS over the measurement window."),
    ]


def tp_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    """Throughput: sequential read and write MB/s per block size (table and 2D plot), and their convergence."""
    sizes: list[int] = []
    measured: dict[str, list[float | None]] = {"read": [], "write": []}
    for view in views:
        values = view.values()
        for cell in cells_of(view)[:1]:
            sizes.append(int(cell["bs_bytes"]))
            for name, read_pct in (("read", 100), ("write", 0)):
                found = next((values.get(c["name"]) or {} for c in cells_of(view) if c["read_pct"] == read_pct), {})
                measured[name].append(scaled(found.get("bw_bytes"), 1e-6))
    rows = tuple((bs_label(bs), read, write) for bs, read, write in zip(sizes, measured["read"], measured["write"],
                                                                        strict=True))
    return [
        Table("tp", "Throughput: sequential MB/s per block size", (Column("block size"), Column("read (MB/s)", "mbs"),
              Column("write (MB/s)", "mbs")), rows, Chart("Throughput", "block size", "MB/s")),
        *(source_note(view) for view in views),
        Figure("tp-2d", "Throughput vs block size (sequential read and write)", "block size (KiB)", "MB/s",
               tuple(Series(name, tuple(bs / 1024 for bs in sizes), tuple(values))
                     for name, values in measured.items()),
               x_log=True, x_ticks=tuple((bs / 1024, bs_label(bs)) for bs in sizes), data_sheet=True,
               caption="Average sequential read and write MB/s over each block size's measurement window."),
        *(_tp_convergence(views, read_pct, name) for read_pct, name in ((100, "read"), (0, "write"))),
    ]


def _tp_convergence(views: Sequence[Any], read_pct: int, name: str) -> Figure:
    """Sequential reads or writes: MB/s of every round, a line per block size."""
    series = []
    for view in views:
        for cell in cells_of(view):
            if cell["read_pct"] != read_pct:
                continue
            rounds = tuple(int(r["round"]) for r in view.rounds)
            values = tuple(scaled(r["cells"][cell["name"]].get("bw_bytes"), 1e-6) for r in view.rounds)
            series.append(Series(bs_label(cell["bs_bytes"]), rounds, values))
    return Figure(f"tp-{name}-convergence", f"Throughput: {name} convergence (sequential {name}s)",
                  "round", "MB/s", tuple(series), caption=f"Sequential {name} MB/s of every round, per block size.")


def lat_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    """Latency: mean, maximum and five-nines tables with 3D bars, mean and maximum against block size per mix, and
    (PTS 2.0) the response-time histogram with its confidence levels."""
    view = next((view for view in views if view.plan.get("role", "") == ""), None)
    if view is None:  # the histogram capture alone
        return lat_histogram_blocks(views)
    blocks: list[Block] = []
    for key, title, value_of, how, caption in (
        ("lat-mean", "Mean total latency", _metric("lat_mean_ns", 1e-3), "average over",
         "the average of the rounds' mean total latency over the measurement window"),
        ("lat-max", "Maximum total latency", _metric("lat_max_ns", 1e-3), "maximum over",
         "the longest total latency of any IO in the measurement window"),
        ("lat-p99999", "99.999th percentile total latency (five nines)", _percentile("99.999"),
         "over all IOs of", "the percentile over all IOs of the measurement window, merged from fio's json+ bins"),
    ):
        blocks.append(_matrix_table(key, f"{title} (µs): block size x read/write mix", view, value_of, "us", "µs",
                                    chart=False))
        blocks.append(source_note(view, how))
        blocks.append(_bars(f"{key}-3d", f"{title} by block size and read/write mix", view, value_of, "µs",
                            f"{title}: {caption}."))
    blocks += [_lat_2d(view, metric, name) for metric, name in (("lat_mean_ns", "mean"), ("lat_max_ns", "maximum"))]
    return blocks + lat_histogram_blocks(views)


def _lat_2d(view: Any, metric: str, name: str) -> Figure:
    """Mean or maximum total latency against block size, one line per mix (the 2D plot of a latency table)."""
    from ptsbench.pts.cells import mix_label

    sizes, mixes = axes_of(view)
    matrix = matrix_of(view, _metric(metric, 1e-3))
    series = tuple(Series(mix_label(mix), tuple(bs / 1024 for bs in sizes), tuple(row[column] for row in matrix))
                   for column, mix in enumerate(mixes))
    return Figure(f"lat-{metric.split('_')[1]}-2d", f"{name.capitalize()} total latency vs block size per "
                  "read/write mix", "block size (KiB)", f"{name} latency (µs)", series, x_log=True,
                  x_ticks=tuple((bs / 1024, bs_label(bs)) for bs in sizes), data_sheet=True,
                  caption=f"The {name} total latency of each cell over the measurement window, per mix.")


def lat_histogram_blocks(views: Sequence[Any]) -> list[Block]:
    """PTS 2.0's response-time histogram of the latency test and the latency at each confidence level, from the
    capture's json+ bins (stored by the engine; percentiles as fio computes them from the bins)."""
    from ptsbench.pts.advanced import HISTOGRAM_PERCENTILES
    from ptsbench.report.pts.advanced import histogram_figure, histogram_table

    view = next((view for view in views if view.plan.get("role") == "histogram"), None)
    if view is None:
        return []
    cells = view.rounds[0]["cells"].values() if view.rounds else ()
    cell = next((cell for cell in cells if cell.get("role") == "histogram"), None)
    histogram = (cell or {}).get("histogram")
    if not histogram:
        return [Text(f"{view.plan['title']}: not captured yet.")]
    spec = view.plan["cells"][0]
    name = f"{spec['name']}, TC{spec['numjobs']}/QD{spec['iodepth']}"
    found = histogram.get("percentiles_ns") or {}
    levels = [(p, scaled(found.get(p), 1e-3)) for p in HISTOGRAM_PERCENTILES]
    nines = [(-math.log10(1 - float(p) / 100), value) for p, value in levels]
    return [
        Text(f"Response-time histogram: {spec['runtime_s']:g} s of {name} after steady state, "
             f"{int(histogram.get('n') or 0):,} IOs."),
        histogram_table("lat-histogram", "Latency", {name: histogram}),
        histogram_figure("lat-histogram", "Latency", name, histogram),
        Table("lat-confidence", "Latency: response time at each confidence level (% of IOs completed)",
              (Column("IOs completed (%)"), Column("total latency (µs)", "us")),
              tuple((f"{p} %", value) for p, value in levels)),
        Figure("lat-confidence-plot", "Latency: confidence levels (the latency by which each share of IOs "
               "completed)", "IOs completed (%)", "total latency (µs)",
               (Series(name, tuple(x for x, _ in nines), tuple(y for _, y in nines)),), y_log=True,
               x_ticks=tuple((x, f"{p} %") for (x, _), (p, _) in zip(nines, levels, strict=True)), data_sheet=True,
               caption=f"{name}: the total latency by which 99 %, 99.9 %, 99.99 % and 99.999 % of the capture's IOs "
                       "had completed, from fio's json+ latency bins."),
    ]


def wsat_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    """Write saturation: every round's IO time, data written, IOPS and latency."""
    view = views[0]
    rows = []
    for record in view.rounds:
        cell = next(iter(record["cells"].values()))
        totals = record.get("wsat") or {}
        written = totals.get("written_bytes")
        waf = ((record.get("telemetry") or {}).get("change") or {}).get("waf") or {}
        rows.append((str(record["round"]), scaled(totals.get("io_time_s"), 1 / 60), scaled(written, 1e-9),
                     scaled(written, 1 / context.capacity_bytes), cell.get("iops"),
                     scaled(cell.get("lat_mean_ns"), 1e-3), scaled(cell.get("lat_max_ns"), 1e-3), waf.get("ratio")))
    columns = (Column("round"), Column("IO time (min)", "number"), Column("written (GB)", "number"),
               Column("drive fills", "number"), Column("IOPS", "iops"), Column("mean latency (µs)", "us"),
               Column("max latency (µs)", "us"), Column("write amplification (media / host bytes)", "ratio"))
    table = Table("wsat", "Write saturation: every round (4 KiB random writes)", columns, tuple(rows),
                  Chart("Write saturation IOPS per round", "round", "IOPS", columns=(4,)))
    return [table, source_note(view), *_wsat_figures(rows)]


def time_unit(largest_s: float) -> tuple[float, str]:
    """(seconds per unit, unit) that write a duration axis up to `largest_s` in plain numbers: s, min or h."""
    return (1.0, "s") if largest_s < 120 else (60.0, "min") if largest_s < 7200 else (3600.0, "h")


def _wsat_figures(rows: Sequence[tuple[Any, ...]]) -> list[Block]:
    """IOPS against IO time, data written and drive fills; mean latency against IO time (in s, min or h, as fits
    the run's length)."""
    iops = tuple(row[4] for row in rows)
    per_unit_s, unit = time_unit(max((float(row[1] or 0.0) * 60 for row in rows), default=0.0))
    time_x = tuple(float(row[1] or 0.0) * 60 / per_unit_s for row in rows)
    blocks: list[Figure] = []
    for index, (name, label) in enumerate(((("time", f"IO time ({unit})"), ("gb", "total written (GB)"),
                                            ("fills", "drive fills (written / capacity)"))), start=1):
        x = time_x if name == "time" else tuple(float(row[index] or 0.0) for row in rows)
        blocks.append(Figure(f"wsat-iops-vs-{name}", f"Write saturation: IOPS vs {label.split(' (')[0]}", label,
                             "IOPS", (Series("4k random write", x, iops),), data_sheet=True,
                             caption="IOPS of each 4 KiB random-write round, from fresh-out-of-box."))
    blocks.append(Figure("wsat-lat-vs-time", "Write saturation: mean latency vs time", f"IO time ({unit})",
                         "mean latency (µs)", (Series("4k random write", time_x, tuple(r[5] for r in rows)),),
                         caption="Mean total latency of each round."))
    return drawn_or_said(blocks, "the table above holds every round's values")


def cells_blocks(views: Sequence[Any], context: PtsContext) -> list[Block]:
    """Any test: every cell's values (window averages, or the latest round while running)."""
    blocks: list[Block] = []
    for view in views:
        values = view.values()
        rows = tuple((c["name"], f"TC{c['numjobs']}/QD{c['iodepth']}", values.get(c["name"], {}).get("iops"),
                      scaled(values.get(c["name"], {}).get("bw_bytes"), 1e-6),
                      scaled(values.get(c["name"], {}).get("lat_mean_ns"), 1e-3),
                      scaled(values.get(c["name"], {}).get("lat_max_ns"), 1e-3),
                      _percentile("99.999")(values.get(c["name"], {})))
                     for c in cells_of(view))
        columns = (Column("cell"), Column("TC/QD"), Column("IOPS", "iops"), Column("MB/s", "mbs"),
                   Column("mean latency (µs)", "us"), Column("max latency (µs)", "us"), Column("p99.999 (µs)", "us"))
        blocks += [Table(slug(view.key, "cells"), f"{view.plan['title']}: every cell", columns, rows, keys=(0, 1)),
                   source_note(view)]
        above = [row[0] for row in rows if row[5] is not None and row[6] is not None and row[6] > row[5]]
        if above:
            blocks.append(Text(f"p99.999 above the max latency ({', '.join(above)}): fio reports a percentile as the "
                               "middle of its latency bin (up to 1.6 % of the value wide), which can lie above the "
                               "slowest IO in that bin."))
    return blocks


TEST_BLOCKS: dict[str, Any] = {"iops": iops_blocks, "tp": tp_blocks, "lat": lat_blocks, "wsat": wsat_blocks}
