"""A job direction's one IO size from fio's cumulative numbers, read by the per-second series (drops/find.py) and
the live line (runner.py) alike."""

import math
from collections.abc import Sequence


def io_size(done_bytes: Sequence[float | None], ios: Sequence[float | None], running: bool = False) -> int | None:
    """The direction's one IO size in bytes, when it has one: the last sample's bytes over its IOs (the job's end,
    where fio's numbers agree), dividing every sample's bytes; None for several sizes (or a job cut off).

    While the job runs (`running`) its numbers do not agree yet (fio reads the counts after the bytes): the size is
    then the largest that divides every sample's bytes and lies within RUNNING_SIZE_SPREAD of the mean size so far
    (bytes over IOs), the size the job's end will show for a job of one size."""
    last_bytes, last_ios = int(done_bytes[-1] or 0), int(ios[-1] or 0)
    if last_ios <= 0:
        return None
    if running:
        common = math.gcd(*(int(value or 0) for value in done_bytes))
        mean = last_bytes / last_ios
        parts = max(round(common / mean), 1) if mean else 0
        if not parts or common % parts:
            return None
        size = common // parts
        return size if size and abs(mean / size - 1) < RUNNING_SIZE_SPREAD else None
    if last_bytes % last_ios:
        return None
    size = last_bytes // last_ios
    return size if size and all(int(value or 0) % size == 0 for value in done_bytes) else None


RUNNING_SIZE_SPREAD = 0.2  # the IO counts read up to hundreds of ms after the bytes; IO sizes of a job of several
# sizes lie further apart than this from their mean
