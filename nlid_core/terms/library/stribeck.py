r"""``stribeck``: static Stribeck friction, smoothed at zero velocity.

``F = tanh(v/v_eps)·(Fc + (Fs − Fc)·exp(−(v/vs)²))``: the steady friction curve of the ``lugre``
term (without its viscous part, which ``c1`` supplies) as a memoryless function of the velocity,
for comparing a static model with the dynamic one. ``v_eps`` is a setting, fixed by default; the
curve is that of Coulomb friction with stiction Fs at low speed, dropping to Fc over a few ``vs``.
"""

import math

from ..base import ParamSpec, TermDef
from ..units import Dim
from .lugre import ORDER

TERM = TermDef(
    name="stribeck", description="static Stribeck friction",
    force="tanh(v/v_eps)*(Fc + (Fs - Fc)*exp(-(v/vs)**2))",
    params=(
        ParamSpec("Fc", Dim.of(f=1), 1e-12, math.inf, 1.0, description="Coulomb friction force"),
        ParamSpec("Fs", Dim.of(f=1), 1e-12, math.inf, 1.5, description="static (breakaway) friction force"),
        ParamSpec("vs", Dim.of(x=1, t=-1), 1e-12, math.inf, 1e-3, description="Stribeck velocity"),
        ParamSpec("v_eps", Dim.of(x=1, t=-1), 1e-12, math.inf, 1e-3, fixed=True,
                  description="velocity scale of the smoothing"),
    ),
    template="stribeck({Fc}, {Fs}, {vs}; {v_eps})", basis="tanh(ẋ/v_eps)·g(ẋ)",
    orders=(("Fc", "Fs", ORDER),),
)
