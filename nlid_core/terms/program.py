r"""Symbolic expressions compiled to register programs for the compiled evaluator.

Every term's force, state derivatives and all their exact partial derivatives are sympy
expressions. :func:`compile_outputs` turns a list of them into one straight-line *register
program*: common subexpressions are shared (:func:`sympy.cse`), constants are stored once, and each
instruction computes ``reg[dst] = op(reg[a], reg[b])``. The program is plain integer and float
arrays, run by :func:`nlid_core.terms.vm.run_program` inside the compiled simulators, so a term typed
by the user at run time is compiled without generating or executing any source code, and without
recompiling the simulators.

Register layout: ``[inputs..., constants..., instruction results...]``; ``outputs[k]`` is the
register holding output ``k`` (an input or constant register when the output is that simple).

The derivative of ``sign`` and of the unit step is taken as zero (exact almost everywhere: the
terms are piecewise smooth); ``max``/``min`` differentiate through a unit step that is 1/2 at a tie.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError

__all__ = ["OPS", "Program", "compile_outputs"]

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Instruction codes of the evaluator (see :mod:`nlid_core.terms.vm`).
OPS = {
    "add": 1, "sub": 2, "mul": 3, "div": 4, "neg": 5, "pow": 6, "abs": 7, "sign": 8, "tanh": 9, "exp": 10,
    "log": 11, "sqrt": 12, "sin": 13, "cos": 14, "min": 15, "max": 16, "step": 17, "square": 18, "recip": 19,
}
#: Longest program accepted (instructions) for one term.
MAX_INSTRUCTIONS = 20000


@dataclass(frozen=True)
class Program:
    """A compiled straight-line program.

    Attributes
    ----------
    n_inputs : int
        Registers ``0 .. n_inputs - 1`` are the inputs, in the order given to :func:`compile_outputs`.
    registers : (r,) ndarray
        Initial register file: zeros for inputs and results, the constants in place.
    op, a, b, dst : (k,) ndarray of int64
        Instruction ``i`` computes ``reg[dst[i]] = OP[op[i]](reg[a[i]], reg[b[i]])``.
    outputs : (m,) ndarray of int64
        Register of each output.
    """

    n_inputs: int
    registers: FloatArray
    op: IntArray
    a: IntArray
    b: IntArray
    dst: IntArray
    outputs: IntArray

    @property
    def n_instructions(self) -> int:
        """Number of instructions."""
        return int(self.op.size)


def compile_outputs(outputs: Sequence[Any], inputs: Sequence[Any], *, cse: bool = True) -> Program:
    """Compile sympy expressions of ``inputs`` into one :class:`Program`.

    Parameters
    ----------
    outputs : sequence of sympy.Expr
        The values to compute.
    inputs : sequence of sympy.Symbol
        The free symbols, in register order; every free symbol of ``outputs`` must be among them.
    cse : bool
        Share common parts of sums and products too (:func:`sympy.cse`), not only identical
        subexpressions (always shared). Its search can take time exponential in the nesting of
        an expression (a ten-deep ``tanh`` chain: minutes), so terms typed by users go without it
        (about 15 % more instructions on the library's stateful terms).

    Returns
    -------
    Program

    Raises
    ------
    ModelSpecError
        A free symbol that is not an input, a construct without an instruction, or a program
        longer than :data:`MAX_INSTRUCTIONS`.
    """
    import sympy

    inputs = list(inputs)
    outs = [sympy.sympify(o) for o in outputs]
    free = set().union(*(o.free_symbols for o in outs)) if outs else set()
    missing = sorted(str(s) for s in free - set(inputs))
    if missing:
        raise ModelSpecError(f"symbol(s) {', '.join(missing)} are not inputs of the program")
    repl, reduced = sympy.cse(outs, optimizations="basic") if cse else ([], outs)
    builder = _Builder(inputs)
    for sym, sub in repl:
        builder.where[sym] = builder.load(sub)
    out_regs = [builder.load(e) for e in reduced]
    arr = np.array(builder.code, dtype=np.int64).reshape(-1, 4)
    return Program(
        n_inputs=len(inputs),
        registers=np.array(builder.regs, dtype=np.float64),
        op=np.ascontiguousarray(arr[:, 0]),
        a=np.ascontiguousarray(arr[:, 1]),
        b=np.ascontiguousarray(arr[:, 2]),
        dst=np.ascontiguousarray(arr[:, 3]),
        outputs=np.array(out_regs, dtype=np.int64),
    )


class _Builder:
    """Registers and instructions of a program being built: every subexpression is computed once, into its own
    register, in the order it is first needed."""

    def __init__(self, inputs: Sequence[Any]) -> None:
        self.regs: list[float] = [0.0] * len(inputs)
        self.where: dict[Any, int] = {s: i for i, s in enumerate(inputs)}
        self.consts: dict[float, int] = {}
        self.code: list[tuple[int, int, int, int]] = []

    def const(self, val: float) -> int:
        if val not in self.consts:
            self.consts[val] = len(self.regs)
            self.regs.append(val)
        return self.consts[val]

    def emit(self, op: str, a: int, b: int = 0) -> int:
        if len(self.code) >= MAX_INSTRUCTIONS:
            raise ModelSpecError(f"the expression needs more than {MAX_INSTRUCTIONS} instructions; simplify it")
        dst = len(self.regs)
        self.regs.append(0.0)
        self.code.append((OPS[op], a, b, dst))
        return dst

    def fold(self, op: str, args: Sequence[Any]) -> int:
        acc = self.load(args[0])
        for arg in args[1:]:
            acc = self.emit(op, acc, self.load(arg))
        return acc

    def load(self, e: Any) -> int:
        if e in self.where:
            return self.where[e]
        r = self.build(e)
        self.where[e] = r
        return r

    def build(self, e: Any) -> int:
        import sympy

        if e.is_Number or isinstance(e, sympy.NumberSymbol):
            val = float(e)
            if not np.isfinite(val):
                raise ModelSpecError(f"the expression has the non-finite constant {e}")
            return self.const(val)
        if isinstance(e, sympy.DiracDelta):
            return self.const(0.0)
        if isinstance(e, sympy.Add):
            return self.fold("add", e.args)
        if isinstance(e, sympy.Mul):
            return self._product(e)
        if isinstance(e, sympy.Pow):
            return self._power(e)
        unary = {sympy.Abs: "abs", sympy.sign: "sign", sympy.tanh: "tanh", sympy.exp: "exp", sympy.log: "log",
                 sympy.sin: "sin", sympy.cos: "cos"}
        for cls, op in unary.items():
            if isinstance(e, cls):
                return self.emit(op, self.load(e.args[0]))
        if isinstance(e, sympy.Heaviside):
            return self.emit("step", self.load(e.args[0]))
        if isinstance(e, (sympy.Min, sympy.Max)):
            return self.fold("min" if isinstance(e, sympy.Min) else "max", e.args)
        raise ModelSpecError(f"`{e}` cannot be compiled (no instruction for {type(e).__name__})")

    def _product(self, e: Any) -> int:
        import sympy

        coeff, rest = e.as_coeff_Mul()
        if coeff == -1:
            return self.emit("neg", self.load(rest))
        num, den = sympy.fraction(e)
        if den != 1:
            return self.emit("div", self.load(num), self.load(den))
        return self.fold("mul", e.args)

    def _power(self, e: Any) -> int:
        import sympy

        base, ex = e.args
        if ex == -1:
            return self.emit("recip", self.load(base))
        if ex == 2:
            return self.emit("square", self.load(base))
        if ex == sympy.Rational(1, 2):
            return self.emit("sqrt", self.load(base))
        if ex == sympy.Rational(-1, 2):
            return self.emit("recip", self.emit("sqrt", self.load(base)))
        if ex.is_Integer and int(ex) < 0:
            return self.emit("recip", self.load(base ** (-ex)))
        return self.emit("pow", self.load(base), self.load(ex))
