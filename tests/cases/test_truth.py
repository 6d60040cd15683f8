"""Differential test against fio itself: every number ptsbench shows equals fio's JSON of the same run.

Each job file of tests/data/truth runs through plain fio and through `ptsbench run`. The fio.json ptsbench stored for
a case must be fio's raw document (the same jobs, groups, keys and options as plain fio prints for that file), and
every number of ptsbench's JSON, CSV, table and results.xlsx must equal what this test computes from that stored
document on its own: fio's own figure for a row that is one fio entry; for a merged row (numjobs threads reported
apart, read+write totals) fio's group arithmetic in exact rationals (IOs x 1000 / longest runtime, bytes x 1000 //
longest runtime, the IO-weighted mean) and percentiles from the summed json+ bins with fio's rule (the first bin whose
cumulative count reaches fio's threshold, compared exactly). Which fio entries form each row is written in each job
file's first line (`# rows: 0 | 1 2`: entries 0, then 1 and 2 merged), so the test does not lean on ptsbench's own
grouping.
"""

import csv
import io
import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import run_cli

DATA = Path(__file__).parents[1] / "data" / "truth"
ENV = {"TRUTH_SIZE": "32m", "TRUTH_BS": "8k", "TRUTH_JOBS": "2"}
DIRECTIONS = ("read", "write", "trim", "mixed")
PERCENTILES = ("50", "90", "95", "99", "99.9", "99.99", "99.999")
TABLE_PERCENTILES = ("90", "95", "99", "99.9")
PTSBENCH_OPTIONS = {"lat_percentiles", "percentile_list", "write_bw_log", "write_iops_log", "log_avg_msec"}
Entry = Mapping[str, Any]


def fio_document(text: str) -> dict[str, Any]:
    """fio's JSON; its bare nan (a steady-state slope over one sample) read as NaN."""
    return dict(json.loads(re.sub(r"(?<=: )-?nan\b", "NaN", text)))


def entries_of(doc: Mapping[str, Any]) -> list[Entry]:
    return [entry for entry in doc["jobs"] if entry.get("jobname")]  # stats=0 jobs leave an unnamed (3.39: "") slot


def row_layout(job_file: Path) -> list[list[int]]:
    """The fio entries of each row, from the job file's `# rows:` line."""
    first = job_file.read_text().splitlines()[0]
    assert first.startswith("# rows:"), f"{job_file.name}: first line must say which fio entries form each row"
    return [[int(index) for index in group.split()] for group in first.removeprefix("# rows:").split("|")]


def threshold(percentile: str, total: int) -> Fraction:
    """fio's percentile threshold `(long double) p / 100.0 * nr` (stat.c), as an exact rational."""
    value = np.longdouble(float(percentile)) / np.longdouble(100.0) * np.longdouble(total)
    return Fraction(*value.as_integer_ratio())


def bin_percentiles(bins: Mapping[int, int]) -> dict[str, float]:
    """fio's rule on json+ bins, counts and threshold compared exactly: the first bin whose cumulative count
    reaches the threshold."""
    total = sum(bins.values())
    result = {}
    for percentile in PERCENTILES:
        cumulative = 0
        for value, count in sorted(bins.items()):
            cumulative += count
            if cumulative >= threshold(percentile, total):
                result[percentile] = float(value)
                break
    return result


def expected_rows(doc: Mapping[str, Any], layout: list[list[int]]) -> list[dict[str, Any]]:
    """Every row this test expects from fio's document: per row of entries, one per direction with IOs, then the
    read+write total (not for verify jobs, whose reads check the writes, nor when fio gave its own mixed entry)."""
    entries = entries_of(doc)
    rows = []
    for group in layout:
        members = [entries[index] for index in group]
        used = [d for d in DIRECTIONS if any(member.get(d, {}).get("total_ios") for member in members)]
        verifies = any(str(m["job options"].get("verify", "0")) != "0" for m in members)
        per_direction = {d: [m[d] for m in members if m.get(d, {}).get("total_ios")] for d in used}
        # the job's runtime: fio's runtime of its directions (of a group or merged threads: the longest)
        runtime_s = max(part["runtime"] for parts in per_direction.values() for part in parts) / 1000
        for direction in used:
            rows.append(_expected(members, direction, per_direction[direction], runtime_s))
        if len(used) > 1 and not verifies and "mixed" not in used:
            rows.append(_expected(members, "total", [part for d in used for part in per_direction[d]], runtime_s))
    return rows


