"""Every session-state key of the dashboard, with typed accessors.

Results that must survive a page switch live here (page widgets reset when
the page changes). Each browser session has its own ``st.session_state``, so
two users of a shared server never see each other's data.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import streamlit as st

from nlid_core.estimate import FitOptions, FitResult
from nlid_core.models import DEFAULT_TERMS, ModelSettings, TermModel
from nlid_core.params import ParameterSet
from nlid_core.record import Record
from nlid_core.validation import ValidationResult

RECORDS = "nlid_records"  # dict[str, Record], in load order
CONFIG = "nlid_model_config"  # ModelConfig
RUNS = "nlid_runs"  # list[Run]
ACTIVE_RUN = "nlid_active_run"  # int run id
VALIDATIONS = "nlid_validations"  # dict[(run id, record name, n_init), ValidationResult]
NOTICE = "nlid_notice"  # (kind, text) shown once on the next page render


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """Everything the Identify page needs: model, parameters, estimator options, records to fit."""

    terms: tuple[str, ...]
    settings: ModelSettings
    params: ParameterSet
    options: FitOptions
    fit_records: tuple[str, ...]

    @property
    def model(self) -> TermModel:
        return TermModel(self.terms, self.settings)


@dataclass(frozen=True, kw_only=True)
class Run:
    """One identification run kept in the session history."""

    id: int
    label: str
    created: str
    config: ModelConfig
    result: FitResult
    elapsed_s: float


def records() -> dict[str, Record]:
    return st.session_state.setdefault(RECORDS, {})  # type: ignore[no-any-return]


def add_records(new: list[Record] | tuple[Record, ...]) -> list[str]:
    """Add records (renaming duplicates ``name (2)``); returns the names used."""
    recs = records()
    names = []
    for rec in new:
        name = rec.name
        k = 2
        while name in recs:
            name = f"{rec.name} ({k})"
            k += 1
        recs[name] = rec if name == rec.name else dataclasses.replace(rec, name=name)
        names.append(name)
    return names


def replace_record(name: str, rec: Record) -> None:
    records()[name] = dataclasses.replace(rec, name=name)


def remove_record(name: str) -> None:
    records().pop(name, None)
    cfg = config()
    if cfg is not None and name in cfg.fit_records:
        set_config(dataclasses.replace(cfg, fit_records=tuple(n for n in cfg.fit_records if n != name)))


def config() -> ModelConfig | None:
    return st.session_state.get(CONFIG)  # type: ignore[no-any-return]


def set_config(cfg: ModelConfig) -> None:
    st.session_state[CONFIG] = cfg


def default_config(terms: tuple[str, ...] = DEFAULT_TERMS, fit_records: tuple[str, ...] = ()) -> ModelConfig:
    """A configuration for ``terms`` with default bounds, in the units of the first record to fit."""
    recs = records()
    first = recs.get(fit_records[0]) if fit_records else (next(iter(recs.values())) if recs else None)
    model = TermModel(terms)
    params = model.default_parameters(
        force_unit=first.unit("f") if first else "N", x_unit=first.unit("x") if first else "m"
    )
    return ModelConfig(terms=model.terms, settings=model.settings, params=params, options=FitOptions(),
                       fit_records=fit_records or ((first.name,) if first else ()))


def ensure_config() -> ModelConfig:
    cfg = config()
    recs = records()
    if cfg is None or not all(n in recs for n in cfg.fit_records) or not cfg.fit_records:
        cfg = default_config(cfg.terms if cfg else DEFAULT_TERMS)
        set_config(cfg)
    return cfg


def runs() -> list[Run]:
    return st.session_state.setdefault(RUNS, [])  # type: ignore[no-any-return]


def add_run(config: ModelConfig, result: FitResult, elapsed_s: float) -> Run:
    history = runs()
    run_id = (history[-1].id + 1) if history else 1
    label = f"#{run_id} {result.method} {','.join(config.terms)} on {', '.join(config.fit_records)}"
    run = Run(id=run_id, label=label, created=time.strftime("%H:%M:%S"), config=config, result=result,
              elapsed_s=elapsed_s)
    history.append(run)
    st.session_state[ACTIVE_RUN] = run_id
    return run


def active_run() -> Run | None:
    history = runs()
    if not history:
        return None
    want = st.session_state.get(ACTIVE_RUN, history[-1].id)
    for run in history:
        if run.id == want:
            return run
    return history[-1]


def set_active_run(run_id: int) -> None:
    st.session_state[ACTIVE_RUN] = run_id


def validations() -> dict[tuple[int, str, int], ValidationResult]:
    return st.session_state.setdefault(VALIDATIONS, {})  # type: ignore[no-any-return]


def notify(kind: str, text: str) -> None:
    """Queue a message for the next render (e.g. across st.switch_page)."""
    st.session_state[NOTICE] = (kind, text)


def show_notice() -> None:
    notice = st.session_state.pop(NOTICE, None)
    if notice:
        kind, text = notice
        getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")(text)


def require_records() -> dict[str, Record]:
    """The loaded records; stops the page with a hint when there are none."""
    recs = records()
    if not recs:
        st.info("Load a record first (Data page, or an example on the Home page).")
        st.stop()
    return recs
