"""The linear algebra of a multi-DOF fit: each record's residual block, the normal equations accumulated record by
record, the initial states eliminated (Schur complement), and the directions the records cannot see."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["RANK_TOL", "Block", "State", "combinations", "normal_equations", "schur", "undetermined"]

FloatArray = NDArray[np.float64]

#: Relative eigenvalue below which a direction of JᵀJ counts as not determined.
RANK_TOL = 1e-12


@dataclass
class Block:
    """One record's residuals and Jacobian (parameter columns, initial-state columns)."""

    r: FloatArray
    jp: FloatArray
    ji: FloatArray
    nsub: int = 0  # RK4 substeps per sample of the simulation (0: a static record)


@dataclass
class State:
    x: FloatArray
    inits: list[FloatArray]
    cost: float
    blocks: list[Block]


def normal_equations(blocks: Sequence[Block], free_idx: NDArray[np.int64], scale: FloatArray,
                      init_sizes: Sequence[int], basis: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    """JᵀJ and Jᵀr over [free parameters (scaled; in the coordinates of ``basis`` when given), every record's
    initial states]."""
    nf = free_idx.size if basis is None else basis.shape[1]
    total = nf + int(sum(init_sizes))
    a = np.zeros((total, total))
    g = np.zeros(total)
    off = nf
    for b, ni in zip(blocks, init_sizes, strict=True):
        jp = b.jp[:, free_idx] * scale[None, :]
        if basis is not None:
            jp = jp @ basis
        a[:nf, :nf] += jp.T @ jp
        g[:nf] += jp.T @ b.r
        if ni:
            sl = slice(off, off + ni)
            a[sl, sl] += b.ji.T @ b.ji
            cross = jp.T @ b.ji
            a[:nf, sl] += cross
            a[sl, :nf] += cross.T
            g[sl] += b.ji.T @ b.r
            off += ni
    return a, g


def combinations(s_mat: FloatArray, names: Sequence[str], tol: float) -> tuple[FloatArray | None, list[str], list[str]]:
    """Directions the records cannot see (column-equilibrated eigenvalue below ``tol`` of the largest).

    Returns the basis (in scaled parameter coordinates, orthonormal) of the directions they can see, so that a step
    moves parameters that are only seen together by the same relative amount; the parameters without any
    sensitivity (held); and those seen only in combination with others. ``None`` when every direction is seen.
    """
    from scipy.linalg import null_space

    d = np.sqrt(np.maximum(np.diag(s_mat), 0.0))
    dead = d <= 1e-300
    live = np.flatnonzero(~dead)
    held = [names[int(k)] for k in np.flatnonzero(dead)]
    if live.size == 0:
        return np.zeros((len(names), 0)), held, []
    sub = s_mat[np.ix_(live, live)] / np.outer(d[live], d[live])
    w, v = np.linalg.eigh(0.5 * (sub + sub.T))
    blind = v[:, w < tol * max(float(w[-1]), 1e-300)]
    if blind.shape[1] == 0 and not held:
        return None, [], []
    null_x = np.zeros((len(names), blind.shape[1] + len(held)))
    null_x[live, : blind.shape[1]] = blind / d[live, None]
    for j, k in enumerate(np.flatnonzero(dead)):
        null_x[k, blind.shape[1] + j] = 1.0
    basis = null_space(null_x.T)
    norm = null_x[:, : blind.shape[1]] / np.maximum(np.linalg.norm(null_x[:, : blind.shape[1]], axis=0), 1e-300)
    together = [names[int(k)] for k in live if np.any(np.abs(norm[k]) > 0.1)]
    return np.asarray(basis, dtype=np.float64), held, together


def schur(a: FloatArray, nf: int) -> FloatArray:
    """The parameter block of JᵀJ with the initial-state block eliminated (pseudo-inverse with a rank threshold)."""
    if a.shape[0] == nf:
        return a.copy()
    w, v = np.linalg.eigh(a[nf:, nf:])
    keep = w > RANK_TOL * max(float(w.max()), 1e-300)
    inv_ii = (v[:, keep] / w[keep]) @ v[:, keep].T
    out: FloatArray = a[:nf, :nf] - a[:nf, nf:] @ inv_ii @ a[nf:, :nf]
    return out


def undetermined(s_mat: FloatArray, names: Sequence[str], tol: float) -> list[str]:
    """Parameters to hold so that the rest is determined: repeatedly drop the largest component of a direction
    whose (column-equilibrated) eigenvalue is below ``tol`` relative to the largest."""
    idx = list(range(len(names)))
    dropped: list[str] = []
    while idx:
        sub = s_mat[np.ix_(idx, idx)]
        d = np.sqrt(np.maximum(np.diag(sub), 0.0))
        if np.any(d == 0):
            k = int(np.argmin(d))
        else:
            w, v = np.linalg.eigh(sub / np.outer(d, d))
            if w[0] > tol * max(float(w[-1]), 1e-300):
                break
            k = int(np.argmax(np.abs(v[:, 0])))
        dropped.append(names[idx[k]])
        del idx[k]
    return dropped
