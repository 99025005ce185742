r"""Force expressions typed as text, parsed safely into symbolic form.

A term's force (and the time derivative of each internal state) is written as an ordinary
arithmetic expression, e.g. ``ka*x*abs(x)`` or ``sigma0*z + sigma1*v``. The text is parsed by
:func:`ast.parse` in ``eval`` mode and the tree is walked node by node: only numbers, names,
``+ - * / **``, unary ``+ -``, parentheses and calls of the whitelisted functions
``abs sign tanh exp log sqrt sin cos min max`` are accepted, and each is turned into the matching
:mod:`sympy` object directly. The text is never handed to ``eval``, ``exec``, ``sympify`` or any
other interpreter, so an expression typed into the dashboard of a shared server can do nothing but
arithmetic. Anything else (attributes, subscripts, comparisons, keywords, strings, lambdas, calls
of other names, names with underscores at the ends, very long or deeply nested text) is refused
with a :class:`~nlid_core.errors.ModelSpecError` that quotes the offending part and its column.

Variables: ``x`` (displacement, or the relative displacement of a connection), ``v`` (velocity),
``a`` (acceleration; only linearly, as inertia), the names of the term's internal states, and every
other name is a parameter.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..errors import ModelSpecError

__all__ = ["FUNCTIONS", "MAX_EXPRESSION_CHARS", "parse_expression", "symbol"]

#: Longest expression text accepted (characters).
MAX_EXPRESSION_CHARS = 2000
#: Deepest nesting of the parsed tree accepted.
MAX_DEPTH = 60
#: Functions an expression may call, with their number of arguments.
FUNCTIONS: Mapping[str, int] = {
    "abs": 1, "sign": 1, "tanh": 1, "exp": 1, "log": 1, "sqrt": 1, "sin": 1, "cos": 1, "min": 2, "max": 2,
}
#: Largest integer power and largest absolute constant accepted (keeps derivatives finite and small).
MAX_POWER = 12
MAX_CONSTANT = 1e300


@lru_cache(maxsize=None)
def symbol(name: str) -> Any:
    """The real-valued sympy symbol used for ``name`` in every term (one object per name)."""
    import sympy

    return sympy.Symbol(name, real=True)


def _fail(text: str, node: ast.AST | None, what: str) -> ModelSpecError:
    if node is not None and hasattr(node, "col_offset"):
        start = int(node.col_offset)
        end = int(getattr(node, "end_col_offset", start + 1) or start + 1)
        part = text[start:end]
        return ModelSpecError(f"{what}: `{part}` at column {start + 1} of `{text}`")
    return ModelSpecError(f"{what} in `{text}`")


def _sympy_function(name: str) -> Any:
    import sympy

    return {
        "abs": sympy.Abs, "sign": sympy.sign, "tanh": sympy.tanh, "exp": sympy.exp, "log": sympy.log,
        "sqrt": sympy.sqrt, "sin": sympy.sin, "cos": sympy.cos, "min": sympy.Min, "max": sympy.Max,
    }[name]


def parse_expression(text: str, *, reserved: Mapping[str, str] | None = None) -> Any:
    """Parse ``text`` into a sympy expression through a whitelist of syntax.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"ka*x*abs(x)"``. ``^`` is accepted as a power.
    reserved : mapping of str to str or None
        Names that may not be used as symbols, with the reason (e.g. function names).

    Returns
    -------
    sympy.Expr
        With every name as a real :func:`symbol`.

    Raises
    ------
    ModelSpecError
        Text that is empty, too long, not an expression, or uses anything outside the whitelist;
        the message quotes the offending part.
    """
    import sympy

    src = _checked_text(text)
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as exc:
        col = f" at column {exc.offset}" if exc.offset else ""
        raise ModelSpecError(f"`{text}` is not a valid expression{col}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ModelSpecError(f"`{text[:60]}` is nested too deeply") from None
    try:
        expr = _Walker(src, dict(reserved or {})).walk(tree, 0)
    except RecursionError:
        raise ModelSpecError(f"`{text[:60]}` is nested too deeply") from None
    if expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise ModelSpecError(f"`{text}` is undefined (division by zero or an infinite value)")
    return expr


def _checked_text(text: object) -> str:
    """The expression's source (``^`` as ``**``) once its length and characters are checked."""
    if not isinstance(text, str):
        raise ModelSpecError(f"an expression must be text, got {type(text).__name__}")
    src = text.strip()
    if not src:
        raise ModelSpecError("the expression is empty")
    if len(src) > MAX_EXPRESSION_CHARS:
        raise ModelSpecError(f"the expression is {len(src)} characters long; at most {MAX_EXPRESSION_CHARS} are accepted")
    if not src.isascii() or not src.isprintable():
        bad = next(c for c in src if not (c.isascii() and c.isprintable()))
        raise ModelSpecError(f"character {bad!r} at column {src.index(bad) + 1} of the expression is not allowed")
    return src.replace("^", "**")


