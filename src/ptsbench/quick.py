"""The quick preset, as data: CrystalDiskMark / KDiskMark's four tests, read and write, as one stonewalled job file."""

from ptsbench.fio.jobs import duration_text, render_job_file

# (name, sequential?, block size, queue depth, threads): SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1
QUICK_TESTS = (
    ("SEQ1M-Q8T1", True, "1m", 8, 1),
    ("SEQ1M-Q1T1", True, "1m", 1, 1),
    ("RND4K-Q32T1", False, "4k", 32, 1),
    ("RND4K-Q1T1", False, "4k", 1, 1),
)


def quick_job_text(runtime_s: float, size: str, ioengine: str) -> str:
    """Job file with every test read then write, each a stonewalled time-based job."""
    global_options: dict[str, str | None] = {
        "ioengine": ioengine, "direct": "1", "size": size, "time_based": None, "runtime": duration_text(runtime_s),
        "refill_buffers": None, "randrepeat": "0", "norandommap": None, "group_reporting": None,
    }
    jobs = []
    for name, sequential, bs, depth, threads in QUICK_TESTS:
        for direction in ("read", "write"):
            rw = direction if sequential else f"rand{direction}"
            jobs.append((f"{name}-{direction}", {"stonewall": None, "rw": rw, "bs": bs, "iodepth": str(depth),
                                                  "numjobs": str(threads)}))
    return render_job_file(global_options, jobs)
