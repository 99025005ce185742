"""Terms typed by the user: ``NAME=EXPR`` with a force expression in x, v, a and parameter names.

``asym=ka*x*abs(x)`` adds a term ``asym`` whose force is ``ka·x·|x|``; every free symbol other than
``x``, ``v``, ``a`` is a parameter (here ``ka``, unit N/m² derived from the rule that the force is a
force). The text goes through the whitelist parser of :mod:`nlid_core.terms.expr` only; the
derivatives are symbolic and compiled like those of the library terms.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable

from ..errors import ModelSpecError
from .base import VARIABLES, ParamSpec, TermDef
from .expr import parse_expression, symbol
from .registry import REGISTRY
from .units import ACCELERATION, DISPLACEMENT, VELOCITY, infer_units
from .vetting import check_size, vet

__all__ = ["custom_term", "parse_custom", "MAX_CUSTOM_TERMS"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,31}$")
#: Most custom terms one model may have.
MAX_CUSTOM_TERMS = 8
#: Most parameters one custom term may have.
MAX_CUSTOM_PARAMS = 8
_MEMO: dict[tuple[str, object], TermDef | ModelSpecError] = {}
_MEMO_SIZE = 256
_MEMO_LOCK = threading.Lock()


def custom_term(name: str, expression: str) -> TermDef:
    """A term called ``name`` with force ``expression``.

    Parameters
    ----------
    name : str
        Letters and digits, starting with a letter, at most 32 characters, not a library term name.
    expression : str
        Force in ``x``, ``v``, ``a`` (linearly) and parameter names, e.g. ``"ka*x*abs(x)"``.

    Returns
    -------
    TermDef
        With one parameter per free symbol (alphabetical order), units where they follow.

    Raises
    ------
    ModelSpecError
        A bad name, a bad expression (the message points at the offending part), no parameter, or
        a force that cannot be simulated (not linear in ``a``).
    """
    name = str(name).strip()
    if not _NAME.match(name):
        raise ModelSpecError(f"custom term name `{name}` must be letters and digits starting with a letter (<= 32)")
    if name in REGISTRY:
        raise ModelSpecError(f"`{name}` is a library term; give the custom term another name")
    text = expression.strip() if isinstance(expression, str) else expression
    memo_key = (name, text)
    done = _MEMO.get(memo_key)
    if done is not None:
        if isinstance(done, ModelSpecError):
            raise ModelSpecError(str(done))
        return done
    try:
        if isinstance(text, str):
            check_size(name, text)
            compiled = vet(name, text)
        else:
            compiled = None
        term = _build(name, text)
        if compiled is not None:
            term.__dict__["_compiled"] = compiled  # made by the worker within the budget: not derived again
    except ModelSpecError as exc:
        _remember(memo_key, exc)
        raise
    _remember(memo_key, term)
    return term


def _remember(key: tuple[str, object], value: TermDef | ModelSpecError) -> None:
    """Keep a typed term (or why it was refused), so a dashboard rerun neither compiles nor vets it again."""
    with _MEMO_LOCK:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = value


def _build(name: str, expression: str) -> TermDef:
    import sympy

    force = parse_expression(expression)
    variables = {symbol(v) for v in VARIABLES}
    params = sorted((s for s in force.free_symbols if s not in variables), key=str)
    if not params:
        raise ModelSpecError(f"custom term `{name}` = `{expression}` has no parameter to estimate")
    if len(params) > MAX_CUSTOM_PARAMS:
        raise ModelSpecError(f"custom term `{name}` has {len(params)} parameters; at most {MAX_CUSTOM_PARAMS}")
    a = symbol("a")
    if sympy.diff(force, a).has(a):
        raise ModelSpecError(f"custom term `{name}`: the force must be linear in the acceleration `a`")
    dims = infer_units(force, {symbol("x"): DISPLACEMENT, symbol("v"): VELOCITY, a: ACCELERATION}, set(params))
    specs = []
    for p in params:
        linear = not sympy.diff(force, p).has(*params)
        specs.append(ParamSpec(str(p), dims.get(p), -math.inf, math.inf, 0.0 if linear else 1.0,
                               description=f"parameter of the custom term {name}"))
    text = str(expression).strip()
    template = re.sub(r"\b(" + "|".join(re.escape(str(p)) for p in params) + r")\b", r"{\1}", text)
    term = TermDef(name=name, description=f"custom: {text}", force=text, params=tuple(specs),
                   template=f"[{template}]", basis=text, custom=True)
    term.symbolic  # noqa: B018  (checks the expression once more, as a term)
    return term


def parse_custom(specs: Iterable[str]) -> tuple[TermDef, ...]:
    """Parse ``NAME=EXPR`` strings (the CLI's repeatable ``--custom``) into terms.

    Parameters
    ----------
    specs : iterable of str
        E.g. ``["asym=ka*x*abs(x)"]``.

    Raises
    ------
    ModelSpecError
        A spec without ``=``, a repeated name, too many terms, or an invalid term.
    """
    out: list[TermDef] = []
    for spec in specs:
        name, sep, expr = str(spec).partition("=")
        if not sep:
            raise ModelSpecError(f"`--custom {spec}` must read NAME=EXPRESSION, e.g. asym=ka*x*abs(x)")
        if any(t.name == name.strip() for t in out):
            raise ModelSpecError(f"custom term `{name.strip()}` is defined twice")
        out.append(custom_term(name, expr))
    if len(out) > MAX_CUSTOM_TERMS:
        raise ModelSpecError(f"{len(out)} custom terms given; at most {MAX_CUSTOM_TERMS}")
    return tuple(out)
