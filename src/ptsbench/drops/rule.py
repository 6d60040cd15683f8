"""What counts as a drop, as data: kept apart from find.py so that reading a run's rule needs no numpy."""

from dataclasses import dataclass


@dataclass(frozen=True)
class DropRule:
    """What counts as a drop: worse than `fraction` of the reference level for at least `min_seconds` (a latency
    rise: also by `lat_floor_ns` at least)."""

    fraction: float = 0.8
    min_seconds: int = 3
    lat_floor_ns: float = 50_000.0
    strict: bool = False  # host-limited findings and seconds fail --min-fraction too (causes.py)
