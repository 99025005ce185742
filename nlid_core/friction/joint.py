r"""The least-squares problem behind stages 2 and 3: pre-sliding displacement and plateau points.

Rows of the normalised residual:

* each pre-sliding record k: :math:`(x^{sim}_k(\theta) - (x_k - o_k))/\sigma_k`, the model simulated from
  rest with the measured force, ``o_k`` the record's displacement offset (estimated: a sensor's zero is
  never where the bristles are unloaded) and :math:`\sigma_k` its noise level;
* each plateau point i (stage 3 only): :math:`w_i\,(F(v_i;\theta) - F_i)`, ``w_i`` the inverse effective
  standard error of the point.

The Jacobian is exact for the simulated rows (the simulator's forward sensitivities) and by central
differences for the curve rows (closed form, four parameters). :func:`solve` minimises over a chosen
subset of parameters (and the offsets) with scipy's trust-region reflective method in variables scaled
by the start values; :func:`evaluate` returns the residual and the Jacobian over *every* parameter, which
is how stage 2 carries stage 1's uncertainty over.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from ..dynamics.integrate import integrate
from ..identifiability import column_norms, uncertainty_from_jacobian
from ..models import TermModel
from ..params import FloatArray
from ..progress import ProgressFn
from ..record import Record
from ..simulate import simulate
from .plateaus import Plateau
from .steady import curve_force

__all__ = ["JointData", "JointSolution", "evaluate", "solve", "noise_levels", "sandwich_covariance", "scale_columns",
           "CURVE_PARAMS"]

#: Parameters the steady curve depends on.
CURVE_PARAMS = ("Fc", "Fs", "vs", "sigma2")
#: Parameters that may be zero (the others must stay positive).
_NONNEGATIVE = ("sigma0", "sigma1", "sigma2")


@dataclass(frozen=True, kw_only=True)
class JointData:
    """What the residual is made of.

    Attributes
    ----------
    model : TermModel
    records : tuple of Record
        Pre-sliding records (t, f, x), starting at rest.
    sigma : tuple of float, m
        Noise level of each record's displacement.
    points : tuple of Plateau
        Plateau points (empty in stage 2).
    weights : (len(points),) ndarray, 1/N
        Inverse effective standard errors of the points.
    """

    model: TermModel
    records: tuple[Record, ...]
    sigma: tuple[float, ...]
    points: tuple[Plateau, ...] = ()
    weights: FloatArray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True, kw_only=True)
class JointSolution:
    """Outcome of :func:`solve`.

    Attributes
    ----------
    success : bool
        The fit improved on its start and its residual is finite.
    converged : bool
        ... and the solver met its tolerances (not its evaluation limit).
    message : str
    values : mapping
        Every model parameter (the free ones estimated).
    offsets : (n_records,) ndarray, m
    residual : ndarray
        Normalised residual at the solution.
    jacobian : ndarray
        Over every model parameter then every offset.
    names : tuple of str
        Column names of ``jacobian``.
    cost : float
        ½‖r‖².
    nfev : int
    """

    success: bool
    converged: bool
    message: str
    values: Mapping[str, float]
    offsets: FloatArray
    residual: FloatArray
    jacobian: FloatArray
    names: tuple[str, ...]
    cost: float
    nfev: int


def _simulations(data: JointData, theta: FloatArray, sens: bool) -> list[tuple[FloatArray, FloatArray | None]] | None:
    out: list[tuple[FloatArray, FloatArray | None]] = []
    for r in data.records:
        sim = simulate(data.model, r.t, r.f, theta, (0.0, 0.0), sensitivities=sens, outputs=("x",),
                       initial_state_sensitivities=False, method="sdirk")
        if not sim.success:
            return None
        out.append((sim.x, sim.sens["x"] if sens and sim.sens is not None else None))
    return out


def evaluate(data: JointData, values: Mapping[str, float], offsets: FloatArray, *, jacobian: bool = True
             ) -> tuple[FloatArray, FloatArray | None]:
    """Normalised residual and (optionally) its Jacobian over every parameter and offset.

    Returns ``(None``-free) arrays; a diverging simulation gives a residual of NaN.
    """
    model = data.model
    names = model.param_names
    theta = np.array([float(values[n]) for n in names])
    nrec = len(data.records)
    p = len(names)
    rows_r: list[FloatArray] = []
    rows_j: list[FloatArray] = []
    if data.points:
        v = np.array([q.velocity for q in data.points])
        f = np.array([q.force for q in data.points])
        rows_r.append(data.weights * (curve_force("stribeck", values, v) - f))
        if jacobian:
            jc = np.zeros((v.size, p + nrec))
            for n in CURVE_PARAMS:
                i = names.index(n)
                h = 1e-6 * max(abs(float(values[n])), 1e-12)
                vp, vm = dict(values), dict(values)
                vp[n] = float(values[n]) + h
                vm[n] = float(values[n]) - h
                jc[:, i] = data.weights * (curve_force("stribeck", vp, v) - curve_force("stribeck", vm, v)) / (2 * h)
            rows_j.append(jc)
    sims = _simulations(data, theta, jacobian)
    if sims is None:
        rows = sum(r.n for r in data.records) + len(data.points)
        return np.full(rows, np.nan), (np.zeros((rows, p + nrec)) if jacobian else None)
    for k, (r, (x, s)) in enumerate(zip(data.records, sims, strict=True)):
        sig = data.sigma[k]
        rows_r.append((x - (r.x - offsets[k])) / sig)
        if jacobian:
            jk = np.zeros((r.n, p + nrec))
            assert s is not None
            jk[:, :p] = s[:, :p] / sig
            jk[:, p + k] = 1.0 / sig
            rows_j.append(jk)
    res = np.concatenate(rows_r)
    return res, (np.vstack(rows_j) if jacobian else None)


def solve(data: JointData, values: Mapping[str, float], free: Sequence[str], *,
          offsets: FloatArray | None = None, max_nfev: int = 100,
          progress: ProgressFn | None = None, stage: str = "joint") -> JointSolution:
    """Least squares over the parameters ``free`` and every record's offset, from ``values``;
    ``progress(stage, fraction, message)`` is called after each evaluation."""
    names = data.model.param_names
    nrec = len(data.records)
    p = len(names)
    off0 = np.zeros(nrec) if offsets is None else np.asarray(offsets, dtype=np.float64)
    scale = np.array([abs(float(values[n])) or 1.0 for n in free])
    sig = np.asarray(data.sigma, dtype=np.float64)
    cols = [names.index(n) for n in free] + [p + k for k in range(nrec)]
    cache: dict[bytes, tuple[FloatArray, FloatArray | None]] = {}
    count = [0]

    def unpack(u: FloatArray) -> tuple[dict[str, float], FloatArray]:
        vals = dict(values)
        for n, s, ui in zip(free, scale, u[: len(free)], strict=True):
            vals[n] = float(s * ui)
        return vals, u[len(free):] * sig

    def both(u: FloatArray) -> tuple[FloatArray, FloatArray | None]:
        key = u.tobytes()
        if key not in cache:
            cache.clear()
            vals, off = unpack(u)
            cache[key] = evaluate(data, vals, off)
            count[0] += 1
            if progress is not None:
                progress(stage, min(count[0] / max_nfev, 1.0), f"evaluation {count[0]}")
        return cache[key]

    def fun(u: FloatArray) -> FloatArray:
        r = both(u)[0]
        return np.where(np.isfinite(r), r, 1e10)

    def jac(u: FloatArray) -> FloatArray:
        J = both(u)[1]
        assert J is not None
        return np.asarray(J[:, cols] * np.concatenate([scale, sig]))

    u0 = np.concatenate([np.ones(len(free)), off0 / sig])
    lb = np.concatenate([[0.0 if n in _NONNEGATIVE else 1e-9 for n in free], np.full(nrec, -np.inf)])
    r0 = fun(u0)
    sol = least_squares(fun, u0, jac=jac, bounds=(lb, np.full(u0.size, np.inf)), method="trf", x_scale="jac",
                        xtol=1e-7, ftol=1e-6, gtol=1e-8, max_nfev=max_nfev)
    vals, off = unpack(sol.x)
    r, J = evaluate(data, vals, off)
    assert J is not None
    ok = bool(np.all(np.isfinite(r))) and float(r @ r) <= float(r0 @ r0) * (1 + 1e-12)
    msg = str(sol.message) if ok else f"the fit did not improve on its start ({sol.message})"
    return JointSolution(success=ok, converged=ok and sol.status > 0, message=msg, values=vals, offsets=off,
                         residual=r,
                         jacobian=J, names=(*names, *(f"offset[{r.name}]" for r in data.records)),
                         cost=0.5 * float(r @ r), nfev=int(sol.nfev))


def noise_levels(data: JointData, residual: FloatArray, n_free: int) -> tuple[float, ...]:
    """Per-record noise level re-estimated from a residual (in the current normalisation)."""
    out = []
    row = len(data.points)
    for k, r in enumerate(data.records):
        part = residual[row:row + r.n] * data.sigma[k]
        row += r.n
        out.append(math.sqrt(float(part @ part) / max(r.n - n_free / max(len(data.records), 1) - 1, 1)))
    return tuple(out)


def scale_columns(J: FloatArray) -> FloatArray:
    """Column norms of ``J`` (:func:`nlid_core.identifiability.column_norms`), zero columns counted as one, to
    divide by: the columns differ by many orders of magnitude (N/m against metres of offset)."""
    norms = column_norms(J)
    return np.where(norms > 0, norms, 1.0)


def sandwich_covariance(J: FloatArray, r: FloatArray, blocks: Sequence[tuple[int, int]]) -> tuple[FloatArray, int]:
    """Covariance of a least-squares estimate whose residual may be coloured, and the lag window used: the
    Newey–West covariance of the one uncertainty path (:func:`nlid_core.identifiability.uncertainty_from_jacobian`
    with ``serial_blocks``; singular values below 1e-12 of the largest count as zero). A force measured with
    noise drives the simulated displacement with filtered noise: the residual is then coloured and the plain
    formula would understate the uncertainty."""
    unc = uncertainty_from_jacobian(J, r, [f"p{k}" for k in range(J.shape[1])], serial_blocks=blocks,
                                    rank_rtol=1e-12)
    return np.asarray(unc.covariance, dtype=np.float64), unc.serial_lag


def input_noise_effect(data: JointData, values: Mapping[str, float], offsets: FloatArray, free: Sequence[str],
                       noise_f: Sequence[float], *, draws: int = 16, rng: np.random.Generator | int | None = 0
                       ) -> tuple[FloatArray, FloatArray]:
    r"""What noise on the measured force does to the estimate: its covariance and its bias (SIMEX).

    The force drives the simulation, so its noise enters through the model itself: the displacement
    it causes is coloured and non-stationary (pre-sliding creep integrates it), and because that part of
    the residual depends on θ (a better damped model amplifies the noise less) output error is biased —
    the errors-in-variables problem. Both are estimated by simulation extrapolation (Cook and Stefanski,
    JASA 89(428), 1994, doi:10.1080/01621459.1994.10476871): fresh white noise of the records' force-noise
    levels ``noise_f`` is added to the measured force ``draws`` times, and from the estimate θ̂ one
    Gauss–Newton step is taken on each noisier record, :math:`\delta\theta_k = -J_k^{+} r_k` (residual and
    Jacobian of the noisier record, over the parameters ``free`` and the offsets). With the noise variance
    doubled, the mean step estimates the bias of θ̂ (linear extrapolation in the variance back to zero
    noise gives θ̂ − mean), and the spread of the steps its covariance. Curve-point rows (stage 3) are not
    perturbed.

    Returns
    -------
    cov : (q, q) ndarray
        Covariance of the steps (q = len(free) + number of records; offsets last).
    mean : (q,) ndarray
        Mean step: the estimated bias of θ̂ due to the force noise.
    """
    gen = np.random.default_rng(rng)
    model = data.model
    names = model.param_names
    theta = np.array([float(values[n]) for n in names])
    y0 = model.initial_state((0.0, 0.0), theta)
    cols = [names.index(n) for n in free]
    nrec = len(data.records)
    q = len(cols) + nrec
    r0, j0 = evaluate(data, values, offsets)
    if j0 is None or not np.all(np.isfinite(r0)):
        return np.full((q, q), np.inf), np.zeros(q)
    full_cols = cols + [len(names) + k for k in range(nrec)]
    npts = len(data.points)

    def run(r: Record, f: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # differences between runs at one tolerance matter, not their absolute accuracy: rtol 1e-6 keeps the
        # integration error (~1e-5 of the motion, mostly common to the runs) far below the displacement that
        # the force noise causes
        tr = integrate(model, r.t, f, theta, y0, method="sdirk", rtol=1e-6, sensitivities=True, outputs=("x",))
        if not tr.success or tr.sens is None:
            return None
        return tr.output("x"), tr.sens["x"]

    base = [run(r, r.f) for r in data.records]
    if any(b is None for b in base):
        return np.full((q, q), np.inf), np.zeros(q)
    steps = []
    for _ in range(draws):
        res = [r0[:npts]]
        jac = [j0[:npts, full_cols]]
        row = npts
        ok = True
        for k, r in enumerate(data.records):
            sig = data.sigma[k]
            e = float(noise_f[k]) * gen.standard_normal(r.n) if noise_f[k] > 0 else np.zeros(r.n)
            out = run(r, r.f + e)
            b = base[k]
            if out is None or b is None:
                ok = False
                break
            x, sens = out
            # the residual at θ̂ plus what the extra noise changes (the same tolerance on both runs)
            res.append(r0[row:row + r.n] + (x - b[0]) / sig)
            jk = np.zeros((r.n, q))
            jk[:, :len(cols)] = sens[:, cols] / sig
            jk[:, len(cols) + k] = 1.0 / sig
            jac.append(jk)
            row += r.n
        if not ok:
            continue
        J = np.vstack(jac)
        norms = scale_columns(J)
        step, *_ = np.linalg.lstsq(J / norms, -np.concatenate(res), rcond=1e-12)
        steps.append(step / norms)
    if len(steps) < 2:
        return np.full((q, q), np.inf), np.zeros(q)
    arr = np.array(steps)
    return np.atleast_2d(np.cov(arr, rowvar=False)), arr.mean(axis=0)
