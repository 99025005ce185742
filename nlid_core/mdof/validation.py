r"""Per-channel validation of a multi-DOF model on a record: simulate it from the record's inputs and compare every
measured output.

The initial state is the record's estimated one when given (from a fit on that record), else the static
equilibrium under the first inputs with the measured positions of the free DOFs and zero velocities; a static record
is compared case by case with the equilibria. Fit percentages are ``100·(1 − ‖y − ŷ‖/‖y − ȳ‖)`` per channel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import SimulationError
from ..params import ParameterSet
from .data import MdofRecord
from .spec import MdofModel

__all__ = ["ChannelValidation", "validate_record"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class ChannelValidation:
    """A model against one record: the simulated outputs and each channel's fit.

    Attributes
    ----------
    record : str
    t : (n,) ndarray
    measured, simulated : (n, m) ndarray
        Outputs in ``names`` order (m, rad).
    names, units : tuple of str
    fit_percent, rmse : (m,) ndarray
    success : bool
    message : str
    """

    record: str
    t: FloatArray
    measured: FloatArray
    simulated: FloatArray
    names: tuple[str, ...]
    units: tuple[str, ...]
    fit_percent: FloatArray
    rmse: FloatArray
    success: bool
    message: str


def validate_record(model: MdofModel, rec: MdofRecord, params: ParameterSet, y0: FloatArray | None = None
                    ) -> ChannelValidation:
    """Simulate ``params`` on ``rec`` and compare every measured channel (see the module docstring)."""
    from .experiments import equilibrium
    from .integrate import simulate
    from .equilibrium import static_equilibrium

    theta = np.array([params[n].value for n in model.param_names], dtype=np.float64)
    out_idx = [model.dof_names.index(d) for d in rec.output_names]
    u = np.ascontiguousarray(np.column_stack([rec.input(n) for n in model.used_inputs]))
    held = model.held_mask(rec.held)
    sim = np.full(rec.y.shape, np.nan)
    message = "ok"
    try:
        if rec.static:
            q_prev = None
            for k in range(rec.n):
                q, ok, msg = static_equilibrium(model.layout, u[k], theta, q0=q_prev, held=held)
                if not ok:
                    raise SimulationError(f"load case {k + 1}: {msg}")
                sim[k] = q[out_idx]
                q_prev = q
        else:
            if y0 is None:
                q0 = equilibrium(model, u[0], theta)
                for j, i in enumerate(out_idx):
                    q0[i] = rec.y[0, j] if not held[i] else float(np.mean(rec.y[:, j]))
                y0 = np.concatenate([q0, np.zeros(model.n_dof)])
            res = simulate(model.layout, rec.t, u, theta, y0, held=held, sens=False, init_sens=False)
            if not res.success:
                raise SimulationError(res.message)
            sim = res.q[:, out_idx]
    except SimulationError as exc:
        message = f"record `{rec.name}`: {exc}"
    ok = bool(np.all(np.isfinite(sim)))
    units = tuple(model.dof_unit(d) for d in rec.output_names)
    fitp = rmse = np.full(len(rec.output_names), math.nan)
    if ok and rec.n >= 2:
        from ..nonlinearity.mimo import channel_fit

        scored = channel_fit(rec.y, sim, rec.output_names, units)
        fitp, rmse = scored.fit_percent, scored.rmse
    return ChannelValidation(record=rec.name, t=np.asarray(rec.t), measured=np.asarray(rec.y), simulated=sim,
                             names=rec.output_names, units=units,
                             fit_percent=fitp, rmse=rmse, success=ok, message=message)
