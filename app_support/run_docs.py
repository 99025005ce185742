"""A session's run as a saved study's run and back: its configuration and result as JSON documents, its
validations, and the configuration and fit rebuilt from a saved run."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from app_support import state
from nlid_core.estimate import FitOptions, FitResult, Prior, identify
from nlid_core.models import ModelSettings, TermModel
from nlid_core.params import Parameter, ParameterSet
from nlid_core.record import Record
from nlid_core.report import result_to_dict
from nlid_core.validation import ValidationResult

__all__ = ["run_config", "run_validations", "config_from_doc", "restore_fit"]


def run_config(cfg: state.ModelConfig) -> dict[str, Any]:
    """What a run was asked to do, as JSON-ready data: terms, typed terms, settings, parameters (start
    values, bounds, free or fixed), estimator options, the records fitted and the roles (fit / test) of the
    session's records."""
    return {
        "terms": list(cfg.terms),
        "custom": [list(pair) for pair in cfg.custom],
        "settings": cfg.settings.values(),
        "parameters": cfg.params.to_records(),
        "options": dataclasses.asdict(cfg.options),
        "fit_records": list(cfg.fit_records),
        "roles": dict(state.roles()),
    }


def run_validations(run: state.Run) -> list[ValidationResult]:
    """The session's successful validations of ``run``, one per record (the latest kept)."""
    out: dict[str, ValidationResult] = {}
    for (run_id, name, _), val in state.validations().items():
        if run_id == run.id and val is not None and val.success:
            out[name] = val
    return list(out.values())


def _run_doc(run: state.Run, label: str) -> dict[str, Any]:
    return {"label": label, "config": run_config(run.config), "result": result_to_dict(run.result,
                                                                                          run_validations(run))}


def _bound(value: Any, default: float) -> float:
    return default if value is None else float(value)


def config_from_doc(doc: Mapping[str, Any]) -> state.ModelConfig:
    """The configuration a saved run was asked to fit (:func:`run_config` read back).

    Raises NlidError (or KeyError/TypeError/ValueError for a document that is not a run's configuration)."""
    params = ParameterSet([
        Parameter(name=str(p["name"]), value=float(p["value"]), lower=_bound(p.get("lower"), -math.inf),
                  upper=_bound(p.get("upper"), math.inf), vary=bool(p.get("vary", True)), unit=str(p.get("unit", "")),
                  description=str(p.get("description", "")))
        for p in doc["parameters"]])
    opts = dict(doc.get("options") or {})
    for key in ("outputs", "record_weights"):
        if opts.get(key) is not None:
            opts[key] = tuple(opts[key])
    prior = opts.get("prior")
    opts["prior"] = Prior(values=dict(prior["values"]), lam=float(prior["lam"])) if prior else None
    custom = tuple((str(n), str(e)) for n, e in doc.get("custom") or [])
    settings = ModelSettings(**{k: float(v) for k, v in (doc.get("settings") or {}).items()})
    model = TermModel(tuple(doc["terms"]), settings, custom=state.custom_terms(custom))
    return state.ModelConfig(terms=model.terms, settings=settings, params=params, options=FitOptions(**opts),
                             fit_records=tuple(doc["fit_records"]), custom=custom)


def restore_fit(cfg: state.ModelConfig, result: Mapping[str, Any], recs: Mapping[str, Record]) -> FitResult:
    """A saved run's fit, rebuilt in full from its configuration and records: estimated again from the saved
    estimates (an optimiser started at its optimum stops within a few evaluations), so the records' fits,
    metrics and intervals are the run's own. A run saved as failed stays failed, with its message."""
    model = cfg.model
    saved_values = result.get("parameters") or {}
    start = cfg.params.with_values({n: float(p["value"]) for n, p in saved_values.items()
                                    if isinstance(p, Mapping) and n in cfg.params and p.get("value") is not None})
    records = [recs[n] for n in cfg.fit_records]
    if not result.get("success"):
        from nlid_core.estimate.assemble import _failed

        failed = _failed(model, start, records, cfg.options, str(result.get("message") or "failed"), 0.0)
        return dataclasses.replace(failed, method=str(result.get("method") or failed.method))
    method = cfg.options.method if cfg.options.method == "equation-error" else "output-error"
    fit = identify(records, model, params=start, options=dataclasses.replace(cfg.options, method=method))
    if result.get("method") == "closed-loop":  # the loop and its reference are not part of a saved run
        note = ("reopened from a saved study: saved from a fit inside a position loop, which a study does not keep;"
                " this is open-loop output error from the saved estimates, not the loop fit")
        return dataclasses.replace(fit, warnings=(*fit.warnings, note))
    note = "reopened from a saved study: estimated again from the saved estimates"
    return dataclasses.replace(fit, method=str(result.get("method") or fit.method), warnings=(*fit.warnings, note))


def _saved_validations(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    doc = result.get("validation")
    if not isinstance(doc, Mapping):
        return []
    listed = doc.get("records")
    return [v for v in (listed if isinstance(listed, list) else [doc]) if isinstance(v, Mapping)]
