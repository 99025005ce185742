"""Error measures of nlid_core.metrics used to compare simulated with measured signals."""

from __future__ import annotations

import numpy as np
import pytest

from nlid_core.errors import DataValidationError
from nlid_core.metrics import acf_max_lag, relative_error, residual, rms


def test_residual_is_predicted_minus_measured_from_start():
    measured = np.array([1.0, 2.0, 3.0, 4.0])
    predicted = np.array([1.5, 2.0, 2.0, 5.0])
    np.testing.assert_array_equal(residual(measured, predicted), [0.5, 0.0, -1.0, 1.0])
    np.testing.assert_array_equal(residual(measured, predicted, start=2), [-1.0, 1.0])
    assert residual(measured, predicted, start=4).size == 0
    assert rms(residual(measured, predicted, start=2)) == pytest.approx(1.0)


@pytest.mark.parametrize("start", [-1, 5])
def test_residual_rejects_a_start_outside_the_signal(start):
    with pytest.raises(DataValidationError, match="`start` must lie in 0..4"):
        residual(np.zeros(4), np.zeros(4), start=start)


def test_residual_rejects_signals_of_different_lengths():
    with pytest.raises(DataValidationError, match="`measured` and `predicted`"):
        residual(np.zeros(4), np.zeros(3))


def test_relative_error_is_infinite_at_a_zero_value():
    rel = relative_error([[0.1, 1.0], [np.nan, 2.0]], [[-2.0, 0.0], [1.0, 4.0]])
    np.testing.assert_array_equal(rel, [[0.05, np.inf], [np.nan, 0.5]])
    assert relative_error(0.3, -3.0) == pytest.approx(0.1)


@pytest.mark.parametrize(("n", "cap", "lag"),
                         [(10, 100, 5), (400, 100, 40), (5000, 100, 100), (5000, 30, 30), (0, 3, 5)])
def test_acf_max_lag_is_a_tenth_of_the_samples_within_limits(n, cap, lag):
    assert acf_max_lag(n, cap=cap) == lag
