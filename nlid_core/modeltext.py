"""A model built from text: term lists, typed terms, parameter values, bounds and names, and the term table.

The core's one reader of models written as text, used by the CLI, batch specs and the dashboard alike. Everything
here returns values or text and raises :class:`~nlid_core.errors.NlidError` subclasses whose messages name the
option or field the text came from.

Syntax (the CLI's ``identify`` and ``simulate`` options, batch specs):

* values, ``NAME=NUMBER,...`` (``--params``, ``--start``, ``--fix``, ``--initial-state``);
* bounds, ``NAME=LO:HI,...`` with either side empty for an infinite bound (``--bounds k1=0:``);
* names, ``NAME,...`` (``--free``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import ModelSpecError
from .jsonsafe import finite_or_none
from .models import ModelSettings, TermModel
from .params import ParameterSet
from .terms.base import TermDef

__all__ = ["model_settings", "terms_document", "format_terms", "parse_values", "parse_bounds", "parse_names", "build_model",
           "check_names", "build_parameters", "parameter_setup"]


def _term_document(term: TermDef) -> dict[str, Any]:
    return {
        "name": term.name,
        "description": term.description,
        "expr": term.expr,
        "force": term.force,
        "parameters": [
            {"name": p.name, "unit": p.unit_text(), "lower": finite_or_none(p.lower), "upper": finite_or_none(p.upper),
             "default": p.default, "fixed": p.fixed, "description": p.description}
            for p in term.params
        ],
        "states": [
            {"name": s.name, "unit": term.unit(s.name), "rate": s.rate, "steady": s.steady,
             "description": s.description}
            for s in term.states
        ],
    }


def terms_document() -> list[dict[str, Any]]:
    """Every registered term as plain data (units in N and m; an infinite bound is None).

    Returns
    -------
    list of dict
        Per term: ``name``, ``description``, ``expr`` (readable force), ``force`` (expression
        text), ``parameters`` (``name, unit, lower, upper, default, fixed, description``) and
        ``states`` (``name, unit, rate, steady, description``).
    """
    from .terms.registry import REGISTRY

    return [_term_document(t) for t in REGISTRY.values()]


def _num(value: float | None, sign: str = "") -> str:
    return f"{sign}inf" if value is None else f"{value:g}"


def format_terms() -> str:
    """The term table: per term its force, then one line per parameter and per internal state.

    Returns
    -------
    str
        Multi-line text (units in N and m; a parameter marked ``fixed`` is held unless freed).
    """
    lines = []
    for doc in terms_document():
        lines.append(f"{doc['name']:9s} {doc['expr']}   ({doc['description']})")
        if doc["states"]:
            lines.append(f"{'':11s}force = {doc['force']}")
        lines.append(f"{'':11s}{'parameter':10s} {'unit':11s} {'lower':>8s} {'upper':>8s} {'default':>8s}  fixed")
        for p in doc["parameters"]:
            lines.append(f"{'':11s}{p['name']:10s} {p['unit']:11s} {_num(p['lower'], '-'):>8s}"
                         f" {_num(p['upper']):>8s} {p['default']:>8g}  {'yes' if p['fixed'] else 'no'}")
        for s in doc["states"]:
            lines.append(f"{'':11s}state {s['name']:4s} [{s['unit']}]  d{s['name']}/dt = {s['rate']}")
    return "\n".join(lines)


def _pairs(spec: str, option: str, example: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for part in (s.strip() for s in str(spec).split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ModelSpecError(f"`{option}` takes {example} pairs separated by commas; cannot read {part!r}")
        if any(n == name.strip() for n, _ in out):
            raise ModelSpecError(f"`{option}` gives `{name.strip()}` twice")
        out.append((name.strip(), value.strip()))
    return out


def _finite(text: str, option: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ModelSpecError(f"`{option}`: the value of `{name}` is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise ModelSpecError(f"`{option}`: the value of `{name}` must be finite, got {text!r}")
    return value


def parse_values(spec: str | None, option: str) -> dict[str, float]:
    """``"a=1,b=-2e3"`` as ``{"a": 1.0, "b": -2000.0}``.

    Parameters
    ----------
    spec : str or None
        The option's text (None or empty: no values).
    option : str
        The option's name, for messages.

    Raises
    ------
    ModelSpecError
        A part without ``=``, a repeated name, a value that is not a finite number.
    """
    return {n: _finite(v, option, n) for n, v in _pairs(spec or "", option, "NAME=NUMBER")}


def parse_bounds(spec: str | None, option: str = "--bounds") -> dict[str, tuple[float, float]]:
    """``"k1=0:,v_eps=1e-4:0.1"`` as ``{"k1": (0, inf), "v_eps": (1e-4, 0.1)}``.

    Parameters
    ----------
    spec : str or None
        ``NAME=LO:HI`` pairs; an empty side is an infinite bound.
    option : str
        The option's name, for messages.

    Raises
    ------
    ModelSpecError
        A part not of that form, a bound that is NaN, or ``LO > HI``.
    """
    out: dict[str, tuple[float, float]] = {}
    for name, text in _pairs(spec or "", option, "NAME=LO:HI"):
        lo_text, sep, hi_text = text.partition(":")
        if not sep:
            raise ModelSpecError(f"`{option}` takes NAME=LO:HI (either side may be empty); cannot read {name}={text}")
        bounds = []
        for side, default in ((lo_text.strip(), -math.inf), (hi_text.strip(), math.inf)):
            try:
                value = float(side) if side else default
            except ValueError:
                raise ModelSpecError(f"`{option}`: a bound of `{name}` is not a number: {side!r}") from None
            if math.isnan(value):
                raise ModelSpecError(f"`{option}`: a bound of `{name}` is NaN")
            bounds.append(value)
        if bounds[0] > bounds[1]:
            raise ModelSpecError(f"`{option}`: the lower bound of `{name}` exceeds its upper bound ({text})")
        out[name] = (bounds[0], bounds[1])
    return out


def parse_names(spec: str | None, option: str) -> tuple[str, ...]:
    """``"v_eps,gap"`` as ``("v_eps", "gap")``.

    Parameters
    ----------
    spec : str or None
        Names separated by commas.
    option : str
        The option's name, for messages.

    Raises
    ------
    ModelSpecError
        A name given twice.
    """
    names = [s.strip() for s in (spec or "").split(",") if s.strip()]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ModelSpecError(f"`{option}` gives {', '.join(dup)} twice")
    return tuple(names)


def model_settings(v_eps: float | None, gap: float | None, values: Mapping[str, float]) -> ModelSettings:
    """The settings of ``--v-eps`` and ``--gap`` (defaults where not given).

    Parameters
    ----------
    v_eps, gap : float or None
        The options' values.
    values : mapping of str to float
        ``--start`` and ``--fix`` values, which may not set the same parameters again.

    Raises
    ------
    ModelSpecError
        A setting given both ways, or an invalid one.
    """
    for option, name, value in (("--v-eps", "v_eps", v_eps), ("--gap", "gap", gap)):
        if value is not None and name in values:
            raise ModelSpecError(f"`{option}` and `--start`/`--fix {name}=...` both set `{name}`; give one")
    return ModelSettings(**{k: v for k, v in (("v_eps", v_eps), ("gap", gap)) if v is not None})


def build_model(terms: str, custom: Sequence[str] = (), settings: ModelSettings | None = None) -> TermModel:
    """The model of ``--terms`` and ``--custom``: custom terms not named in ``terms`` are appended.

    Parameters
    ----------
    terms : str
        Term names separated by commas (library and custom).
    custom : sequence of str
        ``NAME=EXPR`` per typed term (parsed by :func:`nlid_core.terms.parse_custom`, never evaluated).
    settings : ModelSettings or None
        Start values of the setting parameters.

    Raises
    ------
    ModelSpecError
        Unknown terms (listing the valid ones), a bad custom term (pointing at the bad part).
    """
    from .terms.custom import parse_custom

    defs = parse_custom(custom) if custom else ()
    names = [s.strip() for s in str(terms).split(",") if s.strip()]
    names += [d.name for d in defs if d.name not in names]
    return TermModel(names, settings, custom=defs)


def check_names(names: Sequence[str], valid: Sequence[str], option: str, what: str = "parameters") -> None:
    """Raise unless every name is valid.

    Parameters
    ----------
    names : sequence of str
        Names given with ``option``.
    valid : sequence of str
        The valid names (listed in the message).
    option : str
        The option's name, for messages.
    what : str
        What the valid names are, for messages.

    Raises
    ------
    ModelSpecError
        Naming the unknown ones and listing the valid ones.
    """
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise ModelSpecError(f"`{option}` names unknown {what} {', '.join(unknown)}; the model's {what} are"
                             f" {', '.join(valid)}")


def build_parameters(model: TermModel, *, force_unit: str = "N", x_unit: str = "m",
                     start: Mapping[str, float] | None = None, fix: Mapping[str, float] | None = None,
                     bounds: Mapping[str, tuple[float, float]] | None = None,
                     free: Sequence[str] = ()) -> ParameterSet:
    """The parameters ``identify`` starts from: the model's defaults changed by the options.

    ``bounds`` replace a parameter's bounds (a default start value is clipped into them; an explicit
    ``start`` outside them is an error), ``free``
    frees parameters held fixed by default (``v_eps``, ``gap``, ...), ``start`` sets start values
    (inside the bounds), ``fix`` holds parameters at a value (inside their default bounds) and
    changes nothing else. A name in ``fix`` may not also be in ``start``, ``bounds`` or ``free``.

    Parameters
    ----------
    model : TermModel
        The model.
    force_unit, x_unit : str
        The records' units.
    start : mapping or None
        ``--start`` values.
    fix : mapping or None
        ``--fix`` values.
    bounds : mapping or None
        ``--bounds`` as (lower, upper).
    free : sequence of str
        ``--free`` names.

    Raises
    ------
    ModelSpecError
        Unknown names (listing the model's parameters), a name both fixed and otherwise set, a
        value outside its bounds.
    """
    start, fix, bounds = dict(start or {}), dict(fix or {}), dict(bounds or {})
    valid = model.param_names
    for option, names in (("--start", start), ("--fix", fix), ("--bounds", bounds), ("--free", free)):
        check_names(list(names), valid, option)
    for option, names in (("--start", start), ("--bounds", bounds), ("--free", free)):
        both = [n for n in names if n in fix]
        if both:
            raise ModelSpecError(f"{', '.join(f'`{n}`' for n in both)} given with both `--fix` and `{option}`;"
                                 " a fixed parameter is held at its --fix value")
    ps = model.default_parameters(force_unit=force_unit, x_unit=x_unit)
    for name, (lo, hi) in bounds.items():
        ps = ps.update(name, lower=lo, upper=hi, value=min(max(ps[name].value, lo), hi))
    ps = ps.free(*free)
    for option, values, vary in (("--start", start, None), ("--fix", fix, False)):
        for name, value in values.items():
            p = ps[name]
            if not p.lower <= value <= p.upper:
                hint = " (change them with --bounds)" if vary is None else ""
                raise ModelSpecError(f"`{option} {name}={value:g}` lies outside the bounds [{p.lower:g}, {p.upper:g}]"
                                     f" of `{name}`{hint}")
            ps = ps.update(name, value=value) if vary is None else ps.update(name, value=value, vary=False)
    return ps


def parameter_setup(params: ParameterSet) -> dict[str, dict[str, Any]]:
    """The parameters handed to the estimator, for the JSON (an infinite bound is None).

    Parameters
    ----------
    params : ParameterSet
        Start values, bounds and fixed flags.
    """
    return {p.name: {"start": p.value, "bounds": [finite_or_none(p.lower), finite_or_none(p.upper)], "fixed": not p.vary,
                     "unit": p.unit} for p in params}
