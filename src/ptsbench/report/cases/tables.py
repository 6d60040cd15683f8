"""The case runner's results table as numbers only: one row per job and direction, from stored results."""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ptsbench.device.waf import case_waf
from ptsbench.fio.output import MIN_TAIL_IOS

TABLE_PERCENTILES = ("90", "95", "99", "99.9")  # the terminal table's columns
RESULT_PERCENTILES = ("50", "90", "95", "99", "99.9", "99.99", "99.999")  # every one ptsbench asks fio for


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
    done_after_first_s: float | None = None  # multi-host: finished this long after the first host (all hosts: spread)
    runtime_s: float | None = None  # how long fio really ran the job (its job_runtime; fio's steady state may end it)
    ss_attained: bool | None = None  # fio's own steady-state verdict (ss=): None when the job set no ss
    ss_criterion: str | None = None  # fio's ss setting, e.g. 'iops_slope:0.500000%'
    ss_value: str | None = None  # what fio measured against it, as fio printed it
    note: str = ""  # how the row was formed when it is not one of fio's entries as is
    job_index: int = 0  # which of the case's jobs (rows of one job share it; two jobs of one name do not)
    repetition: int = 0  # with --repeat: the case's repetition (1..N, its name ends in -rN); 0: it ran once
    waf: float | None = None  # the case's write amplification (device/waf.py case_waf)
    waf_source: str | None = None  # the log its media bytes came from; None: none read
    waf_host_counter: str | None = None  # the counter(s) its host bytes came from (device/waf.py case_waf)
    waf_note: str | None = None  # why it has no write amplification; None: it has one, or read no device
    lat_max_ns: float | None = None  # the slowest IO
    lat_n: int | None = None  # the IOs behind the latency figures (fio's lat_ns N); None: none measured
    lat_beyond: dict[str, int] | None = None  # per percentile, the IOs slower than it; None: not stored (older runs)

    def measured_percentile_ns(self, percentile: str) -> float | None:
        """A latency percentile as shown: None where fewer than MIN_TAIL_IOS IOs were slower than it (not measured,
        the slowest of a handful of IOs) or fio gave none; older runs, which stored no such count, show fio's."""
        beyond = (self.lat_beyond or {}).get(percentile)
        return None if beyond is not None and beyond < MIN_TAIL_IOS else self.lat_percentiles_ns.get(percentile)

    def thin(self, percentile: str) -> bool:
        """fio gave this percentile, but too few IOs were slower than it to call it measured."""
        return percentile in self.lat_percentiles_ns and self.measured_percentile_ns(percentile) is None

    @property
    def mb_s(self) -> float | None:
        """Decimal MB/s, as storage rates are quoted."""
        return None if self.bw_bytes is None else self.bw_bytes / 1e6


def _failed_row(record: Any, job: dict[str, Any] | None) -> ResultRow:
    return ResultRow(
        case=record.name, job=job["name"] if job else "-", host=job.get("hostname") if job else None,
        target=record.target, rw=job["rw"] if job else "-", bs=job["bs"] if job else "-",
        iodepth=job["iodepth"] if job else 0, numjobs=job["numjobs"] if job else 0, direction="-",
        status=record.status if record.status != "ok" else "failed", iops=None, bw_bytes=None, lat_mean_ns=None,
        lat_percentiles_ns={},
        message=record.message,
    )


def done_after_first_s(jobs: Sequence[dict[str, Any]], hosts: Sequence[str]) -> dict[int, float]:
    """Per host job (by its position in `jobs`), how long after the first host it finished (elbencho's first/last
    done); other rows: the spread. Two jobs of one name are told apart by their order on each host.

    From fio's runtime of the job on each host: the hosts start together (fio's client starts them at once).
    """
    seen: dict[tuple[Any, int, str], int] = {}
    keys = []
    for job in jobs:
        on_host = (job.get("hostname"), job["groupid"], job["name"])
        seen[on_host] = seen.get(on_host, -1) + 1
        keys.append((job["groupid"], job["name"], seen[on_host]))
    runtime_ms: dict[tuple[int, str, int], dict[str, int]] = {}
    for key, job in zip(keys, jobs, strict=True):
        if job.get("hostname") in hosts and job["directions"]:
            runtime = max(direction["runtime_ms"] for direction in job["directions"])
            runtime_ms.setdefault(key, {})[job["hostname"]] = runtime
    done: dict[int, float] = {}
    for index, (key, job) in enumerate(zip(keys, jobs, strict=True)):
        per_host = runtime_ms.get(key)
        if per_host and job.get("hostname"):
            first = min(per_host.values())
            end = per_host.get(job["hostname"], max(per_host.values()))
            done[index] = (end - first) / 1000
    return done


