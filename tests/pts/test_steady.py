"""The PTS steady-state criterion: hand-worked windows, limit cases at 20 % and 10 %, TKperf example."""

import math

import pytest

from ptsbench.errors import PtsbenchError
from ptsbench.pts.steady import steady_state


def test_tkperf_published_example() -> None:
    result = steady_state([13705, 14639, 14747, 14678, 13927], rounds=[7, 8, 9, 10, 11])
    assert result.average == pytest.approx(14339.2)
    assert result.slope == pytest.approx(48.3)
    assert result.intercept == pytest.approx(13904.5)
    assert result.data_excursion == 14747 - 13705
    assert result.allowed_data_excursion == pytest.approx(0.2 * 14339.2)
    assert result.slope_excursion == pytest.approx(48.3 * 4)
    assert result.allowed_slope_excursion == pytest.approx(0.1 * 14339.2)
    assert result.steady
    assert result.rounds == (7, 8, 9, 10, 11)


def test_flat_window_is_steady() -> None:
    result = steady_state([500.0] * 5)
    assert (result.average, result.data_excursion, result.slope, result.slope_excursion) == (500, 0, 0, 0)
    assert result.intercept == 500
    assert result.steady


def test_hand_worked_window() -> None:
    # x = 1..5, mean(x) = 3, Sxx = 10; y mean = 100; Sxy = -2*80 - 1*90 + 0 + 1*110 + 2*120 = 100 -> slope 10
    result = steady_state([80, 90, 100, 110, 120])
    assert result.average == 100
    assert result.slope == 10
    assert result.intercept == 70
    assert result.fitted(5) - result.fitted(1) == 40
    assert result.slope_excursion == 40
    assert result.data_excursion == 40
    assert not result.data_ok and not result.slope_ok and not result.steady


def test_data_excursion_exactly_20_percent_is_steady() -> None:
    # mean 100, max - min = 20 (exactly 20 %); slope -2 -> slope excursion 8 (< 10)
    result = steady_state([100, 110, 100, 90, 100])
    assert result.data_excursion == 20 == result.allowed_data_excursion
    assert result.slope_excursion == 8
    assert result.data_ok and result.slope_ok and result.steady


def test_data_excursion_just_over_20_percent_is_not_steady() -> None:
    result = steady_state([100, 110, 100, 89, 101])
    assert result.average == 100 and result.data_excursion == 21
    assert not result.data_ok and result.slope_ok and not result.steady


def test_slope_excursion_exactly_10_percent_is_steady() -> None:
    # a straight line of slope 2.5 around 100: fitted ends differ by 4 x 2.5 = 10 = 10 % of 100
    result = steady_state([95, 97.5, 100, 102.5, 105])
    assert result.slope == 2.5 and result.slope_excursion == 10 == result.allowed_slope_excursion
    assert result.data_ok and result.slope_ok and result.steady


def test_slope_excursion_just_over_10_percent_is_not_steady() -> None:
    result = steady_state([94.875, 97.4375, 100, 102.5625, 105.125])  # slope 2.5625 (binary-exact values)
    assert result.slope == 2.5625 and result.slope_excursion == 10.25
    assert result.data_ok and not result.slope_ok and not result.steady


def test_limits_scale_with_the_average_and_decreasing_slope_counts() -> None:
    small = steady_state([0.95, 0.975, 1.0, 1.025, 1.05])
    falling = steady_state([1.05, 1.025, 1.0, 0.975, 0.95])
    assert small.slope == pytest.approx(0.025) and falling.slope == pytest.approx(-0.025)
    assert small.slope_excursion == pytest.approx(falling.slope_excursion)
    assert small.steady == falling.steady


def test_latency_like_values_from_tkperf_report() -> None:
    result = steady_state([87.555871, 80.797335, 80.902787, 79.245922, 80.512704])
    assert result.average == pytest.approx(81.8029238)
    assert result.steady


def test_default_rounds_shift_only_the_intercept() -> None:
    values = [13705, 14639, 14747, 14678, 13927]
    default, shifted = steady_state(values), steady_state(values, rounds=[7, 8, 9, 10, 11])
    assert default.rounds == (1, 2, 3, 4, 5)
    assert default.slope == pytest.approx(shifted.slope)
    assert default.intercept == pytest.approx(shifted.intercept + 6 * shifted.slope)
    assert default.steady == shifted.steady


def test_uneven_round_numbers_use_the_window_span() -> None:
    result = steady_state([10, 20], rounds=[1, 3])
    assert result.slope == 5 and result.slope_excursion == 10


@pytest.mark.parametrize(
    ("values", "rounds"),
    [([1.0], None), ([1, 2, 3], [1, 2]), ([1, math.nan, 3], None), ([1, math.inf], None), ([1, 2], [4, 4])],
)
def test_bad_windows_raise_a_clear_error(values: list[float], rounds: list[int] | None) -> None:
    with pytest.raises(PtsbenchError, match="steady_state"):
        steady_state(values, rounds)


def test_to_dict_is_json_ready() -> None:
    import json

    data = steady_state([1, 2, 3, 4, 5]).to_dict()
    assert json.loads(json.dumps(data))["steady"] is False
    assert data["slope"] == 1


def test_public_api_is_the_same_function() -> None:
    import ptsbench
    from ptsbench.pts.steady import steady_state

    assert ptsbench.steady_state is steady_state
    result = ptsbench.steady_state([13705, 14639, 14747, 14678, 13927], rounds=[7, 8, 9, 10, 11])
    assert result.steady and result.average == 14339.2
