"""The one place that knows units: parse human sizes at the edge, format numbers for people."""

import re
from fractions import Fraction

from ptsbench.errors import PtsbenchError

MAX_SECONDS = 366 * 86400  # a duration longer than a year is a typo, not a benchmark
_BINARY = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size_bytes(text: str) -> int:
    """ptsbench's reading of a size: binary prefixes however spelt (4k = 4K = 4KB = 4KiB = 4096), and decimals
    when they make whole bytes (1.5G). fio reads some of these otherwise (by default 4KiB is 4000 bytes to it, and
    1.5G is 1 byte), so a size given to ptsbench reaches fio as the byte count of `fio_size_text`, never as typed."""
    match = _SIZE_RE.match(text)
    if not match:
        raise PtsbenchError(f"not a size: {text!r}", "use a number with an optional k/m/g/t suffix, e.g. 4k or 1G")
    size_bytes = Fraction(match.group(1)) * _BINARY[match.group(2).lower()]
    if size_bytes.denominator != 1:
        raise PtsbenchError(f"{text!r} is not a whole number of bytes", "use a size like 1536k or 1.5G")
    return int(size_bytes)


def fio_size_text(text: str) -> str:
    """A size given to ptsbench as fio must read it: its byte count (fio has no decimals, and its KiB is 1000)."""
    return str(parse_size_bytes(text))


def format_bs(size_bytes: int) -> str:
    """Block size the way fio and storage people write it: 512, 4k, 1m (binary units)."""
    for suffix, factor in (("m", 1024**2), ("k", 1024)):
        if size_bytes >= factor and size_bytes % factor == 0:
            return f"{size_bytes // factor}{suffix}"
    return str(size_bytes)


def format_bytes(size_bytes: float) -> str:
    """Capacity in binary units with one decimal: 1.0 GiB."""
    value = float(size_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return f"{value:.1f} PiB"


def format_duration(seconds: float) -> str:
    """Seconds as h:mm:ss (or m:ss under an hour)."""
    total = int(seconds + 0.5)  # half a second up, as people round (round() gives 2.5 -> 2)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def spoken_duration(seconds: float) -> str:
    """Seconds as people say them: '45 s', '0.5 s', '3 min 20 s', '52 h 45 min'."""
    if seconds < 60:
        return f"{seconds:.3g} s" if seconds < 10 else f"{seconds:.0f} s"
    total = int(seconds + 0.5)  # half a second up, as people round (round() gives 2.5 -> 2)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min {secs} s" if secs else f"{minutes} min"


def parse_seconds(text: str) -> float:
    """'60', '500ms', '2m', '1h' -> seconds (positive)."""
    from ptsbench.fio.jobs import parse_duration_s

    seconds = parse_duration_s(text)
    if seconds is None or seconds <= 0:
        raise PtsbenchError(f"not a duration: {text!r}", "use seconds, or a suffix: 500ms, 60s, 2m, 1h")
    if seconds < 0.001:  # fio counts whole milliseconds, and its runtime=0 means "no limit"
        raise PtsbenchError(f"duration {text!r} is under fio's 1 ms resolution", "use at least 1ms")
    if seconds > MAX_SECONDS:
        raise PtsbenchError(f"duration {text!r} is over a year", "use a duration of at most 366 days")
    return seconds
