r"""Simulated experiments on a multi-DOF model: the four kinds of test of the staged identification.

* :func:`static_cases` — static load cases: each row an equilibrium under constant loads (and gravity),
  measured with noise. Default loads: no load, then each input alone at ± a level and a few combinations.
* :func:`small_motion` — small high-frequency motion about the static equilibrium: independent random-phase
  multisines on every input in a band above the suspension's resonances, so that inertia dominates.
* :func:`sweep` — a large linear chirp on the input that drives one DOF, the other DOFs held by the rig.
* :func:`multi_excitation` — independent random-phase multisines on every input at large amplitude, nothing held.

:func:`experiment_set` builds the standard set (static, small, one sweep per DOF, two multi-DOF records) with
names the default stage plan selects (``static``, ``small``, ``sweep_<dof>``, ``multi1``, ``multi2``). Every record
starts at the static equilibrium under its initial loads; noise is white and Gaussian with a standard deviation
per output given as a fraction of the output's range (or absolute). The true parameters and the noise levels go
into each record's ``meta``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import SimulationError, ModelSpecError
from ..excitation.multisine import schroeder_multisine
from ..excitation.sweeps import linear_chirp
from .data import MdofRecord
from .spec import MdofModel

__all__ = ["driven_dof", "driving_input", "equilibrium", "experiment_set", "multi_excitation", "run", "small_motion", "static_cases",
           "sweep"]

FloatArray = NDArray[np.float64]


def _rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def equilibrium(model: MdofModel, u: FloatArray, theta: FloatArray, *, held: Sequence[str] = (),
                q0: FloatArray | None = None) -> FloatArray:
    """The static equilibrium under the inputs ``u`` (model.used_inputs order) and gravity.

    Raises
    ------
    SimulationError
        No equilibrium found (a load beyond what the mounts hold, a soft spring pushed through zero stiffness).
    """
    from .equilibrium import static_equilibrium

    q, ok, message = static_equilibrium(model.layout, np.asarray(u, dtype=np.float64), np.asarray(theta, dtype=np.float64),
                                        q0=q0, held=model.held_mask(held))
    if not ok:
        raise SimulationError(f"no static equilibrium: {message}")
    return np.asarray(q, dtype=np.float64)


#: Substeps of the simulated experiments, as a multiple of the automatic choice: their integration error (about
#: 4⁻⁴ of a fit's) stays far below the noise of quiet records, so a fit's intervals are tested against the model,
#: not against the discretisation the fit itself uses.
REFERENCE_FACTOR = 4


def run(model: MdofModel, t: FloatArray, u: FloatArray, theta: FloatArray, *, held: Sequence[str] = (),
        y0: FloatArray | None = None) -> Any:
    """Simulate from the static equilibrium under ``u[0]`` (or from ``y0``); the simulator's result.

    Raises
    ------
    SimulationError
        The simulation failed (its message says how and when).
    """
    from .integrate import simulate

    theta = np.asarray(theta, dtype=np.float64)
    if y0 is None:
        q0 = equilibrium(model, u[0], theta, held=held)
        y0 = np.concatenate([q0, np.zeros(model.n_dof)])
    res = simulate(model.layout, np.asarray(t, dtype=np.float64), np.ascontiguousarray(u, dtype=np.float64), theta,
                   np.asarray(y0, dtype=np.float64), held=model.held_mask(held), sens=False, init_sens=False,
                   factor=REFERENCE_FACTOR)
    if not res.success:
        raise SimulationError(f"simulation failed: {res.message}")
    return res


def _measure(model: MdofModel, q: FloatArray, noise: float | Mapping[str, float], relative: bool,
             rng: np.random.Generator, floor: float = 0.0) -> tuple[FloatArray, dict[str, float]]:
    cols = [model.dof_names.index(d) for d in model.output_dofs]
    y = q[:, cols].copy()
    sigmas: dict[str, float] = {}
    for j, dof in enumerate(model.output_dofs):
        level = float(noise[dof]) if isinstance(noise, Mapping) else float(noise)
        span = float(np.ptp(y[:, j]))
        sigma = max(level * span, floor) if relative else level
        sigmas[dof] = sigma
        if sigma > 0:
            y[:, j] += sigma * rng.standard_normal(y.shape[0])
    return y, sigmas


def driving_input(model: MdofModel, dof: str) -> str:
    """The input that drives ``dof`` directly (platform: z → Fz, phi → Mx; chain: f_<dof>).

    Raises
    ------
    ModelSpecError
        The model has no mapped input on that DOF.
    """
    if model.body:
        from .spec import BODY_DOFS, BODY_INPUTS

        name = BODY_INPUTS[BODY_DOFS.index(dof)]
    else:
        name = f"f_{dof}"
    if name not in model.used_inputs:
        raise ModelSpecError(f"no input drives `{dof}` (inputs: {', '.join(model.used_inputs)})")
    return name


def _levels(model: MdofModel, scale: Sequence[float] | FloatArray) -> FloatArray:
    out = np.asarray(scale, dtype=np.float64).reshape(-1)
    if out.size != len(model.used_inputs) or not np.all(np.isfinite(out)) or np.any(out < 0):
        raise ModelSpecError(f"`scale` needs one non-negative level per input ({', '.join(model.used_inputs)}), got {list(out)}")
    return out


def static_cases(model: MdofModel, theta: FloatArray, *, scale: Sequence[float] | FloatArray | None = None,
                 loads: FloatArray | None = None, noise: float | Mapping[str, float] = 1e-6,
                 rng: np.random.Generator | int | None = None, name: str = "static") -> MdofRecord:
    """Static load cases: equilibrium per row, measured with absolute ``noise`` (m, rad).

    Parameters
    ----------
    model, theta
        The model and its true parameters.
    scale : sequence of float or None, N or N·m per input
        Load level of the default cases: no load; each input alone at ±0.1, ±0.2, …, ±1 times its level (at least
        21 cases, as many as a record needs rows); every pair of inputs at +level.
    loads : (cases, k) ndarray or None
        Loads instead of the default cases (model.used_inputs order).
    noise : float or mapping
        Standard deviation of the position noise per output (absolute).
    rng, name

    Raises
    ------
    SimulationError
        A case without equilibrium.
    """
    gen = _rng(rng)
    k = len(model.used_inputs)
    if loads is None:
        if scale is None:
            raise ModelSpecError("give the load `scale` per input, or the `loads` themselves")
        levels = _levels(model, scale)
        rows = [np.zeros(k)]
        for j in range(k):
            for level in np.concatenate([np.linspace(0.1, 1.0, 10), -np.linspace(0.1, 1.0, 10)]):
                e = np.zeros(k)
                e[j] = level * levels[j]
                rows.append(e)
        for j in range(k):
            for i in range(j + 1, k):
                e = np.zeros(k)
                e[j], e[i] = levels[j], levels[i]
                rows.append(e)
        loads = np.array(rows)
    loads = np.atleast_2d(np.asarray(loads, dtype=np.float64))
    theta = np.asarray(theta, dtype=np.float64)
    qs = []
    q_prev = None
    for row in loads:
        q_prev = equilibrium(model, row, theta, q0=q_prev)
        qs.append(q_prev)
    y, sigmas = _measure(model, np.array(qs), noise, False, gen)
    return MdofRecord(name=name, t=np.arange(loads.shape[0], dtype=np.float64), u=loads, y=y,
                      input_names=model.used_inputs, output_names=model.output_dofs, static=True,
                      meta={"kind": "static", "truth": dict(zip(model.param_names, theta.tolist(), strict=True)),
                            "noise": sigmas})


def _multisines(model: MdofModel, band: tuple[float, float], scale: Sequence[float] | FloatArray, duration: float, fs: float,
                gen: np.random.Generator) -> tuple[FloatArray, FloatArray]:
    levels = _levels(model, scale)
    cols = []
    t = None
    for j in range(len(model.used_inputs)):
        if levels[j] == 0:
            continue
        ex = schroeder_multisine(band[0], band[1], rms_n=float(levels[j]), duration_s=duration, fs_hz=fs, phases="random",
                                 rng=gen)
        t = ex.t_s
        ramp = np.minimum(1.0, ex.t_s / min(0.5, duration / 10))  # start from rest: fade the loads in
        cols.append((j, ex.force * ramp))
    if t is None:
        raise ModelSpecError("every input level is zero: nothing excites the model")
    u = np.zeros((t.size, len(model.used_inputs)))
    for j, col in cols:
        u[:, j] = col
    return t, u


def _dynamic(model: MdofModel, theta: FloatArray, t: FloatArray, u: FloatArray, held: Sequence[str], noise: float,
             gen: np.random.Generator, name: str, kind: str, settings: Mapping[str, Any], floor: float) -> MdofRecord:
    res = run(model, t, u, theta, held=held)
    y, sigmas = _measure(model, res.q, noise, True, gen, floor)
    return MdofRecord(name=name, t=t, u=u, y=y, input_names=model.used_inputs, output_names=model.output_dofs,
                      held=tuple(held), meta={"kind": kind, "settings": dict(settings), "noise": sigmas,
                                              "truth": dict(zip(model.param_names, np.asarray(theta).tolist(), strict=True))})


def small_motion(model: MdofModel, theta: FloatArray, *, scale: Sequence[float] | FloatArray, band: tuple[float, float],
                 duration: float = 8.0, fs: float = 500.0, noise: float = 0.005, floor: float = 0.0,
                 rng: np.random.Generator | int | None = None, name: str = "small") -> MdofRecord:
    """Small high-frequency motion: random-phase multisines on every input (rms ``scale`` per input) in ``band`` Hz;
    ``noise`` is the output noise as a fraction of each output's range (at least ``floor``, m or rad)."""
    gen = _rng(rng)
    t, u = _multisines(model, band, scale, duration, fs, gen)
    return _dynamic(model, theta, t, u, (), noise, gen, name, "small",
                    {"band_hz": list(band), "rms": [float(v) for v in scale]}, floor)


