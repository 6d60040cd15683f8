"""The SNIA PTS steady-state criterion (PTS 2.0.2 section 2.1.24), as a pure function.

Over a measurement window of rounds (x, y) - y is one tracked variable's value per round:
1. data excursion:  max(y) - min(y)                 <= 20 % of mean(y)
2. slope excursion: |slope| x (x_last - x_first)     <= 10 % of mean(y)
   where slope is the least-squares line through the window's (round, y) points, i.e. the difference between
   the fitted line's values at the two ends of the window.

Convention: "no more than" reads as <=. The verdict is decided in exact rational arithmetic on the values as
given (floats are converted exactly), so a window exactly at 20 % or 10 % is steady and rounding never flips a
limit case. The reported numbers are floats computed from the same exact values.

The PTS window is the last 5 rounds (the engine passes exactly those); this function accepts any window of two
or more rounds so numbers from elsewhere can be checked.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ptsbench.errors import PtsbenchError

WINDOW_ROUNDS = 5
DATA_EXCURSION_LIMIT = Fraction(20, 100)
SLOPE_EXCURSION_LIMIT = Fraction(10, 100)


@dataclass(frozen=True)
class SteadyState:
    """The steady-state determination for one window of round values."""

    rounds: tuple[float, ...]
    values: tuple[float, ...]
    average: float
    data_excursion: float  # max - min
    allowed_data_excursion: float  # 20 % of the average
    slope: float  # least-squares slope, per round
    intercept: float  # value of the fitted line at round 0
    slope_excursion: float  # |slope| x (last round - first round)
    allowed_slope_excursion: float  # 10 % of the average
    data_ok: bool
    slope_ok: bool

    @property
    def steady(self) -> bool:
        """True when both excursions are within their limits."""
        return self.data_ok and self.slope_ok

    def fitted(self, round_number: float) -> float:
        """The fitted line's value at a round number."""
        return self.slope * round_number + self.intercept

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form (what the run store keeps)."""
        return {
            "rounds": list(self.rounds),
            "values": list(self.values),
            "average": self.average,
            "data_excursion": self.data_excursion,
            "allowed_data_excursion": self.allowed_data_excursion,
            "slope": self.slope,
            "intercept": self.intercept,
            "slope_excursion": self.slope_excursion,
            "allowed_slope_excursion": self.allowed_slope_excursion,
            "data_ok": self.data_ok,
            "slope_ok": self.slope_ok,
            "steady": self.steady,
        }


def _exact(numbers: Sequence[float], what: str) -> list[Fraction]:
    try:
        return [Fraction(number) for number in numbers]
    except (ValueError, OverflowError, TypeError) as error:
        raise PtsbenchError(f"steady_state: {what} must be finite numbers", str(error)) from None


def steady_state(values: Sequence[float], rounds: Sequence[float] | None = None) -> SteadyState:
    """Apply the PTS steady-state criterion to a window of per-round values.

    `values` are the tracked variable's values (e.g. IOPS of 4 KiB random writes), one per round; `rounds` are
    their round numbers (default 1..n). Returns the average, data excursion, least-squares slope, intercept,
    slope excursion, their allowed limits and the verdict (`.steady`).

    >>> steady_state([13705, 14639, 14747, 14678, 13927], rounds=[7, 8, 9, 10, 11]).steady
    True
    """
    if rounds is None:
        rounds = list(range(1, len(values) + 1))
    if len(values) != len(rounds):
        raise PtsbenchError(
            f"steady_state: {len(values)} values but {len(rounds)} round numbers", "give one round per value"
        )
    if len(values) < 2:
        raise PtsbenchError("steady_state: a window needs at least 2 rounds", "PTS uses the last 5 rounds")
    ys, xs = _exact(values, "values"), _exact(rounds, "rounds")
    if len(set(xs)) != len(xs):
        raise PtsbenchError("steady_state: round numbers must be distinct", f"got {list(rounds)}")
    n = len(ys)
    zero = Fraction(0)
    mean_y, mean_x = sum(ys, zero) / n, sum(xs, zero) / n
    sxx = sum(((x - mean_x) ** 2 for x in xs), zero)
    sxy = sum(((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)), zero)
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    data_excursion = max(ys) - min(ys)
    slope_excursion = abs(slope) * (max(xs) - min(xs))
    allowed_data = DATA_EXCURSION_LIMIT * abs(mean_y)
    allowed_slope = SLOPE_EXCURSION_LIMIT * abs(mean_y)
    return SteadyState(
        rounds=tuple(int(x) if x.denominator == 1 else float(x) for x in xs),
        values=tuple(float(y) for y in ys),
        average=float(mean_y),
        data_excursion=float(data_excursion),
        allowed_data_excursion=float(allowed_data),
        slope=float(slope),
        intercept=float(intercept),
        slope_excursion=float(slope_excursion),
        allowed_slope_excursion=float(allowed_slope),
        data_ok=data_excursion <= allowed_data,
        slope_ok=slope_excursion <= allowed_slope,
    )
