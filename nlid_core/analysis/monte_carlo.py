"""Monte Carlo check of a design: predicted against realised scatter of output-error estimates."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelSpecError
from ..estimate import FitOptions, output_error
from ..models import TermModel
from ..params import ParameterSet
from ..record import from_arrays
from ..simulate import simulate_reference
from ._common import FloatArray, ProgressFn, RngLike, _check_outputs, _model, _noise_map, _param_set, _rng, _Steps
from .design import DesignPrediction, predict_uncertainty

__all__ = ["MonteCarloCheck", "monte_carlo_check"]


@dataclass(frozen=True, kw_only=True)
class MonteCarloCheck:
    """Predicted against realised scatter of output-error estimates on simulated tests.

    Attributes
    ----------
    success : bool
        False when the truth diverges or fewer than two runs converged.
    message : str
    names : tuple of str
    truth : (p,) ndarray
    predicted_std : (p,) ndarray
        From :func:`predict_uncertainty`.
    realised_std : (p,) ndarray
        Sample standard deviation of the estimates (ddof = 1).
    ratio : (p,) ndarray
        ``realised_std / predicted_std``.
    mean, bias : (p,) ndarray
        Mean estimate and mean − truth.
    estimates : (runs, p) ndarray
        Converged runs only.
    n_runs, n_ok : int
    worst_parameter : str
        Largest |log ratio|.
    worst_ratio : float
    prediction : DesignPrediction
    """

    success: bool
    message: str
    names: tuple[str, ...]
    truth: FloatArray
    predicted_std: FloatArray
    realised_std: FloatArray
    ratio: FloatArray
    mean: FloatArray
    bias: FloatArray
    estimates: FloatArray
    n_runs: int
    n_ok: int
    worst_parameter: str
    worst_ratio: float
    prediction: DesignPrediction


def monte_carlo_check(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    t: ArrayLike,
    force: ArrayLike,
    *,
    noise_sd: float | Mapping[str, float],
    n_runs: int = 20,
    rng: RngLike = None,
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
    progress: ProgressFn | None = None,
) -> MonteCarloCheck:
    """Check :func:`predict_uncertainty` by simulated tests.

    The clean response is computed once by ``solve_ivp`` (DOP853, rtol 1e-10)
    on the cubic spline through the force samples; ``n_runs`` times white
    noise is added to the output channels and the parameters are identified by
    output error started at the truth with the initial state known.

    Parameters
    ----------
    model : TermModel, str or sequence of str
    params_values : mapping, ParameterSet or array_like
        True values of every term.
    t : (n,) array_like, s
        Sample times.
    force : (n,) array_like, N
        Force at those times.
    noise_sd : float or mapping
        Measurement-noise standard deviation (per output channel when a mapping).
    n_runs : int
        Simulated tests.
    rng : numpy.random.Generator, int or None
        Source of the noise.
    outputs : sequence of {"x", "v", "a"}
        Measured and fitted channels.
    x0 : (2,) sequence
        Initial displacement and velocity (known to the fits).
    input_hold : {"cubic", "foh", "zoh"}
        Input reconstruction of the fits.
    progress : callable or None
        ``progress(stage, fraction, message)``, e.g. ``("monte carlo", 0.5, "simulated test 7 of 12: evaluation
        3")``; the reference simulation comes first.

    Returns
    -------
    MonteCarloCheck
    """
    if n_runs < 2:
        raise ModelSpecError(f"`n_runs` must be >= 2, got {n_runs}")
    mdl = _model(model)
    ps = _param_set(mdl, params_values)
    outs = _check_outputs(outputs)
    sd = _noise_map(noise_sd, outs)
    gen = _rng(rng)
    t_arr = np.asarray(t, dtype=np.float64).reshape(-1)
    f_arr = np.asarray(force, dtype=np.float64).reshape(-1)
    pred = predict_uncertainty(mdl, ps, t_arr, f_arr, noise_sd=sd, outputs=outs, x0=x0, input_hold=input_hold,
                               label="monte carlo")
    names = ps.free_names
    fidx = np.flatnonzero(ps.free_mask)
    truth = ps.values[fidx]
    p = fidx.size
    nan = np.full(p, np.nan)

    def failed(message: str, n_ok: int = 0) -> MonteCarloCheck:
        return MonteCarloCheck(success=False, message=message, names=names, truth=truth,
                               predicted_std=pred.stderr, realised_std=nan, ratio=nan, mean=nan, bias=nan,
                               estimates=np.zeros((0, p)), n_runs=n_runs, n_ok=n_ok, worst_parameter="",
                               worst_ratio=math.nan, prediction=pred)

    if not pred.success:
        return failed(pred.message)
    steps = _Steps(progress, "monte carlo", n_runs + 1)
    steps.step(0, "reference simulation (solve_ivp)")
    clean = simulate_reference(mdl, t_arr, f_arr, ps.values, x0, input_hold="cubic", rtol=1e-10,
                               atol=1e-12 * max(pred.x_max, 1e-300))
    if not clean.success:
        return failed(f"the true model diverges: {clean.message}")
    rest = abs(float(x0[0])) == 0 and abs(float(x0[1])) == 0
    opts = FitOptions(method="output-error", outputs=outs, initial_state="rest" if rest else "data",
                      input_hold=input_hold)
    x0_fit = None if rest else [(float(x0[0]), float(x0[1]))]
    ests = []
    for k in range(n_runs):
        cb = steps.step(k + 1, "simulated test")
        noisy = {c: clean.output(c) + (sd[c] * gen.standard_normal(t_arr.size) if c in sd else 0.0)
                 for c in ("x", "v", "a") if c == "x" or c in outs}
        rec = from_arrays(t_arr, f_arr, noisy["x"], noisy.get("v"), noisy.get("a"), name="monte carlo")
        res = output_error(rec, mdl, ps, opts, x0=x0_fit, diagnostics=False, progress=cb)
        if res.success:
            ests.append(res.parameters.values[fidx])
    if len(ests) < 2:
        return failed(f"only {len(ests)} of {n_runs} runs converged", len(ests))
    est = np.array(ests)
    realised = est.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = realised / pred.stderr
    lr = np.abs(np.log(np.where(ratio > 0, ratio, np.nan)))
    worst = int(np.nanargmax(lr)) if np.any(np.isfinite(lr)) else 0
    mean = est.mean(axis=0)
    msg = (f"{est.shape[0]} of {n_runs} runs converged; realised/predicted standard deviation from"
           f" {float(np.nanmin(ratio)):.3g} to {float(np.nanmax(ratio)):.3g} (worst {names[worst]})")
    return MonteCarloCheck(success=True, message=msg, names=names, truth=truth, predicted_std=pred.stderr,
                           realised_std=realised, ratio=ratio, mean=mean, bias=mean - truth, estimates=est,
                           n_runs=n_runs, n_ok=int(est.shape[0]), worst_parameter=names[worst],
                           worst_ratio=float(ratio[worst]), prediction=pred)
