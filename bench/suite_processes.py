"""Which processes spend the test suite's CPU, per test: the kernel's process accounting of a whole run, each
process given to the test whose phase ran on the pytest worker it descends from when it started.

    touch /tmp/pacct && accton /tmp/pacct
    PYTHONPATH=bench SUITE_COSTS=/tmp/costs/run PYTEST_ADDOPTS="-p suite_costs" bash scripts/test.sh
    accton off
    .venv/bin/python bench/suite_processes.py /tmp/costs/run /tmp/pacct [--top 40]

A process is counted once, as what it ran (its command name: fio, ptsbench, python3.11, ...); fio's job processes
(forked from fio's main process, no exec) apart from the main ones. The accounting file stamps a process's start to the
second, so a process that starts within a second of a phase's end may be given to the neighbouring test; the sums per
test of a few seconds and more are what this is for. Processes whose chain of parents does not reach a pytest worker
(the parts test.sh runs beside pytest, orphans) are summed under "(not under a worker)".
"""

import argparse
import json
import struct
from bisect import bisect_right
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

ACCT_V3 = struct.Struct("<BBHIIIIIIf8H16s")  # include/uapi/linux/acct.h, struct acct_v3: 64 bytes
AHZ = 100  # the ticks per second of acct_v3's times
FORKED_NO_EXEC = 0x01  # AFORK
Phases = dict[int, tuple[list[float], list[str]]]  # per worker pid: its phases' start times (sorted) and tests


class Process(NamedTuple):
    pid: int
    ppid: int
    start_unix: int  # to the second
    end_unix: float
    cpu_s: float
    kind: str


def _comp_t(value: int) -> int:
    """acct's comp_t: a 13-bit mantissa and a 3-bit base-8 exponent."""
    return (value & 0x1FFF) << (3 * (value >> 13))


def read_pacct(path: Path) -> list[Process]:
    data = path.read_bytes()
    found = []
    for offset in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
        flag, version, _tty, _exit, _uid, _gid, pid, ppid, btime, etime, utime, stime, *_rest, comm = \
            ACCT_V3.unpack_from(data, offset)
        if version & 0x0F != 3:
            raise SystemExit(f"{path}: not an acct v3 file (version {version} at byte {offset})")
        name = comm.split(b"\0")[0].decode(errors="replace")
        kind = f"{name} (forked)" if flag & FORKED_NO_EXEC else name
        found.append(Process(pid, ppid, btime, btime + etime / AHZ, (_comp_t(utime) + _comp_t(stime)) / AHZ, kind))
    return found


def read_phases(prefix: str) -> Phases:
    """Per worker pid: the phases' start times (sorted) and their tests."""
    phases: dict[int, list[tuple[float, str]]] = defaultdict(list)
    for path in Path(prefix).parent.glob(f"{Path(prefix).name}-*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if "pid" not in record:
                raise SystemExit(f"{path}: written by an older suite_costs (no pid): run the suite again")
            phases[record["pid"]].append((record["start_unix"], record["test"]))
    return {pid: ([start for start, _ in sorted(items)], [test for _, test in sorted(items)])
            for pid, items in phases.items()}


def attribute(processes: list[Process], phases: Phases) -> dict[str, dict[str, float]]:
    """CPU-s per test and command name. The kernel reuses pids (32768 of them by default), so a parent is the process
    of that pid that lived when its child started."""
    by_pid: dict[int, list[Process]] = defaultdict(list)
    for process in processes:
        by_pid[process.pid].append(process)

    def parent_of(child: Process) -> Process | None:
        lived = [process for process in by_pid.get(child.ppid, ())
                 if process.start_unix <= child.start_unix <= process.end_unix + 1]
        return max(lived, key=lambda process: process.start_unix) if lived else None

    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for process in processes:
        test, current = "(not under a worker)", process
        for _ in range(64):  # a chain of parents is never this deep
            if current.ppid in phases and current.ppid != process.pid:
                starts, tests = phases[current.ppid]
                test = tests[max(bisect_right(starts, process.start_unix + 0.5) - 1, 0)]
                break
            found = parent_of(current)
            if found is None:
                break
            current = found
        if process.pid in phases:
            test = "(the worker itself)"
        sums[test][process.kind] += process.cpu_s
    return sums


def summary(sums: dict[str, dict[str, float]], top: int) -> str:
    kinds: dict[str, float] = defaultdict(float)
    for per_kind in sums.values():
        for kind, cpu_s in per_kind.items():
            kinds[kind] += cpu_s
    lines = [f"{sum(kinds.values()):.0f} CPU-s in all; by command:"]
    lines += [f"  {cpu_s:8.1f}  {kind}" for kind, cpu_s in sorted(kinds.items(), key=lambda item: -item[1])[:top]]
    shown = sorted(kinds, key=lambda kind: -kinds[kind])[:4]
    lines.append(f"tests by CPU: all, then {', '.join(shown)}")
    for test, per_kind in sorted(sums.items(), key=lambda item: -sum(item[1].values()))[:top]:
        lines.append(f"  {sum(per_kind.values()):7.1f} " + " ".join(f"{per_kind.get(kind, 0.0):7.1f}" for kind in shown)
                     + f"  {test}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefix", help="the SUITE_COSTS prefix the run wrote its files under")
    parser.add_argument("pacct", type=Path, help="the accounting file accton wrote during the run")
    parser.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    options = parser.parse_args()
    print(summary(attribute(read_pacct(options.pacct), read_phases(options.prefix)), options.top))


if __name__ == "__main__":
    main()
