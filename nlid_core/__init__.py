"""nlid_core: identification of nonlinear mechanical systems from measured records.

A model is a set of terms from one registry (:mod:`nlid_core.terms`: ``python -m nlid_core terms``
lists them) or typed by the user, placed on one or more degrees of freedom
(:mod:`nlid_core.dynamics`); the single-DOF form the estimators use is :class:`TermModel`::

    (m0 + m1·x²)·ẍ + c1·ẋ + c2·|ẋ|·ẋ + fc·tanh(ẋ/v_eps) + k1·x + k2·x² + k3·x³ + kg·dz(x) + f0
        + lugre(z; σ0, σ1, σ2, Fc, Fs, vs) + bouc_wen(z; α, β, γ, δ, ν) + [typed terms] = f(t)

Array layout, stated once: signals are 1-D float64 arrays of one length
(time-major); a record holds channels ``t`` (s), ``f`` (N), ``x`` (m) and
optionally ``v`` (m/s), ``a`` (m/s²). Model callables take ``(t, x, u, p)``
order where they exist; parameter vectors are 1-D in the model's term order.
Units are SI unless a record says otherwise (e.g. volts for Silverbox).

Typical use::

    from nlid_core import load_record, identify, validate
    rec = load_record("test.csv", columns="t=time,f=force,x=disp", units="x=mm")
    fit = identify(rec, "m0,c1,c2,k1,k3")        # two-stage: equation error -> output error
    print(fit.equation())
    val = validate(fit, load_record("other_level.csv"))

Importing this package needs numpy, scipy, pandas and numba (sympy when a term is compiled), and is cheap: each public name
imports its submodule on first use (a worker that only reads files never loads numba).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .errors import (
        DataValidationError,
        ModelSpecError,
        NlidError,
        SimulationError,
    )
    from .estimate import (
        INITIAL_STATES,
        METHODS,
        FitOptions,
        FitResult,
        ParameterEstimate,
        Prior,
        RecordFit,
        equation_error,
        identify,
        output_error,
    )
    from .examples import EXAMPLES, ExampleSpec, generate, make_example
    from .identifiability import Uncertainty, uncertainty_from_jacobian
    from .io import load_record, load_records, read_table, write_record
    from .metrics import ChannelMetrics, WhitenessTest, fit_percent, nrmse, rmse, whiteness_test
    from .models import DEFAULT_TERMS, TERMS, ModelSettings, TermModel, parse_terms
    from .params import Parameter, ParameterSet
    from .record import Record, from_arrays, resample_uniform, trim
    from .report import format_report, result_to_dict
    from .signals import DIFFERENTIATORS, derive_missing, differentiate, filter_record, lowpass
    from .simulate import INPUT_HOLDS, SimulationResult, simulate, simulate_reference
    from .validation import ValidationResult, validate
    from .guard import load_record_guarded, load_records_guarded
    from .limits import Limits

__all__ = [
    "__version__",
    # errors
    "NlidError",
    "DataValidationError",
    "ModelSpecError",
    "SimulationError",
    # records and files
    "Record",
    "from_arrays",
    "resample_uniform",
    "trim",
    "load_record",
    "load_records",
    "read_table",
    "write_record",
    "load_record_guarded",
    "load_records_guarded",
    "Limits",
    # signals
    "DIFFERENTIATORS",
    "differentiate",
    "derive_missing",
    "lowpass",
    "filter_record",
    # models and parameters
    "TERMS",
    "DEFAULT_TERMS",
    "TermModel",
    "ModelSettings",
    "parse_terms",
    "Parameter",
    "ParameterSet",
    # simulation
    "INPUT_HOLDS",
    "SimulationResult",
    "simulate",
    "simulate_reference",
    # estimation
    "METHODS",
    "INITIAL_STATES",
    "FitOptions",
    "Prior",
    "FitResult",
    "ParameterEstimate",
    "RecordFit",
    "identify",
    "equation_error",
    "output_error",
    "Uncertainty",
    "uncertainty_from_jacobian",
    # validation, metrics, report
    "ValidationResult",
    "validate",
    "ChannelMetrics",
    "WhitenessTest",
    "rmse",
    "nrmse",
    "fit_percent",
    "whiteness_test",
    "format_report",
    "result_to_dict",
    # examples
    "EXAMPLES",
    "ExampleSpec",
    "generate",
    "make_example",
]

#: Submodule of each public name, imported on first access (PEP 562).
_SOURCES: dict[str, str] = {}
for _module, _names in {
    "errors": ("DataValidationError", "ModelSpecError", "NlidError", "SimulationError"),
    "estimate": ("INITIAL_STATES", "METHODS", "FitOptions", "FitResult", "ParameterEstimate", "Prior", "RecordFit",
                 "equation_error", "identify", "output_error"),
    "examples": ("EXAMPLES", "ExampleSpec", "generate", "make_example"),
    "identifiability": ("Uncertainty", "uncertainty_from_jacobian"),
    "io": ("load_record", "load_records", "read_table", "write_record"),
    "metrics": ("ChannelMetrics", "WhitenessTest", "fit_percent", "nrmse", "rmse", "whiteness_test"),
    "models": ("DEFAULT_TERMS", "TERMS", "ModelSettings", "TermModel", "parse_terms"),
    "params": ("Parameter", "ParameterSet"),
    "record": ("Record", "from_arrays", "resample_uniform", "trim"),
    "report": ("format_report", "result_to_dict"),
    "signals": ("DIFFERENTIATORS", "derive_missing", "differentiate", "filter_record", "lowpass"),
    "simulate": ("INPUT_HOLDS", "SimulationResult", "simulate", "simulate_reference"),
    "validation": ("ValidationResult", "validate"),
    "guard": ("load_record_guarded", "load_records_guarded"),
    "limits": ("Limits",),
}.items():
    for _name in _names:
        _SOURCES[_name] = _module


def __getattr__(name: str) -> Any:
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
