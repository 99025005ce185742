r"""``bouc_wen``: Bouc-Wen hysteretic force ``z`` (the hysteretic benchmark of Noël and Schoukens, 2016).

``ż = α·v − β·(γ·|v|·|z|^(ν−1)·z + δ·v·|z|^ν)``, force ``z``. Only β·γ and β·δ are identifiable
(β scales out): β is fixed by default. The units of β assume ν = 1.
"""

import math

from ..base import ParamSpec, StateSpec, TermDef
from ..units import Dim

_ZDOT = "alpha*v - beta*(gamma*abs(v)*abs(z)**(nu - 1)*z + delta*v*abs(z)**nu)"

TERM = TermDef(
    name="bouc_wen", description="Bouc-Wen hysteresis", force="z",
    params=(
        ParamSpec("alpha", Dim.of(f=1, x=-1), 0.0, math.inf, 5e4, description="initial hysteretic stiffness"),
        ParamSpec("beta", Dim.of(x=-1), 0.0, math.inf, 1e3, fixed=True, description="loop scale (fixed: scales out)"),
        ParamSpec("gamma", Dim(), -math.inf, math.inf, 0.8, description="loop shape"),
        ParamSpec("delta", Dim(), -math.inf, math.inf, -1.1, description="loop shape"),
        ParamSpec("nu", Dim(), 0.5, 10.0, 1.0, fixed=True, description="smoothness exponent"),
    ),
    states=(StateSpec("z", _ZDOT, Dim.of(f=1), description="hysteretic force"),),
    template="bouc_wen(z; {alpha}, {beta}, {gamma}, {delta}, {nu})", basis="z",
)
