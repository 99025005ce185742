r"""Model files: a multi-DOF model as TOML text that an engineer writes and versions with the data.

A lumped model::

    name = "two-mass rig"

    [[dof]]
    name = "x1"              # unit "m" (default) or "rad"; gravity (m/s², along the DOF) default 0

    [[dof]]
    name = "x2"

    [[connection]]
    name = "s1"
    between = ["x1", "ground"]
    terms = ["k1", "k3", "c1"]

    [[connection]]
    name = "s12"
    between = ["x2", "x1"]
    terms = ["k1", "c1", "kq = kq*x*abs(x)"]    # library names, or NAME = EXPR typed terms

    [inputs]                  # model input = file column; inputs of lumped DOFs are f_<dof>
    f_x1 = "F1"

    [outputs]                 # DOF = file column, or a table with the noise standard deviation
    x1 = "X1"
    x2 = { column = "X2", noise = 1e-5 }

    [parameters]              # start values (or true values for a simulation), bounds, fixed
    m_x1 = 2.0
    k1_s1 = { value = 1000.0, lower = 0.0 }
    c1_s1 = { value = 2.0, fixed = true }

    [share]                   # one parameter standing for several
    c1 = ["c1_s1", "c1_s12"]

A rigid body on mounts replaces ``[[dof]]`` and ``[[connection]]`` by ``[body]`` (DOFs x, y, z, phi, theta, psi;
optional ``gravity``, default 9.80665 m/s² along −z) and ``[[mount]]`` tables with ``name``, ``at = [ax, ay, az]``
(body frame, m) and the terms per world axis (``x = ["k1", "c1"]``, ``z = ["k1", "k3", "c1", "c2"]``; an axis left
out has no terms; all three default to ``k1, k3, c1, c2`` when none is given); its inputs are ``Fx, Fy, Fz, Mx, My,
Mz``. Share patterns may use wildcards: ``k1_z = "k1_*_z"``.

Every error names the table and key it is about. :func:`dump_model` writes a model back as such a file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelSpecError
from ..terms.base import TermDef
from ..tomlfile import read_toml
from .spec import AXES, BODY_DOFS, G0, Connection, Dof, MdofModel, Mount, Output, match_names

__all__ = ["MAX_MODEL_FILE_BYTES", "default_mount_terms", "dump_model", "load_model", "parse_model", "resolve_terms"]

def default_mount_terms() -> tuple[str, ...]:
    """Terms of a mount axis when the file names none (the registry's connection law: c1, c2, k1, k3)."""
    from ..terms.registry import connection_terms

    return connection_terms()
#: Largest model file read (bytes).
MAX_MODEL_FILE_BYTES = 200_000
_TOP_KEYS = {"name", "dof", "connection", "body", "mount", "inputs", "outputs", "parameters", "share"}


def resolve_terms(entries: Any, where: str) -> tuple[TermDef, ...]:
    """Term definitions from a list of library names and ``NAME = EXPR`` typed terms.

    Raises
    ------
    ModelSpecError
        Not a list of strings, an unknown term (naming ``where``), or a bad typed term.
    """
    from ..terms.custom import custom_term
    from ..terms.registry import REGISTRY, get_term

    if isinstance(entries, str) or not isinstance(entries, Sequence):
        raise ModelSpecError(f"{where}: terms must be a list of strings, got {entries!r}")
    out = []
    for e in entries:
        if not isinstance(e, str):
            raise ModelSpecError(f"{where}: term {e!r} must be a string")
        if "=" in e:
            name, _, expr = e.partition("=")
            try:
                out.append(custom_term(name.strip(), expr.strip()))
            except ModelSpecError as exc:
                raise ModelSpecError(f"{where}: {exc}") from None
        elif e.strip() in REGISTRY:
            out.append(get_term(e.strip()))
        else:
            raise ModelSpecError(f"{where}: `{e}` is not a library term (library: {', '.join(REGISTRY)}); "
                                 "type a term as NAME = EXPR")
    return tuple(out)


def _table(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ModelSpecError(f"[{key}]{where} must be a table")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise ModelSpecError(f"{where} must be a finite number, got {value!r}")
    return float(value)


def _list_of_tables(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise ModelSpecError(f"[[{key}]] must be tables (write [[{key}]] once per entry)")
    return value


def _unknown_keys(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise ModelSpecError(f"{where}: unknown key(s) {', '.join(extra)} (allowed: {', '.join(sorted(allowed))})")


def _dofs(data: Mapping[str, Any]) -> tuple[Dof, ...]:
    out = []
    for k, d in enumerate(_list_of_tables(data, "dof")):
        where = f"[[dof]] #{k + 1}"
        _unknown_keys(d, {"name", "unit", "gravity"}, where)
        if "name" not in d:
            raise ModelSpecError(f"{where} needs a `name`")
        out.append(Dof(name=str(d["name"]), unit=str(d.get("unit", "m")),
                       gravity=_number(d.get("gravity", 0.0), f"{where} `gravity`")))
    return tuple(out)


def _connections(data: Mapping[str, Any]) -> tuple[Connection, ...]:
    out = []
    for k, c in enumerate(_list_of_tables(data, "connection")):
        where = f"[[connection]] #{k + 1}"
        _unknown_keys(c, {"name", "between", "terms"}, where)
        if "name" not in c or "between" not in c or "terms" not in c:
            raise ModelSpecError(f"{where} needs `name`, `between` and `terms`")
        between = c["between"]
        if not isinstance(between, list) or len(between) != 2 or not all(isinstance(b, str) for b in between):
            raise ModelSpecError(f"{where} `between` must be two DOF names (or a DOF and \"ground\")")
        a, b = between
        if a == "ground":
            a, b = b, a
        out.append(Connection(name=str(c["name"]), a=a, b=None if b == "ground" else b,
                              terms=resolve_terms(c["terms"], f"{where} `{c['name']}`")))
    return tuple(out)


def _mounts(data: Mapping[str, Any]) -> tuple[Mount, ...]:
    out = []
    for k, m in enumerate(_list_of_tables(data, "mount")):
        where = f"[[mount]] #{k + 1}"
        _unknown_keys(m, {"name", "at", *AXES}, where)
        if "name" not in m or "at" not in m:
            raise ModelSpecError(f"{where} needs `name` and `at`")
        at = m["at"]
        if not isinstance(at, list) or len(at) != 3:
            raise ModelSpecError(f"{where} `at` must be [ax, ay, az] (body frame, m)")
        point = tuple(_number(v, f"{where} `at`") for v in at)
        given = [a for a in AXES if a in m]
        terms = tuple((a, resolve_terms(m[a], f"{where} `{m['name']}` axis {a}")) for a in given) if given else tuple(
            (a, resolve_terms(list(default_mount_terms()), where)) for a in AXES)
        out.append(Mount(name=str(m["name"]), at=(point[0], point[1], point[2]),
                         terms=tuple((a, t) for a, t in terms if t)))
    return tuple(out)


def _outputs(data: Mapping[str, Any]) -> tuple[Output, ...]:
    out = []
    for dof, spec in _table(data, "outputs", "").items():
        if isinstance(spec, str):
            out.append(Output(dof=dof, column=spec))
        elif isinstance(spec, Mapping):
            _unknown_keys(spec, {"column", "noise"}, f"[outputs] `{dof}`")
            noise = spec.get("noise")
            out.append(Output(dof=dof, column=str(spec.get("column", dof)),
                              noise=None if noise is None else _number(noise, f"[outputs] `{dof}` noise")))
        else:
            raise ModelSpecError(f"[outputs] `{dof}` must be a column name or {{ column = ..., noise = ... }}")
    return tuple(out)


def _values(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, spec in _table(data, "parameters", "").items():
        where = f"[parameters] `{name}`"
        if isinstance(spec, Mapping):
            _unknown_keys(spec, {"value", "lower", "upper", "fixed"}, where)
            entry: dict[str, Any] = {}
            for key in ("value", "lower", "upper"):
                if key in spec:
                    v = spec[key]
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(float(v)):
                        raise ModelSpecError(f"{where} `{key}` must be a number")
                    entry[key] = float(v)
            if "fixed" in spec:
                if not isinstance(spec["fixed"], bool):
                    raise ModelSpecError(f"{where} `fixed` must be true or false")
                entry["fixed"] = spec["fixed"]
            out[name] = entry
        else:
            out[name] = {"value": _number(spec, where)}
    return out


def _check_typed(data: Mapping[str, Any], source: str) -> None:
    """Refuse, before compiling any, more different typed terms than a model may have (each costs a compilation)."""
    from .spec import MAX_TYPED_TERMS

    lists = [c.get("terms", []) for c in data.get("connection", []) if isinstance(c, Mapping)]
    lists += [m.get(a, []) for m in data.get("mount", []) if isinstance(m, Mapping) for a in AXES]
    typed = {e.replace(" ", "") for lst in lists if isinstance(lst, list) for e in lst if isinstance(e, str) and "=" in e}
    if len(typed) > MAX_TYPED_TERMS:
        raise ModelSpecError(f"{source} types {len(typed)} different terms; at most {MAX_TYPED_TERMS}")


def parse_model(text: str, *, source: str = "model file") -> MdofModel:
    """A model from TOML text (see the module docstring).

    Raises
    ------
    ModelSpecError
        Not TOML, too long, or a model that does not hold together; the message names the table and key.
    """
    if len(text.encode("utf-8", "replace")) > MAX_MODEL_FILE_BYTES:
        raise ModelSpecError(f"{source} is larger than {MAX_MODEL_FILE_BYTES // 1000} kB; a model file is a few kB")
    data = read_toml(text, source)
    _unknown_keys(data, _TOP_KEYS, source)
    _check_typed(data, source)
    body = "body" in data
    if body:
        b = _table(data, "body", "")
        _unknown_keys(b, {"gravity"}, "[body]")
        if "dof" in data or "connection" in data:
            raise ModelSpecError(f"{source}: a [body] model has mounts, not [[dof]] or [[connection]] tables")
        dofs = tuple(Dof(name=n, unit="m" if k < 3 else "rad") for k, n in enumerate(BODY_DOFS))
        gravity = _number(b.get("gravity", G0), "[body] `gravity`")
    else:
        dofs = _dofs(data)
        gravity = G0
        if not dofs:
            raise ModelSpecError(f"{source}: give the DOFs as [[dof]] tables, or a [body] with [[mount]] tables")
    inputs = []
    for name, column in _table(data, "inputs", "").items():
        if not isinstance(column, str):
            raise ModelSpecError(f"[inputs] `{name}` must be a file column name")
        inputs.append((name, column))
    shares = []
    raw_shares = _table(data, "share", "")
    if raw_shares:
        probe = MdofModel(name="probe", dofs=dofs, body=body, gravity=gravity, connections=_connections(data),
                          mounts=_mounts(data))
        names = probe.param_names
        for shared, members in raw_shares.items():
            pats = [members] if isinstance(members, str) else members
            if not isinstance(pats, list) or not all(isinstance(p, str) for p in pats):
                raise ModelSpecError(f"[share] `{shared}` must be a parameter name, a pattern or a list of them")
            shares.append((shared, match_names(pats, names, f"[share] `{shared}`: pattern")))
    return MdofModel(name=str(data.get("name", "model")), dofs=dofs, body=body, gravity=gravity,
                     connections=_connections(data), mounts=_mounts(data), inputs=tuple(inputs),
                     outputs=_outputs(data), values=_values(data), shares=tuple(shares))


def load_model(path: str | Path) -> MdofModel:
    """A model from a TOML file.

    Raises
    ------
    ModelSpecError
        Unreadable file or a bad model (see :func:`parse_model`).
    """
    p = Path(path)
    try:
        if p.stat().st_size > MAX_MODEL_FILE_BYTES:
            raise ModelSpecError(f"model file {p.name} is larger than {MAX_MODEL_FILE_BYTES // 1000} kB")
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelSpecError(f"cannot read the model file {p.name}: {exc}") from None
    return parse_model(text, source=f"model file {p.name}")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _term_text(t: TermDef) -> str:
    return f"{t.name} = {t.force}" if t.custom else t.name


def dump_model(model: MdofModel, values: Mapping[str, float] | None = None) -> str:
    """The model as model-file text (``values``, e.g. estimates, replace the parameters' values)."""
    lines = [f"name = {_toml_value(model.name)}", ""]
    if model.body:
        lines += ["[body]", f"gravity = {_toml_value(float(model.gravity))}", ""]
        for m in model.mounts:
            lines += ["[[mount]]", f"name = {_toml_value(m.name)}", f"at = {_toml_value([float(v) for v in m.at])}"]
            lines += [f"{a} = {_toml_value([_term_text(t) for t in terms])}" for a, terms in m.terms]
            lines.append("")
    else:
        for d in model.dofs:
            lines += ["[[dof]]", f"name = {_toml_value(d.name)}", f"unit = {_toml_value(d.unit)}"]
            if d.gravity:
                lines.append(f"gravity = {_toml_value(float(d.gravity))}")
            lines.append("")
        for c in model.connections:
            lines += ["[[connection]]", f"name = {_toml_value(c.name)}",
                      f"between = {_toml_value([c.a, c.b or 'ground'])}",
                      f"terms = {_toml_value([_term_text(t) for t in c.terms])}", ""]
    if model.inputs:
        lines += ["[inputs]"] + [f"{n} = {_toml_value(col)}" for n, col in model.inputs] + [""]
    if model.outputs:
        lines.append("[outputs]")
        for o in model.outputs:
            if o.noise is None:
                lines.append(f"{o.dof} = {_toml_value(o.column)}")
            else:
                lines.append(f"{o.dof} = {{ column = {_toml_value(o.column)}, noise = {_toml_value(float(o.noise))} }}")
        lines.append("")
    params = model.parameters(values)
    lines.append("[parameters]")
    for p in params:
        parts = [f"value = {_toml_value(float(p.value))}"]
        if math.isfinite(p.lower):
            parts.append(f"lower = {_toml_value(float(p.lower))}")
        if math.isfinite(p.upper):
            parts.append(f"upper = {_toml_value(float(p.upper))}")
        if not p.vary:
            parts.append("fixed = true")
        lines.append(f"{p.name} = {{ {', '.join(parts)} }}")
    if model.shares:
        lines += ["", "[share]"] + [f"{s} = {_toml_value(list(g))}" for s, g in model.shares]
    return "\n".join(lines) + "\n"
