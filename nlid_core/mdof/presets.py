r"""Preset multi-DOF models: an N-DOF lumped chain and a six-DOF rigid platform on nonlinear mounts.

**Chain** (:func:`chain`): masses ``m_x1 … m_xN`` in a line, DOF ``x_i`` the displacement of mass i (m);
connection ``g1`` from ``x1`` to ground, ``s<i><i+1>`` between neighbours (acting on ``x_{i+1} − x_i``) and, with
``fixed_end``, ``g<N>`` from the last mass to ground; each connection carries the same terms (default
``k1 + k3 + c1 + c2``: force ``k1·x + k3·x³ + c1·v + c2·|v|·v`` on the relative motion). The input is the force on
one mass (``f_x1`` by default). The default values are those of a bench rig (about 1–2 kg, 1–2 kN/m, a few Hz to
a few tens of Hz) and serve as the true values of simulated experiments.

**Platform** (:func:`platform`): the rigid body of :mod:`nlid_core.mdof.spec` on four mounts at the body points
``(±0.5, ±0.4, −0.1)`` m (a 1 m × 0.8 m table, mounts 0.1 m below O), with ``k1 + k3 + c1 + c2`` vertically and
``k1 + c1`` horizontally: 10 inertial and 32 mount parameters. Inputs Fx, Fy, Fz (world force at O), Mx, My, Mz
(world moment); outputs x, y, z (m), phi, theta, psi (rad). ``identical=True`` shares every mount parameter
across the four mounts (``k1_z`` for ``k1_m*_z``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import ModelSpecError
from .modelfile import resolve_terms
from .spec import AXES, BODY_DOFS, BODY_INPUTS, Connection, Dof, MdofModel, Mount, Output

__all__ = ["CHAIN_VALUES", "PLATFORM_MOUNTS", "PLATFORM_VALUES", "PRESETS", "chain", "platform"]

#: Default (true) values of the chain's element parameters, per connection kind, SI.
CHAIN_VALUES: Mapping[str, float] = {"k1": 1500.0, "k3": 2.0e7, "c1": 1.5, "c2": 3.0, "fc": 0.5}
#: Default (true) masses of the chain, kg (repeated when the chain is longer).
CHAIN_MASSES: tuple[float, ...] = (1.2, 0.8, 1.0, 1.5, 0.9, 1.1)
#: Body-frame mount points of the platform, m.
PLATFORM_MOUNTS: tuple[tuple[float, float, float], ...] = ((0.5, 0.4, -0.1), (-0.5, 0.4, -0.1), (-0.5, -0.4, -0.1),
                                                           (0.5, -0.4, -0.1))
#: Default (true) values of the platform: body, then mount parameters per axis kind, SI.
PLATFORM_VALUES: Mapping[str, float] = {
    "m": 120.0, "cx": 0.02, "cy": -0.015, "cz": 0.12, "Jxx": 8.0, "Jyy": 11.0, "Jzz": 15.0, "Jxy": 0.3, "Jxz": -0.4,
    "Jyz": 0.2,
    "k1_z": 1.5e5, "k3_z": 2.0e9, "c1_z": 120.0, "c2_z": 100.0, "k1_x": 8.0e4, "c1_x": 80.0, "k1_y": 8.0e4, "c1_y": 80.0,
}


def _mount_terms() -> dict[str, tuple[str, ...]]:
    """Default terms per axis: the full connection law vertically, a linear spring-damper horizontally."""
    from ..terms.registry import connection_terms, linear_connection_terms

    return {"x": linear_connection_terms(), "y": linear_connection_terms(), "z": connection_terms()}

_MOUNT_SCALE = (1.0, 0.9, 1.1, 0.95)  # mounts are not quite equal: the true values differ by a few per cent


def chain(n: int = 3, *, terms: Sequence[str] | None = None, fixed_end: bool = False,
          driven: Sequence[int] = (1,), values: Mapping[str, float] | None = None, name: str | None = None) -> MdofModel:
    """An ``n``-mass chain (see the module docstring).

    Parameters
    ----------
    n : int
        Number of masses (1 … 12).
    terms : sequence of str or None
        Terms of every connection (library names or ``NAME = EXPR``; default the registry's connection law,
        ``c1 + c2 + k1 + k3``).
    fixed_end : bool
        Also connect the last mass to ground.
    driven : sequence of int
        Masses (1-based) with a force input.
    values : mapping or None
        Parameter values instead of the defaults.
    name : str or None

    Raises
    ------
    ModelSpecError
        ``n`` out of range, a driven mass that does not exist, unknown terms.
    """
    if not 1 <= int(n) <= 12:
        raise ModelSpecError(f"`n` must be 1 … 12 masses, got {n}")
    n = int(n)
    if not driven or any(not 1 <= int(d) <= n for d in driven):
        raise ModelSpecError(f"`driven` must name masses 1 … {n}, got {list(driven)}")
    from ..terms.registry import connection_terms

    defs = resolve_terms(list(terms if terms is not None else connection_terms()), "chain terms")
    dofs = tuple(Dof(f"x{i}") for i in range(1, n + 1))
    conns = [Connection("g1", "x1", None, defs)]
    conns += [Connection(f"s{i}{i + 1}", f"x{i + 1}", f"x{i}", defs) for i in range(1, n)]
    if fixed_end and n > 1:
        conns.append(Connection(f"g{n}", f"x{n}", None, defs))
    vals: dict[str, dict[str, float]] = {}
    for i in range(1, n + 1):
        vals[f"m_x{i}"] = {"value": CHAIN_MASSES[(i - 1) % len(CHAIN_MASSES)]}
    for k, c in enumerate(conns):
        for t in defs:
            for p in t.params:
                if p.name in CHAIN_VALUES:
                    vals[f"{p.name}_{c.name}"] = {"value": CHAIN_VALUES[p.name] * (1.0 + 0.1 * (k % 3))}
    for key, v in (values or {}).items():
        vals[key] = {"value": float(v)}
    inputs = tuple((f"f_x{int(d)}", f"f{int(d)}") for d in sorted(set(driven)))
    outputs = tuple(Output(f"x{i}", f"x{i}") for i in range(1, n + 1))
    return MdofModel(name=name or f"{n}-mass chain", dofs=dofs, connections=tuple(conns), inputs=inputs, outputs=outputs,
                     values=vals)


def platform(*, mounts: Sequence[tuple[float, float, float]] = PLATFORM_MOUNTS,
             terms: Mapping[str, Sequence[str]] | None = None, identical: bool = False,
             values: Mapping[str, float] | None = None, name: str | None = None) -> MdofModel:
    """The six-DOF platform on mounts (see the module docstring).

    Parameters
    ----------
    mounts : sequence of (ax, ay, az)
        Body-frame mount points, m.
    terms : mapping of axis to term names, or None
        Terms per world axis (default: ``k1 + k3 + c1 + c2`` along z, ``k1 + c1`` along x and y).
    identical : bool
        Share every mount parameter across the mounts.
    values : mapping or None
        Parameter values (model names) instead of the defaults.
    name : str or None

    Raises
    ------
    ModelSpecError
        No mount, unknown terms or axes.
    """
    if not mounts:
        raise ModelSpecError("`mounts` must list at least one mount point")
    per_axis = {a: tuple(t) for a, t in (terms or _mount_terms()).items()}
    for a in per_axis:
        if a not in AXES:
            raise ModelSpecError(f"`terms`: axis `{a}` is not one of x, y, z")
    defs = {a: resolve_terms(list(t), f"platform terms, axis {a}") for a, t in per_axis.items() if t}
    ms = tuple(Mount(f"m{j + 1}", (float(p[0]), float(p[1]), float(p[2])), tuple((a, defs[a]) for a in AXES if a in defs))
               for j, p in enumerate(mounts))
    dofs = tuple(Dof(n, "m" if k < 3 else "rad") for k, n in enumerate(BODY_DOFS))
    vals: dict[str, dict[str, float]] = {p: {"value": PLATFORM_VALUES[p]} for p in ("m", "cx", "cy", "cz", "Jxx", "Jyy",
                                                                                     "Jzz", "Jxy", "Jxz", "Jyz")}
    shares: list[tuple[str, tuple[str, ...]]] = []
    for a, ts in defs.items():
        for t in ts:
            for p in t.params:
                key = f"{p.name}_{a}"
                base = PLATFORM_VALUES.get(key, p.default)
                if identical:
                    shares.append((key, tuple(f"{p.name}_{m.name}_{a}" for m in ms)))
                    vals[key] = {"value": base}
                else:
                    for j, m in enumerate(ms):
                        vals[f"{p.name}_{m.name}_{a}"] = {"value": base * _MOUNT_SCALE[j % len(_MOUNT_SCALE)]}
    for key, v in (values or {}).items():
        vals[key] = {"value": float(v)}
    inputs = tuple((n, n) for n in BODY_INPUTS)
    outputs = tuple(Output(n, n) for n in BODY_DOFS)
    return MdofModel(name=name or "six-DOF platform", dofs=dofs, body=True, mounts=ms, inputs=inputs, outputs=outputs,
                     values=vals, shares=tuple(shares))


#: Preset builders by name (dashboard and CLI choices).
PRESETS = {"chain": chain, "platform": platform}