def _expected(members: Sequence[Entry], direction: str, parts: Sequence[Entry], runtime_s: float) -> dict[str, Any]:
    runtime_ms = max(part["runtime"] for part in parts)
    expected: dict[str, Any] = {"job": members[0]["jobname"], "direction": direction, "runtime_s": runtime_s}
    lat = [part["lat_ns"] for part in parts if part["lat_ns"]["N"]]
    if len(parts) == 1:  # one of fio's entries as it is
        (part,) = parts
        expected.update(iops=part["iops"], bw_bytes=part["bw_bytes"])
        expected["lat_mean_ns"] = lat[0]["mean"] if lat else None
        fio_percentiles = {f"{float(k):g}": float(v) for k, v in (lat[0].get("percentile", {}) if lat else {}).items()}
        expected.update({f"lat_p{p}_ns": fio_percentiles.get(p) for p in PERCENTILES})
    else:  # fio's group arithmetic, exact
        expected["iops"] = Fraction(1000 * sum(part["total_ios"] for part in parts), runtime_ms)
        expected["bw_bytes"] = 1000 * sum(part["io_bytes"] for part in parts) // runtime_ms
        samples = sum(part["N"] for part in lat)
        expected["lat_mean_ns"] = sum(Fraction(part["mean"]) * part["N"] for part in lat) / samples if lat else None
        bins: dict[int, int] = {}
        for part in lat:
            for value, count in part["bins"].items():
                bins[int(value)] = bins.get(int(value), 0) + count
        merged = bin_percentiles(bins) if bins else {}
        expected.update({f"lat_p{p}_ns": merged.get(p) for p in PERCENTILES})
    expected["mb_s"] = None if expected["bw_bytes"] is None else Fraction(expected["bw_bytes"]) / 10**6
    expected["lat_n"] = sum(part["N"] for part in lat) or None
    expected["thin"] = thin_percentiles(expected, lat)
    steady = [member["steadystate"] for member in members if "steadystate" in member]
    expected["ss_attained"] = all(ss["attained"] for ss in steady) if steady else None
    expected["ss_criterion"] = steady[0]["ss"] if steady else None
    expected["ss_value"] = ", ".join(dict.fromkeys(ss["criterion"] for ss in steady)) if steady else None
    return expected


