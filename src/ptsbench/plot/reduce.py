"""Reduce millions of points to what a chart can show without losing a spike: min and max per pixel column,
and averages over a time window computed from every point."""

from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]


def column_edges(x_first: float, x_last: float, columns: int) -> Array:
    """Edges of `columns` equal pixel columns spanning [x_first, x_last]."""
    if x_last <= x_first:
        x_last = x_first + 1.0
    return np.linspace(x_first, x_last, columns + 1)


def minmax_per_column(x: Array, y: Array, columns: int = 1600) -> tuple[Array, Array, Array] | None:
    """For points sorted by x: (middle, min, max) of each pixel column holding points, so a band from min to max
    shows every spike; None when there are no more points than columns (draw them as they are)."""
    if len(x) <= columns:
        return None
    edges = column_edges(float(x[0]), float(x[-1]), columns)
    bounds = edges[:-1]
    if x.dtype.kind in "iu":  # integers (ms): as many lie below an edge as below its ceiling; no float copy of x
        bounds = np.ceil(bounds).astype(x.dtype)
    starts = np.searchsorted(x, bounds, side="left")
    used = np.flatnonzero(np.diff(np.append(starts, len(x))) > 0)  # columns holding at least one point
    starts = starts[used]
    low = np.minimum.reduceat(y, starts).astype(np.float64)
    high = np.maximum.reduceat(y, starts).astype(np.float64)
    return (edges[used] + edges[used + 1]) / 2.0, low, high


def window_mean(x: Array, y: Array, at: Array, width: float) -> Array:
    """Mean of all y whose x lies within width/2 of each position in `at` (x sorted); NaN where there is none."""
    cumulative = np.concatenate(([0.0], np.cumsum(y, dtype=np.float64)))
    low = np.searchsorted(x, at - width / 2.0, side="left")
    high = np.searchsorted(x, at + width / 2.0, side="right")
    count = high - low
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, (cumulative[high] - cumulative[low]) / count, np.nan)


def linear_trend(x: Array, y: Array) -> tuple[float, float]:
    """Least-squares line y = slope * x + intercept over every point, computed from sums (no big matrices)."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    x_mean, y_mean = float(x.mean()), float(y.mean())
    dx = x - x_mean
    spread = float(np.dot(dx, dx))
    slope = float(np.dot(dx, y - y_mean)) / spread if spread > 0 else 0.0
    return slope, y_mean - slope * x_mean