def multi_excitation(model: MdofModel, theta: FloatArray, *, scale: Sequence[float] | FloatArray, band: tuple[float, float],
                     duration: float = 10.0, fs: float = 500.0, noise: float = 0.005, floor: float = 0.0,
                     rng: np.random.Generator | int | None = None, name: str = "multi") -> MdofRecord:
    """Large multi-DOF excitation: random-phase multisines on every input (rms ``scale``), nothing held."""
    gen = _rng(rng)
    t, u = _multisines(model, band, scale, duration, fs, gen)
    return _dynamic(model, theta, t, u, (), noise, gen, name, "multi",
                    {"band_hz": list(band), "rms": [float(v) for v in scale]}, floor)


def sweep(model: MdofModel, theta: FloatArray, dof: str, *, amplitude: float, band: tuple[float, float],
          duration: float = 10.0, fs: float = 500.0, noise: float = 0.005, floor: float = 0.0, hold_others: bool = True,
          rng: np.random.Generator | int | None = None, name: str | None = None) -> MdofRecord:
    """A large linear chirp of peak ``amplitude`` (N or N·m) on the input driving ``dof``, the other DOFs held."""
    gen = _rng(rng)
    drive = driving_input(model, dof)
    ex = linear_chirp(band[0], band[1], amplitude_n=amplitude, duration_s=duration, fs_hz=fs, taper_s=min(1.0, duration / 10))
    u = np.zeros((ex.t_s.size, len(model.used_inputs)))
    u[:, model.used_inputs.index(drive)] = ex.force
    held = tuple(d for d in model.dof_names if d != dof) if hold_others else ()
    return _dynamic(model, theta, ex.t_s, u, held, noise, gen, name or f"sweep_{dof}", "sweep",
                    {"dof": dof, "band_hz": list(band), "amplitude": amplitude}, floor)


