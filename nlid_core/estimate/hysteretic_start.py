r"""Start values of hysteretic (state-carrying) terms: a grid searched by equation error, polished by output error.

Output error needs a start in the right basin, and for a term with an internal state (Bouc-Wen's
hysteretic force) the neutral defaults are no start at all: with α = 0 the state stays at zero and
the response does not depend on the loop-shape parameters. A term declares the parameters to
search in :attr:`~nlid_core.terms.base.TermDef.start_grid`; this module, called by
:func:`~nlid_core.estimate.identify` after its equation-error stage, then

1. takes the linear coefficients of that stage (the model's memoryless terms, fitted with the
   state-carrying terms at their neutral defaults, so the linear stiffness absorbs the hysteretic
   one) as the reference magnitudes;
2. evaluates every grid point :math:`g` (the Cartesian product of the declared multipliers times
   their reference magnitudes: a parameter with the unit of one of the model's linear
   coefficients takes multiples of that coefficient's value, e.g. a hysteretic stiffness as a
   fraction of the linear stiffness, the others multiples of the data's scale of their unit) by
   equation error on a subset of the data (the first ``SUBSET_SAMPLES`` samples of the first
   ``SUBSET_RECORDS`` records): the internal states are driven by the measured motion
   (:meth:`~nlid_core.models.TermModel.state_force`) and the linear coefficients re-solved, so
   each point costs one pass over the data and a small least-squares solve; its cost is
   :math:`\tfrac12\|\Phi\hat\theta_{lin}(g) + F_z(g) - f\|^2/\max|f|^2`;
3. polishes the ``KEEP`` best points by short output-error fits on the same subset and returns the one whose simulation fits
   that subset best, as the start of the full output-error fit.

Equation error with derived accelerations is biased (errors in variables), which is why it only
ranks the grid and output error decides. Models whose terms declare no grid, or whose grid
parameters are all fixed or given by the user (a value other than the term's default), are left
alone.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import NlidError
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from .options import FitOptions
from .prepare import _with_derivatives, coefficient_scales

__all__ = ["KEEP", "SUBSET_SAMPLES", "HystereticStart", "grid_parameters", "hysteretic_start"]

#: Grid points polished by output error on the subset.
KEEP = 4
#: Samples per record (from its start) and records used by the polishing fits.
SUBSET_SAMPLES = 4096
SUBSET_RECORDS = 2
#: Function evaluations of each polishing fit.
POLISH_NFEV = 25


@dataclass(frozen=True, kw_only=True)
class HystereticStart:
    """Result of :func:`hysteretic_start`.

    Attributes
    ----------
    success : bool
        False when no grid point could be polished (``parameters`` is then the given start).
    message : str
    parameters : ParameterSet
        The start for the full output-error fit.
    records : tuple of Record
        The records with derived velocity and acceleration where they were missing (the
        simulators choose their substeps from the velocity range); the derivation is not added
        to their warnings.
    grid_size : int
        Grid points evaluated by equation error.
    ranked : tuple of (dict, float)
        The polished candidates (grid values, subset output-error cost), best first.
    seconds : float
    """

    success: bool
    message: str
    parameters: ParameterSet
    records: tuple[Record, ...]
    grid_size: int
    ranked: tuple[tuple[dict[str, float], float], ...]
    seconds: float


def grid_parameters(model: TermModel, params: ParameterSet) -> dict[str, tuple[float, ...]]:
    """The model's free parameters that a term's ``start_grid`` names, with their multipliers.

    A parameter that is fixed, or whose value differs from its term's default (a start the user
    gave), is not searched: it keeps its value.

    Parameters
    ----------
    model : TermModel
    params : ParameterSet
        Values and free/fixed flags.

    Returns
    -------
    dict
        Model parameter name -> multipliers (empty when nothing is to be searched).
    """
    out: dict[str, tuple[float, ...]] = {}
    for spec, first in zip(model.specs, model.coefficient_index, strict=True):
        if not spec.start_grid:
            continue
        names = dict(zip(spec.param_names, model.param_names[int(first): int(first) + spec.n_params], strict=True))
        defaults = {p.name: p.default for p in spec.params}
        for local, mults in spec.start_grid:
            name = names[local]
            if params[name].vary and params[name].value == defaults[local]:
                out[name] = tuple(float(m) for m in mults)
    return out


def _references(model: TermModel, params: ParameterSet, recs: Sequence[Record], names: Sequence[str]) -> dict[str, float]:
    """Reference magnitude of each grid parameter (see the module notes)."""
    scales = coefficient_scales(model, recs)
    specs = dict(zip(model.param_names, model.param_specs, strict=True))
    linear = [n for n, lin in zip(model.param_names, model.linear_mask, strict=True) if lin and params[n].vary]
    scale_of: dict[str, str] = {}
    for spec, first in zip(model.specs, model.coefficient_index, strict=True):
        local = dict(zip(spec.param_names, model.param_names[int(first): int(first) + spec.n_params], strict=True))
        for group, _ in spec.redundancies:
            for g in group[1:]:
                scale_of[local[g]] = local[group[0]]
    out = {}
    for n in names:
        same = [m for m in linear if specs[m].unit is not None and specs[m].unit == specs[n].unit]
        ref = sum(abs(params[m].value) for m in same)
        if not ref > 0:
            ref = scales[n]
            p0 = scale_of.get(n)
            if p0 is not None and params[p0].value != 0 and math.isfinite(params[p0].value):
                ref /= abs(params[p0].value)
        out[n] = float(ref)
    return out


def _subset(recs: Sequence[Record]) -> list[Record]:
    return [r.slice(0, min(r.n, SUBSET_SAMPLES)) for r in recs[:SUBSET_RECORDS]]


def hysteretic_start(recs: Sequence[Record], model: TermModel, start: ParameterSet, opts: FitOptions) -> HystereticStart:
    """Start values of the state-carrying terms' grid parameters (see the module notes).

    Parameters
    ----------
    recs : sequence of Record
        The records of the fit.
    model : TermModel
    start : ParameterSet
        The equation-error stage's estimate (linear coefficients fitted, grid parameters at
        their neutral defaults).
    opts : FitOptions
        The fit's options (output channels, initial states, input hold).

    Returns
    -------
    HystereticStart
        ``parameters is start`` when the model has nothing to search.
    """
    from . import equation_error
    from .oe_fit import output_error

    t0 = time.perf_counter()
    grid = grid_parameters(model, start)
    # derived channels keep the record's own warnings: they only set the simulators' substeps and the grid's
    # equation error (the fit's outputs stay the measured channels)
    recs_d = tuple(_with_derivatives(r, opts.differentiator).replace(warnings=r.warnings) for r in recs)
    if not grid:
        return HystereticStart(success=True, message="no grid parameters", parameters=start, records=tuple(recs),
                               grid_size=0, ranked=(), seconds=time.perf_counter() - t0)
    names = list(grid)
    refs = _references(model, start, recs_d, names)
    ee_opts = dataclasses.replace(opts, method="equation-error")
    sub = _subset(recs_d)
    scored: list[tuple[float, dict[str, float], ParameterSet]] = []
    for combo in itertools.product(*(grid[n] for n in names)):
        values = {n: m * refs[n] for n, m in zip(names, combo, strict=True)}
        trial = start.with_values(values, clip=True)
        try:
            with np.errstate(all="ignore"):
                ee = equation_error(sub, model, trial, ee_opts, diagnostics=False)
        except (NlidError, ValueError, ArithmeticError):
            continue
        if ee.success and math.isfinite(ee.cost):
            scored.append((float(ee.cost), values, ee.parameters))
    grid_size = int(np.prod([len(grid[n]) for n in names]))
    if not scored:
        return HystereticStart(success=False, message="no grid point could be evaluated by equation error",
                               parameters=start, records=recs_d, grid_size=grid_size, ranked=(),
                               seconds=time.perf_counter() - t0)
    scored.sort(key=lambda s: s[0])
    polish_opts = dataclasses.replace(opts, method="output-error", tol=max(opts.tol, 1e-6), max_nfev=POLISH_NFEV)
    ranked: list[tuple[float, dict[str, float], ParameterSet]] = []
    for _, values, cand in scored[:KEEP]:
        try:
            with np.errstate(all="ignore"):
                fit = output_error(sub, model, cand, polish_opts, diagnostics=False)
        except (NlidError, ValueError, ArithmeticError):
            continue
        if fit.success and math.isfinite(fit.cost):
            ranked.append((float(fit.cost), values, fit.parameters))
    ranked.sort(key=lambda s: s[0])
    elapsed = time.perf_counter() - t0
    if not ranked:
        best = scored[0]
        return HystereticStart(success=False, message="no grid point could be polished by output error; the best"
                               " equation-error grid point is the start", parameters=best[2], records=recs_d,
                               grid_size=grid_size, ranked=(), seconds=elapsed)
    message = (f"{', '.join(names)} searched over {grid_size} grid points (equation error) and the best {len(ranked)}"
               f" polished by output error on {sum(r.n for r in sub)} samples")
    return HystereticStart(success=True, message=message, parameters=ranked[0][2], records=recs_d,
                           grid_size=grid_size, ranked=tuple((v, c) for c, v, _ in ranked), seconds=elapsed)
