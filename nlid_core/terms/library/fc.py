"""``fc``: smoothed Coulomb friction, ``fc·tanh(ẋ/v_eps)``; ``v_eps`` is a parameter, fixed by default."""

import math

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="fc", description="smoothed Coulomb friction", force="fc*tanh(v/v_eps)",
    params=(
        ParamSpec("fc", Dim.of(f=1), 0.0, math.inf, description="Coulomb friction force"),
        ParamSpec("v_eps", Dim.of(x=1, t=-1), 1e-12, math.inf, 1e-3, fixed=True,
                  description="velocity scale of the smoothing"),
    ),
    template="{fc}·tanh(ẋ/{v_eps})", basis="tanh(ẋ/v_eps)", proposable=True,
)
