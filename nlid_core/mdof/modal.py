r"""Linearisation of a multi-DOF model about a static equilibrium: stiffness, natural frequencies, mode shapes.

About an equilibrium ``q*`` (``Q(q*, 0, u) = 0``) the model is ``M δq̈ + C δq̇ + K δq = δτ`` with
``K = −∂Q/∂q`` and ``C = −∂Q/∂q̇`` (the mass-matrix derivative drops out because ``q̈* = 0``). The compiled
right-hand side gives ``∂q̈/∂q = −M⁻¹K``, so ``K = −M·∂q̈/∂q`` without inverting anything. The undamped natural
frequencies solve the symmetric-definite problem ``K_s φ = ω² M φ`` (``K_s`` the symmetric part of ``K``;
gravity on an offset centre of gravity and a tilted mount line make ``K`` slightly unsymmetric), and the damped
ones come from the eigenvalues of the state matrix ``∂ẏ/∂y``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import linalg

from ..errors import SimulationError
from .spec import MdofModel

__all__ = ["Modes", "linearise", "natural_frequencies"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class Modes:
    """Natural frequencies and mode shapes about an equilibrium.

    Attributes
    ----------
    q : (n,) ndarray
        The equilibrium.
    mass, stiffness, damping_matrix : (n, n) ndarray
        M, K and C there.
    freq_hz : (n,) ndarray, Hz
        Undamped natural frequencies, ascending.
    shapes : (n, n) ndarray
        Mass-normalised mode shapes (columns).
    damping : (n,) ndarray
        Damping ratios of the damped modes, matched to the undamped ones by frequency.
    dominant : tuple of str
        The DOF each mode moves most (in mass-weighted terms).
    stiffness_scale : (float, float)
        Largest diagonal stiffness of the translational DOFs (N/m) and of the rotational ones (N·m/rad; 0 if none).
    """

    q: FloatArray
    mass: FloatArray
    stiffness: FloatArray
    damping_matrix: FloatArray
    freq_hz: FloatArray
    shapes: FloatArray
    damping: FloatArray
    dominant: tuple[str, ...]
    stiffness_scale: tuple[float, float]


def linearise(model: MdofModel, theta: FloatArray, q: FloatArray, u: FloatArray | None = None
              ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """``(M, K, C, A)`` about ``q`` at rest (A = ∂ẏ/∂y).

    Raises
    ------
    SimulationError
        The model cannot be evaluated there (mass not positive definite, gimbal lock).
    """
    from .evaluate import evaluate, mass_matrix

    stateful = sorted({t.name for c in model.connections for t in c.terms if t.states}
                      | {t.name for m in model.mounts for _, ts in m.terms for t in ts if t.states})
    if stateful:
        raise SimulationError(f"no modal linearisation for a model with internal states ({', '.join(stateful)}): "
                              "its stiffness depends on the motion's history; simulate it instead")
    n = model.n_dof
    uu = np.zeros(len(model.used_inputs)) if u is None else np.asarray(u, dtype=np.float64)
    y = np.concatenate([np.asarray(q, dtype=np.float64), np.zeros(n)])
    theta = np.asarray(theta, dtype=np.float64)
    _, jy, _, status = evaluate(model.layout, y, uu, theta)
    if status != 0:
        raise SimulationError(f"the model cannot be evaluated at this configuration (status {status})")
    m = np.asarray(mass_matrix(model.layout, y[:n], theta), dtype=np.float64)
    k = -m @ jy[n:, :n]
    c = -m @ jy[n:, n:]
    return m, k, c, jy


def natural_frequencies(model: MdofModel, theta: FloatArray, q: FloatArray) -> Modes:
    """Natural frequencies, damping ratios and mode shapes about the equilibrium ``q``.

    Raises
    ------
    SimulationError
        The linearised stiffness is not positive definite (no stable equilibrium), or the model cannot be evaluated.
    """
    m, k, c, jy = linearise(model, theta, q)
    ks = 0.5 * (k + k.T)
    try:
        w2, shapes = linalg.eigh(ks, m)
    except (linalg.LinAlgError, ValueError) as exc:
        raise SimulationError(f"the linearised model has no real modes: {exc}") from None
    if np.any(w2 <= 0):
        raise SimulationError("the linearised stiffness is not positive definite: the equilibrium is not stable")
    freq = np.sqrt(w2) / (2 * np.pi)
    lam = np.linalg.eigvals(jy)
    lam = lam[lam.imag > 0]
    damping = np.full(freq.size, np.nan)
    for i, f in enumerate(freq):
        if lam.size:
            j = int(np.argmin(np.abs(np.abs(lam) / (2 * np.pi) - f)))
            damping[i] = float(-lam[j].real / abs(lam[j]))
    names = model.dof_names
    weight = np.abs(shapes * (m @ shapes))
    dominant = tuple(names[int(np.argmax(weight[:, i]))] for i in range(freq.size))
    diag = np.diag(k)
    trans = [diag[i] for i, d in enumerate(model.dofs) if d.unit == "m"]
    rot = [diag[i] for i, d in enumerate(model.dofs) if d.unit == "rad"]
    scale = (float(max(trans)) if trans else 0.0, float(max(rot)) if rot else 0.0)
    return Modes(q=np.asarray(q, dtype=np.float64), mass=m, stiffness=k, damping_matrix=c, freq_hz=freq, shapes=shapes,
                 damping=damping, dominant=dominant, stiffness_scale=scale)
