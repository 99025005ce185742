r"""How far the integration error of an output-error fit moves its estimates, measured in their standard errors.

One criterion for every output-error estimator (single-DOF :mod:`nlid_core.estimate`, multi-DOF
:mod:`nlid_core.mdof.fit`). At the estimate, every record simulated by RK4 is simulated again with twice the
substeps (records under SDIRK4 have their own error control). For a fourth-order method
the error of the coarse run is, to leading order (Richardson),

.. math::

    e = y_h - y^* \approx \tfrac{16}{15}\,(y_h - y_{h/2}).

A least-squares fit treats :math:`e` as part of the model, so its estimates move by
:math:`\delta = -(J^\top J)^{+} J^\top e` (weighted residual units, the initial states included and eliminated
with the same pseudo-inverse as the covariance). Each free parameter's shift is compared with its standard error
:math:`\sigma_i = \sqrt{s^2\,[(J^\top J)^{+}]_{ii}}`. The fit refines the substeps while the largest ratio is
above :data:`SHIFT_TOL`; what remains, :math:`|\delta_i|`, is added to the parameter's interval, so an interval
covers the truth of the exact model and not of its discretisation.

A discretisation bias far beyond the noise is what made quiet multi-DOF records give intervals that missed the
truth by tens of standard errors; the residual's rms alone cannot show it (a biased fit still matches the noise:
an error of 5 % of the residual rms over N samples can move an estimate by up to 0.05·√N standard errors).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["IntegrationCheck", "MAX_REFINEMENTS", "RICHARDSON", "SHIFT_TOL", "integration_shift", "refinement_factor"]

FloatArray = NDArray[np.float64]

#: Coarse-run error per unit difference between the run and the one with half the step (RK4: 2⁴/(2⁴ − 1)).
RICHARDSON = 16.0 / 15.0
#: Largest shift of an estimate by the integration error, in standard errors, accepted without finer substeps.
SHIFT_TOL = 0.25
#: How often the substeps may be doubled at the end of a fit.
MAX_REFINEMENTS = 3


@dataclass(frozen=True, kw_only=True)
class IntegrationCheck:
    """The step-doubling check at an estimate.

    Attributes
    ----------
    shift : (nf,) ndarray
        Estimated bias of each free parameter from the integration error (scaled coordinates of the fit).
    ratio : float
        Largest ``|shift| / standard error`` (0 without dynamic records or free parameters).
    worst : str
        The parameter with that ratio.
    """

    shift: FloatArray
    ratio: float
    worst: str


def integration_shift(a: FloatArray, g_err: FloatArray, s2: float, names: Sequence[str], rank_tol: float
                      ) -> IntegrationCheck:
    """Shift of the free parameters caused by an output error ``e`` of the simulation.

    Parameters
    ----------
    a : (nf + ni, nf + ni) ndarray
        JᵀJ over the free parameters (scaled) and the initial states.
    g_err : (nf + ni,) ndarray
        Jᵀe with ``e`` the Richardson estimate of the coarse run's error (weighted).
    s2 : float
        Reduced χ² (the covariance is ``s2·(JᵀJ)⁺``).
    names : sequence of str
        The free parameters (the first ``nf`` columns).
    rank_tol : float
        Relative eigenvalue below which a direction of JᵀJ is not determined (no shift, no error there).
    """
    nf = len(names)
    if nf == 0 or a.size == 0:
        return IntegrationCheck(shift=np.zeros(nf), ratio=0.0, worst="")
    d = np.sqrt(np.maximum(np.diag(a), 1e-300))
    w, v = np.linalg.eigh(a / np.outer(d, d))
    keep = w > rank_tol * max(float(w.max()), 1e-300)
    pinv = (v[:, keep] / w[keep]) @ v[:, keep].T / np.outer(d, d)
    delta = -(pinv @ g_err)[:nf]
    se = np.sqrt(np.maximum(s2 * np.diag(pinv)[:nf], 1e-300))
    ratios = np.abs(delta) / se
    k = int(np.argmax(ratios))
    return IntegrationCheck(shift=np.asarray(delta, dtype=np.float64), ratio=float(ratios[k]), worst=names[k])


def refinement_factor(ratio: float) -> int:
    """By how much to multiply the RK4 substeps when the integration error moves an estimate by ``ratio``
    standard errors: RK4's error falls 16-fold per halving of the step, so the step that should bring the
    ratio below :data:`SHIFT_TOL` (at least 2, at most 8)."""
    return int(2 ** min(max(math.ceil(math.log(max(ratio, SHIFT_TOL) / SHIFT_TOL, 16)), 1), 3))
