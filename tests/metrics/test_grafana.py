"""The Grafana dashboard in contrib/grafana: well-formed, every query valid PromQL (Prometheus' own parser, through
promtool) and naming only series the exporter serves, the served ones each shown somewhere."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ptsbench.metrics.series import METRICS, VALUE

DASHBOARD = Path(__file__).resolve().parents[2] / "contrib" / "grafana" / "ptsbench.json"
NAME = re.compile(r"\bptsbench_[a-z0-9_]+")


def _queries() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    found = [target["expr"] for panel in board["panels"] for target in panel.get("targets", [])]
    found += [variable["definition"] for variable in board["templating"]["list"]]
    return found


def test_dashboard_is_well_formed() -> None:
    board = json.loads(DASHBOARD.read_text())
    assert board["uid"] and board["title"] == "ptsbench"
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    boxes = [panel["gridPos"] for panel in board["panels"]]
    for index, a in enumerate(boxes):  # no two panels on the same cells of the grid
        assert a["x"] >= 0 and a["x"] + a["w"] <= 24
        for b in boxes[index + 1:]:
            apart = (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"] or a["y"] + a["h"] <= b["y"]
                     or b["y"] + b["h"] <= a["y"])
            assert apart, (a, b)
    assert all(panel["type"] == "row" or panel["targets"] for panel in board["panels"])


def test_every_query_names_served_series_and_every_series_is_shown() -> None:
    served = {metric.name for metric in METRICS}
    named = {name for query in _queries() for name in NAME.findall(query)}
    assert named <= served, named - served
    assert served - named == {VALUE.name}  # the catalog's values: a finished run's, for `ptsbench metrics` users


def test_every_query_is_promql(tmp_path: Path) -> None:
    if shutil.which("promtool") is None:
        pytest.fail("promtool is not installed: scripts/install.sh --test installs prometheus")
    rules = "groups:\n  - name: dashboard\n    rules:\n" + "".join(
        f"      - record: query_{index}\n        expr: {json.dumps(query.replace('$device', '.*'))}\n"
        for index, query in enumerate(q for q in _queries() if not q.startswith("label_values")))
    (tmp_path / "rules.yml").write_text(rules)
    checked = subprocess.run(["promtool", "check", "rules", str(tmp_path / "rules.yml")], capture_output=True,
                             text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout
