"""A model file of one DOF in its single-DOF form: the same model, fitted by the same estimator as ``--terms``.

A model file whose one lumped, translational DOF is joined to ground only (no rigid body, no gravity along it, no
shared parameters, every term once) is the single-DOF equation ``m·ẍ + Σ F_j(x, ẋ, z) = f(t)`` that ``--terms``
builds: its mass ``m_<dof>`` is the term ``m0`` and each connection term's parameter ``<p>_<connection>`` is the term's
parameter ``<p>``. :func:`single_dof_form` gives that :class:`~nlid_core.models.TermModel` with the model file's
start values, bounds and fixed flags, so that ``identify --model`` on dynamic records of such a model runs the
single-DOF estimators (equation error, output error, their starts and checks) and gives, bit for bit, the
estimates of ``identify --terms`` from the same start. Anything else (several DOFs, static load cases, held
DOFs, a stage plan of the user's) is fitted in stages by :mod:`nlid_core.mdof.fit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..models import ModelSettings, TermModel
from ..params import Parameter, ParameterSet
from ..terms.registry import REGISTRY
from .spec import MdofModel

__all__ = ["SingleDofForm", "single_dof_form"]

#: Parameters of the single-DOF model that are settings (given to :class:`ModelSettings` as well).
_SETTINGS = ("v_eps", "gap")


@dataclass(frozen=True, kw_only=True)
class SingleDofForm:
    """A one-DOF model file as the single-DOF model.

    Attributes
    ----------
    model : TermModel
    source : MdofModel
        The model file's model.
    names : mapping of str to str
        The model file's parameter name of every parameter of ``model`` (``m0`` → ``m_x1``, ``k1`` → ``k1_s1``).
    start : ParameterSet
        The model file's parameters (values, bounds, fixed flags), in its own names.
    """

    model: TermModel
    source: MdofModel
    names: Mapping[str, str]
    start: ParameterSet

    @property
    def terms(self) -> str:
        """The ``--terms`` list of the same model."""
        return ",".join(self.model.terms)

    def parameters(self, *, force_unit: str = "N", x_unit: str = "m") -> ParameterSet:
        """The single-DOF parameters (units of the records) with the model file's values, bounds and fixed flags."""
        base = self.model.default_parameters(force_unit=force_unit, x_unit=x_unit)
        out = []
        for p in base:
            q = self.start[self.names[p.name]]
            out.append(Parameter(name=p.name, value=q.value, lower=q.lower, upper=q.upper, vary=q.vary, unit=p.unit,
                                 description=p.description))
        return ParameterSet(out)

    def mapping_text(self) -> str:
        """One line: the model file's names and the single-DOF names they stand for."""
        return ", ".join(f"{file} = {own}" for own, file in self.names.items())


def single_dof_form(model: MdofModel) -> SingleDofForm | str:
    """The single-DOF form of ``model``, or why it has none (a sentence).

    Parameters
    ----------
    model : MdofModel
        A model file's model.
    """
    if model.body:
        return "the model is a rigid body on mounts"
    if model.n_dof != 1:
        return f"the model has {model.n_dof} DOFs"
    dof = model.dofs[0]
    if dof.unit != "m":  # the single-DOF records carry their units from the file; a rotation's are the model's
        return f"`{dof.name}` is a rotation"
    if dof.gravity != 0.0:
        return f"gravity acts along `{dof.name}` (its weight depends on the mass)"
    if model.shares:
        return "the model file shares parameters"
    names = {"m0": f"m_{dof.name}"}
    defs = []
    for c in model.connections:
        if c.b is not None:  # a connection of a one-DOF model can only be to ground; kept as a guard
            return f"connection `{c.name}` is not to ground"
        for t in c.terms:
            if t.name in names or any(p.name in names for p in t.params):
                return f"term `{t.name}` appears twice (or repeats a parameter name)"
            defs.append(t)
            names.update({p.name: f"{p.name}_{c.name}" for p in t.params})
    custom = [t for t in defs if REGISTRY.get(t.name) is not t]
    start = model.parameters()
    settings = ModelSettings(**{s: start[names[s]].value for s in _SETTINGS if s in names})
    term_model = TermModel(["m0", *(t.name for t in defs)], settings, custom=custom)
    order = {n: names[n] for n in term_model.param_names}
    return SingleDofForm(model=term_model, source=model, names=order, start=start)
