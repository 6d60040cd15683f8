"""The case runner's results table as numbers only: one row per job and direction, from stored results."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TABLE_PERCENTILES = ("90", "95", "99", "99.9")


@dataclass(frozen=True)
class ResultRow:
    """One line of the results table; latency in ns, bandwidth in bytes/s, exactly as stored from fio."""

    case: str
    job: str
    host: str | None
    target: str | None
    rw: str
    bs: str
    iodepth: int
    numjobs: int
    direction: str
    status: str
    iops: float | None
    bw_bytes: float | None
    lat_mean_ns: float | None
    lat_percentiles_ns: dict[str, float]
    message: str = ""

    @property
    def mb_s(self) -> float | None:
        """Decimal MB/s, as storage rates are quoted."""
        return None if self.bw_bytes is None else self.bw_bytes / 1e6


def _failed_row(record: Any, job: dict[str, Any] | None) -> ResultRow:
    return ResultRow(
        case=record.name, job=job["name"] if job else "-", host=job.get("hostname") if job else None,
        target=record.target, rw=job["rw"] if job else "-", bs=job["bs"] if job else "-",
        iodepth=job["iodepth"] if job else 0, numjobs=job["numjobs"] if job else 0, direction="-",
        status="failed", iops=None, bw_bytes=None, lat_mean_ns=None, lat_percentiles_ns={},
        message=record.message,
    )


def result_rows(records: Sequence[Any]) -> list[ResultRow]:
    """Rows for every stored case (CaseRecord-like: name, target, status, message, jobs)."""
    rows: list[ResultRow] = []
    for record in records:
        if not record.jobs:
            rows.append(_failed_row(record, None))
            continue
        for job in record.jobs:
            if not job["directions"]:
                rows.append(_failed_row(record, job))
                continue
            for direction in job["directions"]:
                rows.append(ResultRow(
                    case=record.name, job=job["name"], host=job.get("hostname"), target=record.target,
                    rw=job["rw"], bs=job["bs"], iodepth=job["iodepth"], numjobs=job["numjobs"],
                    direction=direction["direction"], status=record.status if not job["error"] else "failed",
                    iops=direction["iops"], bw_bytes=direction["bw_bytes"],
                    lat_mean_ns=direction["lat"]["mean_ns"],
                    lat_percentiles_ns=direction["lat"]["percentiles_ns"],
                    message=record.message,
                ))
    return rows
