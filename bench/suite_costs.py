"""Where the test suite's time goes: each test's wall and CPU time (pytest's process and the children it waited for:
ptsbench, fio, ...; and the ptsbench calls tests/forked_cli.py forked, whose CPU it reports), and the sums per
xdist_group, module and worker. Under pytest-xdist every test of one xdist_group runs on one worker in turn, so the
largest group is a floor under the run's wall time; the summed CPU time is what a loaded machine distorts least.

A pytest plugin (per test phase: setup, call, teardown, one JSON line each in PREFIX-WORKER.jsonl) and its summary:

    PYTHONPATH=bench SUITE_COSTS=/tmp/costs/run PYTEST_ADDOPTS="-p suite_costs" nice -n 10 bash scripts/test.sh
    .venv/bin/python bench/suite_costs.py /tmp/costs/run [--top 40]

Not counted: processes a test leaves running past its end (the shared Chromium, servers of session fixtures), and
pytest's own collection on each worker; /usr/bin/time around the whole run counts those.
"""

import argparse
import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_monotonic, _unix = time.monotonic, time.time  # bound now: a test that monkeypatches time does not move them


def _cpu_s() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    forked = sys.modules.get("forked_cli")  # the tests' ptsbench calls forked from a server (tests/forked_cli.py)
    forked_s = forked.cpu_s() if forked else 0.0
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime + forked_s


def _record(item: pytest.Item, phase: str, started: float, cpu: tuple[float, float], started_unix: float) -> None:
    own_s, children_s = _cpu_s()
    marker = item.get_closest_marker("xdist_group")
    group = str(marker.args[0] if marker.args else marker.kwargs.get("name", "")) if marker else ""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    prefix = os.environ.get("SUITE_COSTS", "suite-costs")
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    with open(f"{prefix}-{worker}.jsonl", "a") as out:
        out.write(json.dumps({"test": item.nodeid, "group": group, "phase": phase, "worker": worker,
                              "wall_s": _monotonic() - started, "cpu_s": own_s - cpu[0] + children_s - cpu[1],
                              "pid": os.getpid(), "start_unix": started_unix, "end_unix": _unix()})
                  + "\n")


def _measured(phase: str) -> Any:
    @pytest.hookimpl(hookwrapper=True)
    def hook(item: pytest.Item, *args: Any) -> Generator[None, None, None]:
        started, cpu, started_unix = _monotonic(), _cpu_s(), _unix()
        yield
        _record(item, phase, started, cpu, started_unix)

    return hook


pytest_runtest_setup = _measured("setup")
pytest_runtest_call = _measured("call")
pytest_runtest_teardown = _measured("teardown")


def summary(prefix: str, top: int) -> str:
    """The sums per group, module and worker, and the `top` tests by wall and by CPU time."""
    tests: dict[str, dict[str, Any]] = defaultdict(lambda: {"wall_s": 0.0, "cpu_s": 0.0, "group": "", "worker": ""})
    for path in Path(prefix).parent.glob(f"{Path(prefix).name}-*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            test = tests[record["test"]]
            test["wall_s"] += record["wall_s"]
            test["cpu_s"] += record["cpu_s"]
            test["group"], test["worker"] = record["group"], record["worker"]
    wall_s, cpu_s = sum(t["wall_s"] for t in tests.values()), sum(t["cpu_s"] for t in tests.values())
    lines = [f"{len(tests)} tests: {wall_s:.0f} s summed wall time, {cpu_s:.0f} CPU-s"]

    def table(title: str, key: Any) -> None:
        sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
        for name, test in tests.items():
            row = sums[key(name, test)]
            row[0] += test["wall_s"]
            row[1] += test["cpu_s"]
            row[2] += 1
        lines.append(f"{title}: wall s, CPU-s, tests")
        for name, (wall, cpu, count) in sorted(sums.items(), key=lambda item: -item[1][0])[:top]:
            lines.append(f"  {wall:7.0f} {cpu:7.0f} {count:5.0f}  {name}")

    table("per worker", lambda _name, test: test["worker"])
    table(f"per xdist_group (none: any worker; summed wall / 3 = {wall_s / 3:.0f} s)",
          lambda _name, test: test["group"] or "(none)")
    table("per module", lambda name, _test: name.split("::")[0])
    for title, key in (("wall", "wall_s"), ("CPU", "cpu_s")):
        lines.append(f"tests by {title}: wall s, CPU-s, group")
        for name, test in sorted(tests.items(), key=lambda item: -item[1][key])[:top]:
            lines.append(f"  {test['wall_s']:7.1f} {test['cpu_s']:7.1f}  {test['group'] or '-':12} {name}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefix", help="the SUITE_COSTS prefix the run wrote its files under")
    parser.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    options = parser.parse_args()
    print(summary(options.prefix, options.top))


if __name__ == "__main__":
    main()
