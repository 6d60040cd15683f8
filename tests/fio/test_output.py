"""fio's json+ output parsed into results: values equal fio's own, merges are exact."""

import json
from pathlib import Path
from typing import Any

import pytest

from ptsbench.fio import jobs
from ptsbench.fio.output import merge_latency, parse_jobs, percentiles_from_bins
from ptsbench.fio.runner import run_fio


def run_null(tmp_path: Path, job_options: dict[str, str | None], name: str = "j") -> dict[str, Any]:
    text = jobs.render_job_file({"ioengine": "null", "size": "64m", "time_based": None, "runtime": "1",
                                 **jobs.PERCENTILE_OPTIONS}, [(name, job_options)])
    job_path = tmp_path / "job.fio"
    job_path.write_text(text)
    outcome = run_fio(job_path, json_path=tmp_path / "fio.json", stderr_path=tmp_path / "fio.stderr")
    assert outcome.ok, outcome.error_line()
    assert json.loads((tmp_path / "fio.json").read_text()) == outcome.doc
    assert outcome.doc is not None
    return outcome.doc


def test_single_job_values_are_fios_own(tmp_path: Path) -> None:
    doc = run_null(tmp_path, {"rw": "randread", "bs": "4k", "iodepth": "2"})
    (result,) = parse_jobs(doc)
    fio_read = doc["jobs"][0]["read"]
    read = result.get("read")
    assert read is not None and result.get("write") is None and result.total() is read
    assert read.iops == fio_read["iops"] and read.bw_bytes == fio_read["bw_bytes"]
    assert read.lat.mean_ns == fio_read["lat_ns"]["mean"]
    assert read.lat.percentiles_ns["99.9"] == fio_read["lat_ns"]["percentile"]["99.900000"]
    assert (result.rw, result.bs, result.iodepth, result.numjobs) == ("randread", "4k", 2, 1)


def test_percentiles_from_bins_equal_fios_percentiles(tmp_path: Path) -> None:
    doc = run_null(tmp_path, {"rw": "randrw", "bs": "4k"})
    for direction in ("read", "write"):
        lat = doc["jobs"][0][direction]["lat_ns"]
        bins = {int(k): v for k, v in lat["bins"].items()}
        expected = {f"{float(k):g}": float(v) for k, v in lat["percentile"].items()}
        assert percentiles_from_bins(bins) == expected


def test_numjobs_without_group_reporting_is_merged_exactly(tmp_path: Path) -> None:
    doc = run_null(tmp_path, {"rw": "randwrite", "numjobs": "3"})
    entries = doc["jobs"]
    assert len(entries) == 3
    (result,) = parse_jobs(doc)
    write = result.get("write")
    assert write is not None and result.numjobs == 3
    # fio's group arithmetic (what group_reporting reports): all IOs over the longest runtime, not a sum of rates
    longest_ms = max(e["write"]["runtime"] for e in entries)
    assert write.total_ios == sum(e["write"]["total_ios"] for e in entries)
    assert write.iops == 1000 * write.total_ios / longest_ms and write.runtime_ms == longest_ms
    assert write.bw_bytes == 1000 * sum(e["write"]["io_bytes"] for e in entries) // longest_ms
    assert result.entries == 3 and "group_reporting" in result.merge_note
    merged_bins: dict[int, int] = {}
    for entry in entries:
        for value, count in entry["write"]["lat_ns"]["bins"].items():
            merged_bins[int(value)] = merged_bins.get(int(value), 0) + count
    assert write.lat.percentiles_ns == percentiles_from_bins(merged_bins)
    weighted = sum(e["write"]["lat_ns"]["mean"] * e["write"]["lat_ns"]["N"] for e in entries) / sum(
        e["write"]["lat_ns"]["N"] for e in entries)
    assert write.lat.mean_ns == pytest.approx(weighted, rel=1e-12)


def test_mixed_workload_has_read_write_and_total(tmp_path: Path) -> None:
    doc = run_null(tmp_path, {"rw": "randrw", "rwmixread": "70"})
    (result,) = parse_jobs(doc)
    read, write, total = result.get("read"), result.get("write"), result.get("total")
    assert read and write and total and [d.direction for d in result.directions] == ["read", "write", "total"]
    assert total.iops == 1000 * (read.total_ios + write.total_ios) / max(read.runtime_ms, write.runtime_ms)
    assert total.lat.n == read.lat.n + write.lat.n
    assert read.lat.max_ns is not None and write.lat.max_ns is not None
    assert total.lat.max_ns == max(read.lat.max_ns, write.lat.max_ns)
    assert read.iops > write.iops  # 70/30 mix


def test_merge_of_one_part_is_the_part_itself(tmp_path: Path) -> None:
    doc = run_null(tmp_path, {"rw": "read"})
    (result,) = parse_jobs(doc)
    read = result.get("read")
    assert read is not None and merge_latency([read.lat]) is read.lat


def test_percentiles_from_bins_by_hand() -> None:
    bins = {100: 50, 200: 40, 300: 9, 400: 1}
    assert percentiles_from_bins(bins, ["50", "90", "99", "99.9"]) == {"50": 100.0, "90": 200.0, "99": 300.0,
                                                                        "99.9": 400.0}
    assert percentiles_from_bins({}, ["50"]) == {}


def test_verify_reads_are_not_added_to_the_writes(tmp_path: Path) -> None:
    # fio verifies after writing: the read and write rates are of different periods and must not be summed
    job_path = tmp_path / "verify.fio"
    job_path.write_text(f"[v]\nioengine=psync\nfilename={tmp_path / 'v.dat'}\nsize=1m\nrw=randwrite\nbs=4k\n"
                        "verify=crc32c\nverify_state_save=0\n")
    outcome = run_fio(job_path, json_path=tmp_path / "fio.json", stderr_path=tmp_path / "fio.stderr")
    assert outcome.ok and outcome.doc is not None, outcome.error_line()
    (result,) = parse_jobs(outcome.doc)
    fio_job = outcome.doc["jobs"][0]
    assert [d.direction for d in result.directions] == ["read", "write"]  # fio's own two entries, no sum
    assert result.get("read").iops == fio_job["read"]["iops"] > 0  # type: ignore[union-attr]
    assert result.total() is result.get("write")  # the job's workload is its writes
