r"""``lugre``: LuGre dynamic friction with bristle deflection ``z`` (seed 004).

``ż = v − σ0·|v|·z/g(v)``, ``g(v) = Fc + (Fs − Fc)·exp(−(v/vs)²)``, force ``σ0·z + σ1·ż + σ2·v``.
In steady sliding ``z = g(v)·sign(v)/σ0``; from rest ``z = 0``. The z equation is stiff for
σ0 ~ 1e5 – 1e7 N/m: the simulators switch to the implicit integrator.
"""

import math

from ..base import ParamSpec, StateSpec, TermDef
from ..units import Dim

#: The physical order of the friction levels, said by a fit's verdict when an estimate breaks it.
ORDER = ("the breakaway force Fs is below the Coulomb force Fc: friction that grows away from rest is not"
         " Stribeck friction (the fit has used the curve for something else)")

_G = "(Fc + (Fs - Fc)*exp(-(v/vs)**2))"
_ZDOT = f"(v - sigma0*abs(v)*z/{_G})"

TERM = TermDef(
    name="lugre", description="LuGre dynamic friction", force=f"sigma0*z + sigma1*{_ZDOT} + sigma2*v",
    params=(
        ParamSpec("sigma0", Dim.of(f=1, x=-1), 0.0, math.inf, 1e5, description="bristle stiffness"),
        ParamSpec("sigma1", Dim.of(f=1, x=-1, t=1), 0.0, math.inf, 300.0, description="bristle damping"),
        ParamSpec("sigma2", Dim.of(f=1, x=-1, t=1), 0.0, math.inf, 0.0, description="viscous friction"),
        ParamSpec("Fc", Dim.of(f=1), 1e-12, math.inf, 1.0, description="Coulomb friction force"),
        ParamSpec("Fs", Dim.of(f=1), 1e-12, math.inf, 1.5, description="static (breakaway) friction force"),
        ParamSpec("vs", Dim.of(x=1, t=-1), 1e-12, math.inf, 1e-3, description="Stribeck velocity"),
    ),
    states=(StateSpec("z", _ZDOT, Dim.of(x=1), steady=f"sign(v)*{_G}/sigma0", description="bristle deflection"),),
    template="lugre(z; {sigma0}, {sigma1}, {sigma2}, {Fc}, {Fs}, {vs})", basis="σ0·z + σ1·ż + σ2·ẋ",
    orders=(("Fc", "Fs", ORDER),),
)
