"""Charts of fio runs over queue depth and numjobs (fio-plot's bar charts), as report Figures: IOPS and latency bars
against QD (one chart per numjobs) and against numjobs (one per QD), 3D bars and heatmaps of QD x numjobs, latency
histograms and percentile bars from the json+ bins; several sources (targets, runs, hosts) side by side in one colour
each. Every plotted number is one fio reported (or, for the histogram, a count of fio's own json+ bins).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ptsbench.report.core.figure import Figure, Grid, Series
from ptsbench.report.core.fit import common_part

if TYPE_CHECKING:
    from ptsbench.fio.jsonfiles import FoundJob

CHARTS = ("qd", "numjobs", "bs", "runs", "3d", "heatmap", "histogram", "percentiles")
PERCENTILE_BARS = ("50", "90", "99", "99.9", "99.99")
# histogram bucket upper edges in ns: 1, 2, 5 of every decade from 100 ns to 500 s
BUCKET_EDGES_NS = tuple(m * 10**e for e in range(2, 12) for m in (1, 2, 5))


@dataclass(frozen=True)
class Point:
    """One direction of one fio run (job or reporting group) as fio reported it."""

    source: str  # what is compared: a target, a run, a host (one colour each)
    rw: str
    bs: str
    rwmixread: int | None
    iodepth: int
    numjobs: int
    direction: str  # read, write, trim or total
    iops: float
    bw_bytes: float
    lat_mean_ns: float | None  # None where fio measured no latency
    percentiles_ns: Mapping[str, float]
    bins: Mapping[int, int] = field(default_factory=dict)
    latency: str = "lat"  # "lat" (total) or "clat" (completion; fio's only percentiles without lat_percentiles)
    label: str = ""  # the run, cell or file it comes from
    usr_cpu: float | None = None  # fio's CPU use of the job's threads (%)
    sys_cpu: float | None = None
    steady: str = "-"  # fio's steady-state verdict (ss=), '-' when the job set none
    filename: str = ""  # what the run ran on (fio's filename option), when known
    job: str = ""  # fio's name of the job (or reporting group)

    @property
    def workload(self) -> str:
        mix = f" {self.rwmixread}/{100 - self.rwmixread}" if self.rwmixread is not None else ""
        return f"{self.rw} {self.bs}{mix}, {self.direction}"


@dataclass(frozen=True)
class ChartOptions:
    """What fio-plot users set on the command line or in a settings file."""

    charts: tuple[str, ...] = CHARTS
    percentile: str = "99"
    title: str = ""  # in front of every chart's own title
    subtitle: str = ""
    source_line: str = ""  # e.g. who measured it; added to every caption
    iops_range: tuple[float | None, float | None] = (None, None)
    lat_range_us: tuple[float | None, float | None] = (None, None)
    palette: tuple[str, ...] = ()
    data_table: bool = False
    directions: tuple[str, ...] = ()  # read, write, trim, total; empty: all
    iodepths: tuple[int, ...] = ()  # only these; empty: all
    numjobs: tuple[int, ...] = ()
    log_scale: bool = False  # value axes (IOPS, MB/s, latency) on a log scale; shares of IOs stay linear


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^0-9a-zA-Z]+", "-", text).strip("-").lower()


def _latency_name(points: Sequence[Point]) -> str:
    return "completion latency (clat)" if all(p.latency == "clat" for p in points) else "total latency"


def filtered(points: Iterable[Point], options: ChartOptions) -> list[Point]:
    return [p for p in points if (not options.directions or p.direction in options.directions)
            and (not options.iodepths or p.iodepth in options.iodepths)
            and (not options.numjobs or p.numjobs in options.numjobs)]


def groups(points: Sequence[Point]) -> dict[str, list[Point]]:
    """Points of one workload (rw, block size, mix, direction), in the order they come."""
    found: dict[str, list[Point]] = {}
    for point in points:
        found.setdefault(point.workload, []).append(point)
    return found


@dataclass(frozen=True)
class ValueAxis:
    """A chart's value axis: its title, its ends (None: from the values) and whether it is logarithmic (also when the
    options ask for log scales, unless it shows shares)."""

    label: str
    range: tuple[float | None, float | None] = (None, None)
    log: bool = False


class _Builder:
    def __init__(self, points: Sequence[Point], options: ChartOptions, key: str, caption: str) -> None:
        self.options = options
        self.key = key
        self.caption = caption
        self.sources = list(dict.fromkeys(point.source for point in points))
        self.pct = options.percentile

    def figure(self, key: str, title: str, x_label: str, y: ValueAxis, series: Sequence[Series],
               ticks: Sequence[str], caption: str = "", y2: ValueAxis | None = None) -> Figure:
        """A bar chart over the categories `ticks`, with a second value axis on the right for series marked y2."""
        prefix = f"{self.options.title}: " if self.options.title else ""
        text = " ".join(part for part in (caption or self.caption, self.options.source_line) if part)
        y_log = y.log or self.options.log_scale and not y.label.startswith("share")
        right = y2 or ValueAxis("")
        return Figure(f"{self.key}-{key}", prefix + title, x_label, y.label, tuple(series), y_log=y_log,
                      x_ticks=tuple((float(i), label) for i, label in enumerate(ticks)), caption=text,
                      subtitle=self.options.subtitle, y_range=y.range, data_table=self.options.data_table,
                      palette=self.options.palette, data_sheet=True, y2_label=right.label,
                      y2_log=self.options.log_scale and y2 is not None, y2_range=right.range)

    def bars(self, points: Sequence[Point], axis: str, values: Sequence[int | str], name: str, value: str
             ) -> list[Series]:
        """A bar series per source (or per statistic for one source) over the axis values."""
        series = []
        stats = [("mean", "mean"), (f"p{self.pct}", self.pct)] if value == "lat" and len(self.sources) == 1 else [
            (name, value)]
        for source_index, source in enumerate(self.sources):
            for stat_index, (stat_name, stat) in enumerate(stats):
                x, y = [], []
                for position, wanted in enumerate(values):
                    point = next((p for p in points if p.source == source and getattr(p, axis) == wanted), None)
                    number = None if point is None else _value(point, stat)
                    if number is not None:
                        x.append(position)
                        y.append(number)
                if x:
                    label = stat_name if len(self.sources) == 1 else source
                    series.append(Series(label, tuple(x), tuple(y), mode="bars",
                                         color=stat_index if len(self.sources) == 1 else source_index))
        return series

    def against(self, workload: str, points: Sequence[Point], axis: str, fixed_axis: str) -> list[Figure]:
        """IOPS and latency bars against `axis` (iodepth or numjobs), one chart set per value of the other."""
        figures = []
        axis_name = {"iodepth": "queue depth", "numjobs": "numjobs"}
        for fixed in sorted({getattr(p, fixed_axis) for p in points}):
            chosen = [p for p in points if getattr(p, fixed_axis) == fixed]
            values = sorted({getattr(p, axis) for p in chosen})
            ticks = [str(v) for v in values]
            where = f"{axis_name[fixed_axis]} {fixed}"
            key = f"{_slug(workload)}-" + (f"by-qd-nj{fixed}" if axis == "iodepth" else f"by-nj-qd{fixed}")
            title = f"{workload}, {where}"
            figures.append(self.figure(f"{key}-iops", f"{title}: IOPS", axis_name[axis],
                                       ValueAxis("IOPS", self.options.iops_range),
                                       self.bars(chosen, axis, values, "IOPS", "iops"), ticks))
            latency = _latency_name(chosen)
            if axis == "iodepth":
                figures.append(self.iops_and_latency(f"{key}-iops-latency", title, chosen, values, latency))
            stats = [("mean", "mean"), (f"p{self.pct}", self.pct)]
            if len(self.sources) == 1:
                figures.append(self.figure(f"{key}-lat", f"{title}: {latency}", axis_name[axis],
                                           ValueAxis("latency (µs)", self.options.lat_range_us),
                                           self.bars(chosen, axis, values, "", "lat"), ticks))
            else:
                figures += [self.figure(f"{key}-lat-{_slug(name)}", f"{title}: {name} {latency}", axis_name[axis],
                                        ValueAxis(f"{name} latency (µs)", self.options.lat_range_us),
                                        self.bars(chosen, axis, values, name, stat), ticks) for name, stat in stats]
        return figures

    def iops_and_latency(self, key: str, title: str, points: Sequence[Point], depths: Sequence[int], latency: str
                         ) -> Figure:
        """fio-plot's chart of a queue depth sweep: IOPS as bars (left axis), the mean and percentile latency as
        lines over them (right axis); a line has a gap where fio measured no latency at a depth."""
        one = len(self.sources) == 1
        series = [bars if one else replace(bars, name=f"{bars.name}: IOPS")  # a source's name alone on more bars
                  for bars in self.bars(points, "iodepth", depths, "IOPS", "iops")]
        for source_index, source in enumerate(self.sources):
            for stat_index, (name, stat) in enumerate((("mean", "mean"), (f"p{self.pct}", self.pct))):
                found = {p.iodepth: _value(p, stat) for p in points if p.source == source}
                y = tuple(found.get(depth) for depth in depths)
                if any(value is not None for value in y):
                    series.append(Series(f"{name} {latency}" if one else f"{source}: {name} {latency}",
                                         tuple(range(len(depths))), y, mode="lines+markers",
                                         dash="solid" if stat_index == 0 else "dash", y2=True,
                                         color=1 + stat_index if one else source_index))
        caption = (f"Bars: IOPS (left axis); lines: mean and p{self.pct} latency (right axis); no point where fio "
                   "measured none.")
        latency_range = (self.options.lat_range_us if self.options.lat_range_us != (None, None)
                         or self.options.log_scale else (0, None))
        return self.figure(key, f"{title}: IOPS and {latency}", "queue depth",
                           ValueAxis("IOPS", self.options.iops_range), series, [str(depth) for depth in depths],
                           caption=" ".join(part for part in (caption, self.caption) if part),
                           y2=ValueAxis(f"{latency} (µs)", latency_range))

    def by_block_size(self, points: Sequence[Point]) -> list[Figure]:
        """MB/s bars against block size, per workload (without its block size), queue depth and numjobs, where
        more than one block size ran."""
        figures = []
        found: dict[tuple[str, int | None, str], list[Point]] = {}
        for point in points:
            found.setdefault((point.rw, point.rwmixread, point.direction), []).append(point)
        for (rw, mix, direction), chosen in found.items():
            sizes = sorted({p.bs for p in chosen}, key=size_order)
            if len(sizes) < 2:
                continue
            for iodepth, numjobs in sorted({(p.iodepth, p.numjobs) for p in chosen}):
                same = [p for p in chosen if (p.iodepth, p.numjobs) == (iodepth, numjobs)]
                workload = f"{rw}" + (f" {mix}/{100 - mix}" if mix is not None else "") + f", {direction}"
                title = f"{workload}, queue depth {iodepth}, numjobs {numjobs}: MB/s"
                key = f"{_slug(workload)}-by-bs-qd{iodepth}-nj{numjobs}-mbs"
                figures.append(self.figure(key, title, "block size", ValueAxis("MB/s"),
                                           self.bars(same, "bs", sizes, "MB/s", "mbs"), sizes))
        return figures

    def by_run(self, points: Sequence[Point]) -> list[Figure]:
        """When neither QD nor numjobs varies: IOPS and latency bars with a bar group per run (what differs between
        the runs, such as the block size or the mix, names it)."""
        names = list(dict.fromkeys(f"{p.label} {p.workload}".strip() for p in points))
        shared, prefix, suffix = common_part(names)  # said once on the axis: the labels tell the runs apart
        shown = [name[prefix:len(name) - suffix] for name in names]
        figures = []
        for stat, title, y_label, y_range in (("iops", "IOPS", "IOPS", self.options.iops_range),
                                              ("mean", "mean latency", "latency (µs)", self.options.lat_range_us),
                                              (self.pct, f"p{self.pct} latency", "latency (µs)",
                                               self.options.lat_range_us)):
            series = []
            for index, source in enumerate(self.sources):
                found = [(names.index(f"{p.label} {p.workload}".strip()), _value(p, stat)) for p in points
                         if p.source == source]
                found = [(x, y) for x, y in found if y is not None]
                if found:
                    series.append(Series(source, tuple(x for x, _ in found), tuple(y for _, y in found),
                                         mode="bars", color=index))
            slots = [x for one in series for x in one.x]
            if len(series) > 1 and len(slots) == len(set(slots)):  # no run in two sources: one bar per slot, whole
                ordered = sorted(zip(slots, (y for one in series for y in one.y), strict=True))
                series = [Series(y_label, tuple(x for x, _ in ordered), tuple(y for _, y in ordered), mode="bars",
                                 color=0)]
            elif len(series) == 1:
                series = [replace(series[0], name=y_label)]
            if series:
                figures.append(self.figure(f"runs-{_slug(stat)}", f"{title} per run",
                                           f"run ({shared})" if shared else "run", ValueAxis(y_label, y_range),
                                           series, shown))
        return figures

    def grids(self, workload: str, points: Sequence[Point]) -> list[Figure]:
        """Per source: 3D bars of IOPS over QD x numjobs, and heatmaps of IOPS and the chosen percentile."""
        figures = []
        depths = sorted({p.iodepth for p in points})
        jobs = sorted({p.numjobs for p in points})
        if len(depths) < 2 or len(jobs) < 2:
            return []
        for source in self.sources:
            mine = {(p.iodepth, p.numjobs): p for p in points if p.source == source}
            name = f"{workload}" + (f", {source}" if len(self.sources) > 1 else "")
            slug = f"{_slug(workload)}-{_slug(source)}" if len(self.sources) > 1 else _slug(workload)
            kinds = [("iops", "IOPS", "iops")]
            if "heatmap" in self.options.charts:
                kinds.append((f"p{self.pct}", f"p{self.pct} {_latency_name(points)} (µs)", self.pct))
            for kind, z_label, stat in kinds:
                z = tuple(tuple(_value(mine[(d, j)], stat) if (d, j) in mine else None for d in depths)
                          for j in jobs)
                grid = Grid(tuple(map(str, depths)), tuple(map(str, jobs)), z)
                if kind == "iops" and "3d" in self.options.charts:
                    figures.append(Figure(f"{self.key}-{slug}-3d", f"{name}: IOPS over queue depth x numjobs",
                                          "queue depth", "numjobs", grid=grid, kind="bars3d", z_label=z_label,
                                          caption=self.caption, subtitle=self.options.subtitle))
                if "heatmap" in self.options.charts:
                    figures.append(Figure(f"{self.key}-{slug}-heat-{kind}", f"{name}: {z_label}", "queue depth",
                                          "numjobs", grid=grid, z_label=z_label, caption=self.caption,
                                          kind="heatmap", subtitle=self.options.subtitle))
        return figures

    def distributions(self, workload: str, points: Sequence[Point]) -> list[Figure]:
        """Per source and numjobs: the latency histogram and percentile bars, a bar series per queue depth."""
        figures = []
        for source in self.sources:
            for numjobs in sorted({p.numjobs for p in points}):
                chosen = sorted((p for p in points if p.source == source and p.numjobs == numjobs),
                                key=lambda p: p.iodepth)
                name = f"{workload}" + (f", {source}" if len(self.sources) > 1 else "") + f", numjobs {numjobs}"
                slug = (f"{_slug(workload)}-{_slug(source)}" if len(self.sources) > 1 else _slug(workload)) + \
                    f"-nj{numjobs}"
                if "histogram" in self.options.charts:
                    figures += self.histogram(slug, name, chosen)
                if "percentiles" in self.options.charts:
                    figures += self.percentile_bars(slug, name, chosen)
        return figures

    def histogram(self, slug: str, name: str, points: Sequence[Point]) -> list[Figure]:
        shares = [(p, bucket_shares(p.bins)) for p in points if p.bins]
        used = sorted({edge for _, share in shares for edge, value in share.items() if value})
        if not used:
            return []
        edges = [edge for edge in BUCKET_EDGES_NS if used[0] <= edge <= used[-1]]
        series = [Series(f"QD {p.iodepth}", tuple(range(len(edges))), tuple(share.get(edge, 0.0) for edge in edges),
                         mode="bars", color=index) for index, (p, share) in enumerate(shares)]
        ticks = [_ns_label(edge) for edge in edges]
        caption = (f"Share of IOs per {_latency_name(points)} range, counted from fio's json+ latency bins (each "
                   "bin at its value; fio's bins are at most 1/64 of their value wide).")
        return [self.figure(f"{slug}-hist", f"{name}: latency histogram", "latency up to",
                            ValueAxis("share of IOs (%)"), series, ticks, caption=caption)]

    def percentile_bars(self, slug: str, name: str, points: Sequence[Point]) -> list[Figure]:
        wanted = [pct for pct in PERCENTILE_BARS if any(pct in p.percentiles_ns for p in points)]
        series = []
        for index, point in enumerate(points):
            x = [i for i, pct in enumerate(wanted) if pct in point.percentiles_ns]
            if x:
                series.append(Series(f"QD {point.iodepth}", tuple(x),
                                     tuple(point.percentiles_ns[wanted[i]] / 1000 for i in x), mode="bars",
                                     color=index))
        if not series:
            return []
        return [self.figure(f"{slug}-pct", f"{name}: {_latency_name(points)} percentiles", "percentile",
                            ValueAxis("latency (µs)", log=True), series, [f"p{pct}" for pct in wanted])]


def size_order(bs: str) -> tuple[int, str]:
    """Block sizes in size order (bssplit and ranges, which have no one size, after them by name)."""
    from ptsbench.errors import PtsbenchError
    from ptsbench.units import parse_size_bytes

    try:
        return parse_size_bytes(bs), bs
    except PtsbenchError:
        return 1 << 62, bs


def _value(point: Point, stat: str) -> float | None:
    if stat == "iops":
        return point.iops
    if stat == "mbs":
        return point.bw_bytes / 1e6
    if stat == "mean":
        return point.lat_mean_ns / 1000 if point.lat_mean_ns else None
    value = point.percentiles_ns.get(stat)
    return None if value is None else value / 1000


def _ns_label(value_ns: int) -> str:
    for divisor, unit in ((10**9, "s"), (10**6, "ms"), (10**3, "µs")):
        if value_ns >= divisor:
            return f"{value_ns / divisor:g} {unit}"
    return f"{value_ns} ns"


def bucket_shares(bins: Mapping[int, int]) -> dict[int, float]:
    """Percent of IOs per histogram bucket (upper edge in ns), from fio's json+ bins."""
    total = sum(bins.values())
    shares: dict[int, float] = {}
    for value_ns, count in bins.items():
        edge = next((edge for edge in BUCKET_EDGES_NS if value_ns <= edge), BUCKET_EDGES_NS[-1])
        shares[edge] = shares.get(edge, 0.0) + 100.0 * count / total
    return shares


