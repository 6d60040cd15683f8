"""Multi-host controller cost: CPU and memory of the controller per added host, 1..8 loopback fio servers, null engine.

For N = 1..8 hosts (fio servers on 127.0.0.1 .. 127.0.0.N, one port), the same case ptsbench would run (its job
text from the case planner: json+ percentiles and per-second bw/iops/lat logs) is sent to every host through fio's
client, exactly as `ptsbench run --hosts` does. Measured, per run:
  - the fio client process (the controller's fio): user+sys CPU seconds and peak RSS, from wait4();
  - ptsbench's own work on the result: parsing fio's JSON and building per-host rows and the all-hosts merge
    (CPU seconds with time.process_time, peak Python allocation with tracemalloc);
  - the pre-flight's wall time (parallel tiny fio jobs on every host, no target).
Each N is repeated --reps times; medians are printed, then the cost per added host (least-squares slope over N).
The servers' jobs are rate-limited (--rate-iops per host) so that on a small machine the servers do not starve the
controller of CPU; the controller's work does not depend on the IO rate (fio aggregates on the servers and the logs
hold one averaged sample per second).

Run from the repository root (about 2 minutes with the defaults):
  .venv/bin/python bench/bench_hosts.py
  .venv/bin/python bench/bench_hosts.py --max-hosts 8 --reps 5 --runtime 10
  .venv/bin/python bench/bench_hosts.py --counts 1,16,64,128 --reps 1 --rate-iops 1000   # further out
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "hosts"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ptsbench.cases.plan import Overrides, plan_cases  # noqa: E402
from ptsbench.fio.output import parse_jobs
from ptsbench.fio.runner import fio_binary
from ptsbench.hosts.hostlist import Host, write_host_list
from ptsbench.hosts.preflight import preflight
from ptsbench.hosts.results import host_outcome
from ptsbench.hosts.server import Listen, kill_tree, server_argv, wait_listening
from test_hosts import free_port  # noqa: E402  (the tests' loopback port picker)


@dataclass(frozen=True)
class Sample:
    """One run with N hosts."""

    hosts: int
    fio_cpu_s: float
    fio_maxrss_mib: float
    parse_cpu_s: float
    parse_peak_mib: float
    preflight_s: float
    json_mib: float


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-hosts", type=int, default=8, help="largest number of loopback servers (default 8)")
    parser.add_argument("--reps", type=int, default=3, help="runs per host count (default 3)")
    parser.add_argument("--runtime", type=float, default=5.0, help="seconds of IO per run (default 5)")
    parser.add_argument("--rate-iops", type=int, default=20000, help="IOPS cap per host (default 20000)")
    parser.add_argument("--counts", help="host counts to measure instead of 1..max-hosts, e.g. 1,8,32,64")
    args = parser.parse_args()
    args.counts = [int(c) for c in args.counts.split(",")] if args.counts else list(range(1, args.max_hosts + 1))
    if not all(1 <= c <= 250 for c in args.counts) or args.reps < 1 or args.runtime <= 0:
        parser.error("host counts 1..250, --reps >= 1, --runtime > 0")
    return args


def start_servers(count: int) -> tuple[list[Host], list[subprocess.Popen[bytes]]]:
    addresses = [f"127.0.0.{index + 1}" for index in range(count)]
    port = free_port(addresses)
    processes = [subprocess.Popen(server_argv(Listen(bind=address, port=port)), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL) for address in addresses]
    for address in addresses:
        if not wait_listening(Listen(bind=address, port=port)):
            sys.exit(f"bench_hosts: the fio server on {address}:{port} did not start")
    return [Host(address, port) for address in addresses], processes


def case_job(folder: Path, runtime_s: float, rate_iops: int) -> Path:
    """The job file ptsbench runs for a null-engine randread case (its percentile and log options included)."""
    source = folder / "null.fio"
    source.write_text(f"[null]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\nrate_iops={rate_iops}\n")
    case = plan_cases([source], [], Overrides(runtime_s=runtime_s), folder / "run", 1000)[0]
    (folder / "run" / "cases" / case.dir_name / "logs").mkdir(parents=True, exist_ok=True)
    job = folder / "case.fio"
    job.write_text(case.job_text)
    return job


def run_client(hosts: list[Host], job: Path, folder: Path) -> tuple[str, float, float]:
    """fio's client on every host: its stdout, CPU seconds and peak RSS (MiB), from wait4()."""
    host_list = write_host_list(folder, hosts)
    argv = [fio_binary(), "--output-format=json+", "--status-interval=1", f"--client={host_list}", str(job)]
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _pid, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if process.returncode != 0:
        sys.exit(f"bench_hosts: fio's client failed with code {process.returncode}")
    return text, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def last_document(text: str) -> dict:  # type: ignore[type-arg]
    start = text.rfind("\n{\n")
    document, _end = json.JSONDecoder().raw_decode(text, start + 1 if start >= 0 else text.index("{"))
    return document  # type: ignore[no-any-return]


