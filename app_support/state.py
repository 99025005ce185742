"""Every session-state key of the dashboard, with typed accessors.

Results that must survive a page switch live here (page widgets reset when
the page changes). Each browser session has its own ``st.session_state``, so
two users of a shared server never see each other's data.

A session's memory is bounded (all sessions share one server process). The
limits are read from environment variables on every use, so a changed
setting applies without a restart; an invalid value falls back to the
default:

===========================  ===========================================  =======
variable                     meaning                                      default
===========================  ===========================================  =======
``NLID_MAX_RECORDS``         records loaded in one session                20
``NLID_MAX_RUNS_KEPT``       newest runs kept with their full results     10
                             (fitted signals); older runs keep a summary
                             (configuration, estimates, metrics, message)
``NLID_MAX_VALIDATIONS``     validation results kept per session          10
``NLID_MAX_RUNS``            runs listed in the history (the oldest       100
                             summaries go first)
===========================  ===========================================  =======

Studies (``MAX_STUDIES``) and designs (``MAX_DESIGNS``) are capped alike, oldest first; every
other entry holds one value. The keys (:mod:`app_support.keys`, widget keys by page) and the session's
types and limits (:mod:`app_support.session_types`) and the widget memory (:mod:`app_support.widgets`) are
re-exported here: ``key=state.DATA_UPLOAD``, ``state.set_widget(...)``.

The run that is currently active is never summarised. Notices are plain text
(escaped when shown) unless queued with ``markdown=True``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any, Final

import streamlit as st

from nlid_core.errors import DataValidationError
from nlid_core.estimate import FitOptions, FitResult
from nlid_core.models import DEFAULT_TERMS, TermModel
from nlid_core.record import Record
from nlid_core.validation import ValidationResult
from .keys import *  # noqa: F403 - the widget and session keys, read as state.KEY by the pages
from .widgets import (  # re-exported: state.set_widget(...)
    editor_base as editor_base, keep_editor as keep_editor, keep_form as keep_form,
    key_for as key_for, move_editor as move_editor, peek as peek, post as post, remember_choice as remember_choice,
    remembered_choice as remembered_choice, reset_widget as reset_widget, restore_form as restore_form,
    set_widget as set_widget, show_notice as show_notice, show_posts as show_posts, widget_value as widget_value
)
from .session_types import (
    DROPPED, CustomSpec, ModelConfig, Run, SessionLimitError, StudyRef, custom_terms, max_records, max_runs,
    max_runs_kept, max_validations, parse_custom_text, summarise
)



def records() -> dict[str, Record]:
    return st.session_state.setdefault(RECORDS, {})  # type: ignore[no-any-return]


def room_for_records() -> int:
    """How many more records this session may load."""
    return max(max_records() - len(records()), 0)


def records_full_message() -> str:
    return (f"this session already holds {len(records())} records, the most one session may load"
            f" ({max_records()}); remove a record on the Data page first")


def add_records(new: list[Record] | tuple[Record, ...]) -> list[str]:
    """Add records (renaming duplicates ``name (2)``); returns the names used.

    Raises SessionLimitError, adding none, when the session would hold more than ``NLID_MAX_RECORDS``.
    """
    recs = records()
    if len(new) > room_for_records():
        raise SessionLimitError(records_full_message())
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


#: Longest record name (a typed name or a part of a split).
MAX_RECORD_NAME = 80


def check_record_name(name: object, *, renaming: str | None = None) -> str:
    """``name`` stripped, checked as a new record name: text, not empty, at most :data:`MAX_RECORD_NAME`
    characters, one line, not the name of another record of the session (``renaming``: the record being
    renamed, whose own name does not count).

    Raises DataValidationError saying what is wrong (the name, when shown, is escaped by the caller).
    """
    text = name.strip() if isinstance(name, str) else ""
    if not text:
        raise DataValidationError("a record needs a name")
    if len(text) > MAX_RECORD_NAME:
        raise DataValidationError(f"a record name may have at most {MAX_RECORD_NAME} characters; this one has"
                                  f" {len(text)}")
    if any(not ch.isprintable() for ch in text):
        raise DataValidationError("a record name must be one line without control characters")
    if text in records() and text != renaming:
        raise DataValidationError(f"there is already a record named {text!r}; choose another name or remove it")
    return text


def record_users(name: str) -> list[str]:
    """Runs of the history fitted on record ``name`` and validations run on it, as labels (empty: none)."""
    users = [f"run {r.label}" for r in runs() if name in r.config.fit_records]
    users += [f"a validation of run #{run_id}" for run_id, rec_name, _ in validations() if rec_name == name]
    return users


def rename_record(old: str, new: str) -> str:
    """Rename record ``old`` to ``new`` (checked by :func:`check_record_name`); returns the new name.

    The record keeps its place in the load order and the configuration's records to fit follow the
    new name. A record that runs were fitted on or that validations used is not renamed: runs and
    validations keep the names of the records they used, so renaming it would leave them naming a
    record that no longer exists (DataValidationError saying which runs, and what to do instead).
    """
    recs = records()
    if old not in recs:
        raise DataValidationError(f"there is no record named {old!r}")
    text = check_record_name(new, renaming=old)
    if text == old:
        return old
    users = record_users(old)
    if users:
        more = f" and {len(users) - 2} more" if len(users) > 2 else ""
        raise DataValidationError(
            f"{old!r} is used by {', '.join(users[:2])}{more}; runs keep the names of the records they were"
            " fitted and validated on, so it cannot be renamed. Split or load it again under another name,"
            " or remove those runs first")
    renamed = {(text if n == old else n): (dataclasses.replace(r, name=text) if n == old else r)
               for n, r in recs.items()}
    recs.clear()
    recs.update(renamed)
    for store in (roles(), st.session_state.setdefault(LINEAGE, {})):
        if old in store:
            store[text] = store.pop(old)
    cfg = config()
    if cfg is not None and old in cfg.fit_records:
        set_config(dataclasses.replace(cfg, fit_records=tuple(text if n == old else n for n in cfg.fit_records)))
    return text


def add_named_records(new: list[Record]) -> list[str]:
    """Add records under their own names, all or none: every name checked by :func:`check_record_name`
    (and unique among ``new``), the session limit respected. Returns the names.

    Raises DataValidationError (SessionLimitError for the limit) naming the first bad name.
    """
    seen: set[str] = set()
    for rec in new:
        name = check_record_name(rec.name)
        if name in seen:
            raise DataValidationError(f"two new records are named {name!r}; names must be unique")
        seen.add(name)
    if len(new) > room_for_records():
        raise SessionLimitError(records_full_message() if not room_for_records() else
                                f"{len(new)} new records would exceed the {max_records()} records one session may"
                                f" hold ({len(records())} loaded); remove some on the Data page first")
    recs = records()
    for rec in new:
        recs[rec.name.strip()] = dataclasses.replace(rec, name=rec.name.strip())
    return [rec.name.strip() for rec in new]


FIT_ROLE: Final = "fit"
TEST_ROLE: Final = "test"
ROLE_NAMES: Final = (FIT_ROLE, TEST_ROLE)


def roles() -> dict[str, str]:
    """Record name -> ``"fit"`` or ``"test"``, for records that a split or a benchmark gave a role."""
    return st.session_state.setdefault(ROLES, {})  # type: ignore[no-any-return]


def lineage(name: str) -> tuple[str, int, int]:
    """Where record ``name``'s samples come from: ``(origin, first row, stop row)``; a record loaded as it is
    is its own origin."""
    kept = st.session_state.get(LINEAGE, {}).get(name)
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    rec = records().get(name)
    return name, 0, rec.n if rec is not None else 0


def set_parts(parent: str, parts: Sequence[tuple[str, int, int, str]]) -> None:
    """Record that ``parts`` (name, first row, stop row in ``parent``, role) were cut from ``parent``."""
    origin, start, _ = lineage(parent)
    store = st.session_state.setdefault(LINEAGE, {})
    for name, a, b, role in parts:
        store[name] = (origin, start + a, start + b)
        if role in ROLE_NAMES:
            roles()[name] = role
        else:
            roles().pop(name, None)


def shared_samples(name: str, others: Iterable[str]) -> list[str]:
    """The records among ``others`` that share samples with ``name`` (itself, the record it was cut from,
    an overlapping part)."""
    o, a, b = lineage(name)
    out = []
    for other in others:
        p, c, d = lineage(other)
        if other == name or (p == o and max(a, c) < min(b, d)):
            out.append(other)
    return out


def record_label(name: str) -> str:
    """A record's name with its role, for choosers: ``"silverbox-train (fit part)"``."""
    role = roles().get(name)
    return f"{name} ({role} part)" if role else name


