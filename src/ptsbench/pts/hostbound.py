"""Whether a round's numbers may tell more about the host than about the device: the host's CPU was saturated
during the round, or fio did not keep the planned queue depth in flight (fio's IO depth distribution). Such a round
is flagged "possibly host-bound" in round.json and the report; the rule is stated with it."""

from collections.abc import Mapping, Sequence
from typing import Any

from ptsbench.fio.output import JobResult

HOST_CPU_SATURATED_PCT = 90.0  # busy share of all the host's CPUs during the round
QD_REACHED_MIN_PCT = 50.0  # share of a cell's IOs submitted at its planned queue depth's level or deeper
DEPTH_BUCKETS = (1, 2, 4, 8, 16, 32)  # fio's iodepth_level buckets below its last, ">=64"
RULE = (f"a round is possibly host-bound when the host's CPUs were at least {HOST_CPU_SATURATED_PCT:g} % busy "
        f"during it, or when fewer than {QD_REACHED_MIN_PCT:g} % of a cell's IOs were submitted with the planned "
        "queue depth in flight (fio's IO depth distribution, whose buckets are powers of two: QD 6 counts as 4-7)")


def depth_bucket(iodepth: int) -> str:
    """fio's iodepth_level bucket that holds `iodepth` ("8" holds 8 to 15)."""
    if iodepth >= 64:
        return ">=64"
    return str(max(bucket for bucket in DEPTH_BUCKETS if bucket <= max(iodepth, 1)))


def depth_record(iodepth: int, parts: Sequence[JobResult]) -> dict[str, Any]:
    """A cell's IO depth distribution (fio's buckets, % of IOs, its jobs averaged) and the share of its IOs
    submitted at the planned depth's bucket or deeper (None when fio reported no distribution)."""
    levels = [dict(part.iodepth_level) for part in parts if part.iodepth_level]
    if not levels:
        return {"iodepth_level": None, "qd_reached_pct": None}
    level = {bucket: sum(one.get(bucket, 0.0) for one in levels) / len(levels) for bucket in levels[0]}
    order = [str(bucket) for bucket in DEPTH_BUCKETS] + [">=64"]
    first = order.index(depth_bucket(iodepth))
    return {"iodepth_level": level, "qd_reached_pct": sum(level.get(bucket, 0.0) for bucket in order[first:])}


def host_bound(record: Mapping[str, Any]) -> dict[str, Any]:
    """The host-bound verdict of a stored round: host CPU busy, fio's own CPU (usr + sys %) per cell, the cells
    that did not reach their planned queue depth, and whether the round is possibly host-bound (with why)."""
    busy = ((record.get("telemetry") or {}).get("cpu") or {}).get("busy_pct")
    cells: Mapping[str, Any] = record.get("cells") or {}
    short = {name: cell["qd_reached_pct"] for name, cell in cells.items()
             if cell.get("qd_reached_pct") is not None and cell["qd_reached_pct"] < QD_REACHED_MIN_PCT}
    reasons = []
    if busy is not None and busy >= HOST_CPU_SATURATED_PCT:
        reasons.append(f"host CPU {busy:.0f} % busy")
    reasons += [f"{name}: QD{cells[name].get('iodepth')} in flight for {share:.0f} % of IOs"
                for name, share in short.items()]
    return {"host_cpu_busy_pct": busy,
            "fio_cpu_pct": {name: cell.get("usr_cpu", 0.0) + cell.get("sys_cpu", 0.0) for name, cell in cells.items()},
            "qd_not_reached": short, "possibly": bool(reasons), "reasons": reasons}
