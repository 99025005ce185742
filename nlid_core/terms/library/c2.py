"""``c2``: quadratic damping, ``c2·|ẋ|·ẋ`` (never ``c2·ẋ²``, which injects energy when ẋ < 0)."""

import math

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="c2", description="quadratic damping", force="c2*abs(v)*v",
    params=(ParamSpec("c2", Dim.of(f=1, x=-2, t=2), 0.0, math.inf, description="quadratic damping"),),
    basis="|ẋ|·ẋ", proposable=True, evidence=True,
)
