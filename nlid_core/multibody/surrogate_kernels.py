"""The compiled loops of the Chebyshev surrogates (numba): the range of a surrogate over a box on a tensor
grid of Chebyshev points, polished by projected modified-Newton descent inside the box."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["grid_kernel", "polish_kernel"]


@njit(cache=True)
def grid_kernel(coefm, t, ymin, ymax, imin, imax):  # type: ignore[no-untyped-def]
    """Min and max of each output over the tensor grid of each box, with the flat node index.

    ``coefm`` (n^d, m): the coefficients as a dense tensor over :math:`(\alpha_0, ..., \alpha_{d-1})`
    (C order), zero outside the multi-index set; ``t`` (k, d, g, n): :math:`T_q` at the g nodes of each
    coordinate of each box. Stage s contracts :math:`\alpha_s` with :math:`T_q` at the nodes of coordinate
    s, so the buffer holds (grid nodes of coordinates < s, coefficient indices of coordinates ≥ s, m);
    the last stage is reduced to min/max on the fly. The flat index is C order over the node indices of
    coordinates 0..d-1; the inner loops run over the m contiguous outputs.
    """
    k, d, g, n = t.shape
    m = coefm.shape[1]
    maxsize = 1
    for s in range(d):
        maxsize = max(maxsize, g**s * n ** (d - s))
    buf_a = np.empty((maxsize, m))
    buf_b = np.empty((maxsize, m))
    tmp = np.empty(m)
    for kb in range(k):
        src = coefm
        use_a = True
        for s in range(d - 1):
            big_g = g**s
            big_r = n ** (d - s - 1)
            dst = buf_a if use_a else buf_b
            for gi0 in range(big_g):
                for gi in range(g):
                    for r in range(big_r):
                        row = (gi0 * g + gi) * big_r + r
                        for o in range(m):
                            dst[row, o] = 0.0
                        for q in range(n):
                            tq = t[kb, s, gi, q]
                            srow = (gi0 * n + q) * big_r + r
                            for o in range(m):
                                dst[row, o] += tq * src[srow, o]
            src = dst
            use_a = not use_a
        for o in range(m):
            ymin[kb, o] = np.inf
            ymax[kb, o] = -np.inf
        for gi0 in range(g ** (d - 1)):
            for gi in range(g):
                for o in range(m):
                    tmp[o] = 0.0
                for q in range(n):
                    tq = t[kb, d - 1, gi, q]
                    srow = gi0 * n + q
                    for o in range(m):
                        tmp[o] += tq * src[srow, o]
                flat = gi0 * g + gi
                for o in range(m):
                    v = tmp[o]
                    if v < ymin[kb, o]:
                        ymin[kb, o] = v
                        imin[kb, o] = flat
                    if v > ymax[kb, o]:
                        ymax[kb, o] = v
                        imax[kb, o] = flat


@njit(cache=True)
def _cheb_point(x, n, t0, t1, t2):  # type: ignore[no-untyped-def]
    """T, T', T'' of degrees 0..n-1 at each coordinate of ``x`` (d,) into ``t0, t1, t2`` (d, n)."""
    for j in range(x.size):
        e = x[j]
        t0[j, 0] = 1.0
        t1[j, 0] = 0.0
        t2[j, 0] = 0.0
        if n > 1:
            t0[j, 1] = e
            t1[j, 1] = 1.0
            t2[j, 1] = 0.0
        for q in range(1, n - 1):
            t0[j, q + 1] = 2.0 * e * t0[j, q] - t0[j, q - 1]
            t1[j, q + 1] = 2.0 * t0[j, q] + 2.0 * e * t1[j, q] - t1[j, q - 1]
            t2[j, q + 1] = 4.0 * t1[j, q] + 2.0 * e * t2[j, q] - t2[j, q - 1]


