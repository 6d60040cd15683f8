"""Exact statistics by counting (plot summaries of per-IO logs) against numpy computing them from every value."""

import numpy as np
import pytest

from ptsbench.plot import counting

PERCENTILES = (0.0, 33.3, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0)


def _samples(rng: np.random.Generator, trial: int) -> np.ndarray:
    n = int(rng.integers(1, 3000))
    kind = trial % 4
    if kind == 0:
        return rng.integers(0, 50, n).astype(np.uint8)  # few distinct values, many ties
    if kind == 1:
        return rng.integers(0, 2**32 - 1, n, dtype=np.uint64).astype(np.uint32)  # wider than the counted bins
    if kind == 2:
        return rng.lognormal(10, 2, n).astype(np.uint64)  # a latency-like spread with a long tail
    return np.concatenate([rng.integers(5, 400, n), rng.integers(0, 2**40, 3)]).astype(np.uint64)  # rare outliers


@pytest.mark.parametrize("chunk", [500, 1 << 20])
def test_counted_stats_equal_numpys(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(counting, "_CHUNK", chunk)  # small chunks: values split across many bincounts
    rng = np.random.default_rng(chunk)
    for trial in range(100):
        values = _samples(rng, trial)
        stats = counting.stats_of_counts(*counting.value_counts(values), PERCENTILES)
        assert stats.percentiles == tuple(np.percentile(values, PERCENTILES).tolist())  # exactly numpy's
        assert (stats.count, stats.min, stats.max) == (len(values), float(values.min()), float(values.max()))
        assert stats.mean == pytest.approx(float(values.mean()), rel=1e-12)
        assert stats.stddev == pytest.approx(float(values.std()), rel=1e-9, abs=1e-9)
        cut = int(rng.integers(0, len(values))) + 1  # a total from its parts' counts, as a plot's read + write
        parts = [counting.value_counts(part) for part in (values[:cut], values[cut:]) if len(part)]
        merged = counting.merged_counts(parts)
        assert [array.tolist() for array in merged] == [array.tolist() for array in counting.value_counts(values)]
        assert merged[1].dtype == np.int64


def test_value_counts_of_a_whole_small_type() -> None:
    values = np.array([0, 255, 255, 7], np.uint8)  # bins up to 256: one more than uint8 holds
    assert [array.tolist() for array in counting.value_counts(values)] == [[0, 7, 255], [1, 1, 2]]


def test_value_counts_count_the_tail_beyond_the_bins() -> None:
    values = np.array([5, 5, 9, 5 + counting.COUNTED_BINS, 2**31, 2**31], np.uint32)
    distinct, counts = counting.value_counts(values)
    assert distinct.tolist() == [5, 9, 5 + counting.COUNTED_BINS, 2**31] and counts.tolist() == [2, 1, 1, 2]
    with pytest.raises(ValueError):
        counting.value_counts(np.array([1.5]))
