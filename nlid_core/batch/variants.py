"""The model variants of a batch: a variant's terms, typed terms, start values and fit options read from its
table and checked against the model, the model it builds and its parameters in a record's units."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelSpecError
from ..jsonsafe import finite_or_none
from .fields import _bounds, _integer, _label, _number, _string, _strings, _table, _unknown, _values, _where

__all__ = ["Variant", "check_variant", "variant_parameters"]


_FIT_KEYS = {"method", "outputs", "initial_state", "input_hold", "sample_step", "force_threshold",
             "differentiator", "v_eps", "gap", "start", "fix", "bounds", "free", "max_nfev", "confidence"}


_VARIANT_KEYS = _FIT_KEYS | {"label", "terms", "custom"}


@dataclass(frozen=True, kw_only=True)
class Variant:
    """A model variant: the terms and the options of one identification (the ``identify`` options).

    Attributes
    ----------
    label : str
        1-40 characters ``A-Z a-z 0-9 _ . + -``, starting with a letter or digit; unique in a grid.
    terms : tuple of str
        Library and typed term names.
    custom : tuple of str
        Typed terms ``NAME = EXPR`` (parsed, never evaluated).
    method : str
        ``two-stage``, ``equation-error`` or ``output-error`` (:data:`nlid_core.estimate.METHODS`).
    outputs : tuple of str
        Output-error channels among x, v, a.
    initial_state, input_hold, differentiator : str
    sample_step : int
    force_threshold : float
    v_eps, gap : float or None
        Settings of the Coulomb and dead-zone terms (``--v-eps``, ``--gap``).
    start, fix : mapping of str to float
    bounds : mapping of str to (float, float)
    free : tuple of str
    max_nfev : int
    confidence : float
        Interval level (0.95 by default).
    """

    label: str
    terms: tuple[str, ...]
    custom: tuple[str, ...] = ()
    method: str = "two-stage"
    outputs: tuple[str, ...] = ("x",)
    initial_state: str = "auto"
    input_hold: str = "cubic"
    sample_step: int = 1
    force_threshold: float = 0.0
    differentiator: str = "savgol"
    v_eps: float | None = None
    gap: float | None = None
    start: Mapping[str, float] = field(default_factory=dict)
    fix: Mapping[str, float] = field(default_factory=dict)
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    free: tuple[str, ...] = ()
    max_nfev: int = 200
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """The variant as plain JSON-ready data (infinite bounds as None)."""
        return {
            "label": self.label, "terms": list(self.terms), "custom": list(self.custom), "method": self.method,
            "outputs": list(self.outputs), "initial_state": self.initial_state, "input_hold": self.input_hold,
            "sample_step": self.sample_step, "force_threshold": self.force_threshold,
            "differentiator": self.differentiator, "v_eps": self.v_eps, "gap": self.gap,
            "start": dict(self.start), "fix": dict(self.fix),
            "bounds": {k: [finite_or_none(lo), finite_or_none(hi)] for k, (lo, hi) in self.bounds.items()},
            "free": list(self.free), "max_nfev": self.max_nfev, "confidence": self.confidence,
        }


def _fit_options(data: Mapping[str, Any], table: str) -> dict[str, Any]:
    """The identify options of a variant or a ``[fit]`` table, checked against the estimator's registries."""
    from ..estimate import INITIAL_STATES, METHODS
    from ..signals import DIFFERENTIATORS
    from ..simulate import INPUT_HOLDS, OUTPUT_CHANNELS

    out: dict[str, Any] = {}
    for key, choices in (("method", METHODS), ("initial_state", INITIAL_STATES), ("input_hold", INPUT_HOLDS),
                         ("differentiator", tuple(DIFFERENTIATORS))):
        if key in data:
            text = _string(data[key], table, key, limit=64)
            if text not in choices:
                raise ModelSpecError(f"{_where(table, key)} must be one of {', '.join(choices)}; got {text!r}")
            out[key] = text
    if "outputs" in data:
        outs = _strings(data["outputs"], table, "outputs", limit=3)
        if not outs or len(set(outs)) != len(outs) or any(o not in OUTPUT_CHANNELS for o in outs):
            raise ModelSpecError(f"{_where(table, 'outputs')} must be distinct channels among "
                                 f"{', '.join(OUTPUT_CHANNELS)}; got {list(outs)}")
        out["outputs"] = outs
    if "sample_step" in data:
        out["sample_step"] = _integer(data["sample_step"], table, "sample_step", 1, 10_000)
    if "max_nfev" in data:
        out["max_nfev"] = _integer(data["max_nfev"], table, "max_nfev", 1, 100_000)
    if "force_threshold" in data:
        ft = _number(data["force_threshold"], table, "force_threshold", nonnegative=True)
        if not ft < 1:
            raise ModelSpecError(f"{_where(table, 'force_threshold')} is a fraction of max|f| in [0, 1); got {ft:g}")
        out["force_threshold"] = ft
    if "confidence" in data:
        conf = _number(data["confidence"], table, "confidence")
        if not 0 < conf < 1:
            raise ModelSpecError(f"{_where(table, 'confidence')} must be in (0, 1); got {conf:g}")
        out["confidence"] = conf
    if "v_eps" in data:
        out["v_eps"] = _number(data["v_eps"], table, "v_eps", positive=True)
    if "gap" in data:
        out["gap"] = _number(data["gap"], table, "gap", nonnegative=True)
    for key in ("start", "fix"):
        if key in data:
            out[key] = _values(data[key], table, key)
    if "bounds" in data:
        out["bounds"] = _bounds(data["bounds"], table)
    if "free" in data:
        names = _strings(data["free"], table, "free")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ModelSpecError(f"{_where(table, 'free')} names {', '.join(dup)} twice")
        out["free"] = names
    return out