@njit(cache=True)
def _value_point(x, c, indices, n, t0):  # type: ignore[no-untyped-def]
    """``Σ_α c[α] ψ_α(x)``."""
    d = x.size
    for j in range(d):
        e = x[j]
        t0[j, 0] = 1.0
        if n > 1:
            t0[j, 1] = e
        for q in range(1, n - 1):
            t0[j, q + 1] = 2.0 * e * t0[j, q] - t0[j, q - 1]
    v = 0.0
    for p in range(indices.shape[0]):
        f = c[p]
        for j in range(d):
            f *= t0[j, indices[p, j]]
        v += f
    return v


@njit(cache=True)
def polish_kernel(coef_t, indices, nodes, a, b, imin, imax, ymin, ymax, steps):  # type: ignore[no-untyped-def]
    """In place: polish ``ymin``/``ymax`` (k, m) by projected modified-Newton descent from the grid nodes.

    For box ``kb`` and output ``o`` the start is the grid node of flat index ``imin[kb, o]`` (C order over
    the coordinates; ``nodes`` (k, d, g)) and the function is ``±Σ_α coef_t[o, α] ψ_α`` (minus for the
    maximum). Held coordinates (at a bound with the gradient pointing outwards, or of zero width) keep
    their value; on the free ones the step solves ``(H + τI) s = -g`` with the smallest ``τ ≥ 0`` from
    {0, β, 2β, 4β, ...} that makes the matrix positive definite (Nocedal & Wright 2006, Alg. 3.3); steps of
    length 1, 1/2, 1/4 of it, clipped to the box, are tried in turn. When the free Hessian is indefinite
    the most negative curvature direction (signed to descend) is also tried, to the box boundary and at
    1/2, 1/4 of that (a saddle has a tiny gradient, so the Newton step alone stalls there; Nocedal &
    Wright 2006, §4.3). The best trial is taken if it lowers the value; the descent stops when none
    does or after ``steps`` iterations.
    """
    k, d, g_nodes = nodes.shape
    m, n_terms = coef_t.shape
    n = 1
    for p in range(n_terms):
        for j in range(d):
            n = max(n, indices[p, j] + 1)
    t0 = np.empty((d, n))
    t1 = np.empty((d, n))
    t2 = np.empty((d, n))
    f0 = np.empty((n_terms, d))
    f1 = np.empty((n_terms, d))
    g = np.empty(d)
    h = np.empty((d, d))
    lmat = np.empty((d, d))
    step = np.empty(d)
    trial = np.empty(d)
    best = np.empty(d)
    x = np.empty(d)
    c = np.empty(n_terms)
    free = np.empty(d, dtype=np.bool_)
    for task in range(2 * k * m):
        kb = (task // m) % k
        o = task % m
        sign = 1.0 if task < k * m else -1.0
        flat = imin[kb, o] if sign > 0 else imax[kb, o]
        for j in range(d - 1, -1, -1):
            x[j] = nodes[kb, j, flat % g_nodes]
            flat //= g_nodes
        for p in range(n_terms):
            c[p] = sign * coef_t[o, p]
        f = sign * (ymin[kb, o] if sign > 0 else ymax[kb, o])
        ai = a[kb]
        bi = b[kb]
        for _ in range(steps):
            _cheb_point(x, n, t0, t1, t2)
            for p in range(n_terms):
                for j in range(d):
                    f0[p, j] = t0[j, indices[p, j]]
                    f1[p, j] = t1[j, indices[p, j]]
            g[:] = 0.0
            for p in range(n_terms):
                for l in range(d):
                    gl = c[p] * f1[p, l]
                    for j in range(d):
                        if j != l:
                            gl *= f0[p, j]
                    g[l] += gl
            nfree = 0
            for l in range(d):
                w = bi[l] - ai[l]
                tol = 1e-12 * w
                held = w <= 0.0 or (x[l] <= ai[l] + tol and g[l] >= 0.0) or (x[l] >= bi[l] - tol and g[l] <= 0.0)
                free[l] = not held
                if free[l]:
                    nfree += 1
            if nfree == 0:
                break
            h[:, :] = 0.0
            for p in range(n_terms):
                for l in range(d):
                    if not free[l]:
                        continue
                    hl = c[p] * t2[l, indices[p, l]]
                    for j in range(d):
                        if j != l:
                            hl *= f0[p, j]
                    h[l, l] += hl
                    for q in range(l + 1, d):
                        if not free[q]:
                            continue
                        hq = c[p] * f1[p, l] * f1[p, q]
                        for j in range(d):
                            if j != l and j != q:
                                hq *= f0[p, j]
                        h[l, q] += hq
            # Symmetric matrix of the free block, identity on held coordinates.
            hmax = 0.0
            dmin = np.inf
            for l in range(d):
                for q in range(l, d):
                    v = h[l, q] if (free[l] and free[q]) else (1.0 if l == q else 0.0)
                    h[l, q] = v
                    h[q, l] = v
                if free[l]:
                    hmax = max(hmax, abs(h[l, l]))
                    dmin = min(dmin, h[l, l])
            beta = 1e-3 * hmax if hmax > 0.0 else 1e-3
            tau = 0.0 if dmin > 0.0 else beta - dmin
            for _try in range(60):
                ok = True
                for l in range(d):
                    for q in range(l + 1):
                        sacc = h[l, q] + (tau if (l == q and free[l]) else 0.0)
                        for r in range(q):
                            sacc -= lmat[l, r] * lmat[q, r]
                        if l == q:
                            if sacc <= 0.0:
                                ok = False
                                break
                            lmat[l, l] = np.sqrt(sacc)
                        else:
                            lmat[l, q] = sacc / lmat[q, q]
                    if not ok:
                        break
                if ok:
                    break
                tau = max(2.0 * tau, beta)
            if not ok:
                break
            for l in range(d):                       # L y = -g (held: g = 0)
                sacc = -g[l] if free[l] else 0.0
                for r in range(l):
                    sacc -= lmat[l, r] * step[r]
                step[l] = sacc / lmat[l, l]
            for l in range(d - 1, -1, -1):           # L^T s = y
                sacc = step[l]
                for r in range(l + 1, d):
                    sacc -= lmat[r, l] * step[r]
                step[l] = sacc / lmat[l, l]
            fbest = f
            for frac in (1.0, 0.5, 0.25):
                for l in range(d):
                    trial[l] = min(max(x[l] + frac * step[l], ai[l]), bi[l]) if free[l] else x[l]
                ft = _value_point(trial, c, indices, n, t0)
                if ft < fbest:
                    fbest = ft
                    best[:] = trial
                    break
            if tau > 0.0:
                # Indefinite: also follow the most negative curvature direction u (g·u ≤ 0) to the box
                # boundary, which the shifted Newton step barely moves along near a saddle.
                lam, vec = np.linalg.eigh(h)
                if lam[0] < 0.0:
                    gu = 0.0
                    for l in range(d):
                        gu += g[l] * vec[l, 0]
                    for direction in (1.0, -1.0):
                        if direction * gu > 0.0:
                            continue
                        tmax = np.inf
                        for l in range(d):
                            ul = direction * vec[l, 0]
                            if free[l] and ul > 1e-300:
                                tmax = min(tmax, (bi[l] - x[l]) / ul)
                            elif free[l] and ul < -1e-300:
                                tmax = min(tmax, (ai[l] - x[l]) / ul)
                        if not np.isfinite(tmax) or tmax <= 0.0:
                            continue
                        for frac in (1.0, 0.5, 0.25):
                            for l in range(d):
                                trial[l] = (min(max(x[l] + frac * tmax * direction * vec[l, 0], ai[l]), bi[l])
                                            if free[l] else x[l])
                            ft = _value_point(trial, c, indices, n, t0)
                            if ft < fbest:
                                fbest = ft
                                best[:] = trial
            if not fbest < f:
                break
            f = fbest
            x[:] = best
        if sign > 0:
            ymin[kb, o] = f
        else:
            ymax[kb, o] = -f
