"""What a scrape of --metrics costs the run: ptsbench's own CPU (all its threads, not fio's) per scrape (issue 47).

A real run (`ptsbench run`: fio's null engine held to 5,000 IOPS of 4k random reads, N jobs, --metrics on port 0)
runs for --runtime seconds. This script alternates windows of --window seconds: in one nothing scrapes, in the next
it scrapes /metrics as fast as it can (one request after another, from this process). ptsbench's CPU time
(/proc/PID/stat utime + stime) is read at each window's edges. The cost of one scrape is the CPU of the scraping
windows less that of the quiet windows (the baseline: the run's own CPU, measured in the same run), over the
scrapes made. Scrapes that fast mostly find no new second (a job's seconds are worked out again only when it has a
new one), so this is the cost of the HTTP request and the answer's text. The cost of working out every job's last
second again, which a scrape once a second or slower pays, is measured after the run, in this process: the run's
stored seconds (its real fio numbers) published as a live stream of the same jobs, the collector's answer made with
nothing kept from the previous scrape (CPU time of this thread).

  .venv/bin/python bench/bench_metrics.py
  .venv/bin/python bench/bench_metrics.py --jobs 8 --runtime 120 --window 5
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
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
            while time.monotonic() - start < args.window:
                with urllib.request.urlopen(url, timeout=30) as response:
                    size = len(response.read())
                scrapes += 1
            busy_cpu += cpu_s(run.pid) - before
            busy_s += time.monotonic() - start
        run.stderr.close()
        run.wait()
        recompute_ms, seconds = recompute_cost(next(Path(folder, "run", "cases").glob("*")))
    baseline = quiet_cpu / quiet_s
    per_scrape_ms = (busy_cpu - baseline * busy_s) / scrapes * 1000
    print(f"jobs {args.jobs}, answer {size:,} bytes, {scrapes} scrapes in {busy_s:.0f} s")
    print(f"ptsbench CPU without scrapes: {baseline * 100:.2f} % of a core (baseline)")
    print(f"ptsbench CPU while scraping:  {busy_cpu / busy_s * 100:.2f} % of a core")
    print(f"CPU per scrape: {per_scrape_ms:.3f} ms (goal < 1 ms: {'met' if per_scrape_ms < 1 else 'NOT met'}); "
          f"at one scrape per second: {per_scrape_ms / 10:.3f} % of a core, "
          f"{per_scrape_ms / 1000 / baseline:.2f} x the run's own CPU")
    print(f"working out every job's last second again ({seconds} seconds per job): {recompute_ms:.3f} ms more "
          f"per scrape; a scrape once a second: {per_scrape_ms + recompute_ms:.3f} ms "
          f"(goal < 1 ms: {'met' if per_scrape_ms + recompute_ms < 1 else 'NOT met'})")


def recompute_cost(case_dir: Path, repeat: int = 200) -> tuple[float, int]:
    """CPU ms of one answer with every job's second worked out again, over the stored seconds of `case_dir`."""
    from ptsbench.fio.intervals import SecondSamples
    from ptsbench.metrics import board
    from ptsbench.metrics.serve import RunsCollector

    stored = json.loads((case_dir / "seconds.json").read_text())
    samples = SecondSamples()
    samples.fio_version = stored["fio_version"]
    samples.jobs = {name: {key: list(values) for key, values in columns.items()}
                    for name, columns in stored["jobs"].items()}
    collector = RunsCollector(live=True)
    with board.publish(board.Stream(case_dir.parent.parent.absolute(), {"test": "bench"}, samples, {}, 60.0)):
        start = time.thread_time()
        for _ in range(repeat):
            collector.seconds.clear()
            collector.text()
        spent_s = time.thread_time() - start
    seconds = max(len(columns["runtime_ms"]) for columns in stored["jobs"].values())
    return spent_s / repeat * 1000, seconds


if __name__ == "__main__":
    main()
