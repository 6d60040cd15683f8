"""The results table as an xlsx workbook (numbers stored at full precision, formatted for reading)."""

from collections.abc import Sequence
from pathlib import Path

from ptsbench.report.cases.tables import TABLE_PERCENTILES, ResultRow, steady_state_text

HEADERS = ["case", "job", "host", "target", "rw", "bs", "iodepth", "numjobs", "direction", "status", "IOPS", "MB/s",
           "lat mean (µs)", *(f"lat p{p} (µs)" for p in TABLE_PERCENTILES), "done after first host (s)", "message",
           "runtime (s)", "fio steady state", "how formed"]


def write_results_xlsx(path: Path, rows: Sequence[ResultRow]) -> None:
    """Write the table to `path` (made in memory, then written atomically: a full disk is one clear error)."""
    import io

    import xlsxwriter

    from ptsbench.atomic import atomic_write_bytes

    data = io.BytesIO()
    workbook = xlsxwriter.Workbook(data, {"in_memory": True})
    sheet = workbook.add_worksheet("results")
    bold = workbook.add_format({"bold": True})
    numbers = workbook.add_format({"num_format": "#,##0.00"})
    sheet.write_row(0, 0, HEADERS, bold)
    for index, row in enumerate(rows, start=1):
        values = [row.case, row.job, row.host or "", row.target or "", row.rw, row.bs, row.iodepth, row.numjobs,
                  row.direction, row.status, row.iops, row.mb_s, _us(row.lat_mean_ns),
                  *(_us(row.lat_percentiles_ns.get(p)) for p in TABLE_PERCENTILES), row.done_after_first_s, row.message,
                  row.runtime_s, None if row.ss_attained is None else steady_state_text(row), row.note or None]
        for column, value in enumerate(values):
            if isinstance(value, float):
                sheet.write_number(index, column, value, numbers)
            elif value is None:
                sheet.write_blank(index, column, None)
            else:
                sheet.write(index, column, value)
    sheet.freeze_panes(1, 0)
    sheet.autofilter(0, 0, max(len(rows), 1), len(HEADERS) - 1)
    sheet.set_column(0, 3, 18)
    sheet.set_column(10, len(HEADERS) - 5, 13)
    workbook.close()
    atomic_write_bytes(path, data.getvalue())


def _us(value_ns: float | None) -> float | None:
    return None if value_ns is None else value_ns / 1000
