"""``f0``: constant force offset (sensor bias)."""

from ..base import ParamSpec, TermDef
from ..units import Dim

TERM = TermDef(
    name="f0", description="constant force offset", force="f0",
    params=(ParamSpec("f0", Dim.of(f=1), description="force offset"),),
    template="{f0}", basis="1", proposable=True,
)