def thin_percentiles(expected: Mapping[str, Any], lat: Sequence[Entry]) -> set[str]:
    """The percentiles shown as not measured: fewer than 10 IOs slower than their value, counted in the summed
    json+ bins (by fio's rank rule from the count alone where fio gave no bins)."""
    bins: dict[int, int] = {}
    for part in lat:
        for value, count in (part.get("bins") or {}).items():
            bins[int(value)] = bins.get(int(value), 0) + count
    total = sum(part["N"] for part in lat)
    thin = set()
    for percentile in PERCENTILES:
        value = expected[f"lat_p{percentile}_ns"]
        if value is None:
            continue
        if bins:
            beyond = sum(count for at, count in bins.items() if at > value)
        else:
            beyond = total - min(max(int(-(-threshold(percentile, total) // 1)), 1), total)  # ceil, exactly
        if beyond < 10:
            thin.add(percentile)
    return thin


NUMBERS = ("iops", "bw_bytes", "mb_s", "lat_mean_ns", *(f"lat_p{p}_ns" for p in PERCENTILES), "runtime_s")


def equal(shown: Any, expected: Any) -> bool:
    """A shown number equals the expected one: exactly for fio's own figures, within the last bit of a double for
    an exact rational (a rate or mean ptsbench computes in floating point), None for None."""
    if expected is None or shown is None:
        return shown is None and expected is None
    if isinstance(expected, Fraction):
        return abs(Fraction(shown) - expected) <= abs(expected) * Fraction(1, 2**50)
    return bool(shown == expected)


def table_cells(expected: Mapping[str, Any], steady_columns: bool) -> dict[str, Any]:
    """What the terminal table must show for an expected row: numbers (compared to the digits shown) and texts."""
    cells: dict[str, Any] = {"IOPS": expected["iops"], "MB/s": expected["mb_s"],
                             "mean µs": _scaled(expected["lat_mean_ns"], 1000)}
    cells.update({f"p{p} µs": "n/m" if p in expected["thin"] else _scaled(expected[f"lat_p{p}_ns"], 1000)
                  for p in TABLE_PERCENTILES})
    cells["IOs"] = expected["lat_n"]
    if steady_columns:
        cells["run s"] = expected["runtime_s"]
        verdict = "attained" if expected["ss_attained"] else "NOT attained"
        cells["fio steady state"] = "-" if expected["ss_attained"] is None else \
            f"{verdict}: {expected['ss_criterion']} at {expected['ss_value']}"
    return cells


def _scaled(value: Any, divisor: int) -> Fraction | None:
    return None if value is None else Fraction(value) / divisor


def shown_equal(cell: str, expected: Any) -> bool:
    """A table cell shows the expected value: the same text, '-' for None, or a number equal to it to the digits
    shown (within half a unit of its last digit)."""
    if isinstance(expected, str) or expected is None:
        return cell == (expected if expected is not None else "-")
    if cell == "-":
        return False
    decimals = len(cell.partition(".")[2])
    return abs(Fraction(cell.replace(",", "")) - Fraction(expected)) <= Fraction(1, 2 * 10**decimals) * (1 + 1e-9)


def parse_table(text: str) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The rows of the terminal table as {column: cell}, and the columns said once above it ({name: value}).
    Columns are at least two spaces apart; no cell holds two spaces in a row."""
    lines = text.splitlines()
    rule = next(index for index, line in enumerate(lines) if set(line.strip()) == {"─"})
    names = re.split(r"\s{2,}", lines[rule - 1].strip())
    said = dict(line.split(": ", 1) for line in lines[:rule - 1] if ": " in line)
    rows = []
    for line in lines[rule + 1:]:
        if not line.strip() or line.startswith(("*", "(")):
            break
        rows.append(dict(zip(names, re.split(r"\s{2,}", line.strip()), strict=True)))
    return rows, said


XLSX_NUMBERS = {"IOPS": ("iops", 1), "MB/s": ("mb_s", 1), "lat mean (µs)": ("lat_mean_ns", 1000),
                **{f"lat p{p} (µs)": (f"lat_p{p}_ns", 1000) for p in TABLE_PERCENTILES},
                "runtime (s)": ("runtime_s", 1)}


def xlsx_rows(path: Path) -> list[dict[str, Any]]:
    """The run's results.xlsx as {header: cell} per row."""
    import openpyxl

    sheet = openpyxl.load_workbook(path, read_only=True)["results"]
    header, *rows = list(sheet.iter_rows(values_only=True))
    return [dict(zip(header, row, strict=True)) for row in rows]


def run_plain(job_files: Sequence[Path], env: Mapping[str, str], out: Path) -> dict[str, dict[str, Any]]:
    """Each job file through plain fio, as a user runs it."""
    out.mkdir(parents=True)
    docs = {}
    for job_file in job_files:
        done = subprocess.run(["fio", "--output-format=json+", str(job_file)], capture_output=True, text=True,
                              env={**os.environ, **env}, cwd=out, timeout=120)
        assert done.returncode == 0, f"{job_file.name}: {done.stderr}"
        docs[job_file.stem] = fio_document(done.stdout[done.stdout.index("{"):])
    return docs


def scratch(folder: Path) -> dict[str, str]:
    for sub in ("fc", "fs"):
        (folder / sub).mkdir(parents=True)
    return {**ENV, "TRUTH_DIR": str(folder)}


def check_raw(name: str, stored: Mapping[str, Any], plain: Mapping[str, Any], mismatches: list[str]) -> int:
    """The stored fio.json is fio's own document: the same keys, jobs, groups and options (but ptsbench's
    additions) as plain fio prints for the job file. Returns the number of facts compared."""
    facts = [("keys", sorted(stored), sorted(plain)), ("fio version", stored["fio version"], plain["fio version"])]
    ours, theirs = entries_of(stored), entries_of(plain)
    facts.append(("entries", [(e["jobname"], e["groupid"]) for e in ours],
                  [(e["jobname"], e["groupid"]) for e in theirs]))
    for mine, fios in zip(ours, theirs, strict=False):
        facts.append(("entry keys", sorted(mine), sorted(fios)))
        options = {k: v for k, v in mine["job options"].items() if k not in PTSBENCH_OPTIONS}
        plain_options = {k: v for k, v in fios["job options"].items() if k not in PTSBENCH_OPTIONS}
        facts.append(("job options", options, plain_options))
    mismatches += [f"{name}: stored fio.json {what} {a!r} != plain fio's {b!r}" for what, a, b in facts if a != b]
    return len(facts)


@pytest.mark.slow
def test_every_number_ptsbench_shows_equals_fios_json(tmp_path: Path) -> None:
    job_files = sorted(DATA.glob("*.fio"))
    assert len(job_files) >= 40
    out = tmp_path / "run"
    with ThreadPoolExecutor(1) as pool:  # plain fio alongside: only the stored document of ptsbench's run counts
        plain = pool.submit(run_plain, job_files, scratch(tmp_path / "plain-data"), tmp_path / "plain")
        ran = run_cli("run", str(DATA), "--out", str(out), "--format", "json", env=scratch(tmp_path / "run-data"),
                      cwd=tmp_path, timeout=600)
        plain_docs = plain.result()
    assert ran.returncode == 0, ran.stderr
    json_rows = json.loads(ran.stdout)
    shown_csv = run_cli("show", str(out), "--format", "csv")
    shown_table = run_cli("show", str(out))
    assert shown_csv.returncode == 0 and shown_table.returncode == 0, shown_csv.stderr + shown_table.stderr
    csv_rows = list(csv.DictReader(io.StringIO(shown_csv.stdout)))
    table_rows, table_said = parse_table(shown_table.stdout)
    workbook_rows = xlsx_rows(out / "results.xlsx")
    assert len(json_rows) == len(csv_rows) == len(table_rows) == len(workbook_rows)
    steady_columns = "fio steady state" in table_rows[0]

    mismatches: list[str] = []
    compared = rule_checks = raw_facts = rows = 0
    for index, job_file in enumerate(job_files, start=1):
        case = job_file.stem
        case_dir = out / "cases" / f"{index:03d}-{case}"
        stored = fio_document((case_dir / "fio.json").read_text())
        raw_facts += check_raw(case, stored, plain_docs[case], mismatches)
        # fio's percentile rule, checked on fio's own percentiles of every entry
        for entry in entries_of(stored):
            for direction in DIRECTIONS:
                lat = entry.get(direction, {}).get("lat_ns", {})
                if lat.get("N") and lat.get("bins"):
                    recomputed = bin_percentiles({int(v): c for v, c in lat["bins"].items()})
                    for key, value in lat["percentile"].items():
                        rule_checks += 1
                        if recomputed.get(f"{float(key):g}") != value:
                            mismatches.append(f"{case}: fio's p{key} {value} != the rule's {recomputed}")
        expected = expected_rows(stored, row_layout(job_file))
        positions = [i for i, row in enumerate(json_rows) if row["case"] == case]
        if len(positions) != len(expected):
            mismatches.append(f"{case}: {len(positions)} rows shown, fio's entries make {len(expected)}")
            continue
        for position, want in zip(positions, expected, strict=True):
            rows += 1
            shown_json, shown_csv_row, shown_cells = json_rows[position], csv_rows[position], table_rows[position]
            label = f"{case} {want['job']} {want['direction']}"
            for key in ("job", "direction", "ss_attained", "ss_criterion", "ss_value"):
                compared += 1
                if shown_json[key] != want[key] or shown_json["status"] != "ok":
                    mismatches.append(f"{label}: JSON {key} {shown_json[key]!r} != {want[key]!r}")
            for key in NUMBERS:
                compared += 2
                csv_value = None if shown_csv_row[key] == "" else float(shown_csv_row[key])
                if not equal(shown_json[key], want[key]):
                    mismatches.append(f"{label}: JSON {key} {shown_json[key]!r} != fio's {want[key]!r}")
                if not equal(csv_value, want[key]):
                    mismatches.append(f"{label}: CSV {key} {csv_value!r} != fio's {want[key]!r}")
            for column, cell in table_cells(want, steady_columns).items():
                compared += 1
                if not shown_equal(shown_cells[column], cell):
                    mismatches.append(f"{label}: table {column} {shown_cells[column]!r} != {cell!r}")
            for column, (key, divisor) in XLSX_NUMBERS.items():
                compared += 1
                cell = workbook_rows[position][column]
                thin = key.startswith("lat_p") and key.removeprefix("lat_p").removesuffix("_ns") in want["thin"]
                expected_cell = None if want[key] is None or thin else Fraction(want[key]) / divisor
                if not equal(cell, expected_cell):
                    mismatches.append(f"{label}: xlsx {column} {cell!r} != {expected_cell!r}")
            compared += 1
            workload = shown_cells.get("rw", table_said.get("rw", ""))
            if want["direction"] not in workload or shown_cells["job"].rstrip("*") != want["job"]:
                mismatches.append(f"{label}: table row {shown_cells['job']} {workload}")
    print(f"\ntruth: {len(job_files)} job files, {rows} rows, {compared} numbers compared, {rule_checks} fio "
          f"percentiles re-derived from bins, {raw_facts} facts of the stored fio.json checked against plain fio, "
          f"{len(mismatches)} mismatches")
    assert not mismatches, "\n".join(mismatches[:40])
    assert rows >= 60 and compared >= 1000
    check_glance(out)


def check_glance(out: Path) -> None:
    """The report's "At a glance" grid keeps two job sections of one name apart (never a read of one beside the
    write of the other, a mix that never ran)."""
    from ptsbench.cases.records import load_records
    from ptsbench.report.cases.tables import result_rows
    from ptsbench.report.glance import grid_rows
    from ptsbench.store import RunStore

    grid = grid_rows(result_rows(load_records(RunStore(out))))
    same = [row for row in grid if row[0] == "08-same-name: same"]
    assert len(same) == 2
    assert same[0][1] is None and same[0][2] is not None or same[0][1] is not None and same[0][2] is None
    assert (same[0][1] is None) != (same[1][1] is None)  # one reads, the other writes
