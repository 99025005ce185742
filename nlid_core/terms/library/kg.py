"""``kg``: dead-zone (gap) spring ``kg·dz(x, gap)``, dz = 0 for |x| <= gap and x − sign(x)·gap beyond.

Written as ``x − max(−gap, min(gap, x))``; ``gap`` is a parameter, fixed by default.
"""

import math

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="kg", description="dead-zone (gap) spring", force="kg*(x - max(-gap, min(gap, x)))",
    params=(
        ParamSpec("kg", Dim.of(f=1, x=-1), description="stiffness beyond the gap"),
        ParamSpec("gap", Dim.of(x=1), 0.0, math.inf, 0.0, fixed=True, description="half-width of the dead zone"),
    ),
    template="{kg}·dz(x, {gap})", basis="dz(x)",
    fast_code=8,
)
