r"""Generate the single-DOF fast kernel's term evaluation from the terms' compiled programs.

The general simulators run every term's :class:`~nlid_core.terms.program.Program` through the register
evaluator (:mod:`nlid_core.terms.vm`), one instruction at a time. For the memoryless library terms on one
DOF that interpretation is most of the cost of a simulation, so :func:`kernel_source` unrolls each such
term's program into straight-line numba code, one statement per instruction, each written from
:data:`nlid_core.terms.vm.OP_SOURCE` (the source form of :func:`~nlid_core.terms.vm.apply`, held equal to it
by the contract test). Calling ``apply`` itself in the generated code would be as fast but makes numba
inline it at every instruction, which took minutes to compile. The result is the module :mod:`nlid_core.terms.fast_kernel`, committed so that
numba's on-disk cache serves it like any other module.

Nothing in it is written by hand: run ``python -m nlid_core.terms.fastgen`` after adding or changing a
memoryless library term (``--check`` exits 1 when the committed module is stale; the test suite runs it).
A term missing from the module, or whose text differs from the one it was generated from, is simply not
fast: :attr:`nlid_core.models.TermModel.fast_terms` checks every term's identity against
:data:`~nlid_core.terms.fast_kernel.TERMS`, and such models run on the general layer.

Contract of the generated ``accel(x, v, f, theta, terms, want, work)``: for terms ``j`` with branch
``terms[0, j]`` and first parameter ``theta[terms[1, j]]``, it returns the acceleration of
``m(x, v)·a + F(x, v) = f``, ∂a/∂x, ∂a/∂v and m; when ``want``, rows 0 and 1 of ``work`` (zeroed by the
caller) receive ∂F/∂θ and ∂m/∂θ at each term's parameter slots (row 1 is written by inertia terms only), from
which the caller forms ∂a/∂θ = −(∂F/∂θ + a·∂m/∂θ)/m inside its own sensitivity loop.

What made it as fast as the hand-written kernel it replaced (seed model, RK4: 0.044 µs per sample without
sensitivities and 0.106 with, against 0.050 and 0.101; each measured): three arrays rather than six (each
array a compiled call takes costs reference counting at every inlined call site: six made it 3.5× slower);
``want`` a literal at the caller, so the compiler specialises each case (2× without sensitivities); ∂a/∂θ
formed in the caller's loop rather than in a loop of its own; no ``min``/``max`` in a library term (the
``kg`` term's text uses ``sign``: its selects made the whole loop 2× slower). And for compile time (12.7 s
against the hand-written kernel's 8.8, from 63 s before): two call sites of ``accel`` in the loop, not five,
and one specialisation for read-only and writable arrays.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from .base import TermDef
from .program import OPS, Program
from .vm import OP_SOURCE

__all__ = ["fast_terms", "identity", "is_current", "kernel_source", "main"]

_TARGET = Path(__file__).with_name("fast_kernel.py")


def identity(term: TermDef) -> tuple[str, str, tuple[str, ...]]:
    """What the generated code of a term depends on: its name, force text and parameter order."""
    return (term.name, term.force, term.param_names)


def fast_terms(terms: Sequence[TermDef]) -> tuple[TermDef, ...]:
    """The terms the fast kernel covers: library terms without internal states."""
    return tuple(t for t in terms if not t.states and not t.custom)


def _operand(reg: int, prog: Program, names: Sequence[str]) -> str:
    """An input's name, a constant's literal, or an instruction result's local."""
    if reg < prog.n_inputs:
        return names[reg]
    if (prog.dst == reg).any():
        return f"r{reg}"
    return repr(float(prog.registers[reg]))


