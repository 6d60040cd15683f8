"""Exact statistics of millions of integer values (per-IO latencies in ns) by counting them instead of sorting them:
one bincount in chunks, then min, max, mean, standard deviation and percentiles from the distinct values and their
counts. Percentiles are numpy's default (linear interpolation between the two nearest ranks), computed as numpy does,
so they equal numpy.percentile of the values."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

COUNTED_BINS = 1 << 21  # at most this many bins (16 MiB of counts); values beyond are sorted
_CHUNK = 1 << 20  # bincount makes an intp copy of its input: count a chunk at a time
_SAMPLE = 65_536  # values looked at to size the bins


@dataclass(frozen=True)
class CountedStats:
    count: int
    min: float
    mean: float
    max: float
    stddev: float  # population standard deviation, as numpy.std
    percentiles: tuple[float, ...]


def value_counts(values: Array) -> tuple[Array, Array]:
    """The distinct values of an unsigned integer array, ascending, and how often each occurs. Values up to a bound
    that holds nearly all of them (from a sample: 2 x its 99.99th percentile, at most COUNTED_BINS from the
    smallest) are counted in bins; the few beyond it (a latency tail) are sorted."""
    if values.dtype.kind != "u" or not len(values):
        raise ValueError("value_counts needs a non-empty array of unsigned integers")
    low, high = int(values.min()), int(values.max())
    sample = values[:: max(1, len(values) // _SAMPLE)]
    wanted = 2 * int(np.percentile(sample, 99.99)) - low + 1
    bins = min(high - low + 1, COUNTED_BINS, max(wanted, 1024))
    base = 0 if low < bins else low  # small values are counted from 0: no shifted copy
    bins += low - base
    counts = np.zeros(bins + 1, np.int64)  # the last bin counts the values beyond the others
    offsets = np.empty(min(_CHUNK, len(values)), np.intp)  # bincount's own type: it copies nothing
    beyond: list[Array] = []
    for start in range(0, len(values), _CHUNK):
        chunk = values[start:start + _CHUNK]
        offset = offsets[:len(chunk)]
        if base:
            np.subtract(chunk, chunk.dtype.type(base), out=offset, casting="unsafe")
            np.minimum(offset, bins, out=offset)
        elif high >= bins:  # then bins fits the values' type
            np.minimum(chunk, chunk.dtype.type(bins), out=offset, casting="unsafe")
        else:
            offset[...] = chunk
        counted = np.bincount(offset, minlength=bins + 1)
        counts += counted
        if counted[bins]:
            beyond.append(np.compress(offset == bins, chunk))
    present = np.flatnonzero(counts[:bins])
    distinct, counted = present.astype(np.uint64) + np.uint64(base), counts[present]
    if beyond:
        tail, tail_counts = np.unique(np.concatenate(beyond), return_counts=True)
        distinct = np.concatenate((distinct, tail.astype(np.uint64)))
        counted = np.concatenate((counted, tail_counts))
    return distinct, counted


def merged_counts(parts: Sequence[tuple[Array, Array]]) -> tuple[Array, Array]:
    """value_counts of several arrays joined, from each one's value_counts (a total from its directions' counts
    rather than counting millions of values again)."""
    distinct, where = np.unique(np.concatenate([values for values, _ in parts]), return_inverse=True)
    counts = np.bincount(where, weights=np.concatenate([counts for _, counts in parts]), minlength=len(distinct))
    return distinct, counts.astype(np.int64)


def stats_of_counts(distinct: Array, counts: Array, percentiles: Sequence[float]) -> CountedStats:
    """Count, min, mean, max, standard deviation and percentiles of unsigned integers, from value_counts' result."""
    number = int(counts.sum())
    as_float = distinct.astype(np.float64)
    mean = float(np.dot(as_float, counts) / number)
    stddev = float(np.sqrt(np.dot(counts, (as_float - mean) ** 2) / number))
    return CountedStats(number, float(as_float[0]), mean, float(as_float[-1]), stddev,
                        tuple(counted_percentiles(as_float, counts, percentiles).tolist()))


def counted_percentiles(distinct: Array, counts: Array, percentiles: Sequence[float]) -> Array:
    """numpy.percentile (linear method) of the values `distinct` (ascending) repeated `counts` times."""
    number = int(counts.sum())
    last_rank = np.cumsum(counts) - 1  # the highest 0-based rank each distinct value holds
    virtual = (number - 1) * (np.asarray(percentiles, np.float64) / 100)
    below = np.floor(virtual)
    above = below + 1
    at_end = virtual >= number - 1
    below[at_end] = above[at_end] = number - 1
    low = distinct[np.searchsorted(last_rank, below)]
    high = distinct[np.searchsorted(last_rank, above)]
    gamma = virtual - below
    difference = high - low
    result = low + difference * gamma  # numpy's _lerp: from the nearer end, so the ends are exact
    return np.where(gamma >= 0.5, high - difference * (1 - gamma), result)
