"""A workload reduced to its statistics (SNIA RWSW): IO sizes by direction, the read/write mix over time, the IOs
outstanding, locality (an LBA heat map), inter-arrival and idle times, and the top IO streams (size and direction
combinations). Every number is counted from the trace; nothing is sampled or estimated.

The result is a plain JSON document (characterisation.json in a run directory), read back by reports and `compare`.
"""

from typing import TYPE_CHECKING, Any

from ptsbench.workload.blktrace import DIRECTIONS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ptsbench.workload.stream import IOStream

VERSION = 1  # of the document: a stored one of another version is made again from the trace
TOP_STREAMS = 10
HEAT_LBA_BINS = 32
HEAT_TIME_BINS = 40
LOCALITY_BINS = 100  # the address range cut in this many parts: the share of IOs in the hottest tenth of them
PERCENTILES = (50.0, 90.0, 99.0, 99.9)
MAX_SECONDS_ROWS = 86400  # the per-second mix of a trace longer than a day is kept per minute, ... (see _mix)


def characterise(stream: "IOStream") -> dict[str, Any]:
    """The statistics of `stream` as a JSON-ready document."""
    import numpy as np

    sizes = stream.size_bytes
    found: dict[str, Any] = {
        "version": VERSION,
        "source": stream.source,
        "event_count": stream.event_count,
        "io_count": int(len(sizes)),
        "bytes": int(sizes.sum()),
        "duration_s": _duration_s(stream.time_ns),
        "directions": {},
    }
    for code, name in enumerate(DIRECTIONS):
        chosen = sizes[stream.direction == code]
        if not len(chosen):
            continue
        values, counts = np.unique(chosen, return_counts=True)
        sized = [[int(size), int(count)] for size, count in zip(values, counts, strict=True)]
        found["directions"][name] = {"io_count": int(len(chosen)), "bytes": int(chosen.sum()), "sizes": sized}
    found["read_fraction"] = _share(found, "read")
    found["streams"] = _streams(stream)
    found["locality"] = _locality(stream)
    found["mix"] = _mix(stream)
    found["inter_arrival_us"] = _percentiles(np.diff(stream.time_ns) / 1e3) if stream.time_ns is not None else None
    found["outstanding"] = _outstanding(stream.issue_ns, stream.complete_ns)
    found["processes"] = _processes(stream)
    return found


def _processes(stream: "IOStream") -> list[dict[str, int]] | None:
    """The processes that queued the most IOs (a capture holds every process's IO on the device: the workload's
    and, say, udev probing it), by IO count."""
    import numpy as np

    if stream.pid is None or not len(stream.pid):
        return None
    values, counts = np.unique(stream.pid, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:TOP_STREAMS]
    return [{"pid": int(values[index]), "io_count": int(counts[index])} for index in order]


def _duration_s(time_ns: "npt.NDArray[np.int64] | None") -> float | None:
    return None if time_ns is None or not len(time_ns) else float(time_ns[-1] - time_ns[0]) / 1e9


def _share(found: dict[str, Any], name: str) -> float | None:
    total = sum(part["io_count"] for part in found["directions"].values())
    return found["directions"].get(name, {"io_count": 0})["io_count"] / total if total else None


def _sequential(stream: "IOStream") -> "npt.NDArray[np.bool_]":
    """Per IO: it starts where the previous IO of its direction ended."""
    import numpy as np

    found = np.zeros(len(stream.offset_bytes), dtype=bool)
    ends = stream.offset_bytes + stream.size_bytes
    for code in range(len(DIRECTIONS)):
        where = np.flatnonzero(stream.direction == code)
        found[where[1:]] = stream.offset_bytes[where[1:]] == ends[where[:-1]]
    return found


