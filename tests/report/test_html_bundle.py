"""The plotly.js every HTML report carries is a build of its own (scripts/build-plotly.sh) with only the trace types
the charts use: every kind of chart must be drawable by it, and the file must stay small."""

import gzip
import importlib.resources
import re

import pytest

from ptsbench.report.core.draw_plotly import plotly_spec
from ptsbench.report.core.figure import KINDS, Figure, Grid, Series
from ptsbench.report.core.html import BUNDLED_TRACES, PLOTLY_BUNDLE, render_html
from ptsbench.report.core.model import Report, Section


def chart(kind: str) -> Figure:
    grid = Grid(("1", "2"), ("a", "b"), ((1.0, 2.0), (3.0, None)))
    series = (Series("lines", (1, 2), (3, 4)), Series("bars", (1, 2), (5, 6), mode="bars"),
              Series("band", (1, 2), (5, 6), mode="band", low=(1, 2)))
    return Figure(kind, kind, "x", "y", series=() if kind in ("bars3d", "heatmap", "surface") else series,
                  grid=grid if kind in ("bars3d", "heatmap", "surface") else None, kind=kind)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_of_chart_uses_only_the_bundled_trace_types(kind: str) -> None:
    spec = plotly_spec(chart(kind), ("#1f77b4", "#ff7f0e", "#2ca02c"))
    assert spec["data"] and {trace["type"] for trace in spec["data"]} <= BUNDLED_TRACES


def test_the_bundle_registers_the_bundled_traces_and_the_page_stays_small() -> None:
    packed = (importlib.resources.files("ptsbench") / "data" / PLOTLY_BUNDLE).read_bytes()
    code = gzip.decompress(packed).decode()
    assert code.startswith("/* plotly.js v4.") and "Plotly" in code
    registered = set(re.findall(r'moduleType:"trace",name:"(\w+)"', code))
    assert registered == BUNDLED_TRACES
    page = render_html(Report("t", "p", (), (Section("s", "S", blocks=(chart("lines"),)),)), static=False)
    assert len(page.encode()) < 1_000_000  # plotly's full bundle alone is 4.8 MB