def _branch(code: int, term: TermDef) -> list[str]:
    """One term's branch of the ``if`` chain of ``accel``: its program unrolled, one statement an instruction,
    ending in the term's force, inertia and their x/v partials (``tf, tfx, tfv, tm, tmx, tmv``), which the
    chain's common tail adds up, and, when sensitivities are wanted, its parameter partials in ``work``."""
    prog = term.program
    names = ["x", "v", *[f"p{k}" for k in range(term.n_params)]]
    pad = " " * 8
    lines = [f"    {'if' if code == 0 else 'elif'} c == {code}:  # {term.name}: {term.force}"]
    lines += [f"{pad}p{k} = theta[{_slot(k)}]  # {name}" for k, name in enumerate(term.param_names)]
    for op, a, b, dst in zip(prog.op, prog.a, prog.b, prog.dst, strict=True):
        u = _operand(int(a), prog, names)
        w = _operand(int(b), prog, names)
        if int(op) == OPS["pow"] and w in ("2.0", "3.0"):  # as power() computes them
            text = " * ".join([u] * int(float(w)))
        else:
            text = OP_SOURCE[int(op)].format(u=u, w=w)
        lines.append(f"{pad}r{int(dst)} = {text}")
    out = [_operand(int(r), prog, names) for r in prog.outputs]
    size = term.block_size
    inertia = out[size:size + 3] if term.inertial else ["0.0"] * 3
    lines += [f"{pad}{local} = {val}" for local, val in zip(_LOCALS, [*out[:3], *inertia], strict=True)]
    lines.append(f"{pad}if want:")
    lines += [f"{pad}    work[0, {_slot(k)}] = {val}" for k, val in enumerate(out[3:size])]
    if term.inertial:
        lines += [f"{pad}    work[1, {_slot(k)}] = {val}" for k, val in enumerate(out[size + 3:])]
    return lines


_LOCALS = ("tf", "tfx", "tfv", "tm", "tmx", "tmv")


def _slot(k: int) -> str:
    return "o" if k == 0 else f"o + {k}"


_HEAD = '''"""Generated by ``python -m nlid_core.terms.fastgen`` from the terms' compiled programs: do not edit.

See :mod:`nlid_core.terms.fastgen` for the contract of :func:`accel`.
"""

{imports}from numba import njit
{vm_import}
#: (name, force, parameter names) of each branch, in branch order: a term runs here only when all three match.
TERMS = (
{table}
)


@njit(cache=True, inline="always", error_model="numpy")
def accel(x, v, f, theta, terms, want, work):  # type: ignore[no-untyped-def]  # noqa: C901
    """Return (a, ∂a/∂x, ∂a/∂v, mass); when ``want``, fill ``work[0]`` with ∂F/∂θ and ``work[1]`` with ∂m/∂θ."""
    g = 0.0
    dgx = 0.0
    dgv = 0.0
    mass = 0.0
    dmx = 0.0
    dmv = 0.0
    for j in range(terms.shape[1]):
        c = terms[0, j]
        o = terms[1, j]
        tf = tfx = tfv = tm = tmx = tmv = 0.0
'''

_TAIL = '''        g += tf
        dgx += tfx
        dgv += tfv
        mass += tm
        dmx += tmx
        dmv += tmv
    if not mass > 0.0:
        return 0.0, 0.0, 0.0, mass
    inv_m = 1.0 / mass
    a = (f - g) * inv_m
    return a, (-dgx - a * dmx) * inv_m, (-dgv - a * dmv) * inv_m, mass
'''


def kernel_source(terms: Sequence[TermDef] | None = None) -> str:
    """The text of :mod:`nlid_core.terms.fast_kernel` for ``terms`` (default: the registry's)."""
    if terms is None:
        from .registry import REGISTRY

        terms = tuple(REGISTRY.values())
    chosen = fast_terms(terms)
    table = "\n".join(f"    {identity(t)!r}," for t in chosen)
    body: list[str] = []
    for code, term in enumerate(chosen):
        body += ["    " + line for line in _branch(code, term)]
    text = "\n".join(body)
    every = text
    names = [n for n, used in (("TINY", "TINY" in every), ("power", "power(" in every)) if used]
    head = _HEAD.format(table=table, imports="import numpy as np\n" if "np." in every else "",
                        vm_import=f"\nfrom .vm import {', '.join(names)}\n" if names else "")
    return head + text + "\n" + _TAIL


def is_current() -> bool:
    """True when the committed module is what :func:`kernel_source` makes of today's library."""
    return _TARGET.exists() and _TARGET.read_text(encoding="utf-8") == kernel_source()


def main(argv: Sequence[str] | None = None) -> int:
    """Write the generated module (or, with ``--check``, exit with a message when it is stale)."""
    parser = argparse.ArgumentParser(prog="python -m nlid_core.terms.fastgen", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed module is stale")
    args = parser.parse_args(argv)
    if is_current():
        return 0
    if args.check:
        raise SystemExit(f"{_TARGET.name} is stale: run python -m nlid_core.terms.fastgen")
    _TARGET.write_text(kernel_source(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