def distinct(points: Sequence[Point]) -> list[Point]:
    """Points with sources that tell apart runs of the same workload, queue depth and numjobs (files of two devices
    in one folder, say): such a source gets the run's name added, so no run hides another in a chart."""
    from collections import Counter
    from dataclasses import replace

    for part in ("filename", "label"):  # what the run ran on first; its file name when that is not enough
        counts = Counter((p.source, p.workload, p.iodepth, p.numjobs) for p in points)
        points = [replace(p, source=f"{p.source} {getattr(p, part)}".strip())
                  if counts[(p.source, p.workload, p.iodepth, p.numjobs)] > 1 else p for p in points]
    return list(points)


def first_runs(points: Iterable[Point]) -> list[Point]:
    """The first point of each source, workload, queue depth and numjobs: what a chart shows of runs that nothing
    tells apart (one job repeated in one file). Each would be a bar at the same place and a legend entry of the same
    name; a file of 2,000 such jobs took seconds per chart to draw."""
    found: dict[tuple[str, str, int, int], Point] = {}
    for point in points:
        found.setdefault((point.source, point.workload, point.iodepth, point.numjobs), point)
    return list(found.values())


def sweep_figures(points: Sequence[Point], options: ChartOptions, key: str, caption: str) -> list[Figure]:
    """Every chart of the points, workload by workload (of runs nothing tells apart, the first)."""
    points = first_runs(filtered(points, options))
    builder = _Builder(points, options, key, caption)
    figures: list[Figure] = []
    found = groups(points)
    if "runs" in options.charts and all(len({p.iodepth for p in chosen}) == 1 and len({p.numjobs for p in chosen})
                                        == 1 for chosen in found.values()):
        figures += builder.by_run(points)
    if "bs" in options.charts:
        figures += builder.by_block_size(points)
    for workload, chosen in found.items():
        if "qd" in options.charts and len({p.iodepth for p in chosen}) > 1:
            figures += builder.against(workload, chosen, "iodepth", "numjobs")
        if "numjobs" in options.charts and len({p.numjobs for p in chosen}) > 1:
            figures += builder.against(workload, chosen, "numjobs", "iodepth")
        if "3d" in options.charts or "heatmap" in options.charts:
            figures += builder.grids(workload, chosen)
        figures += builder.distributions(workload, chosen)
    return figures


def job_points(found: "FoundJob", source: str, label: str) -> list[Point]:
    """A Point per direction of one job of a fio output file."""
    from ptsbench.report.cases.tables import verdict_text

    result = found.result
    ss = result.steady_state
    steady = verdict_text(ss.attained, ss.criterion, ss.value) if ss else "-"
    return [Point(source=source, rw=result.rw, bs=result.bs, rwmixread=found.rwmixread, iodepth=result.iodepth,
                  numjobs=result.numjobs, direction=d.direction, iops=d.iops, bw_bytes=d.bw_bytes,
                  lat_mean_ns=d.lat.mean_ns, percentiles_ns=d.lat.percentiles_ns, bins=d.lat.bins,
                  latency=found.latency, label=label, usr_cpu=result.usr_cpu, sys_cpu=result.sys_cpu,
                  steady=steady, filename=found.filename, job=result.name)
            for d in result.directions]