def measure(count: int, args: argparse.Namespace) -> list[Sample]:
    samples = []
    hosts, processes = start_servers(count)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-hosts-") as scratch:
            folder = Path(scratch)
            job = case_job(folder, args.runtime, args.rate_iops)
            for _ in range(args.reps):
                started = time.monotonic()
                preflight(hosts, [])
                preflight_s = time.monotonic() - started
                text, fio_cpu_s, fio_rss_mib = run_client(hosts, job, folder)
                tracemalloc.start()
                cpu_before = time.process_time()
                doc = last_document(text)
                found = host_outcome(hosts, parse_jobs(doc), doc, "")
                parse_cpu_s = time.process_time() - cpu_before
                _current, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                if found.problem:
                    sys.exit(f"bench_hosts: {found.problem}")
                samples.append(Sample(count, fio_cpu_s, fio_rss_mib, parse_cpu_s, peak / 2**20, preflight_s,
                                      len(text) / 2**20))
    finally:
        for process in processes:
            kill_tree(process.pid)
            process.wait()
    return samples


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope: the cost of one more host."""
    xs = [float(x) for x, _ in points]
    ys = [y for _, y in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    denominator = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / denominator if denominator else 0.0


def main() -> None:
    args = parse_args()
    print(f"fio {fio_binary()}, {os.cpu_count()} CPUs, {args.runtime:g} s null-engine randread per run, "
          f"{args.rate_iops} IOPS cap per host, {args.reps} runs per host count; medians")
    print(f"{'hosts':>5} {'fio client CPU s':>17} {'CPU % of runtime':>17} {'fio client RSS MiB':>19} "
          f"{'ptsbench parse CPU ms':>22} {'parse peak MiB':>15} {'json MiB':>9} {'pre-flight s':>13}")
    medians: list[Sample] = []
    for count in args.counts:
        samples = measure(count, args)
        median = Sample(count, *(statistics.median(getattr(s, name) for s in samples)
                                 for name in ("fio_cpu_s", "fio_maxrss_mib", "parse_cpu_s", "parse_peak_mib",
                                              "preflight_s", "json_mib")))
        medians.append(median)
        print(f"{count:>5} {median.fio_cpu_s:>17.3f} {100 * median.fio_cpu_s / args.runtime:>17.1f} "
              f"{median.fio_maxrss_mib:>19.1f} {1000 * median.parse_cpu_s:>22.1f} {median.parse_peak_mib:>15.2f} "
              f"{median.json_mib:>9.2f} {median.preflight_s:>13.2f}")
    if len(medians) > 1:
        per_host = {name: slope([(m.hosts, getattr(m, name)) for m in medians])
                    for name in ("fio_cpu_s", "fio_maxrss_mib", "parse_cpu_s", "parse_peak_mib", "json_mib")}
        print(f"per added host: fio client {per_host['fio_cpu_s'] * 1000:.1f} ms CPU per run "
              f"({100 * per_host['fio_cpu_s'] / args.runtime:.2f} % of one CPU), "
              f"{per_host['fio_maxrss_mib']:.2f} MiB RSS; ptsbench {per_host['parse_cpu_s'] * 1000:.1f} ms CPU, "
              f"{per_host['parse_peak_mib']:.2f} MiB peak; fio JSON {per_host['json_mib']:.2f} MiB")
    print(f"bench process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