def check_variant(variant: Variant, table: str) -> None:
    """Build the variant's model and parameters once (unknown terms and parameter names fail here).

    Parameters
    ----------
    variant : Variant
    table : str
        Where the variant is written (for messages), e.g. ``"[[variant]] #2"``.

    Raises
    ------
    ModelSpecError
        Unknown terms, a bad typed term, unknown or conflicting parameter names; the message names
        ``table`` and the key.
    """
    from ..modeltext import check_names

    model = _build_model(variant, table)
    valid = model.param_names
    for key in ("start", "fix", "bounds", "free"):
        check_names(list(getattr(variant, key)), valid, f"{table} {key}")
    try:
        variant_parameters(variant, model, "N", "m")
    except ModelSpecError as exc:
        raise ModelSpecError(f"{table}: {exc}") from None


def _build_model(variant: Variant, table: str) -> Any:
    from ..modeltext import build_model, model_settings

    try:
        settings = model_settings(variant.v_eps, variant.gap, {**variant.start, **variant.fix})
        return build_model(",".join(variant.terms), variant.custom, settings)
    except ModelSpecError as exc:
        raise ModelSpecError(f"{table} `terms`: {exc}") from None


def variant_parameters(variant: Variant, model: Any, force_unit: str, x_unit: str) -> Any:
    """The start parameters of ``variant`` for records in these units (the builder of ``identify``).

    Parameters
    ----------
    variant : Variant
    model : TermModel
        Built from the variant.
    force_unit, x_unit : str
        Units of the record's force and displacement.

    Returns
    -------
    ParameterSet
    """
    from ..modeltext import build_parameters

    return build_parameters(model, force_unit=force_unit, x_unit=x_unit, start=variant.start, fix=variant.fix,
                            bounds=variant.bounds, free=variant.free)


def _variant(data: Any, table: str, *, label: str | None = None, terms: tuple[str, ...] | None = None,
             custom: tuple[str, ...] = ()) -> Variant:
    tab = _table(data, table)
    _unknown(tab, _FIT_KEYS if terms is not None else _VARIANT_KEYS, table)
    if terms is None:
        if "label" not in tab:
            raise ModelSpecError(f"{table}: give a `label`")
        if "terms" not in tab:
            raise ModelSpecError(f"{table}: give the `terms`")
        label = _label(tab["label"], table)
        terms = _strings(tab["terms"], table, "terms", limit=64)
        custom = _strings(tab["custom"], table, "custom", limit=8) if "custom" in tab else ()
    if not terms and not custom:
        raise ModelSpecError(f"{table} `terms` is empty")
    assert label is not None
    v = Variant(label=label, terms=terms, custom=custom, **_fit_options(tab, table))
    check_variant(v, table)
    return v
