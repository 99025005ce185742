"""``k2``: even quadratic stiffness, ``k2·x²`` (an asymmetric spring)."""

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="k2", description="even quadratic stiffness", force="k2*x**2",
    params=(ParamSpec("k2", Dim.of(f=1, x=-2), description="quadratic stiffness"),),
    basis="x²", proposable=True, evidence=True,
)
