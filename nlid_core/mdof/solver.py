r"""The least-squares problem of a multi-DOF fit and its Levenberg–Marquardt solver (see :mod:`.fit`).

:class:`Problem` holds what one fit evaluates: the records with their held DOFs, weights (σ per record and
output) and integration substeps, the free parameters' indices, scales and bounds (in scaled units), and,
for a fit that steps only in the directions its records see, the basis of those directions. It simulates
every record at a point (side by side on a thread pool when given: the compiled simulator releases the GIL)
and returns the residual blocks with their exact Jacobians.

:func:`levenberg_marquardt` minimises half the sum of squares on the normal equations accumulated record
by record (:mod:`.normal`): Marquardt's diagonal scaling, Nielsen's damping update, bounds by projection
(a parameter at a bound and pushed outwards is left out of the step; in a basis of directions the step is
shortened to the nearest bound instead, so that it stays in the seen directions).

References: D. W. Marquardt, J. SIAM 11 (1963) 431–441; H. B. Nielsen, "Damping parameter in Marquardt's
method", IMM-REP-1999-05, DTU.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..progress import ProgressFn
from .data import MdofRecord
from .normal import Block, State, normal_equations
from .spec import MdofModel

__all__ = ["CRAWL_TOL", "GAIN_TOL", "Problem", "levenberg_marquardt"]

FloatArray = NDArray[np.float64]

#: An accepted step lowering the cost by less than this many reduced-χ² units ends the fit (Δχ² below 0.02) ...
GAIN_TOL = 1e-2
#: ... and so do three accepted steps lowering it by less than this in all (crawling along a flat valley of
#: poorly determined combinations: Δχ² below 1 over three steps, a fraction of their standard errors).
CRAWL_TOL = 0.5

#: ``simulate(model, record, theta, y0, held, sigma, want, nsub)`` and ``static(model, record, theta, sigma,
#: want)``: one record's residual block (or None and why).
BlockFn = Callable[..., tuple[Block | None, str]]


@dataclass(kw_only=True)
class Problem:
    """What one fit evaluates (see the module notes); ``x`` are the free parameters over their scales."""

    model: MdofModel
    records: Sequence[MdofRecord]
    helds: list[NDArray[np.bool_]]
    init_sizes: list[int]
    sig: list[FloatArray]
    theta0: FloatArray
    free_idx: NDArray[np.int64]
    scale: FloatArray
    lower: FloatArray
    upper: FloatArray
    simulate: BlockFn
    static: BlockFn
    basis: FloatArray | None = None
    pool: ThreadPoolExecutor | None = None
    #: RK4 substeps per record: None until the accuracy check sets them.
    nsubs: list[int | None] = field(default_factory=list)
    nfev: int = 0

    def __post_init__(self) -> None:
        if not self.nsubs:
            self.nsubs = [None] * len(self.records)

    def theta_of(self, x: FloatArray) -> FloatArray:
        """Every model parameter at the free parameters ``x`` (scaled)."""
        th = self.theta0.copy()
        th[self.free_idx] = x * self.scale
        return th

    def _one(self, k: int, th: FloatArray, inits: list[FloatArray], want: bool) -> tuple[Block | None, str]:
        rec = self.records[k]
        if rec.static:
            return self.static(self.model, rec, th, self.sig[k], want)
        return self.simulate(self.model, rec, th, inits[k], self.helds[k], self.sig[k], want, self.nsubs[k])

    def evaluate(self, x: FloatArray, inits: list[FloatArray], want: bool) -> tuple[list[Block] | None, str]:
        """The residual blocks of every record (with Jacobians when ``want``), or None and the first failure."""
        self.nfev += 1
        th = self.theta_of(x)
        if self.pool is None:
            done = [self._one(k, th, inits, want) for k in range(len(self.records))]
        else:
            done = list(self.pool.map(lambda k: self._one(k, th, inits, want), range(len(self.records))))
        for b, msg in done:
            if b is None:
                return None, msg
        return [b for b, _ in done if b is not None], ""

    def set_inits(self, inits: list[FloatArray], delta: FloatArray) -> list[FloatArray]:
        """The initial states moved by ``delta`` (the free DOFs' positions and velocities, record after record)."""
        out = []
        off = 0
        for y0, h, ni in zip(inits, self.helds, self.init_sizes, strict=True):
            if ni == 0:
                out.append(y0)
                continue
            mask = np.concatenate([~h, ~h])
            y = y0.copy()
            y[mask] += delta[off:off + ni]
            out.append(y)
            off += ni
        return out

    def keep(self, keep: Sequence[int]) -> None:
        """Estimate only the free parameters at positions ``keep`` (the others stay at their start values)."""
        self.free_idx, self.scale = self.free_idx[list(keep)], self.scale[list(keep)]
        self.lower, self.upper = self.lower[list(keep)], self.upper[list(keep)]
        if self.basis is not None:
            self.basis = np.linalg.qr(self.basis[list(keep)])[0] if self.basis.shape[1] else self.basis[list(keep)]

    def normal(self, blocks: Sequence[Block]) -> tuple[FloatArray, FloatArray]:
        """The normal equations ``(JᵀJ, Jᵀr)`` over the unknowns (directions of the basis where there is one)."""
        return normal_equations(blocks, self.free_idx, self.scale, self.init_sizes, self.basis)


def _cost(blocks: Sequence[Block]) -> float:
    return 0.5 * sum(float(b.r @ b.r) for b in blocks)


def _step(p: Problem, a: FloatArray, g: FloatArray, damped: FloatArray, x: FloatArray
          ) -> tuple[FloatArray, FloatArray, FloatArray] | None:
    """The damped step ``h`` (parameters first), its parameter part and the new point; None when singular."""
    npz = p.free_idx.size if p.basis is None else p.basis.shape[1]
    try:
        h = np.asarray(np.linalg.solve(damped, -g), dtype=np.float64)
    except np.linalg.LinAlgError:
        return None
    hp = h[:npz]
    if p.basis is None:
        blocked = ((x <= p.lower) & (g[:npz] > 0)) | ((x >= p.upper) & (g[:npz] < 0))
        if blocked.any():  # a parameter at its bound, pushed outwards: solve without it
            act = np.concatenate([~blocked, np.ones(h.size - npz, dtype=bool)])
            h = np.zeros_like(h)
            try:
                h[act] = np.linalg.solve(damped[np.ix_(act, act)], -g[act])
            except np.linalg.LinAlgError:
                return None
        xn: FloatArray = np.clip(x + h[:npz], p.lower, p.upper)
        h[:npz] = xn - x
        return h, h[:npz], xn
    # shorten the step to the nearest bound: clipping would leave the seen directions
    hx = p.basis @ hp
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(hx > 0, (p.upper - x) / hx, np.where(hx < 0, (p.lower - x) / hx, np.inf))
    alpha = min(1.0, float(np.min(room))) if room.size else 1.0
    h = alpha * h
    xb: FloatArray = np.clip(x + alpha * hx, p.lower, p.upper)
    return h, h[:npz], xb


def levenberg_marquardt(p: Problem, x: FloatArray, inits: list[FloatArray], label: str,
                        blocks: list[Block] | None = None, *, max_iterations: int, progress: ProgressFn | None,
                        stage: str) -> tuple[State | None, str, int]:
    """Minimise from ``x`` and the records' initial states ``inits`` (``blocks``: their evaluation, if known).

    Returns the final state (None when the start does not simulate), a message saying how it ended and the
    number of iterations.
    """
    if blocks is None:
        blocks, msg = p.evaluate(x, inits, True)
        if blocks is None:
            return None, f"the start does not simulate: {msg}", 0
    n_res = max(sum(b.r.size for b in blocks), 1)
    state = State(x=x, inits=inits, cost=_cost(blocks), blocks=blocks)
    a, g = p.normal(blocks)
    diag = np.maximum(np.diag(a), 1e-12 * max(float(np.max(np.diag(a))), 1e-300))
    mu, nu = 1e-3, 2.0
    it = 0
    gains: list[float] = []
    message = f"stopped after {max_iterations} iterations"
    for it in range(1, max_iterations + 1):
        step = _step(p, a, g, a + mu * np.diag(diag), state.x)
        if step is None:
            mu, nu = mu * nu, nu * 2
            continue
        h, hp, xn = step
        predicted = float(-(g @ h) - 0.5 * h @ (a @ h))
        # statistically converged: the step would lower the cost by less than 1e-3 of one reduced-χ² unit
        if mu <= 1e-2 and 0 <= predicted <= 0.1 * GAIN_TOL * 2 * state.cost / n_res:
            message = f"converged in {it - 1} iterations"
            break
        new_inits = p.set_inits(state.inits, np.asarray(h[hp.size:], dtype=np.float64))
        blocks_n, _ = p.evaluate(xn, new_inits, True)
        cost_n = _cost(blocks_n) if blocks_n is not None else math.inf
        rho = (state.cost - cost_n) / predicted if blocks_n is not None and predicted > 0 else -1.0
        if rho <= 0 or blocks_n is None:
            mu, nu = mu * nu, nu * 2
            if mu > 1e16:
                message = f"no further decrease after {it} iterations"
                break
            continue
        small_step = np.linalg.norm(hp) <= 1e-9 * (np.linalg.norm(state.x) + 1e-9)
        gain = state.cost - cost_n
        state = State(x=xn, inits=new_inits, cost=cost_n, blocks=blocks_n)
        a, g = p.normal(blocks_n)
        diag = np.maximum(diag, np.diag(a))
        mu *= max(1 / 3, 1 - (2 * rho - 1) ** 3)
        nu = 2.0
        if progress is not None:
            progress(stage, min(it / max_iterations, 0.95), f"{label}: iteration {it}, cost {state.cost:.6g}")
        # converged: the cost falls by a negligible part of one reduced-χ² unit (a flat valley of poorly
        # determined combinations is not followed further: moves within it stay inside their intervals)
        gains.append(gain)
        unit = 2 * state.cost / n_res  # one reduced-χ² unit of cost
        crawling = len(gains) >= 3 and sum(gains[-3:]) <= CRAWL_TOL * unit
        if gain <= 1e-10 * state.cost or gain <= GAIN_TOL * unit or crawling or small_step:
            message = f"converged in {it} iterations"
            break
    return state, message, it
