"""``m1``: configuration-dependent inertia, ``m1·x²·ẍ``."""

import math

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="m1", description="configuration-dependent inertia", force="m1*x**2*a",
    params=(ParamSpec("m1", Dim.of(f=1, x=-3, t=2), 0.0, math.inf, description="inertia growth with x²"),),
    template="{m1}·x²", basis="x²·ẍ", proposable=True,
)