def records_with_role(role: str) -> list[str]:
    """Loaded records with ``role``, in load order."""
    given = roles()
    return [n for n in records() if given.get(n) == role]


def remove_record(name: str) -> None:
    records().pop(name, None)
    roles().pop(name, None)
    st.session_state.setdefault(LINEAGE, {}).pop(name, None)
    cfg = config()
    if cfg is not None and name in cfg.fit_records:
        set_config(dataclasses.replace(cfg, fit_records=tuple(n for n in cfg.fit_records if n != name)))


def open_study(viewer: str) -> StudyRef | None:
    """The saved study open in this session for engineer ``viewer`` (None: none, or opened by another)."""
    ref = st.session_state.get(OPEN_STUDY)
    return ref if isinstance(ref, StudyRef) and ref.viewer == viewer else None


def set_open_study(ref: StudyRef | None) -> None:
    if ref is None:
        st.session_state.pop(OPEN_STUDY, None)
    else:
        st.session_state[OPEN_STUDY] = ref


def saved_runs() -> dict[tuple[int, int], tuple[int, str]]:
    """Session runs saved to studies: ``(study id, session run id) -> (stored run id, label)``."""
    return st.session_state.setdefault(SAVED_RUNS, {})  # type: ignore[no-any-return]


def config() -> ModelConfig | None:
    return st.session_state.get(CONFIG)  # type: ignore[no-any-return]


