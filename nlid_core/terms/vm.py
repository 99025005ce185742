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


@njit(cache=True, inline="always", error_model="numpy")
def run_program(op, a, b, dst, start, stop, reg):  # type: ignore[no-untyped-def]
    """Run instructions ``start .. stop - 1`` on ``reg`` (in place)."""
    for k in range(start, stop):
        c = op[k]
        u = reg[a[k]]
        if c == 1:
            r = u + reg[b[k]]
        elif c == 2:
            r = u - reg[b[k]]
        elif c == 3:
            r = u * reg[b[k]]
        elif c == 4:
            r = u / reg[b[k]]
        elif c == 5:
            r = -u
        elif c == 6:
            r = u ** reg[b[k]]
        elif c == 7:
            r = abs(u)
        elif c == 8:
            r = 1.0 if u > 0.0 else (-1.0 if u < 0.0 else 0.0)
        elif c == 9:
            r = np.tanh(u)
        elif c == 10:
            r = np.exp(u)
        elif c == 11:
            r = np.log(u) if u != 0.0 else np.log(TINY)
        elif c == 12:
            r = np.sqrt(u)
        elif c == 13:
            r = np.sin(u)
        elif c == 14:
            r = np.cos(u)
        elif c == 15:
            w = reg[b[k]]
            r = u if u < w else w
        elif c == 16:
            w = reg[b[k]]
            r = u if u > w else w
        elif c == 17:
            r = 1.0 if u > 0.0 else (0.0 if u < 0.0 else 0.5)
        elif c == 18:
            r = u * u
        else:  # 19
            r = 1.0 / u
        reg[dst[k]] = r


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


@njit(cache=True, error_model="numpy")
def _vector_op(c, u, w, out):  # type: ignore[no-untyped-def]
    """One instruction over all samples (``u``, ``w``, ``out`` rows of the register table)."""
    n = out.size
    if c == 1:
        for i in range(n):
            out[i] = u[i] + w[i]
    elif c == 2:
        for i in range(n):
            out[i] = u[i] - w[i]
    elif c == 3:
        for i in range(n):
            out[i] = u[i] * w[i]
    elif c == 4:
        for i in range(n):
            out[i] = u[i] / w[i]
    elif c == 18:
        for i in range(n):
            out[i] = u[i] * u[i]
    else:
        for i in range(n):
            z = u[i]
            if c == 5:
                r = -z
            elif c == 6:
                r = z ** w[i]
            elif c == 7:
                r = abs(z)
            elif c == 8:
                r = 1.0 if z > 0.0 else (-1.0 if z < 0.0 else 0.0)
            elif c == 9:
                r = np.tanh(z)
            elif c == 10:
                r = np.exp(z)
            elif c == 11:
                r = np.log(z) if z != 0.0 else np.log(TINY)
            elif c == 12:
                r = np.sqrt(z)
            elif c == 13:
                r = np.sin(z)
            elif c == 14:
                r = np.cos(z)
            elif c == 15:
                r = z if z < w[i] else w[i]
            elif c == 16:
                r = z if z > w[i] else w[i]
            elif c == 17:
                r = 1.0 if z > 0.0 else (0.0 if z < 0.0 else 0.5)
            else:
                r = 1.0 / z
            out[i] = r


@njit(cache=True, error_model="numpy")
def evaluate_regressors(terms, pidx, op, a, b, dst, registers, outputs, x, v, acc, theta, phi, total):  # type: ignore[no-untyped-def]
    """Equation-error regressors of several memoryless terms, instruction by instruction over all samples.

    ``terms`` rows: register offset, register count, instruction start, instruction stop, output
    offset, number of linear parameters, parameter offset in ``pidx``, number of parameters. Each term's
    program has inputs ``(x, v, a, θ_term...)`` and outputs ``(F, ∂F/∂θ_lin...)``; ``pidx`` maps the
    term's parameters, then its linear parameters, to model columns. Fills ``phi`` (n, P) and
    ``total`` (n,).
    """
    n = x.size
    reg = np.empty((registers.size, n))
    for r in range(registers.size):
        reg[r, :] = registers[r]
    for i in range(n):
        total[i] = 0.0
    for t in range(terms.shape[0]):
        base = terms[t, 0]
        npar = terms[t, 7]
        po = terms[t, 6]
        reg[base, :] = x
        reg[base + 1, :] = v
        reg[base + 2, :] = acc
        for k in range(npar):
            reg[base + 3 + k, :] = theta[pidx[po + k]]
        for k in range(terms[t, 2], terms[t, 3]):
            _vector_op(op[k], reg[a[k]], reg[b[k]], reg[dst[k]])
        o = terms[t, 4]
        out = reg[outputs[o]]
        for i in range(n):
            total[i] += out[i]
        for k in range(terms[t, 5]):
            col = pidx[po + npar + k]
            src = reg[outputs[o + 1 + k]]
            for i in range(n):
                phi[i, col] = src[i]
