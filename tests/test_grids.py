"""Grids of settings for excitation designs and identifiability studies (nlid_core.grids)."""

from __future__ import annotations

import numpy as np
import pytest

from nlid_core.errors import ModelSpecError
from nlid_core.grids import design_search_grid, log_grid, step_frequencies, step_levels


def test_step_frequencies_span_the_band_evenly():
    assert step_frequencies(1.0, 4.0, 4) == [1.0, 2.0, 3.0, 4.0]
    assert step_frequencies(2.0, 2.0, 2) == [2.0, 2.0]
    with pytest.raises(ModelSpecError, match="`steps` must be an integer >= 2"):
        step_frequencies(1.0, 4.0, 1)
    with pytest.raises(ModelSpecError, match="`f1_hz` must be finite"):
        step_frequencies(1.0, float("nan"), 3)


def test_step_levels_end_at_the_full_amplitude():
    assert step_levels(4) == [0.25, 0.5, 0.75, 1.0]
    assert step_levels(1) == [1.0]
    with pytest.raises(ModelSpecError, match="`steps`"):
        step_levels(0)


def test_log_grid_is_evenly_spaced_in_decades():
    grid = log_grid(-6, 2)
    assert grid.size == 13 and grid[0] == pytest.approx(1e-6) and grid[-1] == pytest.approx(1e2)
    np.testing.assert_allclose(np.diff(np.log10(grid)), 8 / 12)
    with pytest.raises(ModelSpecError, match="`hi_exp` must be at least `lo_exp`"):
        log_grid(2, -6)


def test_design_search_grid_around_a_starting_design():
    amplitudes, bands = design_search_grid(30.0, 0.5, 10.0, 500.0)
    assert amplitudes == pytest.approx((10.0, 20.0, 30.0))
    assert bands == ((0.5, 5.0), (0.5, 10.0), (0.5, 15.0))
    _, narrow = design_search_grid(30.0, 0.5, 10.0, 60.0)  # 15 Hz is not below a fifth of 60 Hz
    assert narrow == ((0.5, 5.0), (0.5, 10.0))
    assert design_search_grid(0.0, 0.5, 10.0, 500.0)[0] == (10.0, 20.0, 30.0)
    with pytest.raises(ModelSpecError, match="`amplitude_n` must be at least 0"):
        design_search_grid(-1.0, 0.5, 10.0, 500.0)