def set_config(cfg: ModelConfig) -> None:
    st.session_state[CONFIG] = cfg


def default_config(terms: tuple[str, ...] = DEFAULT_TERMS, fit_records: tuple[str, ...] = (),
                   custom: tuple[CustomSpec, ...] = ()) -> ModelConfig:
    """A configuration for ``terms`` (library names and names of the typed terms ``custom``) with default
    bounds, in the units of the first record to fit."""
    recs = records()
    if not fit_records:  # the fit parts of a split, else the first record
        fit_records = tuple(records_with_role(FIT_ROLE)) or tuple(list(recs)[:1])
    first = recs.get(fit_records[0]) if fit_records else None
    model = TermModel(terms, custom=custom_terms(custom))
    params = model.default_parameters(
        force_unit=first.unit("f") if first else "N", x_unit=first.unit("x") if first else "m"
    )
    return ModelConfig(terms=model.terms, settings=model.settings, params=params, options=FitOptions(),
                       fit_records=fit_records, custom=custom)


def use_terms(terms: tuple[str, ...], record: str) -> ModelConfig:
    """Make ``terms`` the model to fit (default bounds and options), fitted on the current fit records when
    ``record`` is one of them, else on the fit parts of a split, else on ``record``; the Model page's term
    choice follows."""
    cfg = config()
    if cfg is not None and record in cfg.fit_records:
        fit = cfg.fit_records
    else:
        fit = tuple(records_with_role(FIT_ROLE)) or (record,)
    new = default_config(terms, fit_records=fit, custom=cfg.custom if cfg is not None else ())
    set_config(new)
    st.session_state.pop(MODEL_TERMS, None)
    st.session_state.pop(MODEL_FIT_RECORDS, None)
    return new


def ensure_config() -> ModelConfig:
    cfg = config()
    recs = records()
    if cfg is None or not all(n in recs for n in cfg.fit_records) or not cfg.fit_records:
        cfg = default_config(cfg.terms, custom=cfg.custom) if cfg else default_config(DEFAULT_TERMS)
        set_config(cfg)
    return cfg


