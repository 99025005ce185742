"""The compiled evaluator of register programs (numba).

:func:`run_program` executes instructions ``start .. stop - 1`` of the flat instruction arrays on a
register file. Codes are those of :data:`nlid_core.terms.program.OPS`. ``log`` of zero gives the log of
the smallest positive double (about -744.4) instead of -inf, so that ``0·log 0`` terms of exact
derivatives (e.g. of ``|z|^nu`` with respect to ``nu`` at ``z = 0``) evaluate to their limit 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

TINY = 5e-324

#: Each instruction as source text over operands ``{u}`` and ``{w}`` (names or literals), for the code that
#: :mod:`nlid_core.terms.fastgen` generates: the same results as :func:`apply` (``tests/test_terms.py`` holds
#: every code equal on sample operands, NaN, zeros and ties included). ``sign``, ``step`` and ``log`` use
#: arithmetic on comparisons rather than conditional expressions; ``min(w, u)`` is numba's
#: ``u if u < w else w``, as ``apply`` computes it (a select: in a library term it slowed the whole fast
#: loop 2×, so the library avoids ``min``/``max``). Powers with a literal exponent of 2 or 3 are products there.
OP_SOURCE = {
    1: "{u} + {w}", 2: "{u} - {w}", 3: "{u} * {w}", 4: "{u} / {w}", 5: "-{u}", 6: "power({u}, {w})",
    7: "abs({u})", 8: "(1.0 * ({u} > 0.0) - 1.0 * ({u} < 0.0))", 9: "np.tanh({u})", 10: "np.exp({u})",
    11: "np.log({u} + TINY * ({u} == 0.0))", 12: "np.sqrt({u})", 13: "np.sin({u})", 14: "np.cos({u})",
    15: "min({w}, {u})", 16: "max({w}, {u})", 17: "(0.5 + 0.5 * ({u} > 0.0) - 0.5 * ({u} < 0.0))",
    18: "{u} * {u}", 19: "1.0 / {u}",
}


@njit(cache=True, inline="always", error_model="numpy")
def power(u, w):  # type: ignore[no-untyped-def]
    """``u**w``; the library's powers are small integers, computed as products rather than by libm's pow
    (about 20 ns a call)."""
    if w == 2.0:
        return u * u
    if w == 3.0:
        return u * u * u
    return u**w


@njit(cache=True, inline="always", error_model="numpy")
def apply(c, u, w):  # type: ignore[no-untyped-def]
    """Instruction ``c`` on operands ``u`` (and ``w`` for binary ones): the one definition of every op."""
    if c == 1:
        return u + w
    if c == 2:
        return u - w
    if c == 3:
        return u * w
    if c == 4:
        return u / w
    if c == 5:
        return -u
    if c == 6:
        return power(u, w)
    if c == 7:
        return abs(u)
    if c == 8:
        return 1.0 if u > 0.0 else (-1.0 if u < 0.0 else 0.0)
    if c == 9:
        return np.tanh(u)
    if c == 10:
        return np.exp(u)
    if c == 11:
        return np.log(u) if u != 0.0 else np.log(TINY)
    if c == 12:
        return np.sqrt(u)
    if c == 13:
        return np.sin(u)
    if c == 14:
        return np.cos(u)
    if c == 15:
        return u if u < w else w
    if c == 16:
        return u if u > w else w
    if c == 17:
        return 1.0 if u > 0.0 else (0.0 if u < 0.0 else 0.5)
    if c == 18:
        return u * u
    return 1.0 / u


@njit(cache=True, inline="always", error_model="numpy")
def run_program(op, a, b, dst, start, stop, reg):  # type: ignore[no-untyped-def]
    """Run instructions ``start .. stop - 1`` on ``reg`` (in place)."""
    for k in range(start, stop):
        reg[dst[k]] = apply(op[k], reg[a[k]], reg[b[k]])


@njit(cache=True, error_model="numpy")
def evaluate_program(op, a, b, dst, registers, outputs, inputs):  # type: ignore[no-untyped-def]
    """Run a whole program on a table of inputs.

    Parameters
    ----------
    op, a, b, dst, registers, outputs : arrays
        A :class:`~nlid_core.terms.program.Program`'s fields.
    inputs : (n, n_inputs) ndarray
        One row of inputs per evaluation.

    Returns
    -------
    (n, n_outputs) ndarray
    """
    n = inputs.shape[0]
    m = outputs.size
    out = np.empty((n, m))
    reg = registers.copy()
    ni = inputs.shape[1]
    for i in range(n):
        for j in range(ni):
            reg[j] = inputs[i, j]
        run_program(op, a, b, dst, 0, op.size, reg)
        for j in range(m):
            out[i, j] = reg[outputs[j]]
    return out


@njit(cache=True, inline="always", error_model="numpy")
def _vector_op(c, u, w, out, m):  # type: ignore[no-untyped-def]
    """One instruction over the first ``m`` samples of a block (``u``, ``w``, ``out`` rows of the register
    table)."""
    # the commonest codes get a loop of their own, which the compiler vectorises; the others go through apply
    if c == 3:
        for i in range(m):
            out[i] = u[i] * w[i]
    elif c == 1:
        for i in range(m):
            out[i] = u[i] + w[i]
    elif c == 2:
        for i in range(m):
            out[i] = u[i] - w[i]
    elif c == 18:
        for i in range(m):
            out[i] = u[i] * u[i]
    elif c == 7:
        for i in range(m):
            out[i] = abs(u[i])
    elif c == 6:
        for i in range(m):
            out[i] = power(u[i], w[i])
    else:
        for i in range(m):
            out[i] = apply(c, u[i], w[i])


#: Samples per block of :func:`evaluate_regressors`: a register table of a few dozen rows of this many
#: doubles stays in the core's cache (the whole record's table, 36 rows × 6000 samples for the seed model,
#: is 1.7 MB and was written and read again for every instruction).
BLOCK = 256


@njit(cache=True, error_model="numpy")
def evaluate_regressors(terms, pidx, op, a, b, dst, registers, consts, outputs, x, v, acc, scale, theta, phi, total):  # type: ignore[no-untyped-def]
    """Equation-error regressors of several memoryless terms, instruction by instruction over blocks of
    :data:`BLOCK` samples.

    ``terms`` rows: register offset, register count, instruction start, instruction stop, output
    offset, number of linear parameters, parameter offset in ``pidx``, number of parameters. Each term's
    program has inputs ``(x, v, a, θ_term...)`` and outputs ``(F, ∂F/∂θ_lin...)``; ``pidx`` maps the
    term's parameters, then its linear parameters, to model columns; ``consts`` lists the registers that
    hold constants. The inputs are ``(x, v, acc)·scale`` (a power of two: exact). Fills ``phi`` (n, P) and
    ``total`` (n,).
    """
    n = x.size
    reg = np.empty((registers.size, BLOCK))
    for r in consts:
        reg[r, :] = registers[r]
    for t in range(terms.shape[0]):  # the parameters are the same in every block
        base = terms[t, 0]
        po = terms[t, 6]
        for k in range(terms[t, 7]):
            reg[base + 3 + k, :] = theta[pidx[po + k]]
    for lo in range(0, n, BLOCK):
        m = min(BLOCK, n - lo)
        for i in range(m):
            total[lo + i] = 0.0
        for t in range(terms.shape[0]):
            base = terms[t, 0]
            npar = terms[t, 7]
            po = terms[t, 6]
            for i in range(m):
                reg[base, i] = x[lo + i] * scale
                reg[base + 1, i] = v[lo + i] * scale
                reg[base + 2, i] = acc[lo + i] * scale
            for k in range(terms[t, 2], terms[t, 3]):
                _vector_op(op[k], reg[a[k]], reg[b[k]], reg[dst[k]], m)
            o = terms[t, 4]
            out = reg[outputs[o]]
            for i in range(m):
                total[lo + i] += out[i]
            for k in range(terms[t, 5]):
                col = pidx[po + npar + k]
                src = reg[outputs[o + 1 + k]]
                for i in range(m):
                    phi[lo + i, col] = src[i]
