r"""Rotation of the rigid body and the rate matrix of its Euler angles, with their partial derivatives (numba).

The attitude is given by ZYX Euler angles :math:`\eta = (\varphi, \vartheta, \psi)` (roll, pitch, yaw);
the body-to-world rotation is

.. math::

    R = R_z(\psi)\,R_y(\vartheta)\,R_x(\varphi),

and the body angular velocity is :math:`\omega_b = E_b(\varphi, \vartheta)\,\dot\eta` with

.. math::

    E_b = \begin{pmatrix} 1 & 0 & -\sin\vartheta \\ 0 & \cos\varphi & \sin\varphi\cos\vartheta \\
          0 & -\sin\varphi & \cos\varphi\cos\vartheta \end{pmatrix},

so that :math:`[\omega_b]_\times = R^\top \dot R`. :math:`E_b` is singular where :math:`\cos\vartheta = 0`
(gimbal lock).

Every entry of :math:`R` is a product of one factor per elementary rotation, and every entry of
:math:`E_b` a product of a function of :math:`\varphi` and one of :math:`\vartheta`; a partial derivative
of any order therefore only replaces factors by their derivatives. The derivatives of cosine and sine
are taken by quarter turns (:math:`\cos^{(k)}, \sin^{(k)}` for ``k mod 4``), which keeps them exact
(no ``cos(a + π/2)`` rounding). Index ``k`` of a partial derivative is the angle's index in
:math:`\eta`: 0 roll, 1 pitch, 2 yaw.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

__all__ = ["euler_rate_matrix", "fill_geometry", "rotation", "rotation_partials"]

FloatArray = NDArray[np.float64]


@njit(cache=True)
def _trig(c, s, order):  # type: ignore[no-untyped-def]
    """``(cos⁽ᵏ⁾, sin⁽ᵏ⁾)`` of an angle with cosine ``c`` and sine ``s``, for derivative order ``k = order``."""
    k = order % 4
    if k == 0:
        return c, s
    if k == 1:
        return -s, c
    if k == 2:
        return -c, -s
    return s, -c


@njit(cache=True)
def _axis_factor(axis, cos_a, sin_a, order, out):  # type: ignore[no-untyped-def]
    """``out`` = the ``order``-th derivative of the rotation by the angle with cosine ``cos_a`` and sine
    ``sin_a`` about body axis ``axis`` (0 x, 1 y, 2 z)."""
    c, s = _trig(cos_a, sin_a, order)
    one = 1.0 if order == 0 else 0.0
    for r in range(3):
        for q in range(3):
            out[r, q] = 0.0
    i = axis
    j = (axis + 1) % 3
    k = (axis + 2) % 3
    out[i, i] = one
    out[j, j] = c
    out[k, k] = c
    out[j, k] = -s
    out[k, j] = s


@njit(cache=True)
def _product(fac, ox, oy, oz, out):  # type: ignore[no-untyped-def]
    """``out = Z⁽ᵒᶻ⁾·Y⁽ᵒʸ⁾·X⁽ᵒˣ⁾`` from the factors ``fac[axis, order]``."""
    for r in range(3):
        for q in range(3):
            acc = 0.0
            for s in range(3):
                zy = 0.0
                for t in range(3):
                    zy += fac[2, oz, r, t] * fac[1, oy, t, s]
                acc += zy * fac[0, ox, s, q]
            out[r, q] = acc


@njit(cache=True)
def rotation_partials(phi, theta, psi, fac, rot, d_rot, d2_rot):  # type: ignore[no-untyped-def]
    """Fill ``rot`` (3, 3) = R, ``d_rot[k]`` = ∂R/∂η_k and ``d2_rot[k, l]`` = ∂²R/∂η_k∂η_l.

    ``fac`` is a work array of shape (3, 3, 3, 3): the elementary factors by axis and derivative order.
    """
    angles = (phi, theta, psi)
    for axis in range(3):
        c = np.cos(angles[axis])
        s = np.sin(angles[axis])
        for order in range(3):
            _axis_factor(axis, c, s, order, fac[axis, order])
    _product(fac, 0, 0, 0, rot)
    for k in range(3):
        _product(fac, int(k == 0), int(k == 1), int(k == 2), d_rot[k])
        for m in range(k, 3):
            _product(fac, int(k == 0) + int(m == 0), int(k == 1) + int(m == 1), int(k == 2) + int(m == 2),
                     d2_rot[k, m])
            if m != k:
                d2_rot[m, k, :, :] = d2_rot[k, m, :, :]


@njit(cache=True)
def _rate_matrix(phi, theta, kphi, ktheta, out):  # type: ignore[no-untyped-def]
    """``out`` = ∂^(kphi+ktheta) E_b / ∂φ^kphi ∂θ^ktheta."""
    cf, sf = _trig(np.cos(phi), np.sin(phi), kphi)
    ct, st = _trig(np.cos(theta), np.sin(theta), ktheta)
    at_phi0 = 1.0 if kphi == 0 else 0.0
    at_theta0 = 1.0 if ktheta == 0 else 0.0
    out[0, 0] = at_phi0 * at_theta0
    out[0, 1] = 0.0
    out[0, 2] = -st * at_phi0
    out[1, 0] = 0.0
    out[1, 1] = cf * at_theta0
    out[1, 2] = sf * ct
    out[2, 0] = 0.0
    out[2, 1] = -sf * at_theta0
    out[2, 2] = cf * ct


@njit(cache=True)
def euler_rate_matrix(phi, theta, rate, d_rate, d2_rate):  # type: ignore[no-untyped-def]
    """Fill ``rate`` = E_b, ``d_rate[k]`` = ∂E_b/∂η_k and ``d2_rate[k, l]`` (zero wherever ψ is involved)."""
    _rate_matrix(phi, theta, 0, 0, rate)
    for k in range(3):
        for m in range(3):
            if k == 2 or m == 2:
                d2_rate[k, m, :, :] = 0.0
            else:
                _rate_matrix(phi, theta, int(k == 0) + int(m == 0), int(k == 1) + int(m == 1), d2_rate[k, m])
    _rate_matrix(phi, theta, 1, 0, d_rate[0])
    _rate_matrix(phi, theta, 0, 1, d_rate[1])
    d_rate[2, :, :] = 0.0


@njit(cache=True)
def fill_geometry(eta, geo):  # type: ignore[no-untyped-def]
    """R, E_b and their first and second partials at ``eta`` into the tuple ``geo`` = (fac, R, dR, d2R, E, dE, d2E)."""
    fac, rot, d_rot, d2_rot, rate, d_rate, d2_rate = geo
    rotation_partials(eta[0], eta[1], eta[2], fac, rot, d_rot, d2_rot)
    euler_rate_matrix(eta[0], eta[1], rate, d_rate, d2_rate)


@njit(cache=True)
def _rotations(angles, out):  # type: ignore[no-untyped-def]
    fac = np.zeros((3, 3, 3, 3))
    for i in range(angles.shape[0]):
        for axis in range(3):
            _axis_factor(axis, np.cos(angles[i, axis]), np.sin(angles[i, axis]), 0, fac[axis, 0])
        _product(fac, 0, 0, 0, out[i])


def rotation(phi: ArrayLike, theta: ArrayLike, psi: ArrayLike) -> FloatArray:
    """Body-to-world rotation ``R = Rz(ψ)·Ry(θ)·Rx(φ)`` of ZYX Euler angles.

    Parameters
    ----------
    phi, theta, psi : float or array_like, rad
        Roll, pitch and yaw (broadcast against each other).

    Returns
    -------
    (..., 3, 3) ndarray
        One rotation per broadcast element; ``R @ v_body`` is the vector in world axes.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(rotation(0.0, 0.0, np.pi / 2) @ [1.0, 0.0, 0.0], 12)
    array([0., 1., 0.])
    """
    a, b, c = np.broadcast_arrays(np.asarray(phi, dtype=np.float64), np.asarray(theta, dtype=np.float64),
                                  np.asarray(psi, dtype=np.float64))
    angles = np.ascontiguousarray(np.stack([a.reshape(-1), b.reshape(-1), c.reshape(-1)], axis=1))
    out = np.zeros((angles.shape[0], 3, 3))
    _rotations(angles, out)
    return out.reshape(*a.shape, 3, 3)
