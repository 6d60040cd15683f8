"""Shared figure style: a colour-blind-safe palette, the provenance caption and axis labels with units.

Small and free of drawing code, so every figure maker (report, plot) can use it without importing matplotlib.
"""

import datetime
from collections.abc import Mapping
from typing import Any

# Okabe-Ito, ordered for lines on white: blue, vermillion, bluish green, orange, reddish purple, sky blue,
# yellow, black. Distinguishable with the common colour-vision deficiencies.
PALETTE: tuple[str, ...] = (
    "#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
)
BLACK = "#000000"
GREY = "#999999"
GRID = "#dddddd"  # grid lines of static figures
CAPTION = "#444444"  # caption text under static figures
DASHES = ("solid", "dash", "dot")  # line styles by name, as Series and plot Lines give them
TITLE_PT = 11  # static figures: title, legend and caption font sizes
LEGEND_PT = 8.0
TICK_PT = 8.0  # tick labels
AXIS_PT = 9.0  # axis titles
CAPTION_PT = 8.0
LINE_WIDTH = 1.4  # static figures; the interactive ones draw slightly wider lines
LINE_WIDTH_HTML = 1.6

_NS_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_RATE_UNITS = ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s"))
_BYTE_UNITS = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B"))
_COUNT_UNITS = ((1e6, "M"), (1e3, "k"), (1.0, ""))


def color(index: int) -> str:
    """The palette colour for the series at `index` (wraps around)."""
    return PALETTE[index % len(PALETTE)]


def provenance_caption(ptsbench_version: str | None, fio_version: str | None, device: str | None,
                       when: datetime.date | str | None) -> str:
    """'ptsbench X, fio Y, <device>, <date>'; a part that is not known says so instead of being guessed."""
    fio = (fio_version or "").removeprefix("fio-") or "version unknown"
    if isinstance(when, datetime.datetime):
        date = when.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    elif isinstance(when, datetime.date):
        date = when.isoformat()
    else:
        date = when or "date unknown"
    return f"ptsbench {ptsbench_version or 'version unknown'}, fio {fio}, {device or 'device unknown'}, {date}"


def provenance(manifest: Mapping[str, Any]) -> str:
    """The provenance caption of a run directory's manifest (its ptsbench and fio versions, devices, start)."""
    targets = manifest.get("targets") or ([manifest["target"]] if manifest.get("target") else [])
    devices = ", ".join(dict.fromkeys(device_name(target) for target in targets)) or None
    if devices is None and manifest.get("job_files"):  # no --target: the jobs name their own files
        devices = "targets as in " + ", ".join(str(path).rsplit("/", 1)[-1] for path in manifest["job_files"])
    return provenance_caption(manifest.get("ptsbench_version"), manifest.get("fio_version"), devices,
                              manifest.get("created_utc"))


def device_name(target: Mapping[str, Any]) -> str:
    """A target as people name it: vendor and model when known, else its kind and path; on hosts, what fio said
    about it on each host."""
    name = " ".join(str(target[key]) for key in ("vendor", "model") if target.get(key))
    name = name or " ".join(str(target[key]) for key in ("kind", "path") if target.get(key)) or "device unknown"
    return f"{name} ({target['hosts']})" if target.get("hosts") else name


def short_device_name(target: Mapping[str, Any]) -> str:
    """A target in a few words for titles: vendor and model when known, else its file name and kind."""
    name = " ".join(str(target[key]) for key in ("vendor", "model") if target.get(key))
    if name:
        return name
    path = str(target.get("path") or "")
    return f"{path.rstrip('/').rsplit('/', 1)[-1] or path} ({target.get('kind') or 'target'})" if path else \
        "device unknown"


def axis_label(quantity: str, unit: str = "") -> str:
    """'Latency (µs)'; no brackets when the quantity has no unit."""
    return f"{quantity} ({unit})" if unit else quantity


def _scale(largest: float, units: tuple[tuple[float, str], ...]) -> tuple[float, str]:
    for divisor, unit in units:
        if abs(largest) >= divisor:
            return divisor, unit
    return units[-1]


def ns_unit(largest_ns: float) -> tuple[float, str]:
    """(divisor, unit) that shows nanosecond values up to `largest_ns` with at most three integer digits."""
    return _scale(largest_ns, _NS_UNITS)


def rate_unit(largest_bytes_per_s: float) -> tuple[float, str]:
    """(divisor, unit) for a data rate in bytes per second, decimal units (MB/s as storage vendors state it)."""
    return _scale(largest_bytes_per_s, _RATE_UNITS)


def bytes_unit(largest_bytes: float) -> tuple[float, str]:
    """(divisor, unit) for an amount of data in bytes, decimal units."""
    return _scale(largest_bytes, _BYTE_UNITS)


def count_unit(largest: float) -> tuple[float, str]:
    """(divisor, prefix) for counts such as IOPS: '', 'k' or 'M'."""
    return _scale(largest, _COUNT_UNITS)
