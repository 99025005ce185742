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
other entry holds one value. Widget keys are here too, by page: ``key=state.DATA_UPLOAD``.

The run that is currently active is never summarised. Notices are plain text
(escaped when shown) unless queued with ``markdown=True``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import streamlit as st

from app_support.text import esc
from nlid_core.errors import DataValidationError
from nlid_core.estimate import FitOptions, FitResult
from nlid_core.models import DEFAULT_TERMS, ModelSettings, TermModel
from nlid_core.params import ParameterSet
from nlid_core.record import Record
from nlid_core.terms import TermDef, parse_custom
from nlid_core.validation import ValidationResult

RECORDS = "nlid_records"  # dict[str, Record], in load order
CONFIG = "nlid_model_config"  # ModelConfig
RUNS = "nlid_runs"  # list[Run]
ACTIVE_RUN = "nlid_active_run"  # int run id
VALIDATIONS = "nlid_validations"  # dict[(run id, record name, n_init), ValidationResult]
NOTICE = "nlid_notice"  # (kind, text, markdown) shown once on the next page render
LINEAR_FIT = "nlid_linear_fit"  # (record content key, FitResult) of the Nonlinearity page's linear model
REPORT_HTML = "nlid_report_html"  # (run id, html) of the last report built on the Export page
STUDIES = "nlid_studies"  # dict[(run id, study, settings...), result] of the Identifiability page
DESIGNS = "nlid_designs"  # list[(label, Excitation)] compared on the Excitation design page
MONTE_CARLO = "nlid_mc"  # the last Monte Carlo check of the Excitation design page
TEACHING = "nlid_teaching"  # dict of the Teaching mode's demo (records, fits, choices)
OPEN_STUDY = "nlid_open_study"  # StudyRef: the saved study open in this session (Studies page), or absent
SAVED_RUNS = "nlid_saved_runs"  # dict[(saved study id, session run id), (stored run id, label)]
ROLES = "nlid_roles"  # dict[record name, "fit" | "test"]: the role a split (or a benchmark) gave a record
LINEAGE = "nlid_lineage"  # dict[record name, (origin, first row, stop row)] of records cut from another
#: Studies kept per session (oldest dropped first; studies of runs no longer kept are dropped too).
MAX_STUDIES = 12
#: Candidate designs kept for comparison per session.
MAX_DESIGNS = 8

MAX_RECORDS_VARIABLE = "NLID_MAX_RECORDS"
MAX_RUNS_KEPT_VARIABLE = "NLID_MAX_RUNS_KEPT"
MAX_VALIDATIONS_VARIABLE = "NLID_MAX_VALIDATIONS"
MAX_RUNS_VARIABLE = "NLID_MAX_RUNS"
DEFAULT_MAX_RECORDS = 20
DEFAULT_MAX_RUNS_KEPT = 10
DEFAULT_MAX_VALIDATIONS = 10
DEFAULT_MAX_RUNS = 100
#: What a page says about a summarised run.
DROPPED = "this run's detailed results were dropped to save memory; re-run it"


