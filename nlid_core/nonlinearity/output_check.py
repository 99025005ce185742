r"""Fast output-error check: which nonlinear terms does a simulation of the record need?

The equation-error comparison (:mod:`.comparison`) puts measured or *derived* ``x, ẋ, ẍ`` into the
model and compares forces. Velocity and acceleration derived from a noisy displacement carry errors
that the regressors share (errors in variables): the fitted coefficients shrink towards zero and
the force residual is dominated by the differentiation noise, so a nonlinear term seems to help
"little" even when the system needs it. Output error simulates the model from the measured force
and compares the simulated displacement with the measured one; it is unbiased under output noise
and is the reference when the two disagree (Ljung, *System Identification*, 2nd ed., 1999, §7.3;
Pintelon & Schoukens 2012, ch. 7 and ch. 19 on errors-in-variables).

:func:`output_error_check` runs a forward selection with
:func:`~nlid_core.estimate.identify` (equation error then output error): the linear baseline,
then the baseline plus each candidate term; the candidate that lowers the output RMSE most is kept
if it lowers it by at least ``OE_IMPROVEMENT``, and the search goes on from there. The RMSE is
read on a validation segment (the samples after the estimation segment) when the record is long
enough, else on the estimation segment. Long records are cut to ``OE_MAX_SAMPLES`` estimation
samples, so the check takes a few seconds at most. An *offset* term (a constant force, ``f0``) may
be a candidate as well: it is not a nonlinearity, but a record with a DC level needs it before any
term can reach the noise; the Identifiability page's structure check
(:mod:`nlid_core.analysis.structure`) is the full version (every term removed and added, AIC/BIC,
all samples).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .._checks import check_int as _check_int
from ..errors import ModelSpecError, NlidError
from ..estimate import FitResult, ProgressFn, identify
from ..models import ModelSettings, TermModel
from ..record import Record
from ..validation import validate
from ._args import _check_record
from .thresholds import (
    _LINEAR_TERMS,
    DEFAULT_CANDIDATES,
    OE_IMPROVEMENT,
    OE_MAX_SAMPLES,
    OE_VEPS_FRACTION,
)

__all__ = ["OutputErrorStep", "OutputErrorCheck", "output_error_check"]

#: An offset candidate that lowers the RMSE by less than this fraction in a round is not tried again.
OFFSET_MIN_GAIN = 0.01
#: Fewest samples of a validation segment (shorter remainders are not used for validation).
_MIN_VALIDATION = 1000
#: Label suffix of the fits of late terms, made on a short first segment.
_SHORT = " (short segment)"


@dataclass(frozen=True, kw_only=True)
class OutputErrorStep:
    """One model fitted by output error during the check.

    Attributes
    ----------
    label : str
        ``"linear"``, ``"linear + k3"``, ``"linear + k3 + c2"``.
    terms : tuple of str
    added : str
        Term added to the previous accepted model ("" for the linear baseline).
    success : bool
    message : str
    rmse_fit : float
        Output RMSE on the estimation segment (unit of x).
    rmse_val : float
        Output RMSE on the validation segment (NaN without one, or when its simulation failed).
    values : mapping
        Fitted value per parameter (empty after a failure).
    units : mapping
        Unit per parameter.
    """

    label: str
    terms: tuple[str, ...]
    added: str
    success: bool
    message: str
    rmse_fit: float
    rmse_val: float
    values: Mapping[str, float] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)

    @property
    def score(self) -> float:
        """The RMSE the selection reads: validation when known, else estimation (inf after a failure)."""
        if not self.success:
            return math.inf
        return self.rmse_val if math.isfinite(self.rmse_val) else self.rmse_fit


@dataclass(frozen=True, kw_only=True)
class OutputErrorCheck:
    """Forward selection of nonlinear terms by output error.

    Attributes
    ----------
    success : bool
        False when the linear baseline could not be fitted.
    message : str
    record : str
    unit : str
        Unit of the RMSEs (the displacement's).
    n_fit, n_val : int
        Samples of the estimation and validation segments (``n_val`` 0: none).
    candidates : tuple of str
    steps : tuple of OutputErrorStep
        Every model fitted, in order.
    path : tuple of OutputErrorStep
        The linear baseline and each accepted step.
    selected : tuple of str
        Terms the record needs (an offset term among them), in the order they were added.
    elapsed_s : float
    offsets : tuple of str
        Offset terms among the candidates (not nonlinearities).
    """

    success: bool
    message: str
    record: str
    unit: str
    n_fit: int
    n_val: int
    candidates: tuple[str, ...]
    steps: tuple[OutputErrorStep, ...]
    path: tuple[OutputErrorStep, ...]
    selected: tuple[str, ...]
    elapsed_s: float
    offsets: tuple[str, ...] = ()

    @property
    def nonlinear(self) -> tuple[str, ...]:
        """The selected terms that are nonlinearities (the selection without its offset terms)."""
        return tuple(t for t in self.selected if t not in self.offsets)

    @property
    def basis(self) -> str:
        """Which RMSE decided: ``"validation"`` or ``"estimation"``."""
        return "validation" if self.n_val else "estimation"

    def step(self, label: str) -> OutputErrorStep:
        """The step with ``label`` (e.g. ``"linear + k3"``)."""
        for s in self.steps:
            if s.label == label:
                return s
        raise ModelSpecError(f"no step `{label}`; steps are {', '.join(s.label for s in self.steps)}")

    def gain(self, term: str) -> float:
        """Relative RMSE drop when ``term`` was tried on top of the model it was compared with (first try)."""
        prev = self.path[0]
        for s in self.steps:
            if s.added == term:
                if s.label.endswith(_SHORT):
                    base = next((p for p in self.steps if not p.added and p.label.endswith(_SHORT)), prev)
                else:
                    base = next((p for p in self.path if p.terms == tuple(t for t in s.terms if t != term)), prev)
                return 1.0 - s.score / base.score if math.isfinite(s.score) and base.score > 0 else math.nan
        raise ModelSpecError(f"`term` {term!r} was not tried; candidates are {', '.join(self.candidates)}")

    def findings(self) -> tuple[str, ...]:
        """Plain-language result: the terms needed with the RMSE at each step, or that none helps."""
        if not self.success:
            return (f"output-error check not run: {self.message}",)
        u = self.unit
        lin = self.path[0]
        where = (f"{self.basis} RMSE of x, {self.n_fit} estimation"
                 + (f" + {self.n_val} validation samples" if self.n_val else " samples"))
        if not self.selected:
            best = min((s for s in self.steps if s.added and s.success), key=lambda s: s.score, default=None)
            tail = (f" (best: {best.label}, {lin.score:.3g} -> {best.score:.3g} {u})" if best is not None else "")
            return (f"output-error check ({where}): no nonlinear term among {', '.join(self.candidates)} lowers the"
                    f" linear model's RMSE by {100 * OE_IMPROVEMENT:.0f} %{tail}: a linear model may do"
                    + self._offset_note(),)
        main = [s for s in self.path if not s.label.endswith(_SHORT)]
        late = [s for s in self.path if s.label.endswith(_SHORT)]
        names = _and(self.selected)
        text = f"output-error check ({where}): the record needs {names}"
        if len(main) > 1:
            added = [s.added for s in main[1:]]
            chain = " -> ".join(f"{s.score:.3g}" for s in main)
            text += (f": RMSE {chain} {u} as {', then '.join(added)} {'is' if len(added) == 1 else 'are'} added to"
                     " the linear model")
        ref = next((p for p in self.steps if not p.added and p.label.endswith(_SHORT)), None)
        for s in late:
            if ref is not None:
                text += (f"; adding {s.added} to {ref.label.removesuffix(_SHORT)} lowers the RMSE from"
                         f" {ref.score:.3g} to {s.score:.3g} {u} on the first samples")
        return (text + self._offset_note(),)

    def _offset_note(self) -> str:
        """The offset's part of a finding, when an offset term was selected."""
        chosen = [t for t in self.offsets if t in self.selected]
        if not chosen:
            return ""
        return (f"; the record also carries an offset: {_and(chosen)} (a constant force) takes the residual's"
                " mean out and is part of the model to fit")


def _and(names: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _rmse(fit: FitResult) -> float:
    return float(fit.metrics[0].rmse) if fit.success and fit.metrics else math.nan


def _step(est: Record, val: Record | None, terms: tuple[str, ...], added: str,
          settings: ModelSettings) -> OutputErrorStep:
    label = "linear" if not added else "linear + " + " + ".join(t for t in terms if t not in _LINEAR_TERMS)
    try:
        fit = identify(est, TermModel(terms, settings=settings))
    except NlidError as exc:
        return OutputErrorStep(label=label, terms=terms, added=added, success=False, message=str(exc),
                               rmse_fit=math.nan, rmse_val=math.nan)
    rv = math.nan
    if fit.success and val is not None:
        try:
            res = validate(fit, val, outputs=("x",))
        except NlidError:
            res = None
        if res is not None and res.success:
            rv = float(res.metric("x").rmse)
    return OutputErrorStep(label=label, terms=terms, added=added, success=bool(fit.success), message=fit.message,
                           rmse_fit=_rmse(fit), rmse_val=rv, values=dict(fit.values) if fit.success else {},
                           units=fit.model.units(est.unit("f"), est.unit("x")))


def _settings(rec: Record) -> ModelSettings:
    v = rec.channel("v") if rec.has("v") else np.gradient(rec.x) * rec.fs
    v_rms = float(np.std(v))
    return ModelSettings(v_eps=OE_VEPS_FRACTION * v_rms) if math.isfinite(v_rms) and v_rms > 0 else ModelSettings()


def output_error_check(
    rec: Record, *, candidates: Sequence[str] = DEFAULT_CANDIDATES, late: Sequence[str] = (),
    offsets: Sequence[str] = (), max_samples: int = OE_MAX_SAMPLES, progress: ProgressFn | None = None,
) -> OutputErrorCheck:
    """Forward selection of nonlinear terms by output error on a (shortened) record.

    Parameters
    ----------
    rec : Record
        One DOF with measured ``x``.
    candidates : sequence of str
        Terms tried on top of the linear baseline (default: the registry's evidence terms).
    late : sequence of str
        Terms tried once after the selection, each on top of the selected model, on the first
        ``max_samples // 4`` samples (against the selected model refitted there): terms that are slow
        to simulate, such as the smoothed Coulomb term. Its velocity scale ``v_eps`` is
        ``OE_VEPS_FRACTION`` times the velocity rms (for every model of the check).
    offsets : sequence of str
        Terms that are not nonlinearities (a force offset, ``thresholds.OFFSET_TERM``), candidates of the
        selection like the others (an offset the model lacks hides what a nonlinear term gains) but not
        counted as nonlinear (:attr:`OutputErrorCheck.nonlinear`); one that gains less than ``OFFSET_MIN_GAIN``
        in a round is not tried again.
    max_samples : int
        Most estimation samples (the first ones); when the record is longer, the next
        ``max_samples // 2`` samples (at least 1000) validate.
    progress : callable or None
        ``progress(stage, fraction, message)`` after each fit.

    Returns
    -------
    OutputErrorCheck
    """
    rec = _check_record(rec)
    max_samples = _check_int("max_samples", max_samples, 200)
    cands = (candidates,) if isinstance(candidates, str) else tuple(candidates)
    lates = tuple(t for t in ((late,) if isinstance(late, str) else tuple(late)) if t not in cands)
    offs = tuple(t for t in ((offsets,) if isinstance(offsets, str) else tuple(offsets)) if t not in (*cands, *lates))
    bad = [t for t in (*cands, *lates, *offs) if t in _LINEAR_TERMS]
    if bad:
        raise ModelSpecError(f"`candidates` must be terms beyond {', '.join(_LINEAR_TERMS)}, got {bad}")
    try:
        TermModel((*_LINEAR_TERMS, *cands, *lates, *offs))
    except ModelSpecError as exc:
        raise ModelSpecError(f"`candidates`: {exc}") from None
    t0 = time.perf_counter()
    n_fit = min(rec.n, max_samples)
    est = rec.slice(0, n_fit) if n_fit < rec.n else rec
    rest = rec.n - n_fit
    val = rec.slice(n_fit, n_fit + min(rest, max(max_samples // 2, _MIN_VALIDATION))) if rest >= _MIN_VALIDATION else None
    n_val = 0 if val is None else val.n
    n_sel = len(cands) + len(offs)
    total = 1 + n_sel * (n_sel + 1) // 2 + (1 + len(lates) if lates else 0)
    settings = _settings(rec)
    done = 0

    def tick(label: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress("output-error check", min(done / total, 1.0), label)

    base = _step(est, val, _LINEAR_TERMS, "", settings)
    tick(base.label)
    steps = [base]
    common = {"record": rec.name, "unit": rec.unit("x"), "n_fit": n_fit, "n_val": n_val,
              "candidates": (*cands, *lates, *offs), "offsets": offs}
    if not base.success:
        return OutputErrorCheck(success=False, message=f"the linear model could not be fitted: {base.message}",
                                steps=(base,), path=(base,), selected=(), elapsed_s=time.perf_counter() - t0,
                                **common)  # type: ignore[arg-type]
    path = [base]
    remaining = [*cands, *offs]
    while remaining:
        tries = []
        for t in remaining:
            s = _step(est, val, (*path[-1].terms, t), t, settings)
            tick(s.label)
            tries.append(s)
        steps += tries
        # an offset that does not help now will not later: it leaves the candidates (one fit, not one per round)
        for s in tries:
            if s.added in offs and not s.score <= (1 - OFFSET_MIN_GAIN) * path[-1].score:
                remaining.remove(s.added)
        best = min(tries, key=lambda s: s.score)
        if not (math.isfinite(best.score) and best.score <= (1 - OE_IMPROVEMENT) * path[-1].score):
            break
        path.append(best)
        if best.added in remaining:
            remaining.remove(best.added)
    if lates:
        short = rec.slice(0, min(rec.n, max(max_samples // 4, 200)))
        ref = _step(short, None, path[-1].terms, "", settings)
        ref = replace(ref, label=f"{path[-1].label}{_SHORT}")
        tick(ref.label)
        steps.append(ref)
        for t in lates:
            s = _step(short, None, (*path[-1].terms, t), t, settings)
            s = replace(s, label=f"{s.label}{_SHORT}")
            tick(s.label)
            steps.append(s)
            if ref.success and math.isfinite(s.score) and s.score <= (1 - OE_IMPROVEMENT) * ref.score:
                path.append(s)
    selected = tuple(s.added for s in path[1:])
    return OutputErrorCheck(success=True, message="", steps=tuple(steps), path=tuple(path), selected=selected,
                            elapsed_s=time.perf_counter() - t0, **common)  # type: ignore[arg-type]
