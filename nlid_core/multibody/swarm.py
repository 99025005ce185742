r"""Particle swarm minimisers over a box: standard PSO and the improved PSO of Guo & Jin (2025).

Both minimise a *vectorised* fitness ``f(X) -> (k,)`` for a population ``X`` of shape (k, D) over the
box :math:`[\ell, u]`, count fitness evaluations (rows), record the best fitness after the
initialisation and after every iteration, report ``progress(stage, fraction, message)`` and poll ``cancel()``
once per iteration (a cancelled run returns its best point so far with ``success=False`` and message
``"cancelled"``). A non-finite fitness (e.g. a failed forward run) counts as :math:`+\infty`.
Randomness comes only from ``seed``.

**Standard PSO** (:func:`pso`): global-best PSO in the inertia form of Clerc & Kennedy's constriction,

.. math::  v \leftarrow w v + c_1 r_1 (p_i - x) + c_2 r_2 (g - x), \qquad x \leftarrow x + v,

with :math:`w = \chi = 0.7298`, :math:`c_1 = c_2 = \chi \cdot 2.05 = 1.49618` (Clerc & Kennedy 2002),
:math:`r_{1,2} \sim U(0,1)` per particle and coordinate, the velocity clamped to
:math:`V_{\max} = u - \ell` per coordinate (Eberhart & Shi 2000 recommend the constriction factor
with :math:`V_{\max} = X_{\max}`), positions clipped to the box with the velocity component zeroed
where clipped ("absorbing walls"), initial positions uniform in the box and initial velocities
:math:`U(\ell - x, u - x)` (SPSO 2011, Zambrano-Bigiarini et al. 2013).

**Improved PSO** (:func:`ipso`), Guo & Jin (2025) §2, steps 1–7, eqs. 12–19: population R split into
three sub-swarms (default 30, 5, 5); :math:`c_1 = c_2 = c_3 = 1`; :math:`V_{\max} = (u - \ell)/100`
(their :math:`X_{\max}/100`); velocities and positions beyond their range are set to the bound; inertia
decreasing linearly from :math:`w_{start} = 0.8` to :math:`w_{end} = 0.7`,

.. math::  w(t) = w_{start} - (w_{start} - w_{end})\, t / T, \qquad t = 1..T .

The paper prints :math:`\omega = \omega_{start} - \omega_{end}\,(t/Iter)` and calls :math:`\omega_{end}`
"the final weight"; we read it as the final value (the printed formula would end at 0.1).
A high-quality archive S collects every position visited with fitness below ``threshold`` h
(default 0.1; at most ``archive_max`` = 500, keeping the best). Each iteration:

* sub-swarm 1 (eq. 12–13): :math:`v \leftarrow w v + c_1 r_1 (p_i - x) + c_2 r_2 (g - x) + c_3 r_3 (U - x)`,
  :math:`x \leftarrow x + v`, with :math:`U` the mean of a random :math:`\lfloor 0.9 n \rfloor` of the
  n archive members (eq. 14; drawn once per iteration; at least one; the term is dropped while the
  archive is empty);
* sub-swarm 2 (eq. 16–17): with probability 0.5, :math:`v = (x - g)\,r\,\alpha` (α = 0.5,
  :math:`r \sim U(0,1)` per coordinate), :math:`x \leftarrow x + v`; otherwise the sub-swarm-1 rule;
* sub-swarm 3 (eq. 18): with probability 0.5 (and a non-empty archive), x is set to the mean of a
  random :math:`\lfloor 0.5 n \rfloor` of the archive (drawn per particle; velocity kept); otherwise
  the sub-swarm-1 rule;

then all particles are evaluated and personal bests, the global best and the archive are updated.

References
----------
Guo X., Jin Y. (2025). Inverse dynamical problem of flexible multibody systems with interval
uncertainty. Journal of Vibration Engineering 38(5), 974–983. doi:10.16385/j.cnki.issn.1004-4523.2025.05.009

Clerc M., Kennedy J. (2002). The particle swarm — explosion, stability, and convergence in a
multidimensional complex space. IEEE Transactions on Evolutionary Computation 6(1), 58–73.
doi:10.1109/4235.985692

Eberhart R. C., Shi Y. (2000). Comparing inertia weights and constriction factors in particle swarm
optimization. Proc. 2000 Congress on Evolutionary Computation, 84–88. doi:10.1109/CEC.2000.870279

Zambrano-Bigiarini M., Clerc M., Rojas R. (2013). Standard particle swarm optimisation 2011 at
CEC-2013: a baseline for future PSO improvements. Proc. IEEE CEC 2013, 2337–2344.
doi:10.1109/CEC.2013.6557848
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelSpecError
from ..params import FloatArray
from ..progress import CancelFn, ProgressFn

__all__ = ["SWARMS", "SwarmFn", "SwarmResult", "ipso", "minimise", "pso"]

#: Fitness of a population: (k, D) -> (k,).
FitnessFn = Callable[[FloatArray], ArrayLike]

#: Constriction coefficient and the matching acceleration coefficient (Clerc & Kennedy 2002).
CHI = 0.7298
C_CONSTRICTION = 1.49618


@dataclass(frozen=True, kw_only=True)
class SwarmResult:
    """Outcome of a swarm minimisation.

    Attributes
    ----------
    success : bool
        True when all iterations ran and a finite fitness was found.
    message : str
    method : str
        ``"pso"`` or ``"ipso"``.
    x : (D,) ndarray
        Best position found.
    fitness : float
        Its fitness.
    history : (iterations + 1,) ndarray
        Best fitness after the initialisation and after each iteration (non-increasing).
    evaluations : int
        Fitness evaluations (rows of the populations evaluated): population × (iterations + 1).
    iterations : int
        Iterations completed.
    elapsed_s : float, s
    archive_size : int
        Members of the high-quality archive at the end (0 for ``pso``).
    """

    success: bool
    message: str
    method: str
    x: FloatArray
    fitness: float
    history: FloatArray
    evaluations: int
    iterations: int
    elapsed_s: float
    archive_size: int


SwarmFn = Callable[..., SwarmResult]


def _positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ModelSpecError(f"`{name}` must be an integer ≥ {minimum}; received {value!r}")
    return int(value)


def _box(lower: ArrayLike, upper: ArrayLike) -> tuple[FloatArray, FloatArray]:
    lo = np.atleast_1d(np.asarray(lower, dtype=float))
    up = np.atleast_1d(np.asarray(upper, dtype=float))
    if lo.ndim != 1 or lo.shape != up.shape or lo.size == 0:
        raise ModelSpecError(f"`lower` and `upper` must be 1-D of the same length D ≥ 1; received shapes "
                             f"{np.shape(lower)} and {np.shape(upper)}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(up))) or np.any(lo >= up):
        raise ModelSpecError(f"`lower` must be finite and < `upper` in every coordinate; received {lo.tolist()} "
                             f"and {up.tolist()}")
    return lo, up


def _evaluate(fitness: FitnessFn, x: FloatArray) -> FloatArray:
    f = np.asarray(fitness(x.copy()), dtype=float)
    if f.shape != (x.shape[0],):
        raise ModelSpecError(f"`fitness` must map a (k, D) population to a (k,) array; for k = {x.shape[0]} it "
                             f"returned shape {f.shape}")
    return np.where(np.isfinite(f), f, np.inf)


def _finish(method: str, gbest: FloatArray, gval: float, history: list[float], evaluations: int,
            iterations: int, t0: float, archive_size: int, cancelled: bool) -> SwarmResult:
    if cancelled:
        success, message = False, "cancelled"
    elif not np.isfinite(gval):
        success, message = False, "no finite fitness was found"
    else:
        success, message = True, f"completed {iterations} iterations"
    return SwarmResult(success=success, message=message, method=method, x=gbest.copy(), fitness=float(gval),
                       history=np.array(history), evaluations=evaluations, iterations=iterations,
                       elapsed_s=time.perf_counter() - t0, archive_size=archive_size)


def pso(fitness: FitnessFn, lower: ArrayLike, upper: ArrayLike, *, population: int = 40, iterations: int = 100,
        seed: int | np.random.Generator = 0, progress: ProgressFn | None = None,
        cancel: CancelFn | None = None) -> SwarmResult:
    r"""Standard global-best PSO with the Clerc–Kennedy constriction coefficients.

    Parameters
    ----------
    fitness : callable
        ``fitness(X)`` for a population X (k, D) returns (k,) values to minimise.
    lower, upper : (D,) array_like
        The search box.
    population : int
        Particles (≥ 2).
    iterations : int
        Iterations (≥ 0).
    seed : int or numpy.random.Generator
        Source of randomness.
    progress : callable or None
        ``progress(stage, fraction, message)`` after each iteration.
    cancel : callable or None
        ``cancel() -> bool``, polled before each iteration.

    Returns
    -------
    SwarmResult

    Raises
    ------
    ModelSpecError
        Bad box, population or iterations, or a fitness of the wrong shape.

    Notes
    -----
    :math:`v \leftarrow 0.7298\,v + 1.49618\,r_1 (p_i - x) + 1.49618\,r_2 (g - x)`, clamped to
    :math:`\pm(u - \ell)`; :math:`x \leftarrow \mathrm{clip}(x + v)` (module notes).

    Examples
    --------
    >>> r = pso(lambda x: np.sum((x - 0.3) ** 2, axis=1), [-1, -1], [1, 1], iterations=60)
    >>> r.success, bool(np.allclose(r.x, 0.3, atol=1e-3)), r.evaluations
    (True, True, 2440)
    """
    lo, up = _box(lower, upper)
    k = _positive_int(population, "population", 2)
    n_it = _positive_int(iterations, "iterations", 0)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    dim = lo.size
    span = up - lo
    x = rng.uniform(lo, up, size=(k, dim))
    v = rng.uniform(lo, up, size=(k, dim)) - x
    f = _evaluate(fitness, x)
    pbest, pval = x.copy(), f.copy()
    ib = int(np.argmin(pval))
    gbest, gval = pbest[ib].copy(), float(pval[ib])
    history = [gval]
    evaluations = k
    done = 0
    cancelled = False
    for it in range(1, n_it + 1):
        if cancel is not None and cancel():
            cancelled = True
            break
        r1 = rng.random((k, dim))
        r2 = rng.random((k, dim))
        v = CHI * v + C_CONSTRICTION * r1 * (pbest - x) + C_CONSTRICTION * r2 * (gbest - x)
        v = np.clip(v, -span, span)
        xn = x + v
        clipped = (xn < lo) | (xn > up)
        x = np.clip(xn, lo, up)
        v[clipped] = 0.0
        f = _evaluate(fitness, x)
        evaluations += k
        better = f < pval
        pbest[better], pval[better] = x[better], f[better]
        ib = int(np.argmin(pval))
        if pval[ib] < gval:
            gbest, gval = pbest[ib].copy(), float(pval[ib])
        history.append(gval)
        done = it
        if progress is not None:
            progress("pso", it / n_it, f"pso iteration {it}/{n_it}: best fitness {gval:.6g}")
    return _finish("pso", gbest, gval, history, evaluations, done, t0, 0, cancelled)


def _archive_add(arch_x: FloatArray, arch_f: FloatArray, x: FloatArray, f: FloatArray, threshold: float,
                 archive_max: int) -> tuple[FloatArray, FloatArray]:
    keep = f < threshold
    if not np.any(keep):
        return arch_x, arch_f
    ax = np.concatenate([arch_x, x[keep]])
    af = np.concatenate([arch_f, f[keep]])
    if af.size > archive_max:
        order = np.argsort(af, kind="stable")[:archive_max]
        ax, af = ax[order], af[order]
    return ax, af


def ipso(fitness: FitnessFn, lower: ArrayLike, upper: ArrayLike, *, population: int = 40, iterations: int = 100,
         seed: int | np.random.Generator = 0, threshold: float = 0.1, archive_max: int = 500,
         sub_swarms: Sequence[int] | None = None, w_start: float = 0.8, w_end: float = 0.7, alpha: float = 0.5,
         progress: ProgressFn | None = None, cancel: CancelFn | None = None) -> SwarmResult:
    r"""The improved PSO of Guo & Jin (2025, §2): three sub-swarms and a high-quality archive.

    Parameters
    ----------
    fitness : callable
        ``fitness(X)`` for a population X (k, D) returns (k,) values to minimise.
    lower, upper : (D,) array_like
        The search box.
    population : int
        Particles R (≥ 2); must equal ``sum(sub_swarms)``.
    iterations : int
        Iterations T (≥ 0).
    seed : int or numpy.random.Generator
        Source of randomness.
    threshold : float
        h: positions with fitness below it join the archive (units of the fitness).
    archive_max : int
        Largest archive (the best are kept).
    sub_swarms : sequence of 3 int or None
        Sizes of sub-swarms 1, 2, 3 (sub-swarm 1 ≥ 1, the others ≥ 0); default :func:`default_sub_swarms`.
    w_start, w_end : float
        Inertia at the start and at the last iteration.
    alpha : float
        Velocity scale of the sub-swarm-2 mutation.
    progress : callable or None
        ``progress(stage, fraction, message)`` after each iteration.
    cancel : callable or None
        ``cancel() -> bool``, polled before each iteration.

    Returns
    -------
    SwarmResult

    Raises
    ------
    ModelSpecError
        Bad box, sizes, threshold or coefficients, or a fitness of the wrong shape.

    Notes
    -----
    Update rules in the module notes (the paper's eqs. 12–18); :math:`c_1 = c_2 = c_3 = 1`,
    :math:`V_{\max} = (u - \ell)/100`.

    Examples
    --------
    >>> r = ipso(lambda x: np.sum((x - 0.3) ** 2, axis=1), [-1, -1], [1, 1])
    >>> r.success, bool(np.allclose(r.x, 0.3, atol=1e-3)), r.archive_size > 0
    (True, True, True)
    """
    lo, up = _box(lower, upper)
    k = _positive_int(population, "population", 2)
    n_it = _positive_int(iterations, "iterations", 0)
    sizes = tuple(sub_swarms) if sub_swarms is not None else default_sub_swarms(k)
    if (len(sizes) != 3 or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in sizes)
            or sizes[0] < 1 or sum(sizes) != k):
        raise ModelSpecError(f"`sub_swarms` must be three non-negative integers (the first ≥ 1) summing to "
                             f"`population` = {k}; received {sub_swarms!r}")
    if not np.isfinite(threshold):
        raise ModelSpecError(f"`threshold` must be finite; received {threshold!r}")
    cap = _positive_int(archive_max, "archive_max", 1)
    for name, val in (("w_start", w_start), ("w_end", w_end), ("alpha", alpha)):
        if not (np.isfinite(val) and val >= 0):
            raise ModelSpecError(f"`{name}` must be finite and ≥ 0; received {val!r}")
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    dim = lo.size
    vmax = (up - lo) / 100.0
    n1, n2, _ = sizes
    s2 = slice(n1, n1 + n2)
    s3 = slice(n1 + n2, k)
    x = rng.uniform(lo, up, size=(k, dim))
    v = rng.uniform(-vmax, vmax, size=(k, dim))
    f = _evaluate(fitness, x)
    pbest, pval = x.copy(), f.copy()
    ib = int(np.argmin(pval))
    gbest, gval = pbest[ib].copy(), float(pval[ib])
    arch_x, arch_f = _archive_add(np.empty((0, dim)), np.empty(0), x, f, float(threshold), cap)
    history = [gval]
    evaluations = k
    done = 0
    cancelled = False
    for it in range(1, n_it + 1):
        if cancel is not None and cancel():
            cancelled = True
            break
        w = w_start - (w_start - w_end) * it / n_it
        n_arch = arch_f.size
        # Sub-swarm-1 rule for everybody (eq. 12); sub-swarms 2 and 3 overwrite their mutated particles.
        r1, r2, r3 = rng.random((k, dim)), rng.random((k, dim)), rng.random((k, dim))
        vn = w * v + r1 * (pbest - x) + r2 * (gbest - x)
        if n_arch:
            pick = rng.choice(n_arch, size=max(1, int(0.9 * n_arch)), replace=False)
            vn += r3 * (arch_x[pick].mean(axis=0) - x)
        vn = np.clip(vn, -vmax, vmax)
        xn = x + vn
        # Sub-swarm 2 (eqs. 16-17): with probability 0.5 move away from the global best.
        mut2 = np.zeros(k, dtype=bool)
        mut2[s2] = rng.random(n2) > 0.5
        if np.any(mut2):
            v2 = (x[mut2] - gbest) * rng.random((int(mut2.sum()), dim)) * alpha
            vn[mut2] = np.clip(v2, -vmax, vmax)
            xn[mut2] = x[mut2] + vn[mut2]
        # Sub-swarm 3 (eq. 18): with probability 0.5 jump to the mean of half the archive.
        mut3 = np.zeros(k, dtype=bool)
        mut3[s3] = rng.random(k - n1 - n2) > 0.5
        if n_arch and np.any(mut3):
            half = max(1, int(0.5 * n_arch))
            for i in np.flatnonzero(mut3):
                xn[i] = arch_x[rng.choice(n_arch, size=half, replace=False)].mean(axis=0)
                vn[i] = v[i]
        x = np.clip(xn, lo, up)
        v = vn
        f = _evaluate(fitness, x)
        evaluations += k
        better = f < pval
        pbest[better], pval[better] = x[better], f[better]
        ib = int(np.argmin(pval))
        if pval[ib] < gval:
            gbest, gval = pbest[ib].copy(), float(pval[ib])
        arch_x, arch_f = _archive_add(arch_x, arch_f, x, f, float(threshold), cap)
        history.append(gval)
        done = it
        if progress is not None:
            progress("ipso", it / n_it, f"ipso iteration {it}/{n_it}: best fitness {gval:.6g}, archive {arch_f.size}")
    return _finish("ipso", gbest, gval, history, evaluations, done, t0, int(arch_f.size), cancelled)


def default_sub_swarms(population: int) -> tuple[int, int, int]:
    """The seed's split of a swarm: two mutation sub-swarms of 5 particles each and the rest in the first
    (30, 5, 5 for the seed's 40); for populations under 20 each mutation sub-swarm takes an eighth (at least 1).

    Parameters
    ----------
    population : int
        Particles (≥ 3).
    """
    k = _positive_int(population, "population", 3)
    m = 5 if k >= 20 else max(1, k // 8)
    return (k - 2 * m, m, m)


#: Swarm minimisers by name.
SWARMS: Mapping[str, SwarmFn] = {"pso": pso, "ipso": ipso}


def minimise(method: str | SwarmFn, fitness: FitnessFn, lower: ArrayLike, upper: ArrayLike, *,
             population: int = 40, iterations: int = 100, seed: int | np.random.Generator = 0,
             progress: ProgressFn | None = None, cancel: CancelFn | None = None,
             options: Mapping[str, Any] | None = None) -> SwarmResult:
    """Minimise with a swarm chosen by name (``SWARMS``) or given as a callable.

    Parameters
    ----------
    method : str or callable
        ``"pso"``, ``"ipso"`` or a function with the signature of :func:`pso`.
    fitness, lower, upper, population, iterations, seed, progress, cancel
        As :func:`pso`.
    options : mapping or None
        Extra keyword arguments of the method (e.g. ``{"threshold": 0.01}`` for ``ipso``).

    Returns
    -------
    SwarmResult

    Raises
    ------
    ModelSpecError
        An unknown method name (the valid ones are listed), or invalid arguments.

    Examples
    --------
    >>> minimise("ipso", lambda x: np.sum(x**2, axis=1), [-1], [1], iterations=10).method
    'ipso'
    """
    if isinstance(method, str):
        if method not in SWARMS:
            raise ModelSpecError(f"`method` must be one of {sorted(SWARMS)} or a callable; received {method!r}")
        fn = SWARMS[method]
    elif callable(method):
        fn = method
    else:
        raise ModelSpecError(f"`method` must be one of {sorted(SWARMS)} or a callable; received {method!r}")
    try:
        return fn(fitness, lower, upper, population=population, iterations=iterations, seed=seed,
                  progress=progress, cancel=cancel, **dict(options or {}))
    except TypeError as exc:
        if options and "unexpected keyword" in str(exc):
            raise ModelSpecError(f"`options` has a key the method does not take: {exc}") from None
        raise