def _streams(stream: "IOStream") -> list[dict[str, Any]]:
    """The top IO streams (RWSW: a transfer size, a direction, random or sequential access) by IO count, with
    their share of all IOs."""
    import numpy as np

    if not len(stream.size_bytes):
        return []
    keys = stream.size_bytes * 8 + _sequential(stream) * 4 + stream.direction
    values, counts = np.unique(keys, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:TOP_STREAMS]
    total = len(keys)
    return [{"direction": DIRECTIONS[int(values[index] % 4)], "size_bytes": int(values[index] // 8),
             "access": "sequential" if values[index] & 4 else "random",
             "io_count": int(counts[index]), "share": float(counts[index] / total)} for index in order]


def _locality(stream: "IOStream") -> dict[str, Any] | None:
    """Where the IOs go: the address range, the share of IOs that start where the previous IO of their direction
    ended (sequential), the share in the hottest tenth of the range, and a heat map (IO counts per LBA band and
    time slice; one time slice when the trace has no times)."""
    import numpy as np

    offsets = stream.offset_bytes
    if not len(offsets):
        return None
    ends = offsets + stream.size_bytes
    low, high = int(offsets.min()), int(ends.max())
    sequential = int(np.count_nonzero(_sequential(stream)))
    span = max(high - low, 1)
    band = np.minimum((offsets - low) * LOCALITY_BINS // span, LOCALITY_BINS - 1)
    hottest = np.sort(np.bincount(band, minlength=LOCALITY_BINS))[::-1][:LOCALITY_BINS // 10].sum()
    lba_bin = np.minimum((offsets - low) * HEAT_LBA_BINS // span, HEAT_LBA_BINS - 1)
    time_ns = stream.time_ns
    slices = HEAT_TIME_BINS if time_ns is not None and len(time_ns) > 1 and time_ns[-1] > time_ns[0] else 1
    if slices > 1 and time_ns is not None:
        time_bin = np.minimum((time_ns - time_ns[0]) * slices // (time_ns[-1] - time_ns[0] + 1), slices - 1)
    else:
        time_bin = np.zeros(len(offsets), dtype=np.int64)
    grid = np.bincount(lba_bin * slices + time_bin, minlength=HEAT_LBA_BINS * slices).reshape(HEAT_LBA_BINS, slices)
    return {"low_bytes": low, "high_bytes": high, "sequential_fraction": sequential / len(offsets),
            "hottest_tenth_fraction": float(hottest / len(offsets)),
            "heat": {"lba_bins": HEAT_LBA_BINS, "time_slices": slices,
                     "slice_s": (float(time_ns[-1] - time_ns[0]) / 1e9 / slices) if slices > 1 and
                     time_ns is not None else None,
                     "counts": grid.tolist()}}


def _mix(stream: "IOStream") -> dict[str, Any] | None:
    """IOs and bytes per direction in each second of the trace (in longer slices for traces beyond a day)."""
    import numpy as np

    time_ns = stream.time_ns
    if time_ns is None or not len(time_ns):
        return None
    span_s = int((time_ns[-1] - time_ns[0]) // 1_000_000_000) + 1
    slice_s = max(1, -(-span_s // MAX_SECONDS_ROWS))
    index = (time_ns - time_ns[0]) // (slice_s * 1_000_000_000)
    slots = int(index.max()) + 1
    rows: dict[str, Any] = {"slice_s": slice_s}
    for code, name in enumerate(DIRECTIONS):
        chosen = stream.direction == code
        if np.any(chosen):
            rows[f"{name}_ios"] = np.bincount(index[chosen], minlength=slots).tolist()
            rows[f"{name}_bytes"] = np.bincount(index[chosen], weights=stream.size_bytes[chosen],
                                                minlength=slots).astype(np.int64).tolist()
    return rows


def _percentiles(values: "npt.NDArray[Any]") -> dict[str, float] | None:
    import numpy as np

    if not len(values):
        return None
    points = np.percentile(values, PERCENTILES)
    return {"mean": float(values.mean()), "max": float(values.max()),
            **{f"p{percent:g}": float(value) for percent, value in zip(PERCENTILES, points, strict=True)}}


def _outstanding(issue_ns: "npt.NDArray[np.int64] | None",
                 complete_ns: "npt.NDArray[np.int64] | None") -> dict[str, Any] | None:
    """IOs the device held (issued, not yet completed) over time, weighted by how long each depth lasted, and the
    idle periods (none outstanding). IOs in flight when the trace began count from its start."""
    import numpy as np

    if issue_ns is None or complete_ns is None or not len(issue_ns):
        return None
    times = np.concatenate((issue_ns, complete_ns))
    steps = np.concatenate((np.ones(len(issue_ns), np.int64), -np.ones(len(complete_ns), np.int64)))
    order = np.argsort(times, kind="stable")
    times, depth = times[order], np.cumsum(steps[order])
    depth -= min(int(depth.min()), 0)  # completions of IOs issued before the trace began
    held_ns = np.diff(times)
    depth = depth[:-1]
    total_ns = int(held_ns.sum())
    weights = np.bincount(depth, weights=held_ns)
    idle_ns = held_ns[depth == 0]
    idle_ns = idle_ns[idle_ns > 0]
    return {"mean": float((depth * held_ns).sum() / total_ns) if total_ns else None, "max": int(depth.max()),
            "time_fraction": [[int(level), float(weight / total_ns)] for level, weight in enumerate(weights)
                              if weight > 0] if total_ns else [],
            "idle": {"count": int(len(idle_ns)), "total_s": float(idle_ns.sum() / 1e9),
                     "fraction": float(idle_ns.sum() / total_ns) if total_ns else None,
                     "us": _percentiles(idle_ns / 1e3)}}
