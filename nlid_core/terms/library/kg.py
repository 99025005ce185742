"""``kg``: dead-zone (gap) spring ``kg·dz(x, gap)``, dz = 0 for |x| <= gap and x − sign(x)·gap beyond.

Written without ``min``/``max`` as ``(x − gap·sign(x))·(1 + sign(|x| − gap))/2`` (the same values; the
selects of ``min``/``max`` slow the compiled single-DOF loop down); ``gap`` is a parameter, fixed by default.
"""

import math

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="kg", description="dead-zone (gap) spring", force="kg*(x - gap*sign(x))*(1 + sign(abs(x) - gap))/2",
    params=(
        ParamSpec("kg", Dim.of(f=1, x=-1), description="stiffness beyond the gap"),
        ParamSpec("gap", Dim.of(x=1), 0.0, math.inf, 0.0, fixed=True, description="half-width of the dead zone"),
    ),
    template="{kg}·dz(x, {gap})", basis="dz(x)",
)
