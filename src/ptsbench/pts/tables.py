"""PTS result tables from the store alone: `pts_tables` gives the numbers (pure), `render_pts` prints them with rich.

IOPS (block size rows x mix columns), throughput (read and write MB/s per block size), latency (mean, max and
five-nines percentiles of total latency), write saturation summary, and the steady-state determination of every
tracked variable. Values are the averages over each phase's measurement window (the last 5 rounds); a phase that
has not finished shows its latest round, labelled so.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ptsbench.pts.specs import mix_label
from ptsbench.pts.store import PtsStore
from ptsbench.store import RunStore, read_json
from ptsbench.units import format_bs


@dataclass(frozen=True)
class Table:
    """One table: a title, column headers, rows of text cells, and notes under it."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


def _iops(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _mbps(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:,.2f}"


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e3:,.2f}"


@dataclass(frozen=True)
class PhaseView:
    """A phase as stored: its plan entry, finished rounds, summary (None while running), and the values shown."""

    plan: Mapping[str, Any]
    rounds: list[dict[str, Any]]
    result: dict[str, Any] | None

    @property
    def key(self) -> str:
        return str(self.plan["key"])

    def values(self) -> dict[str, Any]:
        """Per cell: the window averages when finished, else the latest round's values."""
        if self.result is not None:
            window: dict[str, Any] = self.result["window"]
            return window
        if not self.rounds:
            return {}
        cells = self.rounds[-1]["cells"]
        return {name: {**cell, "read_iops": (cell["read"] or {}).get("iops"),
                       "write_iops": (cell["write"] or {}).get("iops"),
                       "read_bw_bytes": (cell["read"] or {}).get("bw_bytes"),
                       "write_bw_bytes": (cell["write"] or {}).get("bw_bytes"),
                       "lat_percentiles_ns": (cell["total"] or {}).get("lat_percentiles_ns", {})}
                for name, cell in cells.items()}

    def source(self) -> str:
        if self.result is not None:
            window = self.result["window_rounds"]
            span = f"rounds {window[0]}-{window[-1]}" if window else "no window"
            return f"average over {span}; {self.result['stop_reason']}"
        if self.rounds:
            return f"NOT FINISHED: latest round {len(self.rounds)} shown, not a measurement window"
        return "not started"


def load_views(pts: PtsStore) -> list[PhaseView]:
    plan = read_json(pts.root / "plan.json")
    return [PhaseView(p, pts.finished_rounds(p["key"]), pts.phase_result(p["key"])) for p in plan["phases"]]


def _matrix(view: PhaseView, metric: str, fmt: Any, title: str) -> Table:
    """Block size rows (spec order) x mix columns of one metric."""
    cells = view.plan["cells"]
    sizes = list(dict.fromkeys(cell["bs_bytes"] for cell in cells))
    mixes = list(dict.fromkeys(cell["read_pct"] for cell in cells))
    values = view.values()
    by_key = {(cell["bs_bytes"], cell["read_pct"]): values.get(cell["name"], {}).get(metric) for cell in cells}
    rows = tuple((format_bs(bs), *(fmt(by_key.get((bs, mix))) for mix in mixes)) for bs in sizes)
    source = view.source().replace("average over", "maximum over") if metric == "lat_max_ns" else view.source()
    notes = [source] + [f"skipped: {name}" for name in view.plan["skipped"]]
    return Table(title, ("block size", *(mix_label(mix) for mix in mixes)), rows, tuple(notes))


def _throughput(views: Sequence[PhaseView]) -> Table:
    rows = []
    notes = []
    for view in views:
        values = view.values()
        read: dict[str, Any] = next((values.get(c["name"], {}) for c in view.plan["cells"] if c["read_pct"] == 100), {})
        write: dict[str, Any] = next((values.get(c["name"], {}) for c in view.plan["cells"] if c["read_pct"] == 0), {})
        bs = view.plan["cells"][0]["bs_bytes"]
        rows.append((format_bs(bs), _mbps(read.get("bw_bytes")), _mbps(write.get("bw_bytes"))))
        notes.append(f"{format_bs(bs)}: {view.source()}")
    return Table("Throughput (MB/s, sequential)", ("block size", "read", "write"), tuple(rows), tuple(notes))


def _percentiles(view: PhaseView) -> Table:
    values = view.values()
    rows = []
    for cell in view.plan["cells"]:
        found = values.get(cell["name"], {}).get("lat_percentiles_ns") or {}
        rows.append((cell["name"], *(_us(found.get(p)) for p in ("99", "99.99", "99.999"))))
    return Table("Latency percentiles (us, total latency, all window IOs)", ("cell", "p99", "p99.99", "p99.999"),
                 tuple(rows), (view.source(),))


