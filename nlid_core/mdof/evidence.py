r"""Evidence across the channels of a multi-DOF model's records, before (and beside) identification.

* The **FRF matrix** (multi-input H1 with multiple and ordinary coherence, :func:`nlid_core.nonlinearity.mimo.frf_matrix`)
  from the dynamic records in which nothing is held: a record with locked DOFs belongs to another (constrained)
  system and would bias it.
* The **cross-coupling** of every output to every input (:func:`~nlid_core.nonlinearity.mimo.coupling`).
* The **level drift** per channel (:func:`~nlid_core.nonlinearity.mimo.level_drift`): records that excite the same
  single input over the same band (5 %–95 % power frequencies within 20 % and 65 %) with the same DOFs held, at
  different levels, give the resonance frequency and peak gain of the
  driven DOF per level with their uncertainty, and a trend is called only beyond it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DataValidationError
from .data import MdofRecord
from .experiments import driven_dof
from .spec import MdofModel

__all__ = ["MdofEvidence", "record_evidence"]


@dataclass(frozen=True, kw_only=True)
class MdofEvidence:
    """The FRF matrix, coupling and level drifts of a set of records, with one summary line per finding.

    Attributes
    ----------
    frf : FrfMatrix or None
        None without a dynamic record free of held DOFs.
    coupling : CouplingTable or None
    drifts : tuple of LevelDrift
    summary : tuple of str
    """

    frf: Any
    coupling: Any
    drifts: tuple[Any, ...]
    summary: tuple[str, ...]


def _band(u: Any, dt: float) -> tuple[float, float]:
    """Frequencies below which 5 % and 95 % of the input's power lies (Hz; a floor of one frequency bin)."""
    spec = np.abs(np.fft.rfft(np.asarray(u, dtype=np.float64) - np.mean(u))) ** 2
    freq = np.fft.rfftfreq(len(u), dt)
    cum = np.cumsum(spec) / max(float(spec.sum()), 1e-300)
    lo = float(freq[min(int(np.searchsorted(cum, 0.05)), freq.size - 1)])
    hi = float(freq[min(int(np.searchsorted(cum, 0.95)), freq.size - 1)])
    return max(lo, freq[1]), max(hi, freq[1])


def record_evidence(model: MdofModel, records: Sequence[MdofRecord], *, nperseg: int | None = None) -> MdofEvidence:
    """Evidence across channels from the model's records (see the module docstring).

    Raises
    ------
    DataValidationError
        Dynamic records sampled at different rates.
    """
    from ..nonlinearity.mimo import coupling, frf_matrix, level_drift

    dynamic = [r for r in records if not r.static]
    if not dynamic:
        return MdofEvidence(frf=None, coupling=None, drifts=(), summary=("no dynamic record: nothing to analyse",))
    dt = dynamic[0].dt
    for r in dynamic[1:]:
        if abs(r.dt / dt - 1) > 1e-6:
            raise DataValidationError(f"records `{dynamic[0].name}` and `{r.name}` are sampled at different rates"
                                      f" ({1 / dt:.6g} and {1 / r.dt:.6g} Hz); resample one of them")
    in_units = [model.input_unit(n) for n in model.used_inputs]
    out_units = [model.dof_unit(d) for d in model.output_dofs]
    lines: list[str] = []
    free = [r for r in dynamic if not r.held]
    frf = cpl = None
    if free:
        frf = frf_matrix([(r.u, r.y) for r in free], dt, input_names=model.used_inputs, output_names=model.output_dofs,
                         input_units=in_units, output_units=out_units, nperseg=nperseg)
        lines.append(f"FRF matrix from {', '.join(r.name for r in free)}: {frf.message}")
        if frf.success:
            cpl = coupling(frf)
            for i, out in enumerate(cpl.output_names):
                others = [(cpl.relative[i, j], inp) for j, inp in enumerate(cpl.input_names)
                          if inp != cpl.main_input[i] and np.isfinite(cpl.relative[i, j])]
                if cpl.main_input[i]:
                    strongest = max(others, default=None)
                    extra = (f"; next {strongest[1]} at {100 * strongest[0]:.3g} %" if strongest is not None else "")
                    lines.append(f"{out} responds mostly to {cpl.main_input[i]}{extra}")
    else:
        lines.append("no dynamic record with every DOF free: no FRF matrix (records with held DOFs are another system)")
    groups: dict[tuple[tuple[str, ...], int, int], list[MdofRecord]] = {}
    bands: list[tuple[float, float]] = []
    for r in dynamic:
        rms = np.sqrt(np.mean(r.u ** 2, axis=0))
        excited = np.flatnonzero(rms > 1e-9 * max(float(rms.max()), 1e-300))
        if excited.size != 1:
            continue
        band = _band(r.u[:, int(excited[0])], r.dt)
        same = [k for k, b in enumerate(bands) if abs(np.log(band[1] / b[1])) < 0.2 and abs(np.log(band[0] / b[0])) < 0.5]
        if not same:
            bands.append(band)
        key = (r.held, int(excited[0]), same[0] if same else len(bands) - 1)
        groups.setdefault(key, []).append(r)
    drifts = []
    for (held, j, _), group in groups.items():
        levels = [float(np.sqrt(np.mean(r.u[:, j] ** 2))) for r in group]
        if len(group) < 2 or max(levels) < 1.2 * min(levels):  # one level only: nothing to compare
            continue
        dof = driven_dof(model, model.used_inputs[j])
        if dof not in model.output_dofs:
            continue
        k = model.output_dofs.index(dof)
        by_level: dict[str | float, tuple[Any, Any]] = {f"{r.name} (rms {float(np.sqrt(np.mean(r.u[:, j] ** 2))):.3g} {in_units[j]})": (r.u, r.y)
                    for r in group}
        d = level_drift(by_level, dt, input_index=j, output_index=k, input_name=model.used_inputs[j], output_name=dof,
                        input_unit=in_units[j], output_unit=out_units[k], nperseg=nperseg)
        drifts.append(d)
        lines.append(f"{model.used_inputs[j]} → {dof}{' (held: ' + ', '.join(held) + ')' if held else ''}: {d.verdict}")
    if not drifts:
        lines.append("level drift: needs two or more records exciting the same single input at different levels")
    return MdofEvidence(frf=frf, coupling=cpl, drifts=tuple(drifts), summary=tuple(lines))
