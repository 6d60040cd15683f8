"""What a running run publishes for readers in other threads (the metrics exporter): the per-second samples it is
gathering now (the very SecondSamples object it stores as seconds.json at the end), whose they are, and the time
left by the plan. The run only adds and removes entries; it never waits on a reader (a plain dict under a lock held
for a copy)."""

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ptsbench.fio.intervals import SecondSamples


@dataclass(frozen=True)
class Stream:
    """One fio process's live samples: the run directory they will be stored in, labels (test, round, ...), each job's
    name for people (a PTS round: job -> cell), the plan's time left when it began."""

    run_dir: Path  # absolute
    labels: Mapping[str, str]
    samples: SecondSamples
    job_labels: Mapping[str, str]
    eta_s: float | None = None
    started: float = field(default_factory=time.monotonic)

    def eta_left_s(self) -> float | None:
        return None if self.eta_s is None else max(self.eta_s - (time.monotonic() - self.started), 0.0)


_lock = threading.Lock()
_streams: dict[int, Stream] = {}
_changes = [0]  # bumped when a stream ends: the run stored something new
_runs: dict[Path, None] = {}  # run directories this process runs or ran, in order
_watched = threading.Event()
_ended: list[Stream] = []  # streams ended since a pusher last took them (kept only while one takes them)
_keep_ended = [False]


def watch() -> None:
    """Say that this process's runs are watched (--metrics, --metrics-push): from now on they read fio's latency bins
    in every status document, for the per-second p99 (which costs CPU every second a job runs)."""
    _watched.set()


def watched() -> bool:
    return _watched.is_set()


def add_run(run_dir: Path) -> None:
    """Say that this process runs `run_dir` (its stored state is served from now on)."""
    with _lock:
        _runs[Path(run_dir).absolute()] = None
        _changes[0] += 1


def runs() -> list[Path]:
    with _lock:
        return list(_runs)


@contextmanager
def publish(stream: Stream) -> Iterator[None]:
    """Show `stream` while the block runs (its samples are stored by then)."""
    key = id(stream)
    with _lock:
        _streams[key] = stream
        _runs.setdefault(stream.run_dir, None)
    try:
        yield
    finally:
        with _lock:
            _streams.pop(key, None)
            _changes[0] += 1
            if _keep_ended[0]:
                _ended.append(stream)


def streams() -> list[Stream]:
    with _lock:
        return list(_streams.values())


def changes() -> int:
    """How many streams have ended so far: a reader re-reads what is stored when this moves."""
    with _lock:
        return _changes[0]


def keep_ended() -> None:
    """Keep each stream that ends until take_ended takes it (a pusher: a stream's last seconds are pushed after it
    ended, even one that began and ended between two pushes)."""
    with _lock:
        _keep_ended[0] = True


def take_ended() -> list[Stream]:
    with _lock:
        ended = list(_ended)
        _ended.clear()
        return ended
