r"""Constant-velocity plateaus of a velocity-staircase record (stage 1 of the staged LuGre procedure).

An axis under velocity control steps through a staircase of set speeds in both directions. On each
plateau where the loop has settled, the acceleration vanishes and the drive force equals the
friction force at that speed, so each accepted plateau gives one point ``(v_i, F_i)`` of the
steady-state friction curve with standard errors.

Algorithm
---------
1. The velocity is averaged over short blocks (``block_s``, default 20 ms); the block-to-block noise
   of the velocity sensor is estimated robustly from the differences of those means (MAD).
2. Consecutive blocks whose means agree with the running median of the segment within
   ``max(rel_tol·|v|, 4·noise)`` form a segment; a velocity step starts a new one. Each segment is
   one candidate plateau.
3. A candidate is trimmed (its first ``settle_fraction``, where the loop is still settling) and
   judged, each rejection with its reason: too short; velocity below the noise; velocity sign
   changes or relative velocity scatter above ``max_scatter`` beyond the sensor noise (stick-slip or
   hunting of the loop); velocity or force still drifting (a trend beyond three of its standard errors
   and larger than the uncertainty of the plateau's mean, or than ``rel_tol``: unsettled; the leading
   half of the window is then dropped and the rest judged again, twice at most).
4. The friction force of an accepted plateau is the mean of ``f − m·a`` (``m·a`` from the velocity
   change over the plateau, zero when no mass is given); its standard error and that of the mean
   velocity come from batch means (ten batches), which stays honest when the samples are
   correlated by the loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DataValidationError, ModelSpecError
from ..params import FloatArray
from ..record import Record

__all__ = ["Plateau", "PlateauDetection", "find_plateaus"]

#: Batches used for the standard errors of the plateau means.
BATCHES = 10


@dataclass(frozen=True, kw_only=True)
class Plateau:
    """One candidate constant-velocity segment.

    Attributes
    ----------
    start, stop : int
        Sample range ``[start, stop)`` of the judged (trimmed) part.
    t_start_s, t_stop_s : float
    velocity, velocity_se : float, m/s
        Mean velocity and its standard error.
    force, force_se : float, N
        Mean friction force (drive force minus inertia) and its standard error.
    scatter : float
        Standard deviation of the velocity over the plateau relative to its mean magnitude.
    accepted : bool
    reason : str
        Why it was rejected ('' when accepted).
    """

    start: int
    stop: int
    t_start_s: float
    t_stop_s: float
    velocity: float
    velocity_se: float
    force: float
    force_se: float
    scatter: float
    accepted: bool
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {
            "t_start_s": self.t_start_s, "t_stop_s": self.t_stop_s, "velocity": self.velocity,
            "velocity_se": self.velocity_se, "force": self.force, "force_se": self.force_se,
            "scatter": self.scatter, "accepted": self.accepted, "reason": self.reason,
        }


@dataclass(frozen=True, kw_only=True)
class PlateauDetection:
    """Plateaus found in one record.

    Attributes
    ----------
    success : bool
        True when at least one plateau was accepted.
    message : str
    record : str
        Record name.
    plateaus : tuple of Plateau
        Every candidate, accepted or not, in time order.
    noise_v : float, m/s
        Velocity noise per sample (robust estimate).
    mass : float or None
        Mass used for the inertia correction.
    """

    success: bool
    message: str
    record: str
    plateaus: tuple[Plateau, ...]
    noise_v: float
    mass: float | None

    @property
    def accepted(self) -> tuple[Plateau, ...]:
        return tuple(p for p in self.plateaus if p.accepted)

    @property
    def rejected(self) -> tuple[Plateau, ...]:
        return tuple(p for p in self.plateaus if not p.accepted)


def _batch_mean(y: FloatArray) -> tuple[float, float]:
    """Mean and its standard error from ``BATCHES`` batch means."""
    nb = min(BATCHES, y.size)
    means = np.array([b.mean() for b in np.array_split(y, nb)])
    se = float(np.std(means, ddof=1) / math.sqrt(nb)) if nb > 1 else math.inf
    return float(np.mean(y)), se


def _trend(t: FloatArray, y: FloatArray) -> tuple[float, float]:
    """Change of ``y`` over the span of ``t`` from a straight-line fit, and its standard error
    (from batch means of the residual, so correlated noise is not mistaken for a trend)."""
    tau = (t - t.mean()) / max(float(t[-1] - t[0]), 1e-300)
    A = np.column_stack([np.ones_like(tau), tau])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    nb = min(BATCHES, y.size)
    parts = np.array_split(np.arange(y.size), nb)
    bm = np.array([resid[p].mean() for p in parts])
    bt = np.array([tau[p].mean() for p in parts])
    s2 = float(np.sum(bm**2) / max(nb - 2, 1))
    se = math.sqrt(s2 / max(float(np.sum((bt - bt.mean()) ** 2)), 1e-300))
    return float(coef[1]), se


def find_plateaus(
    record: Record,
    *,
    mass: float | None = None,
    block_s: float = 0.02,
    min_duration_s: float = 0.2,
    settle_fraction: float = 0.3,
    rel_tol: float = 0.02,
    max_scatter: float = 0.1,
) -> PlateauDetection:
    """Find and judge the constant-velocity plateaus of a velocity-staircase record.

    Parameters
    ----------
    record : Record
        Single-DOF record with the drive force ``f`` (N) and the measured velocity ``v`` (m/s).
    mass : float or None, kg
        Moving mass for the inertia correction ``m·a``; None: no correction.
    block_s : float, s
        Averaging block for segmentation.
    min_duration_s : float, s
        Shortest judged plateau (after trimming).
    settle_fraction : float
        Leading fraction of each segment discarded as the loop's settling transient.
    rel_tol : float
        Relative velocity tolerance of a plateau and the largest allowed drift of velocity and force.
    max_scatter : float
        Largest allowed standard deviation of the velocity relative to its mean magnitude.

    Returns
    -------
    PlateauDetection

    Raises
    ------
    DataValidationError
        The record has no measured velocity, or several DOFs.
    ModelSpecError
        Settings out of range.
    """
    if record.n_dof != 1:
        raise DataValidationError(f"record `{record.name}` has {record.n_dof} DOFs; map one axis to `t, f, x, v`")
    if record.v is None:
        raise DataValidationError(
            f"record `{record.name}` has no velocity `v`: a velocity-staircase record needs `t, f, x, v` (or `t, f,"
            " x`, the velocity derived from the displacement by `friction identify`)"
        )
    if not (block_s > 0 and min_duration_s > 0 and 0 <= settle_fraction < 1 and 0 < rel_tol < 1 and max_scatter > 0):
        raise ModelSpecError(
            "plateau settings out of range: need `block_s` > 0, `min_duration_s` > 0, 0 <= `settle_fraction` < 1, "
            f"0 < `rel_tol` < 1, `max_scatter` > 0; got {block_s}, {min_duration_s}, {settle_fraction}, {rel_tol}, "
            f"{max_scatter}"
        )
    if mass is not None and not (mass > 0 and math.isfinite(mass)):
        raise ModelSpecError(f"`mass` must be positive and finite, got {mass}")
    t, f, v = record.t, record.f, np.asarray(record.v)
    nb = max(int(round(block_s / record.dt)), 2)
    nblk = record.n // nb
    if nblk < 3:
        raise DataValidationError(f"record `{record.name}` is too short for plateau detection ({record.n} samples)")
    vb = v[: nblk * nb].reshape(nblk, nb).mean(axis=1)
    dv = np.diff(vb)
    noise_blk = float(1.4826 * np.median(np.abs(dv - np.median(dv))) / math.sqrt(2)) if dv.size else 0.0
    noise_v = noise_blk * math.sqrt(nb)
    # segmentation: a block joins the current segment while it agrees with the segment's median
    segments: list[tuple[int, int]] = []
    s0 = 0
    for k in range(1, nblk):
        ref = float(np.median(vb[max(s0, k - 25):k]))
        if abs(vb[k] - ref) > max(rel_tol * abs(ref), 4.0 * noise_blk):
            segments.append((s0, k))
            s0 = k
    segments.append((s0, nblk))
    min_n = int(math.ceil(min_duration_s / record.dt))
    plateaus: list[Plateau] = []
    for b0, b1 in _merge_short(segments, max(int(math.ceil(min_n / nb)), 1)):
        i0, i1 = b0 * nb, (b1 * nb if b1 < nblk else record.n)
        if i1 - i0 < 4:
            continue
        i0 += int(settle_fraction * (i1 - i0))
        plateaus.append(_judge(t, f, v, i0, i1, min_n, noise_v, mass, rel_tol, max_scatter))
    # a short candidate is the transient after a step; one as long as half a plateau is listed (rejected)
    kept = tuple(p for p in plateaus if p.accepted or (p.stop - p.start) >= min_n // 2)
    n_acc = sum(p.accepted for p in kept)
    if n_acc == 0:
        msg = (f"no steady plateau found in `{record.name}` ({len(kept)} candidates rejected); a velocity staircase "
               f"needs plateaus of at least {min_duration_s:g} s after settling")
    else:
        msg = f"{n_acc} of {len(kept)} plateaus accepted in `{record.name}`"
    return PlateauDetection(success=n_acc > 0, message=msg, record=record.name, plateaus=kept, noise_v=noise_v,
                            mass=mass)


def _merge_short(segments: list[tuple[int, int]], min_blocks: int) -> list[tuple[int, int]]:
    """Join runs of consecutive segments shorter than ``min_blocks`` into one candidate: a loop that
    hunts or sticks and slips breaks into many short segments, which are judged together."""
    out: list[tuple[int, int]] = []
    run: tuple[int, int] | None = None
    for b0, b1 in segments:
        if b1 - b0 < min_blocks:
            run = (run[0], b1) if run is not None else (b0, b1)
            continue
        if run is not None:
            out.append(run)
            run = None
        out.append((b0, b1))
    if run is not None:
        out.append(run)
    return out


def _judge(t: FloatArray, f: FloatArray, v: FloatArray, i0: int, i1: int, min_n: int, noise_v: float,
           mass: float | None, rel_tol: float, max_scatter: float) -> Plateau:
    """Judge one candidate; while the force or velocity still settles significantly, the leading half of
    the window is dropped (twice at most, keeping at least ``min_n`` samples)."""
    plateau = _judge_window(t, f, v, i0, i1, min_n, noise_v, mass, rel_tol, max_scatter)
    for _ in range(2):
        if plateau.accepted or "settl" not in plateau.reason or (i1 - i0) // 2 < min_n:
            break
        i0 = i0 + (i1 - i0) // 2
        plateau = _judge_window(t, f, v, i0, i1, min_n, noise_v, mass, rel_tol, max_scatter)
    return plateau


def _judge_window(t: FloatArray, f: FloatArray, v: FloatArray, i0: int, i1: int, min_n: int, noise_v: float,
                  mass: float | None, rel_tol: float, max_scatter: float) -> Plateau:
    tt, ff, vv = t[i0:i1], f[i0:i1], v[i0:i1]
    vm, vse = _batch_mean(vv)
    inertia = 0.0
    if mass is not None and vv.size > 10:
        k = max(vv.size // 10, 1)
        inertia = mass * (float(vv[-k:].mean()) - float(vv[:k].mean())) / max(float(tt[-1] - tt[0]), 1e-300)
    fm, fse = _batch_mean(ff - inertia)
    scatter = float(np.std(vv) / abs(vm)) if vm != 0 else math.inf
    reason = ""
    if vv.size < min_n:
        reason = f"too short ({vv.size * (t[1] - t[0]):.3g} s after settling)"
    elif abs(vm) < 3 * max(vse, noise_v / math.sqrt(vv.size)):
        reason = "velocity indistinguishable from zero (standstill)"
    elif np.any(np.sign(vv) != np.sign(vm)) and scatter > max_scatter and np.std(vv) > 3 * noise_v:
        reason = f"velocity reverses within the plateau (stick-slip or hunting; scatter {100 * scatter:.0f} %)"
    elif scatter > max_scatter and np.std(vv) > 3 * noise_v:
        reason = f"velocity not steady (scatter {100 * scatter:.0f} % of its mean; stick-slip or hunting)"
    else:
        # a trend matters when it is real (beyond 3 standard errors of the trend) and larger than the
        # uncertainty claimed for the plateau's mean (or than rel_tol, whichever is smaller)
        dv, dv_se = _trend(tt, vv)
        df, df_se = _trend(tt, ff)
        if abs(dv) > 3 * dv_se and abs(dv) > min(rel_tol * abs(vm), 2 * vse):
            reason = f"velocity drifts {100 * dv / abs(vm):+.2g} % over the plateau (loop not settled)"
        elif abs(df) > 3 * df_se and abs(df) > min(rel_tol * abs(fm), 2 * fse):
            reason = f"force drifts {100 * df / abs(fm):+.2g} % over the plateau (friction not settled)"
    return Plateau(start=i0, stop=i1, t_start_s=float(tt[0]), t_stop_s=float(tt[-1]), velocity=vm, velocity_se=vse,
                   force=fm, force_se=fse, scatter=scatter, accepted=not reason, reason=reason)
