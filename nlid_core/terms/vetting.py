"""A work budget for terms typed by users: refused cheaply when too large, compiled under a CPU limit.

Deriving a typed term's exact partial derivatives and compiling them is symbolic work whose cost
grows steeply with nesting (a chain of ``tanh(k*x + tanh(k*x + ...))`` ten deep once cost sympy's
common-subexpression search minutes). On a shared server that work would hold a core other
engineers need, so a typed term passes two gates before this process does any symbolic work:

1. :func:`check_size`, on the parsed syntax tree only (no sympy): at most :data:`MAX_NODES` nodes,
   and an estimate of the size of the first derivatives (each derivative of a node costs about the
   node and the derivatives of its arguments) of at most ``NLID_TERM_MAX_PARTS`` nodes (default
   20 000: a product of about a hundred factors).
2. The first time a (name, expression) pair is seen, it is parsed, checked and compiled in a worker
   process limited to ``NLID_TERM_CPU_S`` seconds of CPU (default 10 s), 1 GB of
   address space and twice that wall time (:mod:`nlid_core.isolation`); the worker's answer is
   the compiled programs (plain arrays, checked when read), stored in the program cache
   (:mod:`nlid_core.terms.cache`). A term the worker could not finish is refused with a message
   naming it. Only then is the term built in this process, from the stored programs, so the
   symbolic work done here is bounded by what the worker did within its budget.

``NLID_TERM_CPU_S=off`` compiles typed terms in the calling process without a worker (a trusted,
single-user installation; the size gate still applies).
"""

from __future__ import annotations

import ast
import json
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

from ..errors import ModelSpecError

__all__ = ["CPU_ENV", "MAX_NODES", "PARTS_ENV", "check_size", "cpu_budget", "vet"]

CPU_ENV = "NLID_TERM_CPU_S"
#: Most syntax-tree nodes of one typed expression.
MAX_NODES = 1500
PARTS_ENV = "NLID_TERM_MAX_PARTS"
#: Set in the worker: compile in process.
_IN_WORKER_ENV = "NLID_TERM_WORKER"


def cpu_budget() -> float | None:
    """``NLID_TERM_CPU_S`` in seconds, or None when set to ``off``."""
    from ..errors import DataValidationError
    from ..limits import budget

    try:
        return budget(CPU_ENV)
    except DataValidationError as exc:
        raise ModelSpecError(str(exc)) from None


def _sizes(node: ast.AST) -> tuple[int, int]:
    """(nodes of ``node``, estimated nodes of its derivative) for an expression tree, without sympy.

    The derivative rules by node kind: a sum's is the sum of its arguments'; a product's is
    ``u'·w + u·w'``; a quotient's and a power's hold both arguments and both derivatives; a
    function's ``f'(u)·u'`` holds its argument once more. Iterative over the tree (no recursion
    limit), each node visited once.
    """
    order: list[ast.AST] = []
    stack = [node]
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(ast.iter_child_nodes(n))
    size: dict[int, tuple[int, int]] = {}
    for n in reversed(order):
        kids = [size[id(c)] for c in ast.iter_child_nodes(n) if id(c) in size]
        s = (0 if isinstance(n, (ast.operator, ast.unaryop)) else 1) + sum(k[0] for k in kids)
        if isinstance(n, ast.BinOp) and len(kids) == 3:  # (left, op, right)
            (s1, d1), _, (s2, d2) = kids
            if isinstance(n.op, (ast.Add, ast.Sub)):
                d = d1 + d2 + 1
            elif isinstance(n.op, ast.Mult):
                d = d1 + s2 + s1 + d2 + 3
            else:  # Div, Pow and anything else: both arguments and both derivatives, twice
                d = 2 * (s1 + s2) + d1 + d2 + 4
        elif isinstance(n, ast.Call):
            args = kids[1:]  # kids[0] is the function's name
            d = sum(a[0] + a[1] + 2 for a in args) + 1
        elif kids:
            d = sum(k[1] for k in kids) + 1
        else:
            d = 1
        size[id(n)] = (s, min(d, 10**12))
    return size[id(node)]


