"""The catalog's trends page: one self-contained HTML file (no server, nothing fetched) with a sortable,
filterable table of runs linking to each report, and a chart of any headline value by firmware or date, one line per
model or drive. The data is embedded as JSON; a small script draws the table and an SVG chart from it."""

import collections
import html
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ptsbench.atomic import atomic_write_text

_SCRIPT = r"""
const runs = JSON.parse(document.getElementById('runs-data').textContent);
const values = JSON.parse(document.getElementById('values-data').textContent);
const columns = ['created_utc', 'kind', 'name', 'model', 'firmware', 'serial', 'tests', 'compliant', 'tags'];
let sortColumn = 'created_utc', sortUp = true;
const text = v => Array.isArray(v) ? v.join(' ') : (v === null || v === undefined ? '' : String(v));
function drawTable() {
  const words = document.getElementById('filter').value.toLowerCase().split(/\s+/).filter(w => w);
  const shown = runs.filter(r => words.every(w => columns.concat(['path']).some(c => text(r[c]).toLowerCase()
    .includes(w))));
  shown.sort((a, b) => (text(a[sortColumn]) < text(b[sortColumn]) ? -1 : text(a[sortColumn]) >
    text(b[sortColumn]) ? 1 : 0) * (sortUp ? 1 : -1));
  const body = document.querySelector('#runs tbody');
  body.replaceChildren(...shown.map(r => {
    const row = document.createElement('tr');
    for (const c of columns) { const cell = row.insertCell(); cell.textContent = text(r[c]); }
    const link = row.insertCell();
    if (r.report_link) { const a = document.createElement('a'); a.href = r.report_link; a.textContent = 'report';
      link.appendChild(a); } else { link.textContent = '-'; }
    return row;
  }));
  document.getElementById('count').textContent = shown.length + ' of ' + runs.length + ' runs';
}
function drawChart() {
  const name = document.getElementById('value').value, by = document.getElementById('by').value;
  const group = document.getElementById('group').value;
  const byPath = Object.fromEntries(runs.map(r => [r.path, r]));
  // shown in the unit reports use (values are stored in IOPS, bytes/s and ns)
  const shownUnits = {iops: ['IOPS', 1], mbs: ['MB/s', 1e6], lat: ['µs', 1e3]};
  const [unit, divisor] = shownUnits[(values.find(v => v.name === name) || {}).quantity] || ['', 1];
  const points = values.filter(v => v.name === name).map(v => ({run: byPath[v.path], y: v.value / divisor}))
    .filter(p => p.run);
  const number = y => y.toLocaleString('en', {maximumSignificantDigits: 4});
  const xOf = run => (by === 'created_utc' ? text(run.created_utc).slice(0, 10) : text(run[by])) || '(unknown)';
  const xs = [...new Set(points.map(p => xOf(p.run)))].sort();
  const lines = {};
  for (const p of points) (lines[text(p.run[group]) || '(unknown)'] ||= []).push(p);
  const svg = document.getElementById('chart'), w = 900, h = 360, left = 90, bottom = 60;
  // four steps of 1, 2, 2.5 or 5 times a power of ten up to at least a tenth above the largest: round ticks
  const most = Math.max(...points.map(p => p.y), 0) * 1.1 || 1, power = 10 ** Math.floor(Math.log10(most / 4));
  const top = 4 * [1, 2, 2.5, 5, 10].map(m => m * power).find(step => 4 * step >= most);
  const X = x => left + (xs.length > 1 ? xs.indexOf(x) / (xs.length - 1) : 0.5) * (w - left - 20);
  const Y = y => h - bottom - y / top * (h - bottom - 20);
  let out = `<line x1="${left}" y1="${h - bottom}" x2="${w - 20}" y2="${h - bottom}" stroke="#444"/>` +
    `<line x1="${left}" y1="20" x2="${left}" y2="${h - bottom}" stroke="#444"/>`;
  for (let i = 0; i <= 4; i++) { const y = top * i / 4; out += `<text x="${left - 6}" y="${Y(y) + 4}"
    text-anchor="end" font-size="11">${number(y)}</text>`; }
  out += `<text transform="translate(16 ${(h - bottom) / 2}) rotate(-90)" text-anchor="middle" font-size="12">` +
    `${unit}</text>`;
  const turned = xs.length > 6;  // many labels: slanted, so that neighbours do not run into each other
  xs.forEach(x => { out += `<text x="${X(x)}" y="${h - bottom + 16}" font-size="11" ` +
    (turned ? `text-anchor="end" transform="rotate(-30 ${X(x)} ${h - bottom + 16})">` : 'text-anchor="middle">') +
    `${x.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</text>`; });
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];
  Object.entries(lines).forEach(([label, pts], i) => {
    const color = colors[i % colors.length], sums = {};  // the line joins each x's mean; every run is a dot
    for (const p of pts) { const s = (sums[xOf(p.run)] ||= [0, 0]); s[0] += p.y; s[1] += 1; }
    const means = xs.filter(x => sums[x]).map(x => X(x) + ',' + Y(sums[x][0] / sums[x][1]));
    out += `<polyline fill="none" stroke="${color}" stroke-width="2" points="${means.join(' ')}"/>`;
    pts.forEach(p => { out += `<circle class="point" cx="${X(xOf(p.run))}" cy="${Y(p.y)}" r="4"
      fill="${color}"><title>${label}: ${number(p.y)} ${unit}</title></circle>`; });
    out += `<text x="${w - 20}" y="${30 + 14 * i}" text-anchor="end" font-size="12" fill="${color}">` +
      `${label.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</text>`;
  });
  out += `<text x="${(w + left) / 2}" y="${h - 10}" text-anchor="middle" font-size="12">${by}; the line joins ` +
    `each ${by === 'firmware' ? 'firmware' : 'day'}'s mean (${unit})</text>`;
  svg.innerHTML = out;
}
document.getElementById('filter').addEventListener('input', drawTable);
document.querySelectorAll('#runs th[data-column]').forEach(th => th.addEventListener('click', () => {
  sortUp = sortColumn === th.dataset.column ? !sortUp : true; sortColumn = th.dataset.column; drawTable(); }));
for (const id of ['value', 'by', 'group']) document.getElementById(id).addEventListener('change', drawChart);
drawTable(); drawChart();
"""

