r"""Records of a multi-DOF model: inputs and measured outputs on one time grid, which DOFs the rig held, and
whether the record is a set of static load cases.

An :class:`MdofRecord` carries the model's mapped inputs (``model.used_inputs``, in that order) and measured DOFs
(``model.output_dofs``), in SI (m, rad, N, N·m). A *static* record has one load case per row: the inputs held
constant and the outputs measured at rest (its "time" is the case number). *Held* DOFs are locked by the rig
(the sweep of one DOF with the others held).

Loaded files map to the general :class:`~nlid_core.record.Record` with channels ``f1 … f_k`` for the inputs and
``x1 … x_m`` for the outputs, in the model's order (:func:`column_spec` gives the mapping from the model file's
column names); :func:`from_record` converts angles given in degrees (unit ``deg``) or milliradians (``mrad``) to
radians and refuses a length unit on an angle (and the reverse).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..errors import DataValidationError
from ..record import Record, from_channels
from .spec import MdofModel

__all__ = ["ANGLE_UNITS", "MdofRecord", "column_spec", "from_record", "to_frame", "to_record"]

FloatArray = NDArray[np.float64]

#: Angle units accepted on a rotational DOF and their factor to rad.
ANGLE_UNITS: Mapping[str, float] = {"rad": 1.0, "deg": math.pi / 180.0, "°": math.pi / 180.0, "mrad": 1e-3}


@dataclass(frozen=True, kw_only=True)
class MdofRecord:
    """One record of a multi-DOF model.

    Attributes
    ----------
    name : str
    t : (n,) ndarray, s
        Sample times (case numbers for a static record).
    u : (n, k) ndarray
        Inputs, in ``input_names`` order (N, N·m).
    y : (n, m) ndarray
        Measured outputs, in ``output_names`` order (m, rad).
    input_names, output_names : tuple of str
    held : tuple of str
        DOFs the rig held during the record.
    static : bool
        One load case per row (outputs at rest).
    meta : mapping
        Provenance (experiment kind, generator settings, true parameters, noise levels).
    """

    name: str
    t: FloatArray
    u: FloatArray
    y: FloatArray
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    held: tuple[str, ...] = ()
    static: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        t = np.ascontiguousarray(self.t, dtype=np.float64).reshape(-1)
        u = np.ascontiguousarray(self.u, dtype=np.float64).reshape(t.size, -1)
        y = np.ascontiguousarray(self.y, dtype=np.float64).reshape(t.size, -1)
        if u.shape[1] != len(self.input_names) or y.shape[1] != len(self.output_names):
            raise DataValidationError(f"record `{self.name}`: {u.shape[1]} input and {y.shape[1]} output columns for"
                                      f" {len(self.input_names)} input and {len(self.output_names)} output names")
        minimum = 1 if self.static else 8
        if t.size < minimum:
            raise DataValidationError(f"record `{self.name}` has {t.size} rows; it needs at least {minimum}")
        for what, arr in (("time", t), ("inputs", u), ("outputs", y)):
            if not np.all(np.isfinite(arr)):
                raise DataValidationError(f"record `{self.name}`: its {what} contain NaN or infinite values")
        if not self.static:
            dt = np.diff(t)
            if np.any(dt <= 0):
                raise DataValidationError(f"record `{self.name}`: time must increase strictly")
            if np.ptp(dt) > 1e-6 * float(np.mean(dt)):
                raise DataValidationError(f"record `{self.name}`: samples must be uniform in time (resample it first)")
        for name, arr in (("t", t), ("u", u), ("y", y)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.t.size)

    @property
    def dt(self) -> float:
        """Sampling interval, s (1 for a static record)."""
        return float((self.t[-1] - self.t[0]) / (self.t.size - 1)) if self.n > 1 and not self.static else 1.0

    def input(self, name: str) -> FloatArray:
        """One input column by name (zeros when the record does not carry it)."""
        if name in self.input_names:
            return self.u[:, self.input_names.index(name)]
        return np.zeros(self.n)

    def output(self, name: str) -> FloatArray:
        """One output column by DOF name.

        Raises
        ------
        DataValidationError
            The record does not measure that DOF.
        """
        if name not in self.output_names:
            raise DataValidationError(f"record `{self.name}` does not measure `{name}` ({', '.join(self.output_names)})")
        return self.y[:, self.output_names.index(name)]


def column_spec(model: MdofModel, time_column: str | None = None) -> str:
    """The loader's column mapping (``"t=time,f1=Fx,…,x1=X,…"``) from the model file's ``[inputs]`` and ``[outputs]``.

    Raises
    ------
    DataValidationError
        The model maps no input or no output.
    """
    if not model.inputs or not model.outputs:
        raise DataValidationError("the model file maps no [inputs] or no [outputs] to file columns")
    parts = [f"t={time_column}"] if time_column else []
    parts += [f"f{k + 1}={col}" for k, (_, col) in enumerate(model.inputs)]
    parts += [f"x{k + 1}={o.column}" for k, o in enumerate(model.outputs)]
    return ",".join(parts)


def _channel(rec: Record, name: str) -> FloatArray:
    if rec.n_dof == 1 and name in ("f1", "x1"):
        return np.asarray(rec.f if name == "f1" else rec.x, dtype=np.float64)
    if name == "f1":
        return np.asarray(rec.f, dtype=np.float64)
    if name == "x1":
        return np.asarray(rec.x, dtype=np.float64)
    arr = rec.extra_channels.get(name)
    if arr is None:
        raise DataValidationError(f"record `{rec.name}` has no channel `{name}`")
    return np.asarray(arr, dtype=np.float64)


def _unit(rec: Record, name: str) -> str:
    units = dict(rec.units)
    bare = name[0] if rec.n_dof == 1 else name
    return str(units.get(name, units.get(bare, "")))


def from_record(model: MdofModel, rec: Record, *, held: Sequence[str] = (), static: bool = False) -> MdofRecord:
    """The model's view of a general record (channels ``f1 … f_k`` = the mapped inputs, ``x1 … x_m`` = the outputs).

    Raises
    ------
    DataValidationError
        Too few channels for the model's inputs and outputs, or a unit that does not fit a DOF.
    """
    k, m = len(model.used_inputs), len(model.output_dofs)
    u_cols, y_cols = [], []
    for j, name in enumerate(model.used_inputs):
        ch = f"f{j + 1}"
        try:
            u_cols.append(_channel(rec, ch))
        except DataValidationError:
            raise DataValidationError(f"record `{rec.name}` has no column for input `{name}` (channel {ch}); the model"
                                      f" needs {k} inputs and {m} outputs") from None
    for j, dof in enumerate(model.output_dofs):
        ch = f"x{j + 1}"
        try:
            col = _channel(rec, ch)
        except DataValidationError:
            raise DataValidationError(f"record `{rec.name}` has no column for output `{dof}` (channel {ch}); the model"
                                      f" needs {k} inputs and {m} outputs") from None
        unit = _unit(rec, ch)
        if model.dof_unit(dof) == "rad":
            if unit in ("m", ""):
                unit = "rad"  # the loader's default label for a displacement channel
            if unit not in ANGLE_UNITS:
                raise DataValidationError(f"record `{rec.name}`: output `{dof}` is an angle; its unit `{unit}` is not one"
                                          f" of {', '.join(ANGLE_UNITS)}")
            col = col * ANGLE_UNITS[unit]
        elif unit in ANGLE_UNITS:
            raise DataValidationError(f"record `{rec.name}`: output `{dof}` is a displacement (m), but its unit is `{unit}`")
        y_cols.append(col)
    model.held_mask(held)
    return MdofRecord(name=rec.name, t=np.asarray(rec.t), u=np.column_stack(u_cols), y=np.column_stack(y_cols),
                      input_names=model.used_inputs, output_names=model.output_dofs, held=tuple(held), static=static,
                      meta=dict(rec.meta))


def to_record(model: MdofModel, rec: MdofRecord) -> Record:
    """The general record of an MdofRecord (channels ``f1 …``, ``x1 …``; units N/N·m and m/rad)."""
    channels: dict[str, FloatArray] = {"t": np.asarray(rec.t, dtype=np.float64)}
    units: dict[str, str] = {"t": "s"}
    n_dof = max(len(rec.input_names), len(rec.output_names), 2)
    for j, name in enumerate(rec.input_names):
        channels[f"f{j + 1}"] = rec.u[:, j]
        units[f"f{j + 1}"] = model.input_unit(name)
    for j, dof in enumerate(rec.output_names):
        channels[f"x{j + 1}"] = rec.y[:, j]
        units[f"x{j + 1}"] = model.dof_unit(dof)
    for j in range(len(rec.output_names), n_dof):  # a record needs a displacement on every DOF number it uses
        channels[f"x{j + 1}"] = np.zeros(rec.n)
    meta = {**dict(rec.meta), "mdof_held": list(rec.held), "mdof_static": rec.static}
    return from_channels(channels, name=rec.name, units=units, source="mdof", meta=meta)


def to_frame(model: MdofModel, rec: MdofRecord) -> pd.DataFrame:
    """The record as a table with the model file's column names (and ``t``), to write as CSV."""
    cols: dict[str, FloatArray] = {"t": np.asarray(rec.t)}
    names = dict(model.inputs)
    for j, name in enumerate(rec.input_names):
        cols[names.get(name, name)] = rec.u[:, j]
    columns = {o.dof: o.column for o in model.outputs}
    for j, dof in enumerate(rec.output_names):
        cols[columns.get(dof, dof)] = rec.y[:, j]
    return pd.DataFrame(cols)
