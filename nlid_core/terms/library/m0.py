"""``m0``: linear inertia (mass), ``m0·ẍ``."""

import math

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="m0", description="linear inertia (mass)", force="m0*a",
    params=(ParamSpec("m0", Dim.of(f=1, x=-1, t=2), 0.0, math.inf, 1.0, description="mass"),),
    template="{m0}", basis="ẍ", baseline=True,
)
