"""What the simulated friction experiments share: the experiment and plateau types, the LuGre truth with
its mass, the fine time grid and the solve of the truth (SDIRK4 of the model layer at rtol 1e-10), the
noisy record at the sampling rate, and the steady (Stribeck) friction of the truth."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dynamics.integrate import Trajectory, integrate
from ..errors import ModelSpecError, SimulationError
from ..models import TermModel
from ..record import Record, from_arrays
from ..terms.registry import get_term
from .steady import curve_force

FloatArray = NDArray[np.float64]

__all__ = ["DEFAULT_MASS", "DEFAULT_TRUTH", "LUGRE_PARAMETERS", "PRESLIDING_KINDS", "Plateau", "FrictionExperiment",
           "steady_friction"]


#: LuGre parameter names, in the ``lugre`` term's order.
LUGRE_PARAMETERS: tuple[str, ...] = get_term("lugre").param_names

#: Default true LuGre parameters (SI; see the module notes for the choice).
DEFAULT_TRUTH: Mapping[str, float] = MappingProxyType(
    {"sigma0": 1e5, "sigma1": 300.0, "sigma2": 0.4, "Fc": 1.0, "Fs": 1.5, "vs": 1e-3})

#: Kinds of pre-sliding test input.
PRESLIDING_KINDS: tuple[str, ...] = ("chirp", "sine", "ramp")

#: Default moving mass (kg).
DEFAULT_MASS = 1.0


_RTOL = 1e-10




@dataclass(frozen=True, kw_only=True)
class Plateau:
    """One commanded velocity level of a staircase.

    Attributes
    ----------
    t_start_s, t_end_s : float, s
        The level is commanded (after the transition ramp) from ``t_start_s`` to ``t_end_s``.
    v_ref_m_s : float, m/s
        Commanded velocity (signed).
    """

    t_start_s: float
    t_end_s: float
    v_ref_m_s: float


@dataclass(frozen=True, kw_only=True)
class FrictionExperiment:
    """A simulated friction experiment and its hidden truth.

    Attributes
    ----------
    name : str
        Experiment label (the record's name).
    record : Record
        What a test rig would record (noise added): channels as documented by the generator.
    clean : Record
        The same channels without noise.
    truth : mapping of str to float
        True plant parameters: ``m0`` (kg) and the LuGre parameters (SI), as ``TermModel("m0,lugre")``
        names them.
    z : (n,) ndarray, m
        True bristle deflection (not measurable).
    design : mapping
        Settings of the experiment (excitation, gains, levels, sampling, ...).
    plateaus : tuple of Plateau
        Commanded velocity levels (staircase only; empty otherwise).
    max_bristle_ratio : float
        ``max |σ0·z| / Fs``: below about 1 the axis never left pre-sliding.
    success : bool
    message : str
    """

    name: str
    record: Record
    clean: Record
    truth: Mapping[str, float]
    z: FloatArray
    design: Mapping[str, Any]
    plateaus: tuple[Plateau, ...] = ()
    max_bristle_ratio: float = 0.0
    success: bool = True
    message: str = ""


# ---------------------------------------------------------------------------------------------- helpers
def _truth(params: Mapping[str, float], mass: float) -> dict[str, float]:
    """Validated LuGre parameters plus the mass as ``m0``."""
    if not isinstance(params, Mapping):
        raise ModelSpecError(f"`params` must be a mapping of the LuGre parameters {LUGRE_PARAMETERS}, got {params!r}")
    unknown = sorted(set(params) - set(LUGRE_PARAMETERS))
    missing = [n for n in LUGRE_PARAMETERS if n not in params]
    if unknown or missing:
        raise ModelSpecError(f"`params` must give exactly {', '.join(LUGRE_PARAMETERS)}; unknown {unknown}, missing {missing}")
    out = {n: float(params[n]) for n in LUGRE_PARAMETERS}
    bad = {n: v for n, v in out.items() if not (math.isfinite(v) and (v > 0 or (n in ("sigma1", "sigma2") and v >= 0)))}
    if bad:
        raise ModelSpecError(f"`params` must be finite and positive (sigma1, sigma2 may be 0); got {bad}")
    if not (math.isfinite(mass) and mass > 0):
        raise ModelSpecError(f"`mass` must be positive and finite, got {mass}")
    return {"m0": float(mass), **out}


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ModelSpecError(f"`{name}` must be a positive finite number, got {value!r}")
    return float(value)


def _noise(noise: Mapping[str, float] | None, channels: Sequence[str]) -> dict[str, float]:
    if noise is None:
        return {}
    bad = {c: v for c, v in noise.items() if c not in channels or not (math.isfinite(float(v)) and float(v) >= 0)}
    if bad:
        raise ModelSpecError(f"`noise` takes channels {', '.join(channels)} with standard deviations >= 0; got {bad}")
    return {c: float(v) for c, v in noise.items()}


def _grid(duration_s: float, fs_hz: float, oversample: int) -> tuple[FloatArray, FloatArray]:
    """Record grid and the ``oversample`` times finer simulation grid (same end points)."""
    if int(oversample) < 1:
        raise ModelSpecError(f"`oversample` must be >= 1, got {oversample}")
    n = int(round(duration_s * fs_hz)) + 1
    if n < 3:
        raise ModelSpecError(f"`duration_s`·`fs_hz` gives {n} samples; need at least 3")
    t = np.arange(n, dtype=np.float64) / fs_hz
    t_fine = np.arange((n - 1) * int(oversample) + 1, dtype=np.float64) / (fs_hz * int(oversample))
    return t, t_fine


def _solve(terms: str, values: Mapping[str, float], t_fine: FloatArray, u_fine: FloatArray, *,
           x0: float = 0.0, v0: float = 0.0, rtol: float = _RTOL) -> Trajectory:
    """SDIRK4 at tight tolerance from (x0, v0) with the bristles at their steady value; raises on failure."""
    model = TermModel(terms)
    theta = model.default_parameters(dict(values)).values
    y0 = model.initial_state([x0, v0], theta)
    zs = values["Fs"] / values["sigma0"]
    wn = math.sqrt(values["sigma0"] / values["m0"])
    scale = np.full(model.n_states, zs)
    scale[1] = zs * wn
    tr = integrate(model, t_fine, u_fine, theta, y0, method="sdirk", rtol=rtol, atol=rtol * scale)
    if not tr.success:
        raise SimulationError(f"the simulated experiment failed: {tr.message}")
    return tr


def _record(name: str, t: FloatArray, clean: Mapping[str, FloatArray], noise: Mapping[str, float], seed: int,
            meta: Mapping[str, Any]) -> tuple[Record, Record]:
    rng = np.random.default_rng(seed)
    noisy: dict[str, FloatArray] = {}
    for c in ("x", "v", "f"):
        if c not in clean:
            continue
        sd = float(noise.get(c, 0.0))
        noisy[c] = clean[c] + sd * rng.standard_normal(t.size) if sd > 0 else clean[c].copy()
    full_meta = {**meta, "noise": dict(noise), "seed": int(seed)}
    rec = from_arrays(t, noisy["f"], noisy["x"], noisy.get("v"), name=name, source=f"example:{name}", meta=full_meta)
    ref = from_arrays(t, clean["f"], clean["x"], clean.get("v"), name=f"{name} (noise-free)",
                      source=f"example:{name}", meta=full_meta)
    return rec, ref


def _bristle_ratio(z: FloatArray, truth: Mapping[str, float]) -> float:
    return float(np.max(np.abs(z)) * truth["sigma0"] / truth["Fs"])


def steady_friction(params: Mapping[str, float], v: FloatArray | float) -> FloatArray:
    """The LuGre steady friction curve ``F_ss(v) = sign(v)·g(v) + σ2·v`` (N): the ``stribeck`` curve of
    :func:`nlid_core.friction.steady.curve_force` (``tests/test_friction_experiments.py`` holds it equal to the
    ``lugre`` term's force with its state at the term's steady value).

    Parameters
    ----------
    params : mapping
        LuGre parameters (``Fc``, ``Fs``, ``vs``, ``sigma2`` are used).
    v : float or ndarray, m/s
        Sliding velocity.
    """
    return np.asarray(curve_force("stribeck", params, np.asarray(v, dtype=np.float64)), dtype=np.float64)


def _max_weakening_slope(params: Mapping[str, float]) -> float:
    """Largest velocity-weakening slope of the steady curve, ``max(−dF_ss/dv, 0)`` (N·s/m)."""
    drop = max(params["Fs"] - params["Fc"], 0.0)
    return max(drop * math.sqrt(2.0 / math.e) / params["vs"] - params["sigma2"], 0.0)