def runs() -> list[Run]:
    return st.session_state.setdefault(RUNS, [])  # type: ignore[no-any-return]


def add_run(config: ModelConfig, result: FitResult, elapsed_s: float) -> Run:
    """Append a run, make it active and summarise runs beyond the newest ``NLID_MAX_RUNS_KEPT``."""
    history = runs()
    run_id = (history[-1].id + 1) if history else 1
    label = f"#{run_id} {result.method} {','.join(config.terms)} on {', '.join(config.fit_records)}"
    run = Run(id=run_id, label=label, created=time.strftime("%H:%M:%S"), config=config, result=result,
              elapsed_s=elapsed_s)
    history.append(run)
    st.session_state[ACTIVE_RUN] = run_id
    cap_runs()
    return run


def cap_runs() -> None:
    """Summarise every run but the newest ``NLID_MAX_RUNS_KEPT``, the active one and the newest successful one;
    beyond ``NLID_MAX_RUNS`` runs, drop the oldest (never those two)."""
    history = runs()
    keep = max_runs_kept()
    spare = {st.session_state.get(ACTIVE_RUN)}
    spare |= {next((r.id for r in reversed(history) if r.result.success), None)}
    for i, run in enumerate(history[:-keep] if len(history) > keep else []):
        if run.detailed and run.id not in spare:
            history[i] = summarise(run)
    excess = len(history) - max_runs()
    if excess > 0:
        dropped = [r.id for r in history if r.id not in spare][:excess]
        history[:] = [r for r in history if r.id not in dropped]


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
    """Validation results by (run id, record name, initial-state samples), oldest first."""
    return st.session_state.setdefault(VALIDATIONS, {})  # type: ignore[no-any-return]


def add_validation(key: tuple[int, str, int], result: ValidationResult) -> None:
    """Store a validation result, dropping the oldest beyond ``NLID_MAX_VALIDATIONS``."""
    store = validations()
    store.pop(key, None)
    store[key] = result
    while len(store) > max_validations():
        del store[next(iter(store))]


#: Closed-loop simulations kept per session (Validate page; oldest dropped first).
MAX_LOOP_CHECKS = 4


def loop_checks_of(run_id: int, record: str) -> list[tuple[tuple[int, str, str, str, str], Any]]:
    """The closed-loop simulations of run ``run_id`` on ``record`` (key, :class:`~nlid_core.closed_loop.LoopCheck`),
    oldest first; those of runs no longer kept are dropped."""
    store: dict[tuple[int, str, str, str, str], Any] = st.session_state.setdefault(LOOP_CHECKS, {})
    kept = {r.id for r in runs()}
    for k in [k for k in store if k[0] not in kept]:
        del store[k]
    return [(k, v) for k, v in store.items() if k[:2] == (run_id, record)]


def add_loop_check(key: tuple[int, str, str, str, str], check: Any) -> None:
    """Store a closed-loop simulation under (run id, record, reference, pulses, controller text)."""
    store: dict[tuple[int, str, str, str, str], Any] = st.session_state.setdefault(LOOP_CHECKS, {})
    store.pop(key, None)
    store[key] = check
    while len(store) > MAX_LOOP_CHECKS:
        del store[next(iter(store))]


def linear_fit(rec_key: str) -> FitResult | None:
    """The Nonlinearity page's linear fit of the record with content key ``rec_key``, if any."""
    stored = st.session_state.get(LINEAR_FIT)
    return stored[1] if stored and stored[0] == rec_key else None  # type: ignore[no-any-return]


def set_linear_fit(rec_key: str, fit: FitResult) -> None:
    st.session_state[LINEAR_FIT] = (rec_key, fit)


def report_html(run_id: int) -> str | None:
    """The HTML report last built for run ``run_id``, if any (one report per session)."""
    built = st.session_state.get(REPORT_HTML)
    return built[1] if built and built[0] == run_id else None  # type: ignore[no-any-return]


def set_report_html(run_id: int, html: str) -> None:
    st.session_state[REPORT_HTML] = (run_id, html)


