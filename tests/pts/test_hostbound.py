"""The host-bound verdict of a round from real fio output: fio's IO depth distribution shows a planned queue depth
reached (libaio with O_DIRECT keeps 8 IOs in flight) or not (a synchronous engine submits one at a time, whatever
iodepth says), and the round is flagged with its reason, as is one whose host CPU was saturated."""

import json
import subprocess
from pathlib import Path

from ptsbench.fio.output import parse_jobs
from ptsbench.pts.hostbound import HOST_CPU_SATURATED_PCT, depth_bucket, depth_record, host_bound


def fio_cell(tmp_path: Path, engine: str) -> dict[str, object]:
    """One cell as the PTS stores it (its depth record and fio's CPU) from a real fio run at QD8."""
    target = tmp_path / f"{engine}.dat"
    subprocess.run(["fio", "--name=cell", f"--filename={target}", "--size=4M", "--rw=randwrite", "--bs=4k",
                    f"--ioengine={engine}", "--direct=1", "--iodepth=8", "--number_ios=2000",
                    "--output-format=json", f"--output={target}.json"], capture_output=True, text=True, check=True)
    parts = parse_jobs(json.loads(Path(f"{target}.json").read_text()))
    return {"iodepth": 8, "usr_cpu": parts[0].usr_cpu, "sys_cpu": parts[0].sys_cpu, **depth_record(8, parts)}


def test_a_queue_depth_not_reached_or_a_busy_host_flags_the_round(tmp_path: Path) -> None:
    reached, single = fio_cell(tmp_path, "libaio"), fio_cell(tmp_path, "sync")
    assert float(reached["qd_reached_pct"]) > 90 and float(single["qd_reached_pct"]) < 10  # type: ignore[arg-type]
    calm = {"telemetry": {"cpu": {"busy_pct": 20.0}}, "cells": {"libaio": reached}}
    assert host_bound(calm)["possibly"] is False
    verdict = host_bound({"telemetry": {"cpu": {"busy_pct": 20.0}}, "cells": {"libaio": reached, "sync": single}})
    assert verdict["possibly"] and list(verdict["qd_not_reached"]) == ["sync"]
    assert verdict["reasons"][0].startswith("sync: QD8 in flight for ")
    busy = host_bound({"telemetry": {"cpu": {"busy_pct": HOST_CPU_SATURATED_PCT}}, "cells": {"libaio": reached}})
    assert busy["possibly"] and busy["reasons"] == [f"host CPU {HOST_CPU_SATURATED_PCT:.0f} % busy"]


def test_depth_buckets_are_fios() -> None:
    assert [depth_bucket(qd) for qd in (1, 2, 3, 6, 8, 15, 32, 64, 256)] == \
        ["1", "2", "2", "4", "8", "8", "32", ">=64", ">=64"]