def check_size(name: str, expression: str) -> None:
    """Refuse a typed expression whose syntax tree, or the estimated size of its derivatives, is
    beyond the budget (before any symbolic work).

    Raises
    ------
    ModelSpecError
        Naming the term, the size found and the limit.
    """
    from .expr import MAX_EXPRESSION_CHARS

    src = expression.strip().replace("^", "**")
    if len(src) > MAX_EXPRESSION_CHARS:
        return  # the expression parser refuses it with its own message
    try:
        tree = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # the expression parser gives the specific message
    from ..errors import DataValidationError
    from ..limits import budget

    try:
        most = int(budget(PARTS_ENV) or 0)
    except DataValidationError as exc:
        raise ModelSpecError(str(exc)) from None
    nodes, expanded = _sizes(tree.body)
    if nodes > MAX_NODES:
        raise ModelSpecError(f"custom term `{name}` has {nodes} parts; at most {MAX_NODES} are accepted"
                             " (split it into several terms or simplify it)")
    if expanded > most:
        raise ModelSpecError(f"custom term `{name}` is nested too deeply: its derivatives would have about "
                             f"{expanded:,} parts, at most {most:,} are accepted (simplify it; an administrator"
                             f" can raise the limit with {PARTS_ENV})")


def _keys(name: str, expression: str) -> str:
    from . import cache

    return cache.key_for(["custom", name, expression])


def vet(name: str, expression: str) -> dict[str, Any] | None:
    """The compiled programs of a typed term, made within the CPU budget (see the module notes).

    Returns
    -------
    dict or None
        What :meth:`TermDef._compiled` holds, for the term built from ``(name, expression)``; None
        when no worker is used (``NLID_TERM_CPU_S=off``, or this is the worker).

    Raises
    ------
    ModelSpecError
        The worker found the term invalid (its message), or ran out of its budget.
    """
    from . import cache

    if os.environ.get(_IN_WORKER_ENV):
        return None
    budget = cpu_budget()
    if budget is None:
        return None
    key = _keys(name, expression)
    found = cache.load(key)
    if found is not None:
        return found
    from ..isolation import run_module

    shown = expression if len(expression) <= 80 else expression[:77] + "..."
    with tempfile.TemporaryDirectory(prefix="nlid-term-") as tmp:
        out = Path(tmp)
        try:
            ended = run_module("nlid_core.terms._vet_worker", {"name": name, "expression": expression,
                                                               "cpu_s": budget}, out, wall_s=2 * budget + 10)
        except OSError as exc:
            raise ModelSpecError(f"custom term `{name}`: could not start the compiling worker: "
                                 f"{exc.strerror or exc}") from None
        answer = out / "answer.json"
        if not answer.is_file():
            if ended.timed_out or ended.signal == signal.SIGXCPU or ended.cpu_s >= budget:
                raise ModelSpecError(
                    f"custom term `{name}` = `{shown}` needs more than {budget:g} s of CPU time to derive and"
                    f" compile and was stopped; simplify it (an administrator can raise the limit with {CPU_ENV})")
            how = f"signal {ended.signal}" if ended.signal is not None else f"exit status {ended.code}"
            raise ModelSpecError(f"custom term `{name}`: the compiling worker stopped ({how}) without an answer")
        try:
            doc = json.loads(answer.read_text(encoding="utf-8")[:100_000])
        except (OSError, ValueError):
            doc = {}
        if not isinstance(doc, dict):
            doc = {}
        if "error" in doc:
            raise ModelSpecError(str(doc["error"])[:2000])
        found = cache.load(key, folder=out)
        if found is None:
            raise ModelSpecError(f"custom term `{name}`: the compiling worker gave no usable answer")
    cache.save(key, found)
    return found


def worker_compile(request: dict[str, Any], out: Path) -> dict[str, Any]:
    """The worker's side: build the term in this (limited) process and store its programs in ``out``."""
    from . import cache
    from .custom import custom_term

    os.environ[_IN_WORKER_ENV] = "1"
    name, expression = str(request["name"]), str(request["expression"])
    try:
        term = custom_term(name, expression)
        compiled = term._compiled
    except ModelSpecError as exc:
        return {"error": str(exc)}
    cache.save(_keys(name, expression), compiled, folder=out)
    return {"ok": True}
