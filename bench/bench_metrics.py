"""What a scrape of --metrics costs the run: ptsbench's own CPU (all its threads, not fio's) per scrape (issue 47).

A real run (`ptsbench run`: fio's null engine held to 5,000 IOPS of 4k random reads, N jobs, --metrics on port 0)
runs for --runtime seconds. This script alternates windows of --window seconds: in one nothing scrapes, in the next
it scrapes /metrics as fast as it can (one request after another, from this process, on one connection kept alive
as Prometheus keeps it). ptsbench's CPU time (/proc/PID/stat utime + stime) is read at each window's edges. The cost
of one scrape is the CPU of the scraping windows less that of the quiet windows (the baseline: the run's own CPU,
measured in the same run), over the scrapes made. Scrapes that fast mostly find no new second, so this is the cost
of the HTTP request and the answer's text. What a scrape once a second pays more, every job's new second, is
measured after the run, in this process: the run's stored seconds (its real fio numbers) added to a live stream a
second at a time, the collector's answer made after each (CPU time of this thread), against drops/find.py's
per_second over every job's whole series in the same loop (how it was worked out before). Last, what reading a
status document's latency bins (the per-second p99 of a watched run) costs per second, from the run's own json+
document.

  .venv/bin/python bench/bench_metrics.py
  .venv/bin/python bench/bench_metrics.py --jobs 8 --runtime 120 --window 5
"""

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

JOB = "[job{n}]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\nrate_iops=5000\ntime_based\nruntime={runtime}\n"


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--runtime", type=int, default=60)
    parser.add_argument("--window", type=float, default=4.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        job = Path(folder) / "jobs.fio"
        job.write_text("".join(JOB.format(n=n, runtime=args.runtime) for n in range(args.jobs)))
        run = subprocess.Popen([sys.executable, "-m", "ptsbench", "run", str(job), "--out", f"{folder}/run",
                                "--metrics", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert run.stderr is not None
        url = next(m[1] for line in run.stderr if (m := re.search(r"metrics at (\S+)", line)))
        address = urllib.parse.urlsplit(url)
        time.sleep(5)  # fio lays out its files and starts
        quiet_cpu = busy_cpu = quiet_s = busy_s = 0.0
        scrapes = 0
        size = 0
        end = time.monotonic() + args.runtime - 10
        while time.monotonic() + 2 * args.window < end:
            start, before = time.monotonic(), cpu_s(run.pid)
            time.sleep(args.window)
            quiet_cpu += cpu_s(run.pid) - before
            quiet_s += time.monotonic() - start
            start, before = time.monotonic(), cpu_s(run.pid)
            connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
            while time.monotonic() - start < args.window:  # on one connection, kept alive as Prometheus does
                connection.request("GET", address.path)
                size = len(connection.getresponse().read())
                scrapes += 1
            connection.close()
            busy_cpu += cpu_s(run.pid) - before
            busy_s += time.monotonic() - start
        run.stderr.close()
        run.wait()
        case_dir = next(Path(folder, "run", "cases").glob("*"))
        second_ms, baseline_ms, seconds = once_a_second_cost(case_dir)
        bins_ms = bins_cost(case_dir)
    baseline = quiet_cpu / quiet_s
    per_scrape_ms = (busy_cpu - baseline * busy_s) / scrapes * 1000
    print(f"jobs {args.jobs}, answer {size:,} bytes, {scrapes} scrapes in {busy_s:.0f} s")
    print(f"ptsbench CPU without scrapes: {baseline * 100:.2f} % of a core (baseline)")
    print(f"ptsbench CPU while scraping:  {busy_cpu / busy_s * 100:.2f} % of a core")
    print(f"CPU per scrape finding no new second (HTTP and text): {per_scrape_ms:.3f} ms")
    print(f"an answer with one new second per job ({seconds} seconds): {second_ms:.3f} ms; per_second over every "
          f"job's whole series (the baseline, same loop): {baseline_ms:.3f} ms, {baseline_ms / second_ms:.1f} x")
    once_ms = per_scrape_ms + second_ms
    print(f"a scrape once a second: {once_ms:.3f} ms (goal < 1 ms: {'met' if once_ms < 1 else 'NOT met'}); "
          f"{once_ms / 10:.3f} % of a core, {once_ms / 1000 / baseline:.2f} x the run's own CPU")
    print(f"reading the latency bins of a status document of {args.jobs} jobs (the per-second p99 of a watched run): "
          f"{bins_ms:.3f} ms more per second")


def once_a_second_cost(case_dir: Path) -> tuple[float, float, int]:
    """CPU ms of an answer when every job has one new second (a scrape once a second), in this process: the run's
    stored seconds (real fio numbers) added to a live stream one sample per job at a time, the collector's answer made
    after each. Beside it, in the same loop, the baseline: drops/find.py's per_second over every job's whole series
    (what each scrape paid before the last second was worked out from the new samples only)."""
    from ptsbench.drops.find import per_second
    from ptsbench.fio.intervals import SecondSamples
    from ptsbench.metrics import board
    from ptsbench.metrics.serve import RunsCollector

    stored = json.loads((case_dir / "seconds.json").read_text())
    samples = SecondSamples()
    samples.fio_version = stored["fio_version"]
    seconds = min(len(columns["runtime_ms"]) for columns in stored["jobs"].values())
    collector = RunsCollector(live=True)
    spent_s = baseline_s = 0.0
    with board.publish(board.Stream(case_dir.parent.parent.absolute(), {"test": "bench"}, samples, {}, 60.0)):
        collector.text()  # the stored run read once, as a live run's endpoint has it
        for count in range(1, seconds + 1):
            with samples.lock:
                samples.jobs = {name: {key: list(values[:count]) for key, values in columns.items()}
                                for name, columns in stored["jobs"].items()}
            start = time.thread_time()
            collector.text()
            spent_s += time.thread_time() - start
            start = time.thread_time()
            for name in samples.counts():
                per_second(samples.job_columns(name), samples.fio_version, running=True)
            baseline_s += time.thread_time() - start
    return spent_s / seconds * 1000, baseline_s / seconds * 1000, seconds


def bins_cost(case_dir: Path, repeat: int = 200) -> float:
    """CPU ms more per status document of the run's jobs to read it with its latency bins (what the per-second p99
    costs a watched run every second): its final json+ document parsed whole and fed to SecondSamples, against the
    same with the bins emptied (as an unwatched run reads its status documents)."""
    from ptsbench.fio.documents import bins_emptied
    from ptsbench.fio.intervals import SecondSamples

    text = (case_dir / "fio.json").read_text()
    spent = []
    for read in (lambda: json.loads(text), lambda: json.loads(bins_emptied(text))):
        start = time.thread_time()
        for _ in range(repeat):
            SecondSamples().add(read())
        spent.append((time.thread_time() - start) / repeat * 1000)
    return spent[0] - spent[1]


if __name__ == "__main__":
    main()
