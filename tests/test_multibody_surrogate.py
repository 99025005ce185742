"""Chebyshev surrogate: basis, design, least-squares fit, held-out error, and bounds over sub-boxes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev as C
from scipy.optimize import minimize

from nlid_core.errors import ModelSpecError, SimulationError
from nlid_core.runners import runner
from nlid_core.multibody.surrogate import (
    ChebyshevSurrogate,
    basis_indices,
    build_surrogate,
    fit_surrogate,
    sample_design,
)

T41 = np.linspace(0.0, 2.0, 41)
LOWER = np.array([0.6, 0.4, 1.5e7])        # theta1 rad, theta2 rad, E Pa: very different scales
UPPER = np.array([1.0, 0.7, 2.5e7])


def pendulum_like(x: np.ndarray) -> np.ndarray:
    """A smooth stand-in for the tip response: 82 outputs of (theta1, theta2, E)."""
    th1, th2, e = x
    w = 3.0 + 0.5 * np.sin(th1) + 0.2 * (e / 2e7)
    return np.concatenate([np.cos(th1) + 2.0 * np.cos(th2 + w * T41) * np.exp(-0.1 * T41),
                           np.sin(th1) - 2.0 * np.sin(th2 + 0.8 * w * T41)])


def failing(x: np.ndarray) -> np.ndarray:
    if x[0] > 0.9:
        raise SimulationError(f"diverged at `theta1` = {x[0]}")
    return np.array([x[0], x[1]])


def nan_far_out(x: np.ndarray) -> np.ndarray:
    return np.array([x[0], np.nan if x[1] > 0.65 else x[1]])


def from_eta_poly(eta_fn, d: int, order: int, kind: str = "total", m: int | None = None) -> ChebyshevSurrogate:
    """Surrogate on [-1, 1]^d fitted to a polynomial in its span (exact)."""
    p = len(basis_indices(d, order, kind))
    eta = sample_design(d, 2 * p, seed=5)
    return fit_surrogate(eta, eta_fn(eta), -np.ones(d), np.ones(d), order=order, kind=kind)


# --- basis and design --------------------------------------------------------------------------

@pytest.mark.parametrize(("d", "p"), [(1, 1), (2, 2), (3, 4), (4, 3)])
def test_basis_sizes(d, p):
    total = basis_indices(d, p, "total")
    tensor = basis_indices(d, p, "tensor")
    assert len(total) == math.factorial(p + d) // (math.factorial(p) * math.factorial(d))
    assert len(tensor) == (p + 1) ** d
    assert total.dtype == np.int64 and np.all(total.sum(axis=1) <= p) and np.all(tensor.max(axis=1) <= p)
    assert len({tuple(r) for r in total}) == len(total) and np.all(total[0] == 0)
    assert np.all(np.diff(total.sum(axis=1)) >= 0)


@pytest.mark.parametrize("args", [(0, 2, "total"), (2, 0, "total"), (2, 2, "sparse"), (2.0, 2, "total")])
def test_basis_rejects_bad_arguments(args):
    with pytest.raises(ModelSpecError):
        basis_indices(*args)


def test_design_is_deterministic_space_filling_and_centred():
    a = sample_design(3, 70, seed=4)
    assert a.shape == (70, 3) and np.all(a[0] == 0.0) and np.all(np.abs(a) <= 1.0)
    assert np.array_equal(a, sample_design(3, 70, seed=4))
    assert not np.array_equal(a, sample_design(3, 70, seed=5))
    dist = np.linalg.norm(a[:, None] - a[None], axis=2) + np.eye(70) * 9
    assert dist.min() > 0.05
    # arcsine density: more points near the edges than a uniform design (P(|eta| > 0.9) = 0.29 vs 0.1)
    big = sample_design(1, 1025, seed=0)
    assert 0.25 < np.mean(np.abs(big) > 0.9) < 0.33
    assert sample_design(2, 1).tolist() == [[0.0, 0.0]]
    with pytest.raises(ModelSpecError):
        sample_design(2, 0)


# --- fit ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["total", "tensor"])
def test_polynomials_in_the_span_are_reproduced(kind):
    rng = np.random.default_rng(0)
    d, p = 3, 3
    idx = basis_indices(d, p, kind)
    coef = rng.normal(size=(len(idx), 4))
    x = np.array([0.8, 0.55, 2e7]) + rng.uniform(-1, 1, (2 * len(idx), 3)) * (UPPER - LOWER) / 2
    eta = (x - (LOWER + UPPER) / 2) / ((UPPER - LOWER) / 2)

    def truth(eta_):
        t = C.chebvander(eta_, p)                  # (N, d, p+1), independent evaluation
        psi = np.prod(t[:, np.arange(d)[None, :], idx], axis=2)
        return psi @ coef

    xh = np.array([0.8, 0.55, 2e7]) + rng.uniform(-1, 1, (30, 3)) * (UPPER - LOWER) / 2
    eh = (xh - (LOWER + UPPER) / 2) / ((UPPER - LOWER) / 2)
    s = fit_surrogate(x, truth(eta), LOWER, UPPER, order=p, kind=kind, names=("theta1", "theta2", "E"),
                      holdout_samples=xh, holdout_values=truth(eh))
    assert np.allclose(s.coef, coef, atol=1e-9)
    assert s.holdout_max < 1e-9 and s.fit_rms < 1e-10 and s.n_holdout == 30
    assert s.holdout_rms_per_output.shape == (4,) and s.names == ("theta1", "theta2", "E")
    assert np.allclose(s.evaluate(xh), truth(eh), atol=1e-9)
    assert s.evaluate(xh[0]).shape == (4,)


def test_built_surrogate_of_a_smooth_response():
    s2 = build_surrogate(pendulum_like, LOWER, UPPER, order=2, n_holdout=30, seed=1)
    s4 = build_surrogate(pendulum_like, LOWER, UPPER, order=4, n_holdout=30, seed=1)
    assert s2.n_terms == 10 and s2.samples.shape == (20, 3) and s2.values.shape == (20, 82)
    assert s4.n_terms == 35 and s4.samples.shape == (70, 3)
    assert np.allclose(s4.samples[0], (LOWER + UPPER) / 2)            # centre included
    assert np.all((s4.samples >= LOWER) & (s4.samples <= UPPER))
    # measured: order 2 rel. rms 1.3e-3, order 4 rel. rms 4.2e-6; condition numbers 3.9 and 5.7
    assert s4.holdout_rel_rms < 1e-4 < s2.holdout_rel_rms < 1e-2
    assert s4.holdout_rms < s2.holdout_rms / 50
    assert s2.condition_number < 10 and s4.condition_number < 10
    assert np.isnan(build_surrogate(pendulum_like, LOWER, UPPER).holdout_rms)


def test_build_surrogate_through_a_process_pool_matches_serial():
    with runner(workers=2) as r:
        a = build_surrogate(pendulum_like, LOWER, UPPER, order=2, n_holdout=4, runner=r)
    b = build_surrogate(pendulum_like, LOWER, UPPER, order=2, n_holdout=4)
    assert np.array_equal(a.coef, b.coef) and a.holdout_max == b.holdout_max


def test_failed_runs_name_the_sample():
    with pytest.raises(SimulationError, match=r"sample \d+ \(x1=0\.9\d*, x2=.*diverged at `theta1`"):
        build_surrogate(failing, [0.6, 0.4], [1.0, 0.7], order=2)
    with pytest.raises(SimulationError, match="non-finite"):
        build_surrogate(nan_far_out, [0.6, 0.4], [1.0, 0.7], order=2)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"lower": [1.0, 0.4]}, "`lower` must be < `upper`"),
    ({"order": 0}, "`order`"),
    ({"kind": "sparse"}, "`kind`"),
    ({"n_samples": 5}, "`n_samples` must be an integer ≥ P = 6"),
    ({"n_holdout": -1}, "`n_holdout`"),
    ({"names": ("a",)}, "`names`"),
])
def test_build_rejects_bad_arguments(kwargs, match):
    args = {"lower": [0.6, 0.4], "upper": [1.0, 0.7], "order": 2, **kwargs}
    with pytest.raises(ModelSpecError, match=match):
        build_surrogate(failing, args.pop("lower"), args.pop("upper"), **args)


def test_fit_rejects_bad_data():
    eta = sample_design(2, 12)
    with pytest.raises(ModelSpecError, match="`samples` must hold at least P = 6"):
        fit_surrogate(eta[:5], eta[:5], [-1, -1], [1, 1], order=2)
    bad = eta.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ModelSpecError, match="`values` must be finite; row 3"):
        fit_surrogate(eta, bad, [-1, -1], [1, 1], order=2)
    with pytest.raises(ModelSpecError, match="outside"):
        fit_surrogate(eta * 2, eta, [-1, -1], [1, 1], order=2)
    with pytest.raises(ModelSpecError, match="rank-deficient"):
        fit_surrogate(np.repeat(eta[:3], 4, axis=0), np.repeat(eta[:3], 4, axis=0), [-1, -1], [1, 1], order=2)
    with pytest.raises(ModelSpecError, match="`values` must have one row per sample"):
        fit_surrogate(eta, eta[:-1], [-1, -1], [1, 1], order=2)


# --- bounds ------------------------------------------------------------------------------------

def quad3(eta):
    x, y, z = eta[:, 0], eta[:, 1], eta[:, 2]
    return np.stack([(x - 0.3) ** 2 + 2 * (y + 0.2) ** 2 + 0.5 * (z - 0.1) ** 2 + 0.3 * x * y,     # interior min
                     -((x + 0.25) ** 2) - (y - 0.35) ** 2 - 0.7 * (z + 0.15) ** 2,                    # interior max
                     x**2 - y**2 + 0.4 * z,                                                           # saddle
                     (x - 0.5) ** 2 + y], axis=1)                                                     # face minimum


def test_quadratic_bounds_are_exact_with_interior_extremes():
    s = from_eta_poly(quad3, 3, 2)
    lo, hi = np.array([-0.8, -0.9, -0.7]), np.array([0.9, 0.6, 0.8])
    ymin, ymax = s.bounds(lo, hi)
    # exact values: q0 min at the stationary point of a PD quadratic (inside the box)
    h = np.array([[2.0, 0.3, 0.0], [0.3, 4.0, 0.0], [0.0, 0.0, 1.0]])
    xs = np.linalg.solve(h, [0.6, -0.8, 0.1])
    assert np.all((xs > lo) & (xs < hi))
    assert ymin[0] == pytest.approx(quad3(xs[None])[0, 0], abs=1e-12)
    assert ymax[1] == pytest.approx(0.0, abs=1e-12)
    assert ymin[2] == pytest.approx(-0.9**2 + 0.4 * -0.7, abs=1e-12)
    assert ymax[2] == pytest.approx(0.9**2 + 0.4 * 0.8, abs=1e-12)
    assert ymin[3] == pytest.approx(-0.9, abs=1e-12)   # x = 0.5 on the face y = -0.9
    # without polishing the 9-point grid misses the interior extremes
    gmin, _ = s.bounds(lo, hi, polish=0)
    assert gmin[0] - ymin[0] > 1e-4


@pytest.mark.parametrize(("d", "p", "n_brute"), [(2, 3, 201), (2, 4, 201), (3, 3, 201), (3, 4, 101)])
def test_cubic_and_quartic_bounds_match_a_dense_grid(d, p, n_brute):
    """Tensor-product surrogates with random coefficients vs numpy's chebgrid on a dense grid.

    Ours is never worse than the brute-force grid (to 1e-12 of the range), and equals the grid's best
    node refined by L-BFGS-B (an independent local optimiser) to 1e-9 of the range."""
    rng = np.random.default_rng(10 * d + p)
    m = 3
    full = rng.normal(size=(p + 1,) * d + (m,))
    idx = basis_indices(d, p, "tensor")
    coef = full[tuple(idx.T)]

    def fn(eta):
        t = C.chebvander(eta, p)
        return np.prod(t[:, np.arange(d)[None, :], idx], axis=2) @ coef

    s = from_eta_poly(fn, d, p, "tensor")
    lo = np.array([-0.9, -0.6, -1.0][:d])
    hi = np.array([0.7, 1.0, 0.3][:d])
    ymin, ymax = s.bounds(lo, hi)
    g = [np.linspace(lo[j], hi[j], n_brute) for j in range(d)]
    for o in range(m):
        for sign, ours in ((1.0, ymin[o]), (-1.0, -ymax[o])):
            c = sign * full[..., o]
            vals = C.chebgrid2d(*g, c) if d == 2 else C.chebgrid3d(*g, c)
            span = vals.max() - vals.min()
            start = [g[j][i] for j, i in enumerate(np.unravel_index(vals.argmin(), vals.shape))]
            ev = C.chebval2d if d == 2 else C.chebval3d
            ref = minimize(lambda z: ev(*z, c), start, method="L-BFGS-B", bounds=list(zip(lo, hi)),
                           options={"ftol": 1e-15, "gtol": 1e-12}).fun
            assert ours <= vals.min() + 1e-12 * span
            assert abs(ours - min(ref, vals.min())) <= 1e-9 * span


def test_batched_bounds_equal_single_boxes_and_physical_scaling():
    s = build_surrogate(pendulum_like, LOWER, UPPER, order=3, seed=2)
    rng = np.random.default_rng(3)
    c = rng.uniform(LOWER + 0.1 * (UPPER - LOWER), UPPER - 0.1 * (UPPER - LOWER), (40, 3))
    w = rng.uniform(0.0, 0.1 * (UPPER - LOWER), (40, 3))
    w[0] = 0.0                                          # a degenerate box is a point
    ymin, ymax = s.bounds(c - w, c + w)
    assert ymin.shape == ymax.shape == (40, 82)
    for i in (0, 7, 39):
        a, b = s.bounds(c[i] - w[i], c[i] + w[i])
        assert np.array_equal(a, ymin[i]) and np.array_equal(b, ymax[i])
    assert np.allclose(ymin[0], s.evaluate(c[0]), atol=1e-12) and np.allclose(ymax[0], ymin[0], atol=1e-12)
    # bounds enclose the surrogate on a 21^3 grid of the box (corners included) and are no wider than it
    # by more than a grid-spacing error
    g = np.linspace(0.0, 1.0, 21)
    pts = c[5] - w[5] + np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3) * 2 * w[5]
    v = s.evaluate(pts)
    width = v.max(0) - v.min(0)
    assert np.all(v >= ymin[5] - 1e-12) and np.all(v <= ymax[5] + 1e-12)
    assert np.all(v.min(0) - ymin[5] <= 1e-3 * width + 1e-12) and np.all(ymax[5] - v.max(0) <= 1e-3 * width + 1e-12)


def test_bounds_validation_and_clip():
    s = from_eta_poly(quad3, 3, 2)
    with pytest.raises(ModelSpecError, match="`lo` must not exceed `hi`"):
        s.bounds([0.1, 0, 0], [0.0, 1, 1])
    with pytest.raises(ModelSpecError, match="leaves the surrogate's domain"):
        s.bounds([-1.2, 0, 0], [0.0, 1, 1])
    a, b = s.bounds([-1.2, 0, 0], [0.0, 1, 1], clip=True)
    assert np.array_equal(a, s.bounds([-1.0, 0, 0], [0.0, 1, 1])[0])
    with pytest.raises(ModelSpecError, match="`lo` and `hi` must both have shape"):
        s.bounds([0, 0], [1, 1])
    with pytest.raises(ModelSpecError, match="`grid`"):
        s.bounds([0, 0, 0], [1, 1, 1], grid=1)
    with pytest.raises(ModelSpecError, match="`polish`"):
        s.bounds([0, 0, 0], [1, 1, 1], polish=-1)