def _wsat(view: PhaseView, capacity_bytes: int) -> Table:
    rounds = view.rounds
    if not rounds:
        return Table("Write saturation", ("round",), (), ("not started",))
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
    return Table("Write saturation (4 KiB random writes)",
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


def _steady(views: Sequence[PhaseView]) -> Table:
    rows = []
    for view in views:
        last = view.rounds[-1]["steady"] if view.rounds else None
        variables = (view.result or {}).get("determination") or (last or {}).get("variables") or {}
        for label, v in variables.items():
            if v is None:
                rows.append((view.plan["title"], label, "-", "-", "-", "-", "-", "needs 5 rounds"))
                continue
            metric, window = v["metric"], v["rounds"]
            rows.append((
                view.plan["title"], v["cell"], f"{window[0]}-{window[-1]}", _scaled(metric, v["average"]),
                f"{_scaled(metric, v['data_excursion'])} (max {_scaled(metric, v['allowed_data_excursion'])})",
                f"{_scaled(metric, v['slope_excursion'])} (max {_scaled(metric, v['allowed_slope_excursion'])})",
                f"{_scaled(metric, v['slope'], 3)} x round + {_scaled(metric, v['intercept'])}",
                "reached" if v["steady"] else "NOT reached",
            ))
    return Table("Steady-state determination (data excursion <= 20 %, slope excursion <= 10 % of the average)",
                 ("test", "tracked cell", "window", "average", "data excursion", "slope excursion", "fitted line",
                  "steady state"), tuple(rows))


def pts_tables(store: RunStore) -> list[Table]:
    """Every PTS table of a run directory, in test order."""
    pts = PtsStore(store)
    views = load_views(pts)
    capacity = int(store.manifest["target_info"]["size_bytes"])
    tables: list[Table] = []
    for test in dict.fromkeys(view.plan["test"] for view in views):
        mine = [view for view in views if view.plan["test"] == test]
        if test == "iops":
            tables.append(_matrix(mine[0], "iops", _iops, "IOPS (block size x read/write mix)"))
        elif test == "tp":
            tables.append(_throughput(mine))
        elif test == "lat":
            tables.append(_matrix(mine[0], "lat_mean_ns", _us, "Mean latency (us)"))
            tables.append(_matrix(mine[0], "lat_max_ns", _us, "Maximum latency (us)"))
            tables.append(_percentiles(mine[0]))
        elif test == "wsat":
            tables.append(_wsat(mine[0], capacity))
    if any(view.plan["tracked"] for view in views):
        tables.append(_steady([view for view in views if view.plan["tracked"]]))
    return tables


def compliance_lines(manifest: Mapping[str, Any]) -> list[str]:
    """The compliance banner: 'PTS-compliant' or 'NOT PTS-compliant' with every reason."""
    compliance = manifest.get("compliance") or {}
    if compliance.get("compliant"):
        return ["PTS-compliant"]
    return ["NOT PTS-compliant:", *(f"  - {reason}" for reason in compliance.get("reasons", []))]


def header_lines(manifest: Mapping[str, Any]) -> list[str]:
    settings, target, info = manifest["settings"], manifest.get("target") or {}, manifest["target_info"]
    device = " ".join(str(target[k]) for k in ("vendor", "model", "serial", "firmware") if target.get(k))
    return [
        f"PTS {settings['spec']} {settings['profile']} profile, run {manifest.get('name')} created "
        f"{manifest.get('created_utc')}, status {manifest.get('status')}",
        f"target {info['path']} ({info['kind']}, {info['size_bytes'] / 1e9:,.2f} GB{', ' + device if device else ''}), "
        f"ioengine {info['ioengine']}, active range {settings['active_range_pct']:g} %, "
        f"fio {manifest.get('fio_version')}",
    ]


def render_pts(store: RunStore, console: Any) -> None:
    """Print a PTS run's results with rich: header, compliance banner, tables, notes."""
    from rich.table import Table as RichTable

    manifest = store.manifest
    for line in header_lines(manifest):
        console.print(line, highlight=False)
    banner = compliance_lines(manifest)
    style = "bold green" if manifest.get("compliance", {}).get("compliant") else "bold yellow"
    console.print(banner[0], style=style, highlight=False)
    for line in banner[1:]:
        console.print(line, highlight=False)
    for note in manifest.get("notes", []):
        console.print(f"note: {note}", highlight=False)
    for table in pts_tables(store):
        rich_table = RichTable(title=table.title, title_justify="left")
        for index, column in enumerate(table.columns):
            rich_table.add_column(column, justify="left" if index == 0 else "right")
        for row in table.rows:
            rich_table.add_row(*row)
        console.print(rich_table)
        for note in table.notes:
            console.print(f"  {note}", highlight=False, style="dim")