def experiment_set(model: MdofModel, theta: FloatArray | None = None, *, level: float = 1.0, noise: float = 0.005,
                   fs: float = 500.0, duration: float = 10.0, rng: np.random.Generator | int | None = 0,
                   progress: Callable[[str, float, str], None] | None = None) -> tuple[MdofRecord, ...]:
    """The standard set of experiments with loads sized from the model's own stiffness, mass and damping.

    Each input's level is the load that deflects its DOF statically by ``level`` × 2 mm (or 0.005 rad) on the
    diagonal of the linearised stiffness. Static cases use that level; the small motion a tenth of it as rms, in a
    band from 2 to 5 times the highest natural frequency (capped below fs/5); each sweep (0.2 to 1.5 times the
    natural-frequency range) a peak of 0.15 times it, so that the resonant motion reaches several times the static
    level through the damping; the two multi-DOF records 0.05 times it as rms on every input. Output noise is
    ``noise`` times each output's range, at least ``noise`` × 2 mm (or 0.005 rad) on outputs that do not move.

    ``progress(stage, fraction, message)`` is called after each record, the fraction weighted by each record's
    simulated duration (the static cases count as one sweep's tenth).

    Raises
    ------
    SimulationError
        A simulation or equilibrium failed (loads too large for the model).
    """
    from .modal import natural_frequencies

    n_sweeps = len(model.used_inputs)
    weights = [0.1, 0.5, *([1.0] * n_sweeps), 1.0, 1.0]  # static, small (half length), sweeps, two multi-input
    total = sum(weights)
    done: list[str] = []

    def tick(rec: MdofRecord) -> MdofRecord:
        done.append(rec.name)
        if progress is not None:
            progress("experiments", sum(weights[: len(done)]) / total,
                     f"{rec.name} simulated ({len(done)} of {len(weights)} records)")
        return rec

    gen = _rng(rng)
    theta = model.parameters().values if theta is None else np.asarray(theta, dtype=np.float64)
    q_eq = equilibrium(model, np.zeros(len(model.used_inputs)), theta)
    modes = natural_frequencies(model, theta, q_eq)
    f_lo, f_hi = float(modes.freq_hz.min()), float(modes.freq_hz.max())
    target = {"m": 2e-3 * level, "rad": 5e-3 * level}
    scale = []
    for name in model.used_inputs:
        dof = driven_dof(model, name)
        i = model.dof_names.index(dof)
        scale.append(float(abs(modes.stiffness[i, i])) * target[model.dof_unit(dof)])
    levels = np.array(scale)
    floor = noise * 2e-3 * level
    records = [tick(static_cases(model, theta, scale=levels, noise=floor, rng=gen))]
    small_band = (min(2.0 * f_hi, fs / 6), min(5.0 * f_hi, fs / 5))
    records.append(tick(small_motion(model, theta, scale=0.1 * levels, band=small_band, duration=duration / 2, fs=fs,
                                     noise=noise, floor=floor, rng=gen)))
    band = (max(0.2 * f_lo, 0.2), min(1.5 * f_hi, fs / 5))
    for name in model.used_inputs:
        dof = driven_dof(model, name)
        amp = 0.15 * levels[model.used_inputs.index(name)]
        records.append(tick(sweep(model, theta, dof, amplitude=amp, band=band, duration=duration, fs=fs, noise=noise,
                                  floor=floor, rng=gen)))
    for j in (1, 2):
        records.append(tick(multi_excitation(model, theta, scale=0.05 * levels, band=band, duration=duration, fs=fs,
                                             noise=noise, floor=floor, rng=gen, name=f"multi{j}")))
    return tuple(records)


def driven_dof(model: MdofModel, name: str) -> str:
    """The DOF an input drives directly (platform: Fz → z, Mx → phi; chain: f_<dof> → <dof>)."""
    if model.body:
        from .spec import BODY_DOFS, BODY_INPUTS

        return BODY_DOFS[BODY_INPUTS.index(name)]
    return name[2:]
