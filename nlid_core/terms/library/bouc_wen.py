r"""``bouc_wen``: Bouc-Wen hysteretic force ``z`` (the hysteretic benchmark of Noël and Schoukens, 2016).

``ż = α·v − β·(γ·|v|·|z|^(ν−1)·z + δ·v·|z|^ν)``, force ``z``. Only β·γ and β·δ are identifiable
(β scales out): β is fixed at 1 by default, so γ and δ carry β·γ and β·δ (unit 1/m for ν = 1;
the units assume ν = 1). The defaults mean "no hysteresis yet" (α = γ = δ = 0): without given
start values the two-stage estimator searches ``start_grid`` (α as fractions of the linear model's
stiffness, β·γ and β·δ as multiples of 1/max|x|; see :mod:`nlid_core.estimate.hysteretic_start`).
"""

import math

from ..base import ParamSpec, StateSpec, TermDef
from ..units import Dim

_ZDOT = "alpha*v - beta*(gamma*abs(v)*abs(z)**(nu - 1)*z + delta*v*abs(z)**nu)"
_SHAPE_GRID = (-8.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 8.0)

TERM = TermDef(
    name="bouc_wen", description="Bouc-Wen hysteresis", force="z",
    params=(
        ParamSpec("alpha", Dim.of(f=1, x=-1), 0.0, math.inf, 0.0, description="initial hysteretic stiffness"),
        ParamSpec("beta", Dim(), 0.0, math.inf, 1.0, fixed=True,
                  description="loop scale (fixed at 1: it scales out, γ and δ carry β·γ and β·δ)"),
        ParamSpec("gamma", Dim.of(x=-1), -math.inf, math.inf, 0.0, description="loop shape (β·γ when β = 1)"),
        ParamSpec("delta", Dim.of(x=-1), -math.inf, math.inf, 0.0, description="loop shape (β·δ when β = 1)"),
        ParamSpec("nu", Dim(), 0.5, 10.0, 1.0, fixed=True, description="smoothness exponent"),
    ),
    states=(StateSpec("z", _ZDOT, Dim.of(f=1), description="hysteretic force"),),
    template="bouc_wen(z; {alpha}, {beta}, {gamma}, {delta}, {nu})", basis="z",
    redundancies=((("beta", "gamma", "delta"),
                   "only β·γ and β·δ are identifiable: β scales out, so β, γ and δ cannot be estimated separately;"
                   " fix one of them (e.g. --fix beta=1)"),),
    start_grid=(("alpha", (0.2, 0.4, 0.6, 0.8, 1.0)), ("gamma", _SHAPE_GRID), ("delta", _SHAPE_GRID)),
)