class _Walker:
    """The whitelist walk of a parsed expression into sympy; every refusal quotes the part of ``src`` it is about."""

    def __init__(self, src: str, reserved: Mapping[str, str]) -> None:
        self.src = src
        self.reserved = reserved

    def walk(self, node: ast.AST, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _fail(self.src, node, f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Expression):
            return self.walk(node.body, depth + 1)
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            inner = self.walk(node.operand, depth + 1)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            return self._sum(node, depth)
        if isinstance(node, ast.BinOp):
            return self._binary(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        raise _fail(self.src, node, f"`{type(node).__name__}` is not allowed in an expression")

    def _constant(self, node: ast.Constant) -> Any:
        import sympy

        val = node.value
        if isinstance(val, bool) or not isinstance(val, (int, float)):
            raise _fail(self.src, node, "only numbers are allowed as constants")
        if not math.isfinite(float(val)) or abs(float(val)) > MAX_CONSTANT:
            raise _fail(self.src, node, "constant out of range")
        return sympy.Integer(val) if isinstance(val, int) else sympy.Float(val)

    def _name(self, node: ast.Name) -> Any:
        name = node.id
        if name.startswith("_") or name.endswith("_"):
            raise _fail(self.src, node, "names may not start or end with an underscore")
        if name in FUNCTIONS:
            raise _fail(self.src, node, f"`{name}` is a function; call it as {name}(...)")
        if name in self.reserved:
            raise _fail(self.src, node, self.reserved[name])
        return symbol(name)

    def _sum(self, node: ast.BinOp, depth: int) -> Any:
        # a long sum is a chain down the left: walked as a list, so 100 terms are not 100 levels deep
        chain: list[tuple[ast.operator, ast.expr]] = []
        head: ast.expr = node
        while isinstance(head, ast.BinOp) and isinstance(head.op, (ast.Add, ast.Sub)):
            chain.append((head.op, head.right))
            head = head.left
        total = self.walk(head, depth + 1)
        for op, item in reversed(chain):
            value = self.walk(item, depth + 1)
            total = total + value if isinstance(op, ast.Add) else total - value
        return total

    def _binary(self, node: ast.BinOp, depth: int) -> Any:
        left = self.walk(node.left, depth + 1)
        right = self.walk(node.right, depth + 1)
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            if right == 0:
                raise _fail(self.src, node, "division by zero")
            return left / right
        if isinstance(node.op, ast.Pow):
            if right.is_number and (not right.is_real or abs(float(right)) > MAX_POWER):
                raise _fail(self.src, node, f"constant powers must be real with magnitude <= {MAX_POWER}")
            return left**right
        raise _fail(self.src, node, f"operator `{type(node.op).__name__}` is not allowed (use + - * / **)")

    def _call(self, node: ast.Call, depth: int) -> Any:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise _fail(self.src, node.func, "only the functions " + ", ".join(FUNCTIONS) + " may be called")
        if node.keywords:
            raise _fail(self.src, node, "functions take no keyword arguments")
        want = FUNCTIONS[node.func.id]
        if len(node.args) != want:
            raise _fail(self.src, node, f"`{node.func.id}` takes {want} argument{'s' if want > 1 else ''}")
        args = [self.walk(a, depth + 1) for a in node.args]
        return _sympy_function(node.func.id)(*args)
