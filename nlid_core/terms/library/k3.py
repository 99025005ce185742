"""``k3``: cubic (Duffing) stiffness, ``k3·x³``; negative for a softening spring."""

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="k3", description="cubic (Duffing) stiffness", force="k3*x**3",
    params=(ParamSpec("k3", Dim.of(f=1, x=-3), description="cubic stiffness"),),
    basis="x³", proposable=True, evidence=True,
)
