"""The two-stage start: the segmented stage is skipped only when the equation-error start already simulates well."""

from __future__ import annotations

import numpy as np
import pytest

from nlid_core.estimate import identify, robust_start
from nlid_core.estimate._threads import single_blas_thread
from nlid_core.examples import EXAMPLES, make_example

SEED_TERMS = tuple(EXAMPLES["seed"].terms)


def _both(rec, monkeypatch):
    """The default fit, and the fit with the segmented stage always run (the behaviour before the shortcut)."""
    fast = identify(rec, SEED_TERMS)
    monkeypatch.setattr(robust_start, "GOOD_START_NRMSE", -1.0)
    full = identify(rec, SEED_TERMS)
    return fast, full


def _assert_same(fast, full):
    for a, b in zip(fast.estimates, full.estimates, strict=True):
        assert abs(a.value - b.value) <= 1e-3 * b.stderr, a.name  # far below the statistical scatter
        assert a.stderr == pytest.approx(b.stderr, rel=1e-4), a.name
        assert a.flags == b.flags, a.name


def test_a_good_start_skips_the_segments_and_gives_the_same_fit(monkeypatch):
    # Whether the segmented start simulates better than the (already good) equation-error start, and so
    # shows in the stages, depends on the noise draw (about half of them): noise seed 1 is one where it
    # does, so the two fits compared here start from different points.
    fast, full = _both(make_example("seed", overrides={"seed": 1}), monkeypatch)
    assert "segmented-output-error" not in fast.stages and "segmented-output-error" in full.stages
    assert fast.success and full.success
    _assert_same(fast, full)


def test_a_biased_start_still_gets_the_segmented_start(monkeypatch):
    # displacement only, noisy: the derived acceleration biases equation error (NRMSE ~0.3 when simulated)
    rec = make_example("seed", overrides={"measured": ("x",), "noise": {"x": 2e-3}})
    fast, full = _both(rec, monkeypatch)
    assert "segmented-output-error" in fast.stages
    assert any("short segments" in w for w in fast.warnings)
    _assert_same(fast, full)


def test_output_error_from_a_start_that_cannot_be_simulated_takes_the_automatic_guess():
    from nlid_core.estimate import FitOptions
    from nlid_core.models import TermModel

    rec = make_example("seed")
    model = TermModel(SEED_TERMS)
    start = model.default_parameters().with_values({"m0": 2.0, "k1": 800.0, "k3": -1e9})  # escapes at once
    fit = identify(rec, model, params=start, options=FitOptions(method="output-error"))
    assert fit.success, fit.message
    note = next(w for w in fit.warnings if w.startswith("the given start values could not be simulated"))
    assert "automatic initial guess" in note and "cannot be simulated" not in note
    assert fit.values["k3"] == pytest.approx(2e4, rel=0.01)


def test_one_blas_thread_is_restored_after_the_block():
    from nlid_core.estimate._threads import _openblas_controls

    before = [get() for _, get in _openblas_controls()]
    with single_blas_thread(), single_blas_thread():
        assert all(get() == 1 for _, get in _openblas_controls())
    assert [get() for _, get in _openblas_controls()] == before
    a = np.random.default_rng(0).standard_normal((50, 3))
    with single_blas_thread():
        np.linalg.svd(a, full_matrices=False)  # works inside the block
