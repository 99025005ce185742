"""Small compiled linear algebra of the rigid body (numba): 3-vectors as tuples (products with
3×3 matrices, cross and dot products) and the Cholesky factor of the free block of the mass matrix with
its triangular solves, column by column (the inverse is never formed)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = []


# ----------------------------------------------------------------------------- 3-vector helpers (tuples)
@njit(cache=True, inline="always")
def _mv(a, v):  # type: ignore[no-untyped-def]
    return (a[0, 0] * v[0] + a[0, 1] * v[1] + a[0, 2] * v[2], a[1, 0] * v[0] + a[1, 1] * v[1] + a[1, 2] * v[2],
            a[2, 0] * v[0] + a[2, 1] * v[1] + a[2, 2] * v[2])


@njit(cache=True, inline="always")
def _mtv(a, v):  # type: ignore[no-untyped-def]
    return (a[0, 0] * v[0] + a[1, 0] * v[1] + a[2, 0] * v[2], a[0, 1] * v[0] + a[1, 1] * v[1] + a[2, 1] * v[2],
            a[0, 2] * v[0] + a[1, 2] * v[1] + a[2, 2] * v[2])


@njit(cache=True, inline="always")
def _cross(a, b):  # type: ignore[no-untyped-def]
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, inline="always")
def _add(a, b):  # type: ignore[no-untyped-def]
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True, inline="always")
def _axpy(a, s, b):  # type: ignore[no-untyped-def]
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@njit(cache=True, inline="always")
def _scale(s, a):  # type: ignore[no-untyped-def]
    return (s * a[0], s * a[1], s * a[2])


@njit(cache=True, inline="always")
def _col(a, k):  # type: ignore[no-untyped-def]
    return (a[0, k], a[1, k], a[2, k])


@njit(cache=True, inline="always")
def _dot(a, b):  # type: ignore[no-untyped-def]
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline="always")
def _put(out, k, top, bottom):  # type: ignore[no-untyped-def]
    """Column ``k`` of the (6, m) array ``out`` = (top, bottom)."""
    for i in range(3):
        out[i, k] = top[i]
        out[3 + i, k] = bottom[i]


@njit(cache=True, inline="always")
def _sym_unit(a, b, v):  # type: ignore[no-untyped-def]
    """``S·v`` for the symmetric unit matrix S with ones at (a, b) and (b, a)."""
    r0 = (v[b] if a == 0 else 0.0) + (v[a] if (b == 0 and a != b) else 0.0)
    r1 = (v[b] if a == 1 else 0.0) + (v[a] if (b == 1 and a != b) else 0.0)
    r2 = (v[b] if a == 2 else 0.0) + (v[a] if (b == 2 and a != b) else 0.0)
    return (r0, r1, r2)


@njit(cache=True)
def _cholesky(mass, free, nf, low):  # type: ignore[no-untyped-def]
    """Lower factor of ``mass[free][:, free]`` into ``low``; False when not positive definite."""
    for a in range(nf):
        for b in range(a + 1):
            s = mass[free[a], free[b]]
            for k in range(b):
                s -= low[a, k] * low[b, k]
            if a == b:
                if not s > 0.0:
                    return False
                low[a, a] = np.sqrt(s)
            else:
                low[a, b] = s / low[b, b]
    return True


@njit(cache=True)
def _chol_solve(low, nf, x):  # type: ignore[no-untyped-def]
    """Solve ``L Lᵀ x = b`` in place (``x`` holds b)."""
    for a in range(nf):
        s = x[a]
        for k in range(a):
            s -= low[a, k] * x[k]
        x[a] = s / low[a, a]
    for a in range(nf - 1, -1, -1):
        s = x[a]
        for k in range(a + 1, nf):
            s -= low[k, a] * x[k]
        x[a] = s / low[a, a]


@njit(cache=True)
def _substitute(low, free, mat, off, a, lo, hi, transposed):  # type: ignore[no-untyped-def]
    """Row ``off + free[a]`` of ``mat`` minus ``L[a, k]`` (``L[k, a]`` when ``transposed``) times row
    ``off + free[k]`` for ``k`` in ``lo .. hi - 1``, then divided by ``L[a, a]``: one step of forward or back
    substitution, along the contiguous columns."""
    ra = off + free[a]
    m = mat.shape[1]
    for k in range(lo, hi):
        lk = low[k, a] if transposed else low[a, k]
        if lk != 0.0:
            rk = off + free[k]
            for c in range(m):
                mat[ra, c] -= lk * mat[rk, c]
    inv = 1.0 / low[a, a]
    for c in range(m):
        mat[ra, c] *= inv


@njit(cache=True)
def _solve_block(low, free, nf, mat, off):  # type: ignore[no-untyped-def]
    """``mat[off + free, :] = M_ff⁻¹ mat[off + free, :]`` in place, every column at once."""
    for a in range(nf):
        _substitute(low, free, mat, off, a, 0, a, False)
    for a in range(nf - 1, -1, -1):
        _substitute(low, free, mat, off, a, a + 1, nf, True)
