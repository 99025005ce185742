"""``k1``: linear stiffness, ``k1·x``."""

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="k1", description="linear stiffness", force="k1*x",
    params=(ParamSpec("k1", Dim.of(f=1, x=-1), description="linear stiffness"),),
    basis="x", baseline=True,
)
