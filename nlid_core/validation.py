"""Validation: simulate identified parameters on a record and score the fit.

The initial state of a validation record is unknown in general. As in the
nonlinear-benchmark convention (Silverbox: "the first 50 samples of a test
part may set the initial state") it is estimated by output error on the
first ``n_init`` samples with every model parameter held fixed; metrics are
computed over the samples after them.

On a record the fit itself used, ``init="fit"`` takes the initial state the
fit estimated jointly with the parameters: the simulation error is then the
fit's own output-error residual, and the metrics (the whiteness test
included) are those the fit reports. Estimated from a few samples instead,
the initial state is less certain, and on a lightly damped system its error
decays slowly: a validation residual that is coloured while the fit's is
white can come from the initial state alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .errors import DataValidationError, ModelSpecError
from .estimate import FitOptions, FitResult, RecordFit, numerical_warnings, output_error
from .estimate.assemble import _metrics
from .metrics import ChannelMetrics
from .models import TermModel
from .params import ParameterSet
from .record import MIN_SAMPLES, Record
from .simulate import simulate

__all__ = ["INIT_METHODS", "ValidationResult", "fitted_record", "validate"]

FloatArray = NDArray[np.float64]
INIT_METHODS = ("estimate", "data", "rest", "fit")


@dataclass(frozen=True, kw_only=True)
class ValidationResult:
    """Simulated against measured response on one record.

    Attributes
    ----------
    success : bool
        False when the simulation diverged (metrics are then empty).
    message : str
    record : str
    t : (n,) ndarray
    measured : mapping
        Channel -> measured signal.
    predicted : mapping
        ``x``, ``v``, ``a`` simulated.
    metrics : tuple of ChannelMetrics
        Over samples ``n_init:``.
    n_init : int
    x0 : (float, float)
    init : str
        How the initial state was set (``estimate``, ``data``, ``rest`` or ``fit``).
    units : mapping
        Unit string per channel of the record.
    warnings : tuple of str
        Floating-point problems met on the way (numpy overflow, invalid
        values), counted, instead of printed.
    """

    success: bool
    message: str
    record: str
    t: FloatArray
    measured: Mapping[str, FloatArray]
    predicted: Mapping[str, FloatArray]
    metrics: tuple[ChannelMetrics, ...]
    n_init: int
    x0: tuple[float, float]
    init: str
    units: Mapping[str, str]
    warnings: tuple[str, ...] = ()

    def metric(self, channel: str) -> ChannelMetrics:
        for m in self.metrics:
            if m.channel == channel:
                return m
        raise KeyError(f"no metrics for channel `{channel}`")

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "success": self.success,
            "message": self.message,
            "record": self.record,
            "n_init": self.n_init,
            "init": self.init,
            "x0": list(self.x0),
            "units": dict(self.units),
            "channels": {m.channel: m.to_dict() for m in self.metrics},
            "warnings": list(self.warnings),
        }
        if self.metrics:
            first = self.metrics[0]
            out.update({"rmse": first.rmse, "nrmse": first.nrmse, "fit_percent": first.fit_percent,
                        "channel": first.channel, "unit": first.unit})
        return out


def validate(
    fit: FitResult | tuple[TermModel, ParameterSet],
    record: Record,
    *,
    outputs: Sequence[str] | None = None,
    init: str = "estimate",
    n_init: int = 50,
    input_hold: str | None = None,
    substeps: int | None = None,
) -> ValidationResult:
    """Simulate ``fit`` on ``record`` and compute metrics.

    Parameters
    ----------
    fit : FitResult or (TermModel, ParameterSet)
    record : Record
        A record not used for fitting (e.g. another excitation level).
    outputs : sequence of str or None
        Channels to score; default: the measured ones among x, v, a.
    init : {"estimate", "data", "rest", "fit"}
        Initial state: estimated from the first ``n_init`` samples (falls back
        to ``"data"`` when ``n_init`` is below the minimum record length),
        taken from the data's first sample, at rest (0, 0), or the one ``fit``
        estimated for this very record (``record`` must be one the fit used,
        with the same samples; the fit must keep its records).
    n_init : int
        Samples reserved for the initial state (excluded from the metrics).
    input_hold : str or None
        Input reconstruction; default that of the fit (cubic otherwise).
    substeps : int or None

    Returns
    -------
    ValidationResult
        Floating-point problems met on the way are listed in ``warnings``.

    Raises
    ------
    DataValidationError
        ``init="fit"`` on a record the fit did not use, or with a fit that is not a FitResult.
    """
    with numerical_warnings() as tally:
        res = _validate(fit, record, outputs, init, n_init, input_hold, substeps)
    if not tally:
        return res
    return dataclasses.replace(res, warnings=res.warnings + tally.lines())


def _validate(
    fit: FitResult | tuple[TermModel, ParameterSet],
    record: Record,
    outputs: Sequence[str] | None,
    init: str,
    n_init: int,
    input_hold: str | None,
    substeps: int | None,
) -> ValidationResult:
    if isinstance(fit, FitResult):
        model, params = fit.model, fit.parameters
        hold = input_hold or fit.options.input_hold
    else:
        model, params = fit
        hold = input_hold or "cubic"
    if init not in INIT_METHODS:
        raise ModelSpecError(f"unknown `init` {init!r}; choose from {', '.join(INIT_METHODS)}")
    model.require_simulable()
    outs = tuple(outputs) if outputs is not None else record.measured
    for c in outs:
        if c not in record.measured:
            raise DataValidationError(f"validation record `{record.name}` has no measured `{c}` channel")
    n_init = int(n_init)
    if n_init < 0 or record.n - n_init < MIN_SAMPLES:
        raise DataValidationError(
            f"`n_init` = {n_init} leaves {record.n - n_init} samples of `{record.name}` to validate on"
        )
    if init == "estimate" and n_init < MIN_SAMPLES:
        init = "data"
    if init == "fit":
        x0 = _fit_initial_state(fit, record)
    elif init == "rest":
        x0 = (0.0, 0.0)
    elif init == "data":
        v0 = float(record.v[0]) if record.v is not None else float(np.gradient(record.x[:3], record.t[:3])[0])
        x0 = (float(record.x[0]), v0)
    else:
        head = record.slice(0, n_init)
        fixed = params.fix(*params.names)
        est = output_error(
            head, model, fixed,
            FitOptions(method="output-error", outputs=("x",), initial_state="estimate", input_hold=hold, substeps=substeps),
        )
        if not est.success or not est.records:
            return _failed(record, outs, n_init, init, f"initial state could not be estimated: {est.message}")
        x0 = est.records[0].x0
    sim = simulate(model, record.t, record.f, params, x0, input_hold=hold, substeps=substeps,
                   x_limit=1e3 * max(float(np.max(np.abs(record.x))), 1e-300) + abs(x0[0]))
    measured = {c: np.asarray(getattr(record, c)) for c in ("f", "x", "v", "a") if getattr(record, c) is not None}
    predicted = {"x": sim.x, "v": sim.v, "a": sim.a}
    units = _motion_units(record)
    if not sim.success:
        return ValidationResult(success=False, message=f"validation simulation failed: {sim.message}",
                                record=record.name, t=record.t, measured=measured, predicted=predicted,
                                metrics=(), n_init=n_init, x0=x0, init=init, units=units)
    sl = slice(n_init, None)
    metrics = tuple(_metrics(record.name, c, record.unit(c), record.channel(c)[sl], sim.output(c)[sl],
                                    u=record.f[sl], fs=record.fs)
                    for c in outs)
    return ValidationResult(success=True, message="validation simulation completed", record=record.name,
                            t=record.t, measured=measured, predicted=predicted, metrics=metrics, n_init=n_init,
                            x0=x0, init=init, units=units)


def _same_record(rf: RecordFit, record: Record) -> bool:
    return (rf.name == record.name and "x" in rf.measured and rf.t.shape == record.t.shape
            and bool(np.array_equal(rf.t, record.t)) and bool(np.array_equal(rf.measured["x"], record.x)))


def fitted_record(fit: FitResult, record: Record) -> bool:
    """Whether ``fit`` used ``record`` (same name, same time and displacement samples) and keeps its signals."""
    return any(_same_record(rf, record) for rf in fit.records)


def _fit_initial_state(fit: FitResult | tuple[TermModel, ParameterSet], record: Record) -> tuple[float, float]:
    if not isinstance(fit, FitResult):
        raise DataValidationError("`init` = 'fit' needs a FitResult, not a (model, parameters) pair")
    for rf in fit.records:
        if _same_record(rf, record):
            return (float(rf.x0[0]), float(rf.x0[1]))
    raise DataValidationError(
        f"`init` = 'fit': the fit did not use the record `{record.name}` with these samples (or its signals were"
        " dropped); estimate the initial state instead"
    )


def _motion_units(record: Record) -> dict[str, str]:
    """Units of f, x, v, a of ``record``; a simulated velocity or acceleration the record does not hold is
    in the displacement's unit per time unit (volts per second for a displacement measured in volts)."""
    ux, ut = record.unit("x"), record.unit("t")
    units = {"f": record.unit("f"), "x": ux}
    units["v"] = record.unit("v") if record.has("v") else f"{ux}/{ut}"
    units["a"] = record.unit("a") if record.has("a") else f"{ux}/{ut}^2"
    return units


def _failed(record: Record, outs: Sequence[str], n_init: int, init: str, message: str) -> ValidationResult:
    return ValidationResult(success=False, message=message, record=record.name, t=record.t, measured={},
                            predicted={}, metrics=(), n_init=n_init, x0=(float("nan"), float("nan")), init=init,
                            units=_motion_units(record))
