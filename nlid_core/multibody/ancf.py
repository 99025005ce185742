r"""Compiled kernels of the fully parameterised planar ANCF beam element and a generalized-α integrator
with forward sensitivities (numba; the public entry point is :mod:`nlid_core.multibody.pendulum`).

**Element** (Omar & Shabana 2001). Each node carries :math:`(r, r_x, r_y)\in\mathbb R^6`; an element has
:math:`e = (r^A, r_x^A, r_y^A, r^B, r_x^B, r_y^B)\in\mathbb R^{12}` and
:math:`r(x, y) = \sum_{k=1}^{6} s_k(x, y)\,e_k` (each :math:`e_k\in\mathbb R^2`), with
:math:`\xi = x/L`, :math:`\eta = y/L`, :math:`x\in[0, L]`, :math:`y\in[-H/2, H/2]`:

.. math::

    s_1 = 1-3\xi^2+2\xi^3,\ s_2 = L(\xi-2\xi^2+\xi^3),\ s_3 = L(\eta-\xi\eta),\
    s_4 = 3\xi^2-2\xi^3,\ s_5 = L(-\xi^2+\xi^3),\ s_6 = L\xi\eta .

So :math:`S = [s_1 I_2, \dots, s_6 I_2]` and the kernels only handle the six scalars
:math:`a_k = \partial s_k/\partial x`, :math:`b_k = \partial s_k/\partial y` per quadrature point
(no 2×12 matrices are formed).

**Elastic forces.** :math:`J = [r_x, r_y]`, Green–Lagrange strain :math:`E = \tfrac12(J^\top J - I)` in Voigt
form :math:`\varepsilon = (\tfrac12(r_x\!\cdot r_x - 1), \tfrac12(r_y\!\cdot r_y - 1), r_x\!\cdot r_y)`,
plane stress :math:`\sigma = D\varepsilon`,
:math:`D = \frac{E}{1-\nu^2}\begin{pmatrix}1&\nu&0\\\nu&1&0\\0&0&(1-\nu)/2\end{pmatrix}`,

.. math::

    Q_e = \int_V \Big(\frac{\partial\varepsilon}{\partial e}\Big)^{\!\top} D\varepsilon\,dV,\quad
    \frac{\partial\varepsilon}{\partial e_k} = \begin{pmatrix} a_k r_x^\top \\ b_k r_y^\top \\
    a_k r_y^\top + b_k r_x^\top\end{pmatrix},

.. math::

    K_{kl} = \int_V \Big[\frac{\partial\varepsilon}{\partial e_k}^{\!\top} D \frac{\partial\varepsilon}{\partial e_l}
    + \big(\sigma_{xx} a_k a_l + \sigma_{yy} b_k b_l + \tau_{xy}(a_k b_l + b_k a_l)\big) I_2\Big] dV .

With :math:`u = (r_x, 0, r_y)` and :math:`v = (0, r_y, r_x)` the material part is
:math:`a_k a_l K_{uu} + a_k b_l K_{uv} + b_k a_l K_{uv}^\top + b_k b_l K_{vv}` with the 2×2 matrices
:math:`K_{uu} = D_{11} r_x r_x^\top + D_{33} r_y r_y^\top`, :math:`K_{vv} = D_{11} r_y r_y^\top + D_{33} r_x r_x^\top`,
:math:`K_{uv} = D_{12} r_x r_y^\top + D_{33} r_y r_x^\top`. The strain energy density is a polynomial of degree
8 in ξ and 4 in η, so 5 Gauss points along x and 3 across y integrate the energy, the forces and the
tangent exactly (the forces are the exact gradient of the exactly integrated energy). The same rule is exact
for the mass matrix (degree 6 in ξ, 2 in η). ``Q_e`` is linear in the rod's Young's modulus, so
:math:`\partial Q_e/\partial E_{\text{rod}}` is that rod's elastic force divided by its modulus.

**Global coordinates** are indexed by an element map ``dofmap`` (n_el, 12) of global indices, −1 for a
coordinate fixed at zero (the pinned point O); joints are coordinate sharing (see
:func:`nlid_core.multibody.pendulum.layout`).

**Generalized-α** (Chung & Hulbert 1993; the form of Arnold & Brüls 2007) for
:math:`M\ddot q + Q_e(q) = Q_g` with step ``h`` and the acceleration-like variable ``a``:

.. math::

    q_{n+1} = q_n + h\dot q_n + h^2(\tfrac12-\beta)a_n + h^2\beta a_{n+1},\quad
    \dot q_{n+1} = \dot q_n + h(1-\gamma)a_n + h\gamma a_{n+1},

.. math::

    (1-\alpha_m)a_{n+1} + \alpha_m a_n = (1-\alpha_f)\ddot q_{n+1} + \alpha_f\ddot q_n,\quad
    M\ddot q_{n+1} + Q_e(q_{n+1}) - Q_g = 0,

:math:`\alpha_m = (2\rho_\infty-1)/(\rho_\infty+1)`, :math:`\alpha_f = \rho_\infty/(\rho_\infty+1)`,
:math:`\gamma = \tfrac12+\alpha_f-\alpha_m`, :math:`\beta = \tfrac14(\gamma+\tfrac12)^2`, :math:`a_0 = \ddot q_0`.
Newton on :math:`\ddot q_{n+1}` (predictor :math:`\ddot q_n`) with the exact iteration matrix
:math:`M + \beta' K`, :math:`\beta' = h^2\beta(1-\alpha_f)/(1-\alpha_m)`, factored by Cholesky. A step has
converged when :math:`\|M\ddot q + Q_e - Q_g\|_\infty \le \max\big(\text{tol}\cdot(\|Q_g\|_\infty + \|M\ddot q\|_\infty
+ \|Q_e\|_\infty),\ f_{\text{round}}\big)` with the rounding level :math:`f_{\text{round}}` of :func:`residual_floor`.

**Forward sensitivities** :math:`S_\bullet = \partial\bullet/\partial p` of the discrete scheme: differentiating the
step gives :math:`S_{q,n+1} = P + \beta' S_{\ddot q,n+1}` with the predictor part
:math:`P = S_{q,n} + hS_{\dot q,n} + h^2(\tfrac12-\beta)S_{a,n}
+ h^2\beta(\alpha_f S_{\ddot q,n}-\alpha_m S_{a,n})/(1-\alpha_m)`,
and :math:`(M + \beta' K(q_{n+1}))\,S_{\ddot q,n+1} = -\partial Q_e/\partial p - K P`, solved with the factor at the
converged step; initial angles enter through :math:`S_{q,0}` and
:math:`M S_{\ddot q,0} = -K(q_0) S_{q,0} - \partial Q_e/\partial p`.

References
----------
Omar, M. A., Shabana, A. A. (2001). A two-dimensional shear deformable beam for large rotation and deformation
problems. J. Sound Vib. 243(3), 565–576. https://doi.org/10.1006/jsvi.2000.3416

Chung, J., Hulbert, G. M. (1993). A time integration algorithm for structural dynamics with improved numerical
dissipation: the generalized-α method. J. Appl. Mech. 60(2), 371–375. https://doi.org/10.1115/1.2900803

Arnold, M., Brüls, O. (2007). Convergence of the generalized-α scheme for constrained mechanical systems.
Multibody Syst. Dyn. 18(2), 185–202. https://doi.org/10.1007/s11044-007-9084-0
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["DIVERGED", "GAUSS_X", "GAUSS_Y", "INDEFINITE", "NO_CONVERGENCE", "OK", "alpha_coefficients",
           "elastic", "element_tables", "energy_elastic", "integrate", "mass_and_gravity",
           "residual_floor"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Gauss–Legendre points along the element (exact for the degree-8 energy density in ξ).
GAUSS_X = 5
#: Gauss–Legendre points across the section (exact for the degree-4 energy density in η).
GAUSS_Y = 3

#: Status codes of :func:`integrate`.
OK = 0
NO_CONVERGENCE = 1
DIVERGED = 2
INDEFINITE = 3


def alpha_coefficients(rho_inf: float) -> tuple[float, float, float, float]:
    r"""Generalized-α coefficients :math:`(\alpha_m, \alpha_f, \gamma, \beta)` for spectral radius ``rho_inf``.

    Parameters
    ----------
    rho_inf : float
        Spectral radius at infinite frequency, in [0, 1].

    Returns
    -------
    tuple of float
        :math:`\alpha_m = (2\rho_\infty-1)/(\rho_\infty+1)`, :math:`\alpha_f = \rho_\infty/(\rho_\infty+1)`,
        :math:`\gamma = \tfrac12+\alpha_f-\alpha_m`, :math:`\beta = \tfrac14(\gamma+\tfrac12)^2` (Chung & Hulbert 1993).
    """
    am = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)
    af = rho_inf / (rho_inf + 1.0)
    gamma = 0.5 + af - am
    beta = 0.25 * (gamma + 0.5) ** 2
    return am, af, gamma, beta


def element_tables(length: float, height: float, width: float) -> tuple[FloatArray, FloatArray, FloatArray,
                                                                         FloatArray]:
    r"""Shape scalars at the element's quadrature points.

    Parameters
    ----------
    length, height, width : float, m
        Element length ``L``, in-plane section height ``H``, out-of-plane width ``W``.

    Returns
    -------
    s, a, b : (GAUSS_X·GAUSS_Y, 6) ndarray
        :math:`s_k`, :math:`a_k = \partial s_k/\partial x`, :math:`b_k = \partial s_k/\partial y` per point.
    w : (GAUSS_X·GAUSS_Y,) ndarray, m³
        Quadrature weights including the Jacobian :math:`(L/2)(H/2)W`.
    """
    gx, wx = np.polynomial.legendre.leggauss(GAUSS_X)
    gy, wy = np.polynomial.legendre.leggauss(GAUSS_Y)
    n = GAUSS_X * GAUSS_Y
    s, a, b, w = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6)), np.zeros(n)
    ell = length
    for i in range(GAUSS_X):
        xi = 0.5 * (1.0 + gx[i])
        for j in range(GAUSS_Y):
            eta = gy[j] * 0.5 * height / ell
            p = i * GAUSS_Y + j
            s[p] = (1 - 3 * xi**2 + 2 * xi**3, ell * (xi - 2 * xi**2 + xi**3), ell * (eta - xi * eta),
                    3 * xi**2 - 2 * xi**3, ell * (-xi**2 + xi**3), ell * xi * eta)
            a[p] = ((-6 * xi + 6 * xi**2) / ell, 1 - 4 * xi + 3 * xi**2, -eta,
                    (6 * xi - 6 * xi**2) / ell, -2 * xi + 3 * xi**2, eta)
            b[p] = (0.0, 0.0, 1.0 - xi, 0.0, 0.0, xi)
            w[p] = wx[i] * wy[j] * 0.25 * ell * height * width
    return s, a, b, w


def mass_and_gravity(n: int, dofmap: IntArray, s_tab: FloatArray, w_tab: FloatArray, density: float,
                     gravity: float) -> tuple[FloatArray, FloatArray]:
    r"""Constant mass matrix :math:`M = \int\rho S^\top S\,dV` and gravity force :math:`Q_g = \int\rho S^\top g\,dV`.

    Parameters
    ----------
    n : int
        Number of global coordinates.
    dofmap : (n_el, 12) int ndarray
        Global index of each element coordinate (−1: fixed at zero).
    s_tab, w_tab : (n_el, n_gp, 6), (n_el, n_gp) ndarray
        Shape scalars and weights (m³) from :func:`element_tables`.
    density : float, kg/m³
    gravity : float, m/s²
        Acceleration of gravity along −y.

    Returns
    -------
    mass : (n, n) ndarray, kg (and kg·m, kg·m² in the slope blocks)
    q_g : (n,) ndarray, N
    """
    mass, qg = np.zeros((n, n)), np.zeros(n)
    for el in range(dofmap.shape[0]):
        mk = density * np.einsum("p,pk,pl->kl", w_tab[el], s_tab[el], s_tab[el])
        mk = 0.5 * (mk + mk.T)  # exactly symmetric
        gk = -density * gravity * (w_tab[el] @ s_tab[el])
        for k in range(6):
            for c in range(2):
                gi = dofmap[el, 2 * k + c]
                if gi < 0:
                    continue
                if c == 1:
                    qg[gi] += gk[k]
                for m in range(6):
                    gj = dofmap[el, 2 * m + c]
                    if gj >= 0:
                        mass[gi, gj] += mk[k, m]
    return mass, qg


@njit(cache=True, error_model="numpy")
def elastic(q, dofmap, a_tab, b_tab, w_tab, e_mod, nu, rod, want_k, want_dp, f, k, fp):  # type: ignore[no-untyped-def]
    """Assemble the elastic force ``f`` (n,), when ``want_k`` the tangent ``k`` (n, n) = ∂f/∂q, and when
    ``want_dp`` ``fp`` (n_rod, n) = ∂f/∂E_rod; the outputs are overwritten. ``e_mod`` and ``rod`` are per element."""
    n_el = dofmap.shape[0]
    ngp = w_tab.shape[1]
    f[:] = 0.0
    if want_k:
        k[:, :] = 0.0
    if want_dp:
        fp[:, :] = 0.0
    e = np.zeros(12)
    fe = np.zeros(12)
    ke = np.zeros((12, 12))
    for el in range(n_el):
        for i in range(12):
            g = dofmap[el, i]
            e[i] = q[g] if g >= 0 else 0.0
        fe[:] = 0.0
        if want_k:
            ke[:, :] = 0.0
        c = e_mod[el] / (1.0 - nu * nu)
        d11 = c
        d12 = c * nu
        d33 = 0.5 * c * (1.0 - nu)
        for p in range(ngp):
            w = w_tab[el, p]
            rx0 = rx1 = ry0 = ry1 = 0.0
            for m in range(6):
                am = a_tab[el, p, m]
                bm = b_tab[el, p, m]
                rx0 += am * e[2 * m]
                rx1 += am * e[2 * m + 1]
                ry0 += bm * e[2 * m]
                ry1 += bm * e[2 * m + 1]
            exx = 0.5 * (rx0 * rx0 + rx1 * rx1 - 1.0)
            eyy = 0.5 * (ry0 * ry0 + ry1 * ry1 - 1.0)
            gxy = rx0 * ry0 + rx1 * ry1
            sxx = d11 * exx + d12 * eyy
            syy = d12 * exx + d11 * eyy
            txy = d33 * gxy
            for m in range(6):
                am = a_tab[el, p, m]
                bm = b_tab[el, p, m]
                fe[2 * m] += w * (sxx * am * rx0 + syy * bm * ry0 + txy * (am * ry0 + bm * rx0))
                fe[2 * m + 1] += w * (sxx * am * rx1 + syy * bm * ry1 + txy * (am * ry1 + bm * rx1))
            if not want_k:
                continue
            # 2x2 material matrices (row-major: 00, 01, 10, 11)
            uu00 = d11 * rx0 * rx0 + d33 * ry0 * ry0
            uu01 = d11 * rx0 * rx1 + d33 * ry0 * ry1
            uu11 = d11 * rx1 * rx1 + d33 * ry1 * ry1
            vv00 = d11 * ry0 * ry0 + d33 * rx0 * rx0
            vv01 = d11 * ry0 * ry1 + d33 * rx0 * rx1
            vv11 = d11 * ry1 * ry1 + d33 * rx1 * rx1
            uv00 = d12 * rx0 * ry0 + d33 * ry0 * rx0
            uv01 = d12 * rx0 * ry1 + d33 * ry0 * rx1
            uv10 = d12 * rx1 * ry0 + d33 * ry1 * rx0
            uv11 = d12 * rx1 * ry1 + d33 * ry1 * rx1
            for m in range(6):
                am = w * a_tab[el, p, m]
                bm = w * b_tab[el, p, m]
                for l in range(m, 6):
                    al = a_tab[el, p, l]
                    bl = b_tab[el, p, l]
                    aa = am * al
                    ab = am * bl
                    ba = bm * al
                    bb = bm * bl
                    geo = sxx * aa + syy * bb + txy * (ab + ba)
                    ke[2 * m, 2 * l] += aa * uu00 + ab * uv00 + ba * uv00 + bb * vv00 + geo
                    ke[2 * m, 2 * l + 1] += aa * uu01 + ab * uv01 + ba * uv10 + bb * vv01
                    ke[2 * m + 1, 2 * l] += aa * uu01 + ab * uv10 + ba * uv01 + bb * vv01
                    ke[2 * m + 1, 2 * l + 1] += aa * uu11 + ab * uv11 + ba * uv11 + bb * vv11 + geo
        for i in range(12):
            gi = dofmap[el, i]
            if gi < 0:
                continue
            f[gi] += fe[i]
            if want_dp:
                fp[rod[el], gi] += fe[i] / e_mod[el]
            if want_k:
                for j in range(12):
                    gj = dofmap[el, j]
                    if gj < 0:
                        continue
                    # upper block triangle filled: mirror the lower blocks
                    if (j // 2) >= (i // 2):
                        k[gi, gj] += ke[i, j]
                    else:
                        k[gi, gj] += ke[j, i]


@njit(cache=True, error_model="numpy")
def energy_elastic(q, dofmap, a_tab, b_tab, w_tab, e_mod, nu):  # type: ignore[no-untyped-def]
    r"""Strain energy :math:`U = \tfrac12\int\varepsilon^\top D\varepsilon\,dV` (J) at ``q``."""
    u = 0.0
    e = np.zeros(12)
    for el in range(dofmap.shape[0]):
        for i in range(12):
            g = dofmap[el, i]
            e[i] = q[g] if g >= 0 else 0.0
        c = e_mod[el] / (1.0 - nu * nu)
        for p in range(w_tab.shape[1]):
            rx0 = rx1 = ry0 = ry1 = 0.0
            for m in range(6):
                rx0 += a_tab[el, p, m] * e[2 * m]
                rx1 += a_tab[el, p, m] * e[2 * m + 1]
                ry0 += b_tab[el, p, m] * e[2 * m]
                ry1 += b_tab[el, p, m] * e[2 * m + 1]
            exx = 0.5 * (rx0 * rx0 + rx1 * rx1 - 1.0)
            eyy = 0.5 * (ry0 * ry0 + ry1 * ry1 - 1.0)
            gxy = rx0 * ry0 + rx1 * ry1
            u += 0.5 * w_tab[el, p] * c * (exx * exx + 2.0 * nu * exx * eyy + eyy * eyy + 0.5 * (1.0 - nu) * gxy * gxy)
    return u


def residual_floor(a_tab: FloatArray, b_tab: FloatArray, w_tab: FloatArray, e_mod: FloatArray) -> float:
    r"""Rounding level of the elastic force, N: :math:`16\,\epsilon\,\max_{el} E\sum_p w_p\sum_k(|a_k|+|b_k|)`.

    A strain is a difference of numbers of order one, so it carries an absolute rounding error of about the
    machine epsilon ε; the force inherits :math:`E\varepsilon` times the weights and shape derivatives. A Newton
    residual below this level cannot be resolved (it matters for very stiff rods, e.g. E scaled by 1e3).

    Parameters
    ----------
    a_tab, b_tab : (n_el, n_gp, 6) ndarray
    w_tab : (n_el, n_gp) ndarray, m³
    e_mod : (n_el,) ndarray, Pa

    Returns
    -------
    float, N
    """
    mag = np.einsum("ep,epk->e", w_tab, np.abs(a_tab) + np.abs(b_tab)) * e_mod
    return float(16.0 * np.finfo(float).eps * np.max(mag))


@njit(cache=True, error_model="numpy")
def _cholesky(a):  # type: ignore[no-untyped-def]
    """In-place lower Cholesky factor of the symmetric ``a``; False when not positive definite."""
    n = a.shape[0]
    for j in range(n):
        d = a[j, j]
        for m in range(j):
            d -= a[j, m] * a[j, m]
        if not (d > 0.0) or not np.isfinite(d):
            return False
        d = np.sqrt(d)
        a[j, j] = d
        for i in range(j + 1, n):
            s = a[i, j]
            for m in range(j):
                s -= a[i, m] * a[j, m]
            a[i, j] = s / d
    return True


@njit(cache=True, error_model="numpy")
def _chol_solve(lo, x):  # type: ignore[no-untyped-def]
    """Solve ``L Lᵀ x = b`` in place (``x`` holds b on entry)."""
    n = lo.shape[0]
    for i in range(n):
        s = x[i]
        for m in range(i):
            s -= lo[i, m] * x[m]
        x[i] = s / lo[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for m in range(i + 1, n):
            s -= lo[m, i] * x[m]
        x[i] = s / lo[i, i]


@njit(cache=True, error_model="numpy")
def _norm_inf(x):  # type: ignore[no-untyped-def]
    r = 0.0
    for v in x:
        a = abs(v)
        if not (a <= r):  # also propagates NaN
            r = a
    return r


@njit(cache=True, error_model="numpy", nogil=True)
def integrate(q0, sq0, par_rod, mass, qg, dofmap, a_tab, b_tab, w_tab, e_mod,  # type: ignore[no-untyped-def]
              nu, rod, h, n_steps, out_every, alpha_m, alpha_f, gamma, beta, tol, res_floor, max_iter,
              rec_q, rec_v, rec_s):
    """Generalized-α from rest at ``q0`` for ``n_steps`` steps of ``h``; records ``q``, ``q̇`` (and ``S_q`` when
    ``sq0`` has columns) every ``out_every`` steps into ``rec_q``, ``rec_v`` (n_rec, n), ``rec_s`` (n_rec, n, P).

    ``res_floor`` (N) is the residual that counts as converged whatever ``tol`` says (:func:`residual_floor`).
    ``sq0`` (n, P) is ∂q0/∂p; ``par_rod[j]`` is the rod whose modulus parameter ``j`` is (−1: an initial
    condition parameter). Returns (status, failed step, Newton iterations, steps done)."""
    n = q0.size
    npar = sq0.shape[1]
    f = np.zeros(n)
    kt = np.zeros((n, n))
    fp = np.zeros((2, n))
    mat = np.zeros((n, n))
    res = np.zeros(n)
    dq = np.zeros(n)
    want_s = npar > 0
    qg_norm = _norm_inf(qg)
    # initial acceleration: M q̈0 = Q_g − Q_e(q0)
    elastic(q0, dofmap, a_tab, b_tab, w_tab, e_mod, nu, rod, want_s, want_s, f, kt, fp)
    mchol = mass.copy()
    if not _cholesky(mchol):
        return INDEFINITE, 0, 0, 0
    q = q0.copy()
    v = np.zeros(n)
    qdd = qg - f
    _chol_solve(mchol, qdd)
    acc = qdd.copy()
    sq = sq0.copy()
    sv = np.zeros((n, npar))
    sqdd = np.zeros((n, npar))
    sa = np.zeros((n, npar))
    pred = np.zeros((n, npar))
    col = np.zeros(n)
    for j in range(npar):
        for i in range(n):
            s = -fp[par_rod[j], i] if par_rod[j] >= 0 else 0.0
            for m in range(n):
                s -= kt[i, m] * sq[m, j]
            col[i] = s
        _chol_solve(mchol, col)
        sqdd[:, j] = col
        sa[:, j] = col
    rec_q[0, :] = q
    rec_v[0, :] = v
    if want_s:
        rec_s[0, :, :] = sq
    bp = h * h * beta * (1.0 - alpha_f) / (1.0 - alpha_m)
    c_am = 1.0 / (1.0 - alpha_m)
    iters = 0
    q_new = np.zeros(n)
    qdd_new = np.zeros(n)
    a_new = np.zeros(n)
    for step in range(1, n_steps + 1):
        base = q + h * v + h * h * (0.5 - beta) * acc
        qdd_new[:] = qdd
        converged = False
        for it in range(max_iter + 1):
            for i in range(n):
                a_new[i] = ((1.0 - alpha_f) * qdd_new[i] + alpha_f * qdd[i] - alpha_m * acc[i]) * c_am
                q_new[i] = base[i] + h * h * beta * a_new[i]
            elastic(q_new, dofmap, a_tab, b_tab, w_tab, e_mod, nu, rod, False, False, f, kt, fp)
            mq = mass @ qdd_new
            for i in range(n):
                res[i] = mq[i] + f[i] - qg[i]
            rn = _norm_inf(res)
            if not np.isfinite(rn):
                return DIVERGED, step, iters, step - 1
            if rn <= max(tol * (qg_norm + _norm_inf(mq) + _norm_inf(f)), res_floor):
                converged = True
                break
            if it == max_iter:
                break
            iters += 1
            elastic(q_new, dofmap, a_tab, b_tab, w_tab, e_mod, nu, rod, True, False, f, kt, fp)
            for i in range(n):
                for m in range(n):
                    mat[i, m] = mass[i, m] + bp * kt[i, m]
            if not _cholesky(mat):
                return INDEFINITE, step, iters, step - 1
            for i in range(n):
                dq[i] = -res[i]
            _chol_solve(mat, dq)
            for i in range(n):
                qdd_new[i] += dq[i]
        if not converged:
            return NO_CONVERGENCE, step, iters, step - 1
        for i in range(n):
            v[i] = v[i] + h * (1.0 - gamma) * acc[i] + h * gamma * a_new[i]
        q[:] = q_new
        acc[:] = a_new
        if want_s:
            elastic(q, dofmap, a_tab, b_tab, w_tab, e_mod, nu, rod, True, True, f, kt, fp)
            for i in range(n):
                for m in range(n):
                    mat[i, m] = mass[i, m] + bp * kt[i, m]
            if not _cholesky(mat):
                return INDEFINITE, step, iters, step - 1
            for j in range(npar):
                for i in range(n):
                    pred[i, j] = (sq[i, j] + h * sv[i, j] + h * h * (0.5 - beta) * sa[i, j]
                                  + h * h * beta * (alpha_f * sqdd[i, j] - alpha_m * sa[i, j]) * c_am)
                for i in range(n):
                    s = -fp[par_rod[j], i] if par_rod[j] >= 0 else 0.0
                    for m in range(n):
                        s -= kt[i, m] * pred[m, j]
                    col[i] = s
                _chol_solve(mat, col)
                for i in range(n):
                    sa_new = ((1.0 - alpha_f) * col[i] + alpha_f * sqdd[i, j] - alpha_m * sa[i, j]) * c_am
                    sv[i, j] = sv[i, j] + h * (1.0 - gamma) * sa[i, j] + h * gamma * sa_new
                    sq[i, j] = pred[i, j] + bp * col[i]
                    sa[i, j] = sa_new
                    sqdd[i, j] = col[i]
        qdd[:] = qdd_new
        if step % out_every == 0:
            r = step // out_every
            rec_q[r, :] = q
            rec_v[r, :] = v
            if want_s:
                rec_s[r, :, :] = sq
    return OK, n_steps, iters, n_steps
