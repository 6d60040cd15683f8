"""Reduction to pixel columns on per-IO times kept as integer milliseconds: the same columns as on float times."""

import numpy as np

from ptsbench.plot.reduce import minmax_per_column
from ptsbench.plot.series import Trace


def test_integer_times_fall_in_the_same_columns_as_floats() -> None:
    rng = np.random.default_rng(5)
    for dtype in (np.uint16, np.uint32, np.int64):
        x = np.sort(rng.integers(0, 60_000, 200_000)).astype(dtype)  # many IOs per ms, some ms empty
        y = rng.integers(1, 10**6, len(x)).astype(np.uint32)
        as_int = minmax_per_column(x, y, 1200)
        as_float = minmax_per_column(x.astype(np.float64), y, 1200)
        assert as_int is not None and as_float is not None
        for ours, theirs in zip(as_int, as_float, strict=True):
            assert np.array_equal(ours, theirs)


def test_per_io_trace_times_in_seconds_on_demand() -> None:
    trace = Trace("read", np.array([0, 1, 2500], np.uint16), np.array([7, 8, 9], np.uint32), time_unit_s=0.001)
    assert trace.time_s.tolist() == [0.0, 0.001, 2.5] and trace.time_s is trace.time_s  # made once
    seconds = Trace("total", np.array([0.5, 1.0]), np.array([1.0, 2.0]))
    assert seconds.time_s is seconds.time