_STYLE = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px}th{background:#eee;cursor:pointer}input,select{margin:0 1em 1em 0}
#chart{border:1px solid #ccc;background:#fff}"""


def _json_script(element_id: str, data: Any) -> str:
    """Data for the script, safe inside <script>: '<' is escaped so no text can close the element."""
    encoded = json.dumps(data).replace("<", "\\u003c")
    return f'<script type="application/json" id="{element_id}">{encoded}</script>'


def trends_html(runs: Sequence[Mapping[str, Any]], values: Sequence[Mapping[str, Any]], page_dir: Path) -> str:
    """The page for these catalog runs and their values; report links relative to `page_dir` when possible."""
    shown = []
    for run in runs:
        link = None
        if run.get("report"):
            try:
                link = Path(os.path.relpath(run["report"], page_dir)).as_posix()
            except ValueError:  # another drive: an absolute file URL
                link = Path(run["report"]).as_uri()
        shown.append({**run, "report_link": link})
    counts = collections.Counter(value["name"] for value in values)
    names = sorted(counts)
    first = max(names, key=lambda name: counts[name], default="")  # the value most runs have is shown first
    options = "".join(f"<option{' selected' if name == first else ''}>{html.escape(name)}</option>" for name in names)
    headers = "".join(f'<th data-column="{column}">{column.replace("_", " ")}</th>' for column in
                      ("created_utc", "kind", "name", "model", "firmware", "serial", "tests", "compliant", "tags"))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ptsbench catalog</title><style>{_STYLE}</style></head>
<body><h1>ptsbench catalog</h1>
<h2>Trend</h2>
<label>value <select id="value">{options}</select></label>
<label>by <select id="by"><option value="firmware">firmware</option><option value="created_utc">date</option>
</select></label>
<label>one line per <select id="group"><option value="model">model</option><option value="serial">drive (serial)
</option></select></label>
<svg id="chart" width="900" height="360" role="img" aria-label="trend chart"></svg>
<h2>Runs</h2>
<input id="filter" type="search" placeholder="filter: model, firmware, tag, ..." size="40"> <span id="count"></span>
<table id="runs"><thead><tr>{headers}<th>report</th></tr></thead><tbody></tbody></table>
{_json_script("runs-data", shown)}
{_json_script("values-data", [dict(value) for value in values])}
<script>{_SCRIPT}</script>
</body></html>
"""


PAGE_MARK = "<title>ptsbench catalog</title>"  # what an earlier trends page holds: only such a file is replaced


def write_trends_page(path: Path, runs: Sequence[Mapping[str, Any]], values: Sequence[Mapping[str, Any]]) -> None:
    """The trends page, written atomically; only over an earlier trends page (outfolder.check_own_file)."""
    from ptsbench.outfolder import check_own_file

    path = Path(path)
    check_own_file(path, PAGE_MARK, "--out")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, trends_html(runs, values, path.absolute().parent))
