"""``c1``: viscous damping, ``c1·ẋ``."""

import math

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="c1", description="viscous damping", force="c1*v",
    params=(ParamSpec("c1", Dim.of(f=1, x=-1, t=1), 0.0, math.inf, description="viscous damping"),),
    basis="ẋ", baseline=True,
)