def _env_int(name: str, default: int, minimum: int = 1) -> int:
    try:
        value = int(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value >= minimum else default


def max_records() -> int:
    return _env_int(MAX_RECORDS_VARIABLE, DEFAULT_MAX_RECORDS)


def max_runs_kept() -> int:
    return _env_int(MAX_RUNS_KEPT_VARIABLE, DEFAULT_MAX_RUNS_KEPT)


def max_validations() -> int:
    return _env_int(MAX_VALIDATIONS_VARIABLE, DEFAULT_MAX_VALIDATIONS)


def max_runs() -> int:
    return _env_int(MAX_RUNS_VARIABLE, DEFAULT_MAX_RUNS)


class SessionLimitError(DataValidationError):
    """A session limit (records per session) would be exceeded; the message says which and how to go on."""


#: A typed term as text: (name, force expression), e.g. ``("asym", "ka*x*abs(x)")``.
CustomSpec = tuple[str, str]


@lru_cache(maxsize=64)
def _parse_lines(lines: tuple[str, ...]) -> tuple[TermDef, ...]:
    return parse_custom(lines)


def custom_terms(specs: tuple[CustomSpec, ...]) -> tuple[TermDef, ...]:
    """The terms of ``(name, expression)`` pairs (parsed once per distinct set).

    Raises ModelSpecError (from ``parse_custom``) on a bad name or expression.
    """
    return _parse_lines(tuple(f"{name}={expr}" for name, expr in specs))


def parse_custom_text(text: str) -> tuple[CustomSpec, ...]:
    """``NAME=EXPR`` lines (blank lines skipped) as checked ``(name, expression)`` pairs.

    Raises ModelSpecError pointing at the bad line's name or expression.
    """
    terms = _parse_lines(tuple(ln.strip() for ln in str(text).splitlines() if ln.strip()))
    return tuple((t.name, t.force) for t in terms)


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """Everything the Identify page needs: model, parameters, estimator options, records to fit.

    ``custom`` holds the typed terms as ``(name, expression)`` text pairs, so a configuration stays
    picklable and comparable; :attr:`model` rebuilds them.
    """

    terms: tuple[str, ...]
    settings: ModelSettings
    params: ParameterSet
    options: FitOptions
    fit_records: tuple[str, ...]
    custom: tuple[CustomSpec, ...] = ()

    @property
    def model(self) -> TermModel:
        return TermModel(self.terms, self.settings, custom=custom_terms(self.custom))


@dataclass(frozen=True, kw_only=True)
class Run:
    """One identification run kept in the session history."""

    id: int
    label: str
    created: str
    config: ModelConfig
    result: FitResult
    elapsed_s: float
    detailed: bool = True  # False: ``result.records`` (the fitted signals) were dropped to save memory


@dataclass(frozen=True, kw_only=True)
class StudyRef:
    """The saved study open in a session: its id and name, its owner, and the engineer who opened it
    (a session whose engineer changed, e.g. after signing out, no longer has it open)."""

    id: int
    name: str
    owner: str
    viewer: str


def summarise(run: Run) -> Run:
    """``run`` without its per-record signals (keeps configuration, estimates, metrics and message)."""
    if not run.detailed:
        return run
    return dataclasses.replace(run, result=dataclasses.replace(run.result, records=()), detailed=False)


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


def reset_widget(key: str) -> None:
    """Forget a widget's value (it shows its default on the next run); ``key`` is one of the keys below."""
    st.session_state.pop(key, None)


def widget_value(key: str, initial: Any) -> Any:
    """A widget's current value, set to ``initial`` first when the widget has none (for widgets created
    without a default, whose value the page manages)."""
    if key not in st.session_state:
        st.session_state[key] = initial
    return st.session_state[key]


def peek(key: str, default: Any = None) -> Any:
    """A widget's current value (``default`` when it has none), read without setting it (in callbacks)."""
    return st.session_state.get(key, default)


def set_widget(key: str, value: Any) -> None:
    """Set a widget's value before it is drawn (the frontend then shows it)."""
    st.session_state[key] = value


CHOICES = "nlid_choices"  # dict[widget key, value]: choices kept across page changes (see remembered_choice)


def remembered_choice(key: str, options: Sequence[Any], default: Any) -> None:
    """Before a chooser ``key`` is drawn: give it the value chosen on an earlier visit of its page (Streamlit
    forgets a page's widgets when the page is left), or ``default``, when it has none or a stale one. Call
    :func:`remember_choice` after drawing it."""
    if st.session_state.get(key) in options:
        return
    kept = st.session_state.get(CHOICES, {}).get(key)
    st.session_state[key] = kept if kept in options else default


def remember_choice(key: str) -> None:
    """Keep chooser ``key``'s value for the next visit of its page."""
    if key in st.session_state:
        st.session_state.setdefault(CHOICES, {})[key] = st.session_state[key]


def restore_form(store: str, defaults: dict[str, Any]) -> None:
    """Give each widget of a form (keys of ``defaults``) the value :func:`keep_form` kept under ``store``,
    or its default, when it has none (Streamlit forgets a page's widget values when the page is left).
    Call before the widgets are drawn, and create them without a default value."""
    kept: dict[str, Any] = st.session_state.get(store, {})
    for key, default in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = kept.get(key, default)


def keep_form(store: str, keys: Iterable[str]) -> None:
    """Keep the current values of the widgets ``keys`` under ``store`` (see :func:`restore_form`)."""
    kept: dict[str, Any] = st.session_state.setdefault(store, {})
    for key in keys:
        if key in st.session_state:
            kept[key] = st.session_state[key]


def editor_base(key: str, default: Any) -> Any:
    """The data the ``st.data_editor`` of key ``key`` starts from: the table :func:`keep_editor` kept on an
    earlier visit of the page, else ``default``. It stays the same while the editor lives (Streamlit keeps
    the user's edits relative to it), so a page passes it on every run and keeps the edited table."""
    tables: dict[str, dict[str, Any]] = st.session_state.setdefault(EDITOR_TABLES, {})
    entry = tables.setdefault(key, {"latest": default})
    if key not in st.session_state or "base" not in entry:
        entry["base"] = entry["latest"]
    return entry["base"]


def keep_editor(key: str, value: Any) -> None:
    """Keep the edited table of the editor ``key`` for the next visit of the page (see :func:`editor_base`)."""
    st.session_state.setdefault(EDITOR_TABLES, {}).setdefault(key, {})["latest"] = value


def move_editor(old: str, new: str) -> None:
    """Let the editor ``new`` start from the table kept for the editor ``old`` (e.g. after a rename)."""
    tables: dict[str, dict[str, Any]] = st.session_state.setdefault(EDITOR_TABLES, {})
    if old in tables:
        tables[new] = {"latest": tables.pop(old).get("latest")}


def post(where: str, kind: str, text: str) -> None:
    """Queue a message (``kind`` success/info/warning/error, ``text`` markdown whose user data is escaped)
    for the next render of the page section ``where`` (messages from button callbacks)."""
    st.session_state.setdefault(PAGE_MESSAGES, {}).setdefault(where, []).append((kind, text))


def show_posts(where: str) -> None:
    """Show and forget the messages queued for ``where`` by :func:`post`."""
    for kind, text in st.session_state.get(PAGE_MESSAGES, {}).pop(where, []):
        show = getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")
        show(text)


def show_notice() -> None:
    notice = st.session_state.pop(NOTICE, None)
    if notice:
        kind, text, markdown = (*notice, False)[:3]
        show = getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")
        show(text if markdown else esc(text, 1000))


def require_records() -> dict[str, Record]:
    """The loaded records; stops the page with a hint when there are none."""
    recs = records()
    if not recs:
        st.info("Load a record first (Data page, or an example on the Home page).")
        st.stop()
    return recs


# --------------------------------------------------------------------------- widget keys
# Streamlit keeps a widget's value in session_state under its key (and a job's Cancel button under
# ``<job key>_cancel``). Charts, tables and containers need no entry: Streamlit keeps no state for them.
# Home
HOME_LOAD_EXAMPLE: Final = "load_example"
HOME_LOAD_SILVERBOX: Final = "load_silverbox"

# Data
DATA_UPLOAD: Final = "upload"
DATA_COLUMNS: Final = "columns"
DATA_UNITS: Final = "units"
DATA_FS: Final = "fs"
DATA_ROWS: Final = "rows"
DATA_LOAD_UPLOAD: Final = "load_upload"
DATA_RECORD: Final = "data_record"
DATA_TRIM_RANGE: Final = "trim_range"
DATA_APPLY_TRIM: Final = "apply_trim"
DATA_LOWPASS_HZ: Final = "lowpass_hz"
DATA_APPLY_FILTER: Final = "apply_filter"
DATA_DIFF_METHOD: Final = "diff_method"
DATA_APPLY_DERIVE: Final = "apply_derive"
DATA_REMOVE_RECORD: Final = "remove_record"
DATA_FORM: Final = "nlid_data_form"  # not a widget: the Data page's kept form values (see restore_form)
PAGE_MESSAGES: Final = "nlid_page_messages"  # not a widget: messages queued by callbacks, by page section
EDITOR_TABLES: Final = "nlid_editor_tables"  # not a widget: tables of data editors kept across visits
DATA_RESAMPLE: Final = "resample"
DATA_UPLOAD_PANEL: Final = "upload_panel"
FRIC_STICK_PANEL: Final = "fric_stick_panel"
DATA_SPLIT_BY: Final = "split_by"
DATA_SPLIT_TABLE: Final = "split_table"  # key_for(DATA_SPLIT_TABLE, record, by, version)
DATA_SPLIT: Final = "split_record"
DATA_RENAME_TO: Final = "rename_to"
DATA_RENAME: Final = "rename_record"

# Nonlinearity
NL_RECORD: Final = "nl_record"
NL_EVIDENCE_JOB: Final = "nl_evidence"
NL_LOOP_COLOR: Final = "loop_color"
NL_HARMONICS_AGAINST: Final = "harm_against"
NL_TONE1: Final = "tone1"
NL_TONE2: Final = "tone2"
NL_FRF_RECORDS: Final = "frf_records"
NL_FIT_LINEAR: Final = "fit_linear"
NL_BLA_MANUAL: Final = "nl_bla_manual"
NL_BLA_PERIOD: Final = "nl_bla_period"
NL_BLA_TRANSIENT: Final = "nl_bla_transient"
NL_BLA_SEGMENTS: Final = "nl_bla_segments"
NL_BLA_CUT: Final = "nl_bla_cut"
NL_BLA_DOWNLOAD: Final = "nl_bla_download"
NL_TABS: Final = "nl_tabs"
NL_USE_MODEL: Final = "nl_use_model"
NL_LINEAR_JOB: Final = "nl_linear_job"

# Model
MODEL_FIT_RECORDS: Final = "fit_records"
MODEL_TERMS: Final = "terms"
MODEL_METHOD: Final = "method"
MODEL_OUTPUTS: Final = "outputs"
MODEL_INPUT_HOLD: Final = "input_hold"
MODEL_INITIAL_STATE: Final = "initial_state"
MODEL_FORCE_THRESHOLD: Final = "force_threshold"
MODEL_CUSTOM: Final = "custom_terms"
MODEL_AUTO_GUESS: Final = "auto_guess"

# Identify
IDENTIFY_RUN: Final = "run_identification"
IDENTIFY_JOB: Final = "identification"
IDENTIFY_ACTIVE_RUN: Final = "active_run_select"
IDENTIFY_COMPARE_RUNS: Final = "compare_runs"
IDENTIFY_SAVE_LABEL: Final = "save_run_label"  # key_for(IDENTIFY_SAVE_LABEL, run id)
IDENTIFY_SAVE_RUN: Final = "save_run"
IDENTIFY_NEW_STUDY: Final = "save_run_new_study"  # key_for(IDENTIFY_NEW_STUDY, run id): name of a study to create
IDENTIFY_CREATE_STUDY: Final = "save_run_create_study"

# Studies (saved studies in the database) and sign-in
AUTH_SIGN_IN: Final = "auth_sign_in"
AUTH_SIGN_OUT: Final = "auth_sign_out"
STUDIES_PICK: Final = "studies_pick"
STUDIES_OPEN: Final = "studies_open"
STUDIES_CLOSE: Final = "studies_close"
STUDIES_NEW_NAME: Final = "studies_new_name"
STUDIES_NEW_WITH_RUN: Final = "studies_new_with_run"
STUDIES_CREATE: Final = "studies_create"
STUDIES_SAVE_RECORDS: Final = "studies_save_records"
STUDIES_NOTES: Final = "studies_notes"  # key_for(STUDIES_NOTES, study id, updated)
STUDIES_SAVE_NOTES: Final = "studies_save_notes"
STUDIES_RENAME_TO: Final = "studies_rename_to"  # key_for(STUDIES_RENAME_TO, study id)
STUDIES_RENAME: Final = "studies_rename"
STUDIES_DUPLICATE_TO: Final = "studies_duplicate_to"  # key_for(STUDIES_DUPLICATE_TO, study id)
STUDIES_DUPLICATE: Final = "studies_duplicate"
STUDIES_SHARE_WITH: Final = "studies_share_with"
STUDIES_SHARE: Final = "studies_share"
STUDIES_UNSHARE_WHO: Final = "studies_unshare_who"
STUDIES_UNSHARE: Final = "studies_unshare"
STUDIES_DELETE_CONFIRM: Final = "studies_delete_confirm"  # key_for(STUDIES_DELETE_CONFIRM, study id)
STUDIES_DELETE: Final = "studies_delete"
STUDIES_COMPARE_PARAM: Final = "studies_compare_param"
STUDIES_EXPORT: Final = "studies_export"
STUDIES_IMPORT_FILE: Final = "studies_import_file"
STUDIES_IMPORT_NAME: Final = "studies_import_name"
STUDIES_IMPORT: Final = "studies_import"
STUDIES_COMPARE_RUNS: Final = "studies_compare_runs"  # key_for(STUDIES_COMPARE_RUNS, study id)
STUDIES_BATCH_PARAM: Final = "studies_batch_param"
STUDIES_BATCH_CSV: Final = "studies_batch_csv"
STUDIES_BATCH_SPEC: Final = "studies_batch_spec"  # the spec text of "Run a Monte Carlo batch"
STUDIES_BATCH_UPLOAD: Final = "studies_batch_upload"
STUDIES_BATCH_STUDY: Final = "studies_batch_study"
STUDIES_BATCH_RESTART: Final = "studies_batch_restart"
STUDIES_BATCH_RUN: Final = "studies_batch_run"
STUDIES_BATCH_JOB: Final = "studies_batch_job"  # the job's Cancel button is f"{...}_cancel"
STUDIES_BATCH_RESUME: Final = "studies_batch_resume"
STUDIES_BATCH_RESUME_JOB: Final = "studies_batch_resume_job"

# Validate
VALIDATE_RECORD: Final = "val_record"
VALIDATE_N_INIT: Final = "n_init"
VALIDATE_CHANNEL: Final = "val_channel"
VALIDATE_INIT: Final = "val_init"

# Identifiability
IDENT_SENSITIVITY_JOB: Final = "sensitivity"
IDENT_PROFILE_PARAM: Final = "profile_param"
IDENT_PROFILE_POINTS: Final = "profile_points"
IDENT_RUN_PROFILE: Final = "run_profile"
IDENT_PROFILE_JOB: Final = "profile"
IDENT_N_STARTS: Final = "n_starts"
IDENT_RUN_MULTISTART: Final = "run_multistart"
IDENT_MULTISTART_JOB: Final = "multistart"
IDENT_LAMBDA_RANGE: Final = "lambda_range"
IDENT_RUN_REGULARISATION: Final = "run_regularisation"
IDENT_REGULARISATION_JOB: Final = "regularisation"
IDENT_STRUCTURE_VALIDATION: Final = "struct_val"
IDENT_RUN_STRUCTURE: Final = "run_structure"
IDENT_STRUCTURE_JOB: Final = "structure"
IDENT_TABS: Final = "ident_tabs"

# Excitation design
DESIGN_KIND: Final = "exc_kind"
DESIGN_F0: Final = "exc_f0"
DESIGN_F1: Final = "exc_f1"
DESIGN_AMPLITUDE: Final = "exc_amp"
DESIGN_DURATION: Final = "exc_duration"
DESIGN_FS: Final = "exc_fs"
DESIGN_STEPS: Final = "exc_steps"
DESIGN_DOWNLOAD: Final = "dl_excitation"
DESIGN_ADD_DESIGN: Final = "add_design"
DESIGN_PRIOR_SOURCE: Final = "prior_source"
DESIGN_PRIOR_TERMS: Final = "prior_terms"
DESIGN_NOISE_SD: Final = "noise_sd"
DESIGN_CLEAR_DESIGNS: Final = "clear_designs"
DESIGN_SUGGEST: Final = "suggest_design"
DESIGN_SUGGEST_JOB: Final = "suggest"
DESIGN_MC_RUNS: Final = "mc_runs"
DESIGN_RUN_MC: Final = "run_mc"
DESIGN_MC_JOB: Final = "monte_carlo"
DESIGN_PREDICT_JOB: Final = "predict_designs"
DESIGN_KEPT: Final = "nlid_design_kept"  # not a widget: {"predictions": (inputs, list), "suggestion": (inputs, ...)}

# Export
EXPORT_PARAMS_CSV: Final = "dl_params_csv"
EXPORT_JSON: Final = "dl_json"
EXPORT_VALIDATION_CSV: Final = "dl_validation"
EXPORT_BUILD_REPORT: Final = "build_report"
EXPORT_REPORT: Final = "dl_report"

# Teaching mode
TEACH_SYSTEM: Final = "teach_system"
TEACH_AMPLITUDE: Final = "teach_amp"
TEACH_BAND: Final = "teach_band"
TEACH_DURATION: Final = "teach_duration"
TEACH_MEASURE: Final = "teach_measure"
TEACH_TEST_JOB: Final = "teach_test"
TEACH_CHECK_JOB: Final = "teach_check"
TEACH_LINEAR_JOB: Final = "teach_linear"
TEACH_EVIDENCE_JOB: Final = "teach_evidence"
TEACH_TERMS: Final = "teach_terms"
TEACH_IDENTIFY: Final = "teach_identify"
TEACH_FIT_JOB: Final = "teach_fit"
TEACH_REVEAL: Final = "teach_reveal"
TEACH_FORM: Final = "teach_form"

# Keys of widgets repeated per term set, channel or run: ``key_for(MODEL_PARAMS, *terms)``
MODEL_PARAMS: Final = "params"
MODEL_WEIGHT: Final = "weight"
IDENT_PRIOR: Final = "prior"
DESIGN_PRIOR_VALUES: Final = "prior_values"


def key_for(base: str, *parts: object) -> str:
    """The key of widget ``base`` for one term set, channel or run: ``base_part1,part2``."""
    return f"{base}_{','.join(str(p) for p in parts)}"


# --------------------------------------------------------------------------- friction & hysteresis page
FRICTION: Final = "nlid_friction"  # dict: records (steady, presliding, truth), result, replay, stick-slip, Bouc-Wen
FRICTION_SOURCE: Final = "fric_source"
FRICTION_MASS: Final = "fric_mass"
FRICTION_FC: Final = "fric_fc"
FRICTION_FS: Final = "fric_fs"
FRICTION_VS: Final = "fric_vs"
FRICTION_SIGMA0: Final = "fric_sigma0"
FRICTION_SIGMA1: Final = "fric_sigma1"
FRICTION_SIGMA2: Final = "fric_sigma2"
FRICTION_NOISE: Final = "fric_noise"
FRICTION_SEED: Final = "fric_seed"
FRICTION_DWELL: Final = "fric_dwell"
FRICTION_PRE_DURATION: Final = "fric_pre_duration"
FRICTION_SIMULATE: Final = "fric_simulate"
FRICTION_SIMULATE_JOB: Final = "fric_sim_job"
FRICTION_UPLOAD_STEADY: Final = "fric_upload_steady"
FRICTION_UPLOAD_PRE: Final = "fric_upload_pre"
FRICTION_LOAD_UPLOADS: Final = "fric_load_uploads"
FRICTION_PICK_STEADY: Final = "fric_pick_steady"
FRICTION_PICK_PRE: Final = "fric_pick_pre"
FRICTION_USE_LOADED: Final = "fric_use_loaded"
FRICTION_FIX_MASS: Final = "fric_fix_mass"
FRICTION_KNOWN_MASS: Final = "fric_known_mass"
FRICTION_POLISH: Final = "fric_polish"
FRICTION_IDENTIFY: Final = "fric_identify"
FRICTION_IDENTIFY_JOB: Final = "fric_identify_job"
FRICTION_STICK_SLIP: Final = "fric_stick_slip"
FRICTION_STICK_SLIP_JOB: Final = "fric_stick_slip_job"
FRICTION_BW_SOURCE: Final = "fric_bw_source"
FRICTION_BW_RECORD: Final = "fric_bw_record"
FRICTION_BW_SEED: Final = "fric_bw_seed"
FRICTION_BW_IDENTIFY: Final = "fric_bw_identify"
FRICTION_BW_JOB: Final = "fric_bw_job"
FRICTION_DL_JSON: Final = "fric_dl_json"
FRICTION_DL_PLATEAUS: Final = "fric_dl_plateaus"
FRICTION_DL_BW: Final = "fric_dl_bw"
TEACH_FRICTION_EXPERIMENT: Final = "teach_fric_experiment"
TEACH_FRICTION_RUN: Final = "teach_fric_run"
TEACH_FRICTION_JOB: Final = "teach_fric_job"


def friction() -> dict[str, object]:
    """The Friction & hysteresis page's records and results (one set per session; see :data:`FRICTION`)."""
    return st.session_state.setdefault(FRICTION, {})  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- multi-DOF page
MDOF: Final = "nlid_mdof"  # dict: model, records, truth, start, plan, stage reports, one-shot, validations
MDOF_FORM: Final = "nlid_mdof_form"  # not a widget: the Multi-DOF page's kept form values (see restore_form)
MDOF_TABS: Final = "mdof_tabs"
MDOF_SOURCE: Final = "mdof_source"
MDOF_CHAIN_N: Final = "mdof_chain_n"
MDOF_CHAIN_TERMS: Final = "mdof_chain_terms"
MDOF_CHAIN_FIXED_END: Final = "mdof_chain_fixed_end"
MDOF_CHAIN_DRIVEN: Final = "mdof_chain_driven"
MDOF_PLATFORM_IDENTICAL: Final = "mdof_platform_identical"
MDOF_UPLOAD: Final = "mdof_upload"
MDOF_DL_MODEL: Final = "mdof_dl_model"
MDOF_RECORDS_FROM: Final = "mdof_records_from"
MDOF_LEVEL: Final = "mdof_level"
MDOF_NOISE: Final = "mdof_noise"
MDOF_FS: Final = "mdof_fs"
MDOF_DURATION: Final = "mdof_duration"
MDOF_SEED: Final = "mdof_seed"
MDOF_START_ERROR: Final = "mdof_start_error"
MDOF_SIMULATE: Final = "mdof_simulate"
MDOF_SIMULATE_JOB: Final = "mdof_simulate_job"
MDOF_MAP_KIND: Final = "mdof_map_kind"  # key_for(MDOF_MAP_KIND, record name)
MDOF_MAP_HELD: Final = "mdof_map_held"  # key_for(MDOF_MAP_HELD, record name)
MDOF_MAP_USE: Final = "mdof_map_use"  # key_for(MDOF_MAP_USE, record name)
MDOF_MAP: Final = "mdof_map"
MDOF_SHOW_RECORD: Final = "mdof_show_record"
MDOF_FRF_RECORDS: Final = "mdof_frf_records"
MDOF_DL_RECORD: Final = "mdof_dl_record"  # key_for(MDOF_DL_RECORD, record name)
MDOF_PLAN_EDITOR: Final = "mdof_plan_editor"  # key_for(MDOF_PLAN_EDITOR, plan version)
MDOF_PLAN_RESET: Final = "mdof_plan_reset"
MDOF_PLAN_UPLOAD: Final = "mdof_plan_upload"
MDOF_PLAN_LOAD: Final = "mdof_plan_load"
MDOF_DL_PLAN: Final = "mdof_dl_plan"
MDOF_RUN_NEXT: Final = "mdof_run_next"
MDOF_RUN_ALL: Final = "mdof_run_all"
MDOF_RESTART: Final = "mdof_restart"
MDOF_STAGE_JOB: Final = "mdof_stage_job"  # key_for(MDOF_STAGE_JOB, stage number)
MDOF_ONE_SHOT: Final = "mdof_one_shot"
MDOF_ONE_SHOT_JOB: Final = "mdof_one_shot_job"
MDOF_VALIDATE_RECORD: Final = "mdof_validate_record"
MDOF_FRF_OUTPUT: Final = "mdof_frf_output"
MDOF_VALIDATE_JOB: Final = "mdof_validate_job"
MDOF_DL_ESTIMATES: Final = "mdof_dl_estimates"
MDOF_DL_FINAL_MODEL: Final = "mdof_dl_final_model"
MDOF_DL_FINAL_PLAN: Final = "mdof_dl_final_plan"


def mdof() -> dict[str, Any]:
    """The Multi-DOF page's model, records and results (one set per session; see :data:`MDOF`)."""
    return st.session_state.setdefault(MDOF, {})  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- multibody & interval page
MULTIBODY: Final = "nlid_multibody"  # dict: simulated runs, trajectory fit, forward analysis, interval inverse results
MULTIBODY_FORM: Final = "nlid_multibody_form"  # not a widget: the page's kept form values (see restore_form)
MB_TABS: Final = "mb_tabs"
MB_LENGTH_OA: Final = "mb_length_oa"
MB_LENGTH_AB: Final = "mb_length_ab"
MB_HEIGHT: Final = "mb_height"
MB_WIDTH: Final = "mb_width"
MB_DENSITY: Final = "mb_density"
MB_E_OA: Final = "mb_e_oa"
MB_E_AB: Final = "mb_e_ab"
MB_NU: Final = "mb_nu"
MB_N_OA: Final = "mb_n_oa"
MB_N_AB: Final = "mb_n_ab"
MB_DT: Final = "mb_dt"
MB_RHO_INF: Final = "mb_rho_inf"
MB_PRESET: Final = "mb_preset"
MB_THETA1: Final = "mb_theta1"
MB_THETA2: Final = "mb_theta2"
MB_T_END: Final = "mb_t_end"
MB_DT_OUT: Final = "mb_dt_out"
MB_SIMULATE: Final = "mb_simulate"
MB_SIMULATE_JOB: Final = "mb_simulate_job"
MB_ANIMATION_LAYOUT: Final = "mb_animation_layout"
MB_EXAGGERATE: Final = "mb_exaggerate"
MB_DL_SIMULATED: Final = "mb_dl_simulated"
MB_TRAJ_SOURCE: Final = "mb_traj_source"
MB_TRAJ_UPLOAD: Final = "mb_traj_upload"
MB_FREE: Final = "mb_free"
MB_METHOD: Final = "mb_method"
MB_IDENTIFY: Final = "mb_identify"
MB_IDENTIFY_JOB: Final = "mb_identify_job"
MB_DL_FIT: Final = "mb_dl_fit"
MB_MID: Final = "mb_mid"  # key_for(MB_MID, parameter): an interval's midpoint
MB_RADIUS: Final = "mb_radius"  # key_for(MB_RADIUS, parameter): an interval's radius
MB_USE_E_AB: Final = "mb_use_e_ab"
MB_ORDER: Final = "mb_order"
MB_KIND: Final = "mb_kind"
MB_N_CHECK: Final = "mb_n_check"
MB_FORWARD: Final = "mb_forward"
MB_FORWARD_JOB: Final = "mb_forward_job"
MB_DL_BOUNDS: Final = "mb_dl_bounds"
MB_FWD_RELATIVE: Final = "mb_fwd_relative"
MB_INV_RELATIVE: Final = "mb_inv_relative"
MB_BOUNDS_SOURCE: Final = "mb_bounds_source"
MB_BOUNDS_UPLOAD: Final = "mb_bounds_upload"
MB_INV_FREE: Final = "mb_inv_free"
MB_INV_FIXED: Final = "mb_inv_fixed"  # key_for(MB_INV_FIXED, parameter): a held value in the interval inverse
MB_INV_ORDER: Final = "mb_inv_order"
MB_INV_KIND: Final = "mb_inv_kind"
MB_POPULATION: Final = "mb_population"
MB_ITERATIONS: Final = "mb_iterations"
MB_SEED: Final = "mb_seed"
MB_INVERSE: Final = "mb_inverse"
MB_INVERSE_JOB: Final = "mb_inverse_job"
MB_DL_INVERSE: Final = "mb_dl_inverse"


def multibody() -> dict[str, Any]:
    """The Multibody & interval page's runs and results (one set per session; see :data:`MULTIBODY`)."""
    return st.session_state.setdefault(MULTIBODY, {})  # type: ignore[no-any-return]