def _host_row(record: Any, host: dict[str, Any]) -> ResultRow:
    return ResultRow(
        case=record.name, job="-", host=host["host"], target=record.target, rw="-", bs="-", iodepth=0, numjobs=0,
        direction="-", status=host["status"], iops=None, bw_bytes=None, lat_mean_ns=None, lat_percentiles_ns={},
        message=host["message"],
    )


def _job_facts(job: dict[str, Any]) -> dict[str, Any]:
    """Runtime, fio's steady-state verdict and how the row was formed (absent in stores of older versions)."""
    runtime_ms = job.get("runtime_ms")
    steady = job.get("steady_state") or {}
    return {
        "runtime_s": None if runtime_ms is None else runtime_ms / 1000,
        "ss_attained": steady.get("attained"), "ss_criterion": steady.get("criterion"),
        "ss_value": steady.get("value"), "note": job.get("note", ""),
    }


def steady_state_text(row: ResultRow) -> str:
    """fio's verdict on its own steady-state criterion, for people: 'attained: iops_slope:0.5% at 0.31%'."""
    return verdict_text(row.ss_attained, row.ss_criterion, row.ss_value)


def verdict_text(attained: bool | None, criterion: str | None, value: str | None) -> str:
    """'attained: iops_slope:0.5% at 0.31%', '-' when the job set no steady-state criterion."""
    if attained is None:
        return "-"
    return f"{'attained' if attained else 'NOT attained'}: {criterion} at {value}"


def result_rows(records: Sequence[Any]) -> list[ResultRow]:
    """Rows for every stored case (CaseRecord-like: name, target, status, message, jobs, hosts)."""
    rows: list[ResultRow] = []
    for record in records:
        start = len(rows)
        rows += _record_rows(record)
        waf = case_waf(getattr(record, "telemetry", None) or [])
        if waf is not None:
            rows[start:] = [replace(row, waf=waf["ratio"], waf_source=waf["source"],
                                    waf_host_counter=waf["host_counter"], waf_note=waf["note"])
                            for row in rows[start:]]
    return rows


def _record_rows(record: Any) -> list[ResultRow]:
    """One stored case's rows."""
    rows: list[ResultRow] = []
    if not record.jobs:
        return [_failed_row(record, None)]
    hosts = {host["host"]: host for host in getattr(record, "hosts", [])}
    done = done_after_first_s(record.jobs, list(hosts))
    for job_index, job in enumerate(record.jobs):
        host = hosts.get(job.get("hostname"))
        if not job["directions"]:
            rows.append(_failed_row(record, job))
            continue
        for direction in job["directions"]:
            rows.append(ResultRow(
                case=record.name, job=job["name"], host=job.get("hostname"), target=record.target,
                rw=job["rw"], bs=job["bs"], iodepth=job["iodepth"], numjobs=job["numjobs"],
                direction=direction["direction"],
                status="failed" if job["error"] else host["status"] if host else record.status,
                iops=direction["iops"], bw_bytes=direction["bw_bytes"],
                lat_mean_ns=direction["lat"]["mean_ns"],
                lat_percentiles_ns=direction["lat"]["percentiles_ns"],
                lat_max_ns=direction["lat"]["max_ns"],
                lat_n=direction["lat"]["n"] or None, lat_beyond=direction["lat"].get("beyond"),
                message=host["message"] if host else record.message,
                done_after_first_s=done.get(job_index),
                job_index=job_index, repetition=getattr(record, "repetition", 0) or 0, **_job_facts(job),
            ))
    reported = {job.get("hostname") for job in record.jobs}
    rows += [_host_row(record, host) for name, host in hosts.items() if name not in reported]
    return rows