def notify(kind: str, text: str, *, markdown: bool = False) -> None:
    """Queue a message for the next render (e.g. across st.switch_page).

    ``text`` is plain text and is escaped when shown; pass ``markdown=True``
    only for text whose every user- or file-derived part was escaped with
    :func:`app_support.text.esc`.
    """
    st.session_state[NOTICE] = (kind, text, markdown)


def withdraw_notice(expected: object) -> None:
    """Remove the queued notice if it is still ``expected`` (queued by this script run, not replaced since)."""
    if expected is not None and st.session_state.get(NOTICE) == expected:
        del st.session_state[NOTICE]


def queued_notice() -> object:
    """The notice queued for the next render, if any (compare with :func:`withdraw_notice`)."""
    return st.session_state.get(NOTICE)


def studies() -> dict[tuple[object, ...], object]:
    """Identifiability studies of this session by (run id, study, settings); bounded, pruned with the runs.

    Read it; store with :func:`add_study`.
    """
    cache: dict[tuple[object, ...], object] = st.session_state.setdefault(STUDIES, {})
    kept = {r.id for r in runs() if r.detailed}
    for k in [k for k in cache if k[0] not in kept]:
        del cache[k]
    while len(cache) > MAX_STUDIES:
        del cache[next(iter(cache))]
    return cache


def add_study(key: tuple[object, ...], result: object) -> None:
    """Store a study under ``key`` (run id first), dropping the oldest beyond :data:`MAX_STUDIES`."""
    cache = studies()
    cache.pop(key, None)
    cache[key] = result
    while len(cache) > MAX_STUDIES:
        del cache[next(iter(cache))]


def designs() -> list[tuple[str, object]]:
    """Candidate designs kept for comparison (at most :data:`MAX_DESIGNS`, oldest dropped); see :func:`add_design`."""
    kept: list[tuple[str, object]] = st.session_state.setdefault(DESIGNS, [])
    del kept[: max(0, len(kept) - MAX_DESIGNS)]
    return kept


def add_design(label: str, design: object) -> None:
    """Add a design to the comparison unless one of that label is there; the oldest go beyond :data:`MAX_DESIGNS`."""
    kept = designs()
    if label not in [d[0] for d in kept]:
        kept.append((label, design))
    del kept[: max(0, len(kept) - MAX_DESIGNS)]


def clear_designs() -> None:
    st.session_state[DESIGNS] = []


def monte_carlo() -> object:
    return st.session_state.get(MONTE_CARLO)


def set_monte_carlo(result: object) -> None:
    st.session_state[MONTE_CARLO] = result


def teaching() -> dict[str, object]:
    """The Teaching mode's demo: at most the fields record, check, system, linear, fit (one demo per session)."""
    return st.session_state.setdefault(TEACHING, {})  # type: ignore[no-any-return]


def design_kept() -> dict[str, object]:
    """The Excitation design page's predictions and last suggestion, with the inputs they were made for
    (see :data:`DESIGN_KEPT`)."""
    return st.session_state.setdefault(DESIGN_KEPT, {})  # type: ignore[no-any-return]


def require_records() -> dict[str, Record]:
    """The loaded records; stops the page with a hint when there are none."""
    recs = records()
    if not recs:
        st.info("Load a record first (Data page, or an example on the Home page).")
        st.stop()
    return recs


def friction() -> dict[str, object]:
    """The Friction & hysteresis page's records and results (one set per session; see :data:`FRICTION`)."""
    return st.session_state.setdefault(FRICTION, {})  # type: ignore[no-any-return]


def mdof() -> dict[str, Any]:
    """The Multi-DOF page's model, records and results (one set per session; see :data:`MDOF`)."""
    return st.session_state.setdefault(MDOF, {})  # type: ignore[no-any-return]


def multibody() -> dict[str, Any]:
    """The Multibody & interval page's runs and results (one set per session; see :data:`MULTIBODY`)."""
    return st.session_state.setdefault(MULTIBODY, {})  # type: ignore[no-any-return]
