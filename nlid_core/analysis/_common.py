"""Helpers shared by the studies: argument checks, record and parameter sets, substeps, channel scales."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import DataValidationError, ModelSpecError
from ..estimate import FitOptions, FitResult
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ..simulate import OUTPUT_CHANNELS, auto_substeps
from ..progress import ProgressFn as ProgressFn

__all__: list[str] = []


FloatArray = NDArray[np.float64]
RngLike = np.random.Generator | int | None


def _rng(rng: RngLike) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _records(records: Sequence[Record] | Record) -> tuple[Record, ...]:
    recs = (records,) if isinstance(records, Record) else tuple(records)
    if not recs:
        raise DataValidationError("no records given")
    for r in recs:
        if not isinstance(r, Record):
            raise DataValidationError(f"expected Record objects, got {type(r).__name__}")
    return recs


def _model(model: TermModel | str | Sequence[str]) -> TermModel:
    return model if isinstance(model, TermModel) else TermModel(model)


def _param_set(model: TermModel, values: Mapping[str, float] | ParameterSet | ArrayLike) -> ParameterSet:
    """Parameters of ``model`` with the given values (every term must have one); bounds are checked."""
    if isinstance(values, ParameterSet):
        if values.names != model.param_names:
            raise ModelSpecError(f"parameters {values.names} do not match the model terms {model.param_names}")
        return values
    base = model.default_parameters()
    if isinstance(values, Mapping):
        missing = [n for n in model.param_names if n not in values]
        if missing:
            raise ModelSpecError(f"no value given for term(s) {', '.join(missing)} of the model {model}")
        return base.with_values({n: float(values[n]) for n in model.param_names})
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size != model.n_params:
        raise ModelSpecError(f"{arr.size} parameter values given; the model {model} has {model.n_params} terms")
    return base.with_values(arr)


def _noise_map(noise_sd: float | Mapping[str, float], outputs: Sequence[str]) -> dict[str, float]:
    if isinstance(noise_sd, Mapping):
        missing = [c for c in outputs if c not in noise_sd]
        if missing:
            raise ModelSpecError(f"`noise_sd` gives no standard deviation for output channel(s) {missing}")
        out = {c: float(noise_sd[c]) for c in outputs}
    else:
        out = {c: float(noise_sd) for c in outputs}
    bad = {c: s for c, s in out.items() if not (s > 0 and math.isfinite(s))}
    if bad:
        raise ModelSpecError(f"`noise_sd` must be positive and finite for every output channel, got {bad}")
    return out


def _check_outputs(outputs: Sequence[str]) -> tuple[str, ...]:
    outs = tuple(outputs)
    if not outs or any(o not in OUTPUT_CHANNELS for o in outs) or len(set(outs)) != len(outs):
        raise ModelSpecError(f"`outputs` must be distinct channels from {OUTPUT_CHANNELS}, got {outs}")
    return outs


def _substeps(model: TermModel, theta: FloatArray, dt: float, x: FloatArray, v: FloatArray) -> int:
    """Twice the estimators' automatic substep choice for this response (so integration error stays out)."""
    xr = max(1.5 * float(np.max(np.abs(x))), 1e-300)
    vr = max(1.5 * float(np.max(np.abs(v))), 1e-300)
    return 2 * auto_substeps(model, theta, dt, xr, vr)


def _channel_scale(recs: Sequence[Record], c: str) -> float:
    ms = float(np.mean(np.concatenate([np.asarray(r.channel(c)) ** 2 for r in recs])))
    return math.sqrt(ms) if ms > 0 else 1.0


def _check_oe_fit(fit: FitResult, recs: Sequence[Record], what: str) -> None:
    if fit.method == "equation-error" or not fit.records or "x" not in fit.records[0].predicted:
        raise ModelSpecError(f"{what} needs an output-error or two-stage fit; got method `{fit.method}`")
    if len(recs) != len(fit.records):
        raise DataValidationError(f"{len(recs)} records given for a fit of {len(fit.records)}")
    for r, rf in zip(recs, fit.records, strict=True):
        if r.n != rf.t.size:
            raise DataValidationError(
                f"record `{r.name}` has {r.n} samples; the fit's record `{rf.name}` has {rf.t.size}"
            )


def _fit_x0s(fit: FitResult) -> list[tuple[float, float]]:
    return [(float(rf.x0[0]), float(rf.x0[1])) for rf in fit.records]


def _n_residuals(recs: Sequence[Record], opts: FitOptions) -> int:
    return sum(len(range(0, r.n, opts.sample_step)) for r in recs) * len(opts.outputs)




class _Steps:
    """Progress of a study made of ``total`` steps (refits, grid points, simulated tests).

    ``step(i, what)`` reports ``(stage, i/total, "what (i+1 of total)")`` and returns the callback to hand to
    the fit of that step: its own messages (``"evaluation 12"``) are shown after the step's label and its
    fraction moves the bar within the step. Without a ``progress`` callback everything is a no-op.
    """

    def __init__(self, progress: ProgressFn | None, stage: str, total: int) -> None:
        self.progress = progress
        self.stage = stage
        self.total = max(int(total), 1)

    def step(self, i: int, what: str) -> ProgressFn | None:
        report = self.progress
        if report is None:
            return None
        label = f"{what} ({i + 1} of {self.total})"
        base = min(max(i, 0), self.total) / self.total
        report(self.stage, base, label)
        reached = [0.0]  # the bar never moves back within a step (a second fit restarts its own count)

        def inner(stage: str, fraction: float, message: str) -> None:
            try:
                frac = min(max(float(fraction), 0.0), 1.0)
            except (TypeError, ValueError):
                frac = 0.0
            reached[0] = max(reached[0], frac)
            report(self.stage, base + 0.999 * reached[0] / self.total, f"{label}: {message}" if message else label)

        return inner

    def done(self, message: str) -> None:
        if self.progress is not None:
            self.progress(self.stage, 1.0, message)
