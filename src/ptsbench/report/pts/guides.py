"""A short guide per PTS test, shown at the start of its section: what the test measures and how to read its
charts. Plain text, the same in every format; a test without a guide simply has none."""

GUIDES: dict[str, str] = {
    "iops": (
        "What it measures: random IOPS over a matrix of block sizes and read/write mixes, once the device has reached "
        "steady state after being filled. How to read it: the convergence charts show the tracked cells settling "
        "round by round; the measurement-window charts show the last five rounds against the allowed band; the "
        "block size x mix table and its charts give the steady-state IOPS (small blocks and write-heavy mixes are "
        "usually the device's weakest point)."),
    "tp": (
        "What it measures: sequential read and write bandwidth (MB/s) at large block sizes at steady state. How to "
        "read it: each block size is its own phase with its own convergence; the table gives read and write MB/s "
        "side by side, and the convergence charts show whether a device's bandwidth drifts as it fills."),
    "lat": (
        "What it measures: response times at one outstanding IO (TC1/QD1), for small blocks and three mixes: mean, "
        "maximum and the five-nines percentile over every IO of the measurement window. How to read it: the mean is "
        "what a light workload sees; the maximum and 99.999th percentile show the rare long waits (garbage "
        "collection, throttling) that the mean hides. Bars that differ a lot are easier to compare in the table or "
        "on a log axis."),
    "wsat": (
        "What it measures: 4 KiB random-write IOPS from a fresh (purged) device, round after round, until several "
        "times its capacity has been written. How to read it: IOPS usually start high (empty device, write cache) "
        "and fall to a lower plateau as the device has to clean up old data; the charts against time, data written "
        "and drive fills show when the drop happens and how deep it is."),
    "hir": (
        "What it measures: whether idle time helps a device recover. After steady state, bursts of random writes "
        "alternate with idle waits of increasing length. How to read it: compare each wait state's burst IOPS with "
        "the steady-state baseline; a device that uses idle time for background cleanup shows higher IOPS after "
        "longer waits."),
    "xsr": (
        "What it measures: how a device moves between access patterns: long sequential writes, then random writes, "
        "then sequential writes again. How to read it: the throughput and latency over time show the drop when the "
        "pattern changes and the time it takes to recover."),
    "cbw": (
        "What it measures: IOPS and response times of a mixed workload of many block sizes (as real applications "
        "issue them) over a range of thread counts and queue depths. How to read it: IOPS against outstanding IO "
        "shows where adding load stops helping; the operating points' histograms show how response times spread."),
    "ecw": (
        "What it measures: IOPS and response times of the enterprise composite workload (PTS-E 1.1) over a range of "
        "thread counts and queue depths. How to read it: as for the composite block size workload."),
    "dirth": (
        "What it measures: the demand intensity curve: IOPS and response time as outstanding IO grows, for one "
        "random workload. How to read it: the curve bends where the device saturates; the maximum, middle and "
        "minimum operating points' response-time histograms show the latency cost of each load level."),
    "hdd-iops": (
        "What it measures: random IOPS in each zone of a hard disk (outer to inner tracks). How to read it: a "
        "flat line is expected for random IO; dips point at slow or remapped zones."),
    "hdd-tp": (
        "What it measures: sequential bandwidth in each zone of a hard disk. How to read it: bandwidth falls from "
        "the outer zones to the inner ones as the track length shrinks; a sudden dip points at a slow zone."),
}


def guide(test: str) -> str | None:
    """The guide of a test, if it has one."""
    return GUIDES.get(test)
