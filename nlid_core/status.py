"""The status codes of every simulator (the compiled kernels return them; results carry their names).

One table for the single-DOF kernel, the general layer's integrators and the rigid-body kernel, so that a code
means the same wherever it comes from. Imports nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["DIVERGED", "GIMBAL_LOCK", "NAMES", "NEWTON_FAILED", "NONPOSITIVE_MASS", "OK", "STIFF"]

#: The run completed.
OK = 0
#: A state became non-finite or left its bound.
DIVERGED = 1
#: The mass (matrix) is not positive (definite): unphysical parameters.
NONPOSITIVE_MASS = 2
#: RK4's step is beyond its stability bound (the automatic choice then takes SDIRK4).
STIFF = 3
#: SDIRK4's Newton iteration failed to take a step.
NEWTON_FAILED = 4
#: The pitch angle of a rigid body reached ±90° (the Euler angles are singular).
GIMBAL_LOCK = 5

#: Name of each code, as results report it.
NAMES: Mapping[int, str] = MappingProxyType({OK: "ok", DIVERGED: "diverged", NONPOSITIVE_MASS: "nonpositive_mass",
                                            STIFF: "stiff", NEWTON_FAILED: "newton_failed",
                                            GIMBAL_LOCK: "gimbal_lock"})
