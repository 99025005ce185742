r"""The output-error problem: residual and Jacobian in scaled variables, substeps and their refinement.

:math:`r_c = w_c (y_c^{sim}(\theta, x_0) - y_c)/s_c`, :math:`s_c` the rms of
channel *c* over all records, with the exact Jacobian from the simulator's
forward sensitivities. The solver works on
:math:`z = (\theta - \theta_{start})/s`.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..accuracy import (
    MAX_REFINEMENTS, RICHARDSON, SHIFT_TOL, IntegrationCheck, integration_shift, refinement_factor
)
from ..identifiability import RANK_RTOL, least_squares_solve
from ..metrics import rms
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ..simulate import SimulationResult, auto_substeps, fine_input, simulate
from .options import FitOptions, FloatArray, ProgressFn

__all__ = ["MAX_REFINEMENTS", "SHIFT_TOL"]

#: Relative eigenvalue of the equilibrated JᵀJ below which a direction counts as undetermined in the
#: integration check (the square of the uncertainty's singular-value threshold).
_CHECK_RANK_TOL = RANK_RTOL**2


class _OEProblem:
    """Residual and Jacobian of the joint output-error problem in scaled variables."""

    def __init__(
        self,
        recs: Sequence[Record],
        model: TermModel,
        params: ParameterSet,
        x0s: Sequence[tuple[float, float]],
        est_x0: Sequence[bool],
        opts: FitOptions,
        progress: ProgressFn | None,
    ) -> None:
        self.recs = recs
        self.model = model
        self.params = params
        self.opts = opts
        self.progress = progress
        self.free = params.free_mask
        self.pf = int(self.free.sum())
        self.nrec = len(recs)
        self.x0s: list[tuple[float, float]] = [(float(x[0]), float(x[1])) for x in x0s]
        self.outputs = opts.outputs
        self.idx = [np.arange(0, r.n, opts.sample_step) for r in recs]
        self.scale = {}
        for c in self.outputs:
            ms = rms(np.concatenate([np.asarray(r.channel(c)) for r in recs]))
            self.scale[c] = ms if ms > 0 else 1.0
        self.weight = {c: float(opts.channel_weights.get(c, 1.0)) / self.scale[c] for c in self.outputs}
        self.substeps = [1] * self.nrec
        # integrator per record: once ``auto`` has switched a record to SDIRK4 (a stiff model), later
        # evaluations start there instead of rediscovering the stiffness with RK4 every time
        self.method = ["auto"] * self.nrec
        # the last integration check: (point, substeps, result)
        self.last_check: tuple[FloatArray, tuple[int, ...], IntegrationCheck | None] | None = None
        self.nfev = 0
        # the last few evaluated points (trf evaluates the residual, then the Jacobian at the same point,
        # and the result is usually one of the last points tried)
        self._cache: OrderedDict[bytes, list[SimulationResult]] = OrderedDict()
        self._fine: dict[tuple[int, int], FloatArray] = {}
        groups = []
        g = 0
        for k in range(self.nrec):
            for _ in self.outputs:
                groups.append(np.full(self.idx[k].size, g, dtype=np.int64))
                g += 1
        self.groups = np.concatenate(groups)
        self.est = [bool(e) for e in est_x0]
        self.x0_pos: dict[int, int] = {}
        for k in range(self.nrec):
            if self.est[k]:
                self.x0_pos[k] = 2 * len(self.x0_pos)
        self.n_x0 = 2 * len(self.x0_pos)
        self.prior_jp = np.zeros((0, self.pf))
        self.prior_c = np.zeros(0)
        self.s_theta = np.ones(self.pf)
        self.s_x0 = np.ones(self.n_x0)
        self.off_theta = np.zeros(self.pf)
        self.off_x0 = np.zeros(self.n_x0)
        self._scaled = False

    def fine_input(self, k: int, nsub: int | None = None) -> FloatArray:
        """Input of record k at every half substep (cached; the grid for 2·nsub is made at once,
        since the step-doubling check needs it and the grid for nsub is every other point of it)."""
        nsub = self.substeps[k] if nsub is None else nsub
        key = (k, nsub)
        if key not in self._fine:
            if (k, 2 * nsub) not in self._fine:
                r = self.recs[k]
                self._fine[(k, 2 * nsub)] = fine_input(r.t, r.f, 2 * nsub, self.opts.input_hold)
            self._fine[key] = np.ascontiguousarray(self._fine[(k, 2 * nsub)][::2])
        return self._fine[key]

    def full_simulation(self, k: int, theta: FloatArray, x0: tuple[float, float], substeps: int) -> SimulationResult:
        r = self.recs[k]
        return simulate(self.model, r.t, r.f, theta, x0, input_hold=self.opts.input_hold, substeps=substeps,
                        fine=self.fine_input(k, substeps), method=self.method[k])

    def integration_check(self, z: FloatArray) -> IntegrationCheck | None:
        """Step-doubling check at ``z`` (:mod:`nlid_core.accuracy`): how far the RK4 error moves each free
        parameter, in its standard errors. None when a run fails or nothing runs on RK4."""
        sims = self.simulate_all(z)
        if len(sims) < self.nrec or not all(s.success for s in sims) or self.pf == 0:
            return None
        theta, x0s = self.unpack(z)
        parts = []
        rk4 = False
        for k in range(self.nrec):
            sel = self.idx[k]
            if sims[k].method.startswith("sdirk"):  # under its own error control
                parts += [np.zeros(sel.size) for _ in self.outputs]
                continue
            rk4 = True
            fine_sim = self.full_simulation(k, theta, x0s[k], 2 * self.substeps[k])
            if not fine_sim.success:
                return None
            parts += [RICHARDSON * self.weight[c] * (sims[k].output(c) - fine_sim.output(c))[sel] for c in self.outputs]
        if not rk4:
            return None
        err = np.concatenate([*parts, np.zeros(self.prior_jp.shape[0])])
        jac = self.jacobian(z)
        res = self.residual(z)
        n = self.groups.size
        s2 = float(res[:n] @ res[:n]) / max(n - jac.shape[1], 1)
        check = integration_shift(jac.T @ jac, jac.T @ err, s2, list(self.params.free_names), _CHECK_RANK_TOL)
        self.last_check = (z.copy(), tuple(self.substeps), check)
        return check

    def check_at(self, z: FloatArray) -> IntegrationCheck | None:
        """The integration check at ``z`` with the current substeps (computed once)."""
        if self.last_check is not None:
            z_done, steps, check = self.last_check
            if np.array_equal(z_done, z) and steps == tuple(self.substeps):
                return check
        return self.integration_check(z)

    def refine(self, z: FloatArray) -> bool:
        """Make the integration finer where the estimate needs it; True when anything changed: the substeps the
        dynamics need at ``z``, and more while the integration error moves an estimate by more than
        ``SHIFT_TOL`` of its standard error."""
        theta, _ = self.unpack(z)
        need = [max(a, b) for a, b in zip(self.choose_substeps(theta), self.substeps, strict=True)]
        check = self.integration_check(z) if self.opts.substeps is None else None
        changed = False
        for k in range(self.nrec):
            if check is not None and check.ratio > SHIFT_TOL and not self.method[k] == "sdirk":
                need[k] = refinement_factor(check.ratio) * need[k]
            if need[k] != self.substeps[k]:
                self.substeps[k] = need[k]
                changed = True
        if changed:
            self._cache.clear()
        return changed

    def choose_substeps(self, theta: FloatArray) -> list[int]:
        return [_substeps_for(r, self.model, theta, self.opts) for r in self.recs]

    # variable packing: z = [(theta_free - off_theta) / s_theta, (x0 - off_x0) / s_x0 ...]; z = 0 at the start,
    # so the solver's first trust region (radius 1 when z0 = 0) allows about a 10 % change of each parameter
    def set_scaling(self, s_theta: FloatArray, s_x0: FloatArray, off_theta: FloatArray, off_x0: FloatArray) -> None:
        same_point = self._scaled and np.array_equal(off_theta, self.off_theta) and np.array_equal(off_x0, self.off_x0)
        self._scaled = True
        self.s_theta = s_theta
        self.s_x0 = s_x0
        self.off_theta = off_theta
        self.off_x0 = off_x0
        # z means something else now, except z = 0 when the offsets (the start point) are unchanged
        zero = np.zeros(self.pf + self.n_x0).tobytes()
        kept = {k: v for k, v in self._cache.items() if same_point and k[:-1] == zero}
        self._cache.clear()
        self._cache.update(kept)

    def unpack(self, z: FloatArray) -> tuple[FloatArray, list[tuple[float, float]]]:
        theta = self.params.values.copy()
        theta[self.free] = self.off_theta + z[: self.pf] * self.s_theta
        x0s = list(self.x0s)
        xz = self.off_x0 + z[self.pf :] * self.s_x0
        for k, pos in self.x0_pos.items():
            x0s[k] = (float(xz[pos]), float(xz[pos + 1]))
        return theta, x0s

    def pack(self, theta: FloatArray, x0s: Sequence[tuple[float, float]]) -> FloatArray:
        z = list((theta[self.free] - self.off_theta) / self.s_theta)
        for k, pos in self.x0_pos.items():
            z += [(x0s[k][0] - self.off_x0[pos]) / self.s_x0[pos], (x0s[k][1] - self.off_x0[pos + 1]) / self.s_x0[pos + 1]]
        return np.asarray(z, dtype=np.float64)

    def simulate_all(self, z: FloatArray, sens: bool = True) -> list[SimulationResult]:
        key = z.tobytes() + bytes([sens])
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        theta, x0s = self.unpack(z)
        sims = []
        for k, r in enumerate(self.recs):
            sims.append(
                simulate(
                    self.model, r.t, r.f, theta, x0s[k], input_hold=self.opts.input_hold,
                    substeps=self.substeps[k], sensitivities=sens, outputs=self.outputs, fine=self.fine_input(k),
                    initial_state_sensitivities=k in self.x0_pos,
                    x_limit=1e3 * max(float(np.max(np.abs(r.x))), 1e-300) + abs(x0s[k][0]), method=self.method[k],
                )
            )
            if sims[-1].method.startswith("sdirk"):
                self.method[k] = "sdirk"
            if not sims[-1].success:
                break
        self.nfev += 1
        self._cache[key] = sims
        if len(self._cache) > 4:
            self._cache.popitem(last=False)
        return sims

    def residual(self, z: FloatArray) -> FloatArray:
        sims = self.simulate_all(z)
        if len(sims) < self.nrec or not all(s.success for s in sims):
            if self.progress is not None:
                self.progress("output-error", min(1.0, self.nfev / self.opts.max_nfev),
                              f"evaluation {self.nfev}: the simulation failed ({sims[-1].message})")
            return np.full(self.groups.size + self.prior_jp.shape[0], np.nan)
        parts = []
        for k, r in enumerate(self.recs):
            sel = self.idx[k]
            for c in self.outputs:
                parts.append(self.weight[c] * (sims[k].output(c)[sel] - r.channel(c)[sel]))
        out = np.concatenate(parts)
        if self.prior_jp.shape[0]:
            out = np.concatenate([out, self.prior_jp @ z[: self.pf] - self.prior_c])
        if self.progress is not None:
            self.progress("output-error", min(1.0, self.nfev / self.opts.max_nfev),
                          f"evaluation {self.nfev} of at most {self.opts.max_nfev}, cost {0.5 * float(out @ out):.6g}")
        return out

    def jacobian(self, z: FloatArray) -> FloatArray:
        sims = self.simulate_all(z)
        ncol = self.pf + self.n_x0
        n_prior = self.prior_jp.shape[0]
        jac = np.zeros((self.groups.size + n_prior, ncol))
        fcols = np.flatnonzero(self.free)
        p = self.model.n_params
        row = 0
        for k in range(self.nrec):
            step = self.opts.sample_step
            for c in self.outputs:
                s = sims[k].sens[c]  # type: ignore[index]
                m = self.idx[k].size
                block = jac[row : row + m]
                w = self.weight[c]
                block[:, : self.pf] = s[::step, fcols] * (w * self.s_theta)
                if k in self.x0_pos:
                    pos = self.x0_pos[k]
                    block[:, self.pf + pos] = s[::step, p] * (w * self.s_x0[pos])
                    block[:, self.pf + pos + 1] = s[::step, p + 1] * (w * self.s_x0[pos + 1])
                row += m
        if n_prior:
            jac[row:, : self.pf] = self.prior_jp
        return jac

    def serial_blocks(self) -> list[tuple[tuple[int, int], ...]]:
        """The residual rows of each record, a range per output channel (row k of each at the same time)."""
        blocks, row = [], 0
        for k in range(self.nrec):
            m = self.idx[k].size
            blocks.append(tuple((row + j * m, row + (j + 1) * m) for j in range(len(self.outputs))))
            row += m * len(self.outputs)
        return blocks

    def names(self) -> list[str]:
        names = list(self.params.free_names)
        for k in self.x0_pos:
            names += [f"x0[{k}]", f"v0[{k}]"]
        return names


def _substeps_for(r: Record, model: TermModel, theta: FloatArray, opts: FitOptions) -> int:
    """RK4 substeps per sample for record ``r`` (fixed by the options or chosen from the dynamics)."""
    if opts.substeps is not None:
        return int(opts.substeps)
    xr = 1.5 * float(np.max(np.abs(r.x)))
    vr = 1.5 * float(np.max(np.abs(r.v))) if r.v is not None else xr * 2 * math.pi * r.fs / 4
    return auto_substeps(model, theta, r.dt, max(xr, 1e-300), max(vr, 1e-300))


@dataclass(frozen=True)
class GaussNewtonEnd:
    """Where the Gauss-Newton stage stopped: ``x`` (scaled), and whether it converged there (else the trust
    region goes on from ``x``); ``status``, ``message``, ``cost`` and ``active_mask`` as from
    ``least_squares``."""

    x: FloatArray
    converged: bool
    cost: float
    status: int = 2
    message: str = "the Gauss-Newton step's predicted reduction is below `tol`"
    active_mask: FloatArray = field(default_factory=lambda: np.zeros(0))


def _gauss_newton(prob: _OEProblem, z0: FloatArray, lb: FloatArray, ub: FloatArray, tol: float,
                  max_steps: int = 6) -> GaussNewtonEnd:
    """Gauss-Newton from ``z0`` while it behaves: each step must stay inside the bounds and lower the cost.

    A fit starts close to its optimum (from equation error, or the segmented start), where the problem
    is nearly linear and Gauss-Newton converges in two or three simulations. It has converged at ``z``
    when the step from there could lower the cost by at most ``tol`` of it (the predicted reduction
    ‖J s‖², exact for the linearised problem) or the step is below ``tol`` of ``z``, the trust region's
    ``ftol`` and ``xtol`` read for the step not taken. A step that raises the cost or does not simulate
    ends the stage unconverged; one that gains less than half of what the linearised problem predicted or
    lands on a bound is kept, and the trust region goes on from it; a step not at most half as long as
    the one before is not taken (far from the optimum, full steps can jump between basins). From a far
    start this leaves the single Gauss-Newton step the trust region used to be given.
    """
    z = z0
    r = prob.residual(z)
    if not np.all(np.isfinite(r)):
        return GaussNewtonEnd(z0, False, math.nan)
    cost = float(r @ r)
    previous = math.inf
    for n_step in range(max_steps):
        jac = prob.jacobian(z)
        if not np.all(np.isfinite(jac)):
            break
        try:
            step = least_squares_solve(jac, -r)
        except np.linalg.LinAlgError:  # pragma: no cover - finite matrices converge
            break
        if not np.all(np.isfinite(step)):
            break
        predicted = float(np.sum((jac @ step) ** 2))
        if predicted <= tol * cost or float(np.linalg.norm(step)) <= tol * (tol + float(np.linalg.norm(z))):
            return GaussNewtonEnd(z, True, 0.5 * cost, active_mask=np.zeros(z.size))
        # near the optimum the steps shrink fast (quadratically for small residuals); a step not at most half
        # the previous one is not near it: the trust region goes on instead
        length = float(np.linalg.norm(step))
        if n_step and not length <= 0.5 * previous:
            break
        previous = length
        z1 = np.clip(z + step, lb, ub)
        r1 = prob.residual(z1)
        if not np.all(np.isfinite(r1)):
            break
        cost1 = float(r1 @ r1)
        if not cost1 < cost:
            break
        agreed = cost - cost1 >= 0.5 * predicted  # the linearised problem foretold the step's gain
        z, r, cost = z1, r1, cost1
        if not agreed or np.any(z1 == lb) or np.any(z1 == ub):
            break  # far from linear, or on a bound: the trust region goes on from this better point
    return GaussNewtonEnd(z, False, 0.5 * cost)
