"""Saved studies in the dashboard: the study store of the server process and the actions of the Studies
page and of the Identify page's *Save run to study*.

One :class:`~nlid_core.store.db.Store` per server process (``st.cache_resource`` keyed by the database
URL: ``NLID_DATABASE_URL``, else the SQLite file in ``NLID_DATA_DIR``; see
:mod:`nlid_core.store.db`). A database that cannot be opened or stops answering raises
:class:`StoreUnavailable` with a specific message; the Studies page shows it and every other page works
as before (the session's records and runs never depend on the database).

Every action takes the signed-in engineer's owner name (:mod:`app_support.identity`) and passes it to
the store, which filters every query on it: a study of another engineer is "no such study" unless it
was shared with this one, and shared studies are read-only here (open, compare, export, copy).

The actions are called from button callbacks (they run before the page is drawn, so the sidebar shows
the open study at once) and report through :func:`app_support.state.post` under :data:`POSTS`; every
user- or file-derived text in a message is escaped.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

import pandas as pd
import sqlalchemy as sa
import streamlit as st

from app_support import identity, state
from app_support.text import esc, plain
from nlid_core.batch.run import (
    BatchResult,
    SPEC_LABEL,
    BatchStatus,
    GridRow,
    MonteCarloSummary,
    ParameterCoverage,
    batch_status,
    summarize_grid,
    summarize_monte_carlo,
)
from nlid_core.errors import DataValidationError, NlidError
from nlid_core.estimate import FitOptions, FitResult, Prior, identify
from nlid_core.models import ModelSettings, TermModel
from nlid_core.params import Parameter, ParameterSet
from nlid_core.quantity import quantity
from nlid_core.record import Record
from nlid_core.report import result_to_dict
from nlid_core.store import archive, db
from nlid_core.store import studies as saved
from nlid_core.store.schema import MAX_NAME_LENGTH
from nlid_core.validation import ValidationResult, validate

__all__ = [
    "POSTS",
    "StoreUnavailable",
    "StudyRow",
    "get_store",
    "call",
    "overview",
    "overview_table",
    "records_table",
    "study_records",
    "shares",
    "compare_display",
    "current_study",
    "run_config",
    "default_label",
    "check_session_names",
    "create_from_session",
    "add_session_records",
    "open_into_session",
    "save_run",
    "compare",
    "study_runs",
    "individual_runs",
    "default_compared",
    "BatchView",
    "batch_view",
    "monte_carlo_parameters",
    "monte_carlo_table",
    "grid_table",
    "batch_estimates",
    "batch_csv",
    "resume_command",
    "owner_text",
]

#: Section of the Studies page where the actions' messages are shown (:func:`app_support.state.post`).
POSTS: Final = "studies"
#: Section of the Studies page where the import reports (beside the import button).
IMPORT_POSTS: Final = "studies_import"
#: Section of the Identify page where *Save run to study* reports.
RUN_POSTS: Final = "save_run"

T = TypeVar("T")


class StoreUnavailable(DataValidationError):
    """The study database cannot be opened or does not answer (the message says which and why)."""


@st.cache_resource(max_entries=4, show_spinner=False)
def _open(url: str) -> db.Store:
    """The store at ``url``, opened (and migrated) once per server process (read-only afterwards)."""
    return db.open_store(url)


def _shown_url(url: str) -> str:
    try:
        return str(sa.make_url(url).render_as_string(hide_password=True))
    except Exception:  # not even a URL: say so without repeating it
        return "the configured URL"


def _reason(exc: BaseException) -> str:
    lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return plain(f"{type(exc).__name__}: {lines[0] if lines else ''}", 300)


def get_store() -> db.Store:
    """The study store of this server process.

    Raises
    ------
    StoreUnavailable
        The URL is not SQLite/PostgreSQL, the file or server cannot be reached, or its schema is one
        this version cannot migrate. Not cached: the next page run tries again.
    """
    url = db.default_url()
    try:
        return _open(url)
    except DataValidationError as exc:
        raise StoreUnavailable(f"the study database cannot be opened: {exc}") from None
    except (sa.exc.SQLAlchemyError, OSError) as exc:
        raise StoreUnavailable(
            f"the study database at {_shown_url(url)} cannot be opened ({_reason(exc)})") from None


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` with a database failure (connection lost, disk full) as :class:`StoreUnavailable`."""
    try:
        return fn(*args, **kwargs)
    except (sa.exc.SQLAlchemyError, OSError) as exc:
        raise StoreUnavailable(f"the study database did not answer ({_reason(exc)}); nothing was changed"
                               ) from None


# --------------------------------------------------------------------------- names


def owner_text(owner: str) -> str:
    """An owner name as people read it: the e-mail or user name it was made from (escapes decoded)."""
    text = owner[5:] if owner.startswith("sub--") else owner
    if "--" in text:  # a long identity shortened with a hash: shown as stored
        return owner
    try:
        raw = re.sub(r"-([0-9a-f]{2})", lambda m: f"%{m.group(1)}", text)
        from urllib.parse import unquote

        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return owner


_BAD_NAME_CHARS = re.compile(r"[^\w .+(),=#-]+")


def default_label(run: state.Run) -> str:
    """A label for a saved run that the store accepts: ``run <id> <method> <terms>``, shortened."""
    text = _BAD_NAME_CHARS.sub(" ", f"run {run.id} {run.result.method} {','.join(run.config.terms)}")
    return re.sub(r" {2,}", " ", text).strip()[:MAX_NAME_LENGTH].strip()


def check_session_names(recs: Mapping[str, Record]) -> None:
    """Raise DataValidationError naming the first session record whose name a study cannot hold."""
    for name in recs:
        try:
            saved.validate_name(name, "records")
        except DataValidationError:
            raise DataValidationError(
                f"the record {name!r} has a name a study cannot hold (letters, digits, spaces and _ . - + ( ) , = #,"
                " starting with a letter or digit, at most 100 characters); rename it on the Data page") from None


# --------------------------------------------------------------------------- overview


@dataclasses.dataclass(frozen=True, kw_only=True)
class StudyRow:
    """A study with its numbers of records and runs, as the Studies page lists it."""

    study: saved.Study
    n_records: int
    n_runs: int


def _counts(store: db.Store, ids: Sequence[int]) -> tuple[dict[int, int], dict[int, int]]:
    """Records and runs per study, for study ids the caller may read (from ``list_studies``)."""
    from nlid_core.store.schema import runs, study_records

    if not ids:
        return {}, {}
    with store.read() as conn:
        nrec = conn.execute(sa.select(study_records.c.study_id, sa.func.count())
                            .where(study_records.c.study_id.in_(ids)).group_by(study_records.c.study_id)).all()
        nrun = conn.execute(sa.select(runs.c.study_id, sa.func.count()).where(runs.c.study_id.in_(ids))
                            .group_by(runs.c.study_id)).all()
    return {int(r[0]): int(r[1]) for r in nrec}, {int(r[0]): int(r[1]) for r in nrun}


def overview(store: db.Store, owner: str) -> list[StudyRow]:
    """The engineer's studies, then those shared with them (``list_studies``), with their sizes."""
    found = call(saved.list_studies, store, owner)
    nrec, nrun = call(_counts, store, [s.id for s in found])
    return [StudyRow(study=s, n_records=nrec.get(s.id, 0), n_runs=nrun.get(s.id, 0)) for s in found]


def study_records(store: db.Store, owner: str, study_id: int) -> tuple[saved.StoredRecord, ...]:
    """The records of a study ``owner`` may read (no samples)."""
    return call(saved.list_records, store, owner, study_id)


def shares(store: db.Store, owner: str, study_id: int) -> tuple[str, ...]:
    """The engineers ``owner``'s study is shared with (owner names)."""
    return call(saved.list_shares, store, owner, study_id)


def records_table(stored: Sequence[saved.StoredRecord]) -> pd.DataFrame:
    """The records of a study: name, samples, sampling rate, channels."""
    return pd.DataFrame({
        "record": [s.name for s in stored],
        "samples": [s.n_samples for s in stored],
        "rate [Hz]": [s.fs_hz for s in stored],
        "channels": [", ".join(s.channels) for s in stored],
    })


def _when(value: _dt.datetime) -> str:
    return value.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def overview_table(rows: Sequence[StudyRow], owner: str) -> pd.DataFrame:
    """Name, owner ("you" for the engineer's own), last update, numbers of records and runs."""
    return pd.DataFrame({
        "study": [r.study.name for r in rows],
        "owner": ["you" if r.study.owner == owner else owner_text(r.study.owner) for r in rows],
        "updated": [_when(r.study.updated) for r in rows],
        "records": [r.n_records for r in rows],
        "runs": [r.n_runs for r in rows],
    })


def current_study(owner: str) -> state.StudyRef | None:
    """The session's open study, checked against the database: dropped when it is gone or no longer
    readable by ``owner`` (deleted, unshared, or not theirs), renamed when renamed elsewhere. When the
    database does not answer, the session's own note is returned unchecked (it holds no data)."""
    ref = state.open_study(owner)
    if ref is None:
        return None
    try:
        study = call(saved.get_study, get_store(), owner, ref.id)
    except StoreUnavailable:
        return ref
    except DataValidationError:
        state.set_open_study(None)
        return None
    if (study.name, study.owner) != (ref.name, ref.owner):
        ref = dataclasses.replace(ref, name=study.name, owner=study.owner)
        state.set_open_study(ref)
    return ref


# --------------------------------------------------------------------------- records and runs


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
    note = "reopened from a saved study: estimated again from the saved estimates"
    return dataclasses.replace(fit, method=str(result.get("method") or fit.method), warnings=(*fit.warnings, note))


def _saved_validations(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    doc = result.get("validation")
    if not isinstance(doc, Mapping):
        return []
    listed = doc.get("records")
    return [v for v in (listed if isinstance(listed, list) else [doc]) if isinstance(v, Mapping)]


def restore_runs(store: db.Store, owner: str, study: saved.Study) -> tuple[int, list[str]]:
    """Bring a study's individual runs into the session's history (their configuration, a fit rebuilt by
    :func:`restore_fit`, their validations run again) and the roles of its records; the newest run becomes
    the active one. Runs whose records the session lacks are left out. Returns the runs brought back and a
    line per run that could not be."""
    recs = state.records()
    problems: list[str] = []
    restored = 0
    roles: dict[str, str] = {}
    done = {stored_id for (sid, _), (stored_id, _) in state.saved_runs().items() if sid == study.id}
    for run in individual_runs(call(saved.list_runs, store, owner, study.id)):
        if run.id in done:  # in this session already
            continue
        try:
            cfg = config_from_doc(run.config)
            missing = [n for n in cfg.fit_records if n not in recs]
            if missing:
                problems.append(f"{run.label}: the study lacks its record(s) {', '.join(missing)}")
                continue
            t0 = time.perf_counter()
            fit = restore_fit(cfg, run.result, recs)
        except (NlidError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{run.label}: {plain(str(exc))}")
            continue
        session_run = state.add_run(cfg, fit, time.perf_counter() - t0)
        state.saved_runs()[(study.id, session_run.id)] = (run.id, run.label)
        restored += 1
        given = run.config.get("roles")
        if isinstance(given, Mapping):
            roles.update({str(k): str(v) for k, v in given.items() if v in state.ROLE_NAMES})
        if fit.success:
            for v in _saved_validations(run.result):
                name = str(v.get("record", ""))
                if name in recs:
                    n_init = int(v.get("n_init", 50))
                    init = str(v.get("init", "estimate"))
                    try:
                        val = validate(fit, recs[name], n_init=n_init, init=init)
                    except NlidError as exc:
                        problems.append(f"{run.label}: validation on {name}: {plain(str(exc))}")
                    else:
                        state.add_validation((session_run.id, name, n_init if init != "fit" else 0), val)
        state.set_config(cfg)
    for name, role in roles.items():
        if name in recs:
            state.roles()[name] = role
    return restored, problems


def create_from_session(store: db.Store, owner: str, name: str, *, with_run: bool) -> saved.Study:
    """A new study of ``owner`` holding the session's records and, with ``with_run``, its active run.

    Raises DataValidationError (a bad or taken name, a record name a study cannot hold); nothing is
    written then.
    """
    recs = dict(state.records())
    check_session_names(recs)
    run = state.active_run() if with_run else None
    label = default_label(run) if run is not None else ""
    study = call(saved.create_study, store, owner, name.strip(), records=recs,
                 runs=[_run_doc(run, label)] if run is not None else [])
    if run is not None:
        stored = call(saved.list_runs, store, owner, study.id)
        if stored:
            state.saved_runs()[(study.id, run.id)] = (stored[-1].id, label)
    return study


def _same(rec: Record, stored: saved.StoredRecord) -> bool:
    """The session record holds the data of the stored one (compared under the stored record's own name)."""
    return saved.encode_record(dataclasses.replace(rec, name=stored.record_name)).sha256 == stored.sha256


def add_session_records(store: db.Store, owner: str, study_id: int, names: Sequence[str] | None = None
                        ) -> tuple[list[str], list[str], list[str]]:
    """Add the session's records (or those named) that the study lacks.

    Returns
    -------
    added, present, conflicting : list of str
        Names added; names the study holds with the same data; names it holds with other data (kept as
        they are: rename the session record to save it too).
    """
    new, present, conflicting = _sorted_records(store, owner, study_id, names)
    if new:
        call(saved.add_records, store, owner, study_id, new)
    return list(new), present, conflicting


def _sorted_records(store: db.Store, owner: str, study_id: int,
                    names: Sequence[str] | None) -> tuple[dict[str, Record], list[str], list[str]]:
    """The session records (``names``, default all) the study lacks, holds with the same data, holds with other data."""
    recs = state.records()
    wanted = {n: recs[n] for n in (names if names is not None else list(recs)) if n in recs}
    check_session_names(wanted)
    stored = {s.name: s for s in call(saved.list_records, store, owner, study_id)}
    present = [n for n, r in wanted.items() if n in stored and _same(r, stored[n])]
    conflicting = [n for n in wanted if n in stored and n not in present]
    return {n: r for n, r in wanted.items() if n not in stored}, present, conflicting


def _new_session_records(store: db.Store, owner: str, study_id: int, names: list[str]) -> dict[str, Record]:
    """The session records ``names`` that the study lacks (by name)."""
    return _sorted_records(store, owner, study_id, names)[0]


def open_into_session(store: db.Store, owner: str, study_id: int) -> tuple[state.StudyRef, list[str], list[str]]:
    """Load a study's records into the session as the Data page loads uploads, and make it the open study.

    Records the session already holds under the same name with the same data are not loaded twice.
    Returns the open study and the names loaded and already present (a loaded record whose name is
    taken by other data gets ``name (2)``, as uploads do).

    Raises DataValidationError (no such study for ``owner``; SessionLimitError when the session would
    hold too many records: nothing is loaded then).
    """
    study = call(saved.get_study, store, owner, study_id)
    listed = call(saved.list_records, store, owner, study_id)
    recs = state.records()
    present = [s.name for s in listed if s.name in recs and _same(recs[s.name], s)]
    todo = [s for s in listed if s.name not in present]
    if len(todo) > state.room_for_records():
        raise state.SessionLimitError(
            f"the study has {len(todo)} records this session does not hold, and the session has room for"
            f" {state.room_for_records()} more ({state.max_records()} at most); remove records on the Data page"
            " first")
    loaded = [dataclasses.replace(call(saved.load_record, store, owner, study_id, s.name), name=s.name)
              for s in todo]
    names = state.add_records(loaded)
    if names:
        cfg = state.config()
        if cfg is None or not cfg.fit_records:
            state.set_config(state.default_config(fit_records=(names[0],)))
    ref = state.StudyRef(id=study.id, name=study.name, owner=study.owner, viewer=owner)
    state.set_open_study(ref)
    return ref, names, present


def save_run(store: db.Store, owner: str, ref: state.StudyRef, run: state.Run, label: str) -> saved.Run:
    """Save a session run (configuration and result) into the open study, with the records it was fitted
    on that the study lacks.

    Raises DataValidationError: a shared study (only its owner adds runs), a bad label, the run saved
    there already.
    """
    if ref.owner != owner:
        raise DataValidationError(f"{ref.name!r} is shared with you by {owner_text(ref.owner)}; only its owner can"
                                  " add runs. Create a study of your own to save this run")
    done = state.saved_runs().get((ref.id, run.id))
    if done is not None:
        raise DataValidationError(f"run #{run.id} is saved in {ref.name!r} already (as {done[1]!r})")
    text = saved.validate_name(label.strip() if isinstance(label, str) else label, "label")
    new = _new_session_records(store, owner, ref.id, [n for n in run.config.fit_records if n in state.records()])
    # the records it lacks and the run in one transaction: both land or neither
    stored = call(saved.add_run, store, owner, ref.id, label=text, config=run_config(run.config),
                  result=result_to_dict(run.result, run_validations(run)), success=run.result.success, records=new)
    state.saved_runs()[(ref.id, run.id)] = (stored.id, text)
    return stored


def resave_validations(run: state.Run) -> str | None:
    """Write ``run``'s validations into its saved copy in the open study, when it is saved there and the
    study is the viewer's own; returns a line to show when that failed (None: written, or nothing to do)."""
    user = identity.current_user()
    ref = state.open_study(user.owner) if user is not None else None
    if ref is None or ref.owner != ref.viewer:
        return None
    done = state.saved_runs().get((ref.id, run.id))
    if done is None:
        return None
    try:
        call(saved.update_run_result, get_store(), ref.owner, ref.id, done[0],
             result_to_dict(run.result, run_validations(run)))
    except DataValidationError as exc:
        return f"The validation was not saved in {ref.name!r}: {exc}"
    return None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Comparison:
    """The runs of a study side by side (``compare_runs``) and the unit of each parameter."""

    frame: pd.DataFrame
    parameters: tuple[str, ...]
    units: dict[str, str]
    scores: dict[int, dict[str, str]] = dataclasses.field(default_factory=dict)


#: With more individual runs than this, the Compare tab asks which to compare.
COMPARE_PICK_ABOVE: Final = 12
#: The newest this many individual runs are compared by default.
COMPARE_DEFAULT: Final = 8


def study_runs(store: db.Store, owner: str, study_id: int) -> tuple[saved.Run, ...]:
    """Every run of a study, oldest first (batch items included)."""
    return call(saved.list_runs, store, owner, study_id)


def individual_runs(runs: Sequence[saved.Run]) -> tuple[saved.Run, ...]:
    """The runs saved one by one (from the Identify page or ``studies add-run``): not a batch's items nor its
    ``batch spec`` run."""
    return tuple(r for r in runs if r.item_key is None and r.label != SPEC_LABEL)


def default_compared(runs: Sequence[saved.Run]) -> list[int]:
    """Ids of the runs compared when none was chosen: all of them up to :data:`COMPARE_PICK_ABOVE`, else the
    newest :data:`COMPARE_DEFAULT`."""
    ids = [r.id for r in runs]
    return ids if len(ids) <= COMPARE_PICK_ABOVE else ids[-COMPARE_DEFAULT:]


def compare(store: db.Store, owner: str, study_id: int, run_ids: Sequence[int] | None = None,
            runs: Sequence[saved.Run] | None = None) -> Comparison:
    """Parameters per saved run (value and standard error), with the parameters' units.

    ``run_ids`` limits the comparison to those runs (default: every run); ``runs`` are the study's runs when
    the caller has read them already (their order and units are read from them).
    """
    frame = call(saved.compare_runs, store, owner, study_id, run_ids)
    found = [c for c in frame.columns if c not in ("label", "success", "cost") and not c.endswith(" stderr")]
    units: dict[str, str] = {}
    order: dict[str, None] = {}  # the model's order (the stored results list parameters by name)
    wanted = None if run_ids is None else set(run_ids)
    listed_runs = runs if runs is not None else call(saved.list_runs, store, owner, study_id)
    for run in (r for r in listed_runs if wanted is None or r.id in wanted):
        listed = run.config.get("parameters")
        for p in listed if isinstance(listed, list) else []:
            if isinstance(p, Mapping) and p.get("name") in found:
                order.setdefault(str(p["name"]))
        terms = run.result.get("terms")  # a run saved without its parameter list: the model's terms
        for name in terms if isinstance(terms, list) else []:
            if name in found:
                order.setdefault(str(name))
        doc = run.result.get("parameters")
        if isinstance(doc, Mapping):
            for name, p in doc.items():
                if isinstance(p, Mapping) and isinstance(p.get("unit"), str):
                    units[str(name)] = str(p["unit"])
    params = tuple(order) + tuple(c for c in found if c not in order)
    cols = ["label", "success", "cost"] + [c for n in params for c in (n, f"{n} stderr")]
    scores = {run.id: run_scores(run.result) for run in listed_runs if wanted is None or run.id in wanted}
    return Comparison(frame=frame[[c for c in cols if c in frame.columns]], parameters=params, units=units,
                      scores=scores)


def run_scores(result: Mapping[str, Any]) -> dict[str, str]:
    """A saved run's fit and validation RMSEs (in a readable prefix of each record's unit) and fit percentages,
    by row name: ``"fit RMSE (rec: x)"``, ``"validation RMSE (test: x)"``."""
    out: dict[str, str] = {}
    metrics = result.get("metrics")
    channels = metrics.get("channels") if isinstance(metrics, Mapping) else None
    for m in channels if isinstance(channels, list) else []:
        if isinstance(m, Mapping) and isinstance(m.get("rmse"), (int, float)):
            where = f"{m.get('record', '')}: {m.get('channel', '')}"
            out[f"fit RMSE ({where})"] = quantity(float(m["rmse"]), str(m.get("unit", "")), 4)
    for v in _saved_validations(result):
        chans = v.get("channels")
        for chan, m in (chans.items() if isinstance(chans, Mapping) else []):
            if isinstance(m, Mapping) and isinstance(m.get("rmse"), (int, float)):
                where = f"{v.get('record', '')}: {chan}"
                out[f"validation RMSE ({where})"] = quantity(float(m["rmse"]), str(m.get("unit", "")), 4)
                if isinstance(m.get("fit_percent"), (int, float)):
                    out[f"validation fit % ({where})"] = f"{float(m['fit_percent']):.2f}"
    return out


def compare_display(comp: Comparison) -> pd.DataFrame:
    """The comparison as the Identify page shows its runs: a column per saved run (``#id label``), a row per
    parameter (named in the column ``parameter``) with ``value ± standard error`` (6 and 3 significant
    digits), then the cost and whether the run converged."""
    frame = comp.frame
    data: dict[str, dict[str, str]] = {}
    for rid, row in frame.iterrows():
        col: dict[str, str] = {}
        for name in comp.parameters:
            value = row.get(name)
            se = row.get(f"{name} stderr")
            if value is None or not math.isfinite(float(value)):
                col[name] = ""
                continue
            err = f" ± {float(se):.3g}" if se is not None and math.isfinite(float(se)) else ""
            col[name] = f"{float(value):.6g}{err}"
        cost = row.get("cost")
        col["cost"] = f"{float(cost):.6g}" if cost is not None and math.isfinite(float(cost)) else ""
        col["converged"] = "yes" if bool(row.get("success")) else "no"
        col.update(comp.scores.get(int(rid), {}))  # type: ignore[call-overload]
        data[f"#{rid} {row['label']}"] = col
    return pd.DataFrame(data).fillna("").rename_axis("parameter").reset_index()


def parameter_series(comp: Comparison, parameter: str) -> tuple[list[str], list[float], list[float]]:
    """Labels, values and standard errors of one parameter across the compared runs."""
    frame = comp.frame
    labels = [f"#{i} {lab}" for i, lab in zip(frame.index, frame["label"])]

    def col(name: str) -> list[float]:
        if name not in frame.columns:
            return [math.nan] * len(frame)
        return [float(v) if v is not None else math.nan for v in frame[name].tolist()]

    return labels, col(parameter), col(f"{parameter} stderr")


# --------------------------------------------------------------------------- batch studies


@dataclasses.dataclass(frozen=True, kw_only=True)
class BatchView:
    """The latest run set of a batch study, as the Studies page's *Batch* tab shows it.

    Attributes
    ----------
    status : BatchStatus
        Progress of the set (:func:`nlid_core.batch.run.batch_status`).
    spec_toml : str
        The spec's text (from the set's ``batch spec`` run; empty when missing).
    monte_carlo : MonteCarloSummary or None
        A Monte Carlo set's summary over its stored draws.
    grid : tuple of GridRow
        A grid set's stored items.
    items : pandas.DataFrame
        One row per stored item: ``item``, ``label``, ``success``, ``message``, ``cost`` and, per parameter,
        its value and ``stderr`` (Monte Carlo also ``ci low``, ``ci high``, ``truth``, ``covers``).
    parameters : tuple of str
        Parameter names in the order of the first item that has them.
    units : dict of str to str
        Unit per parameter where known.
    """

    status: BatchStatus
    spec_toml: str
    monte_carlo: MonteCarloSummary | None
    grid: tuple[GridRow, ...]
    items: pd.DataFrame
    parameters: tuple[str, ...]
    units: dict[str, str]


def _spec_units(spec_toml: str) -> dict[str, str]:
    """Units of a Monte Carlo spec's model parameters (force in N, displacement in m); empty when the spec
    cannot be read."""
    from nlid_core.modeltext import build_model
    from nlid_core.tomlfile import read_toml

    try:
        model = read_toml(spec_toml, "the batch spec").get("model", {})
        terms = model.get("terms") or list(model.get("values", {}))
        custom = model.get("custom", [])
        built = build_model(",".join(str(t) for t in terms), [str(c) for c in custom])
        return {p.name: str(p.unit) for p in built.default_parameters()}
    except (NlidError, AttributeError, TypeError, ValueError):
        return {}


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _item_row(run: saved.Run, kind: str) -> dict[str, Any]:
    res = run.result if isinstance(run.result, Mapping) else {}
    metrics = res.get("metrics")
    cost = res.get("cost") if kind == "monte_carlo" else (metrics.get("cost") if isinstance(metrics, Mapping)
                                                          else None)
    row: dict[str, Any] = {"item": run.item_key or "", "label": run.label, "success": bool(run.success),
                           "message": str(res.get("message", "")), "cost": _number(cost)}
    params = res.get("parameters")
    for name, p in (params.items() if isinstance(params, Mapping) else ()):
        if not isinstance(p, Mapping):
            continue
        row[str(name)] = _number(p.get("value"))
        row[f"{name} stderr"] = _number(p.get("stderr"))
        if kind == "monte_carlo":
            ci = p.get("ci95")
            lo, hi = (ci if isinstance(ci, list) and len(ci) == 2 else (None, None))
            row[f"{name} ci low"] = _number(lo)
            row[f"{name} ci high"] = _number(hi)
            row[f"{name} truth"] = _number(p.get("truth"))
            row[f"{name} covers"] = bool(p.get("covers"))
    return row


def batch_view(store: db.Store, owner: str, study_id: int,
               runs: Sequence[saved.Run] | None = None) -> BatchView | None:
    """The latest batch set of a study with its summary and per-item table; None when it holds no batch.

    ``runs`` are the study's runs when the caller has read them already.
    """
    status = call(batch_status, store, owner, study_id)
    if status.batch_set == 0:
        return None
    every = runs if runs is not None else study_runs(store, owner, study_id)
    spec_toml = ""
    items: list[saved.Run] = []
    for r in every:
        b = r.config.get("batch") if isinstance(r.config, Mapping) else None
        if not isinstance(b, Mapping) or b.get("set") != status.batch_set:
            continue
        if r.label == SPEC_LABEL:
            spec_toml = str(b.get("spec_toml", ""))
        else:
            items.append(r)
    rows = [_item_row(r, status.kind) for r in items]
    params: dict[str, None] = {}
    for row in rows:
        for c in row:
            if c not in ("item", "label", "success", "message", "cost") and " " not in c:
                params.setdefault(c)
    cols = ["item", "label", "success", "message", "cost"] + [c for n in params for c in (
        (n, f"{n} stderr", f"{n} ci low", f"{n} ci high", f"{n} truth", f"{n} covers")
        if status.kind == "monte_carlo" else (n, f"{n} stderr"))]
    frame = pd.DataFrame(rows, columns=cols)
    if status.kind == "monte_carlo":
        units = _spec_units(spec_toml)  # in the model's order (the stored results list parameters by name)
        params = {**{n: None for n in units if n in params}, **params}
        return BatchView(status=status, spec_toml=spec_toml, monte_carlo=summarize_monte_carlo(
            [r.result for r in items]), grid=(), items=frame, parameters=tuple(params), units=units)
    units = {}
    for r in items:
        doc = r.result.get("parameters") if isinstance(r.result, Mapping) else None
        for name, p in (doc.items() if isinstance(doc, Mapping) else ()):
            if isinstance(p, Mapping) and isinstance(p.get("unit"), str):
                units.setdefault(str(name), str(p["unit"]))
    return BatchView(status=status, spec_toml=spec_toml, monte_carlo=None, grid=summarize_grid(items), items=frame,
                     parameters=tuple(params), units=units)


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %" if math.isfinite(x) else ""


def _g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}" if math.isfinite(x) else ""


def monte_carlo_parameters(view: BatchView) -> tuple[ParameterCoverage, ...]:
    """The Monte Carlo summary's parameters in the model's order."""
    assert view.monte_carlo is not None
    rank = {n: i for i, n in enumerate(view.parameters)}
    return tuple(sorted(view.monte_carlo.parameters, key=lambda p: rank.get(p.name, len(rank))))


def monte_carlo_table(view: BatchView) -> pd.DataFrame:
    """The Monte Carlo summary, a row per parameter: truth, mean, bias, spread, mean standard error, the
    coverage of the intervals ± its binomial standard error, the band exact intervals would give 95 % of the
    time, and whether the coverage lies in it."""
    assert view.monte_carlo is not None
    rows = []
    for p in monte_carlo_parameters(view):
        rows.append({"parameter": p.name, "unit": view.units.get(p.name, ""), "draws": p.n, "truth": _g(p.truth, 6),
                     "mean": _g(p.mean, 6), "bias": _g(p.bias), "spread": _g(p.spread),
                     "mean stderr": _g(p.mean_stderr),
                     "coverage": f"{_pct(p.coverage)[:-2]} ± {_pct(p.coverage_se)}" if math.isfinite(p.coverage)
                     else "",
                     f"{100 * p.nominal:g} % band": f"{_pct(p.band[0])[:-2]}–{_pct(p.band[1])}",
                     "in band": "yes" if p.within_band else "no"})
    return pd.DataFrame(rows)


def grid_table(view: BatchView) -> pd.DataFrame:
    """A grid set, a row per record × variant: converged, cost and each parameter as ``value ± stderr``."""
    rows = []
    for g in view.grid:
        row: dict[str, str] = {"record": g.record, "variant": g.variant, "converged": "yes" if g.success else "no",
                               "cost": _g(g.cost, 6)}
        for name in view.parameters:
            v, se = g.values.get(name, math.nan), g.stderr.get(name, math.nan)
            row[name] = "" if not math.isfinite(v) else _g(v, 6) + (f" ± {se:.3g}" if math.isfinite(se) else "")
        if not g.success:
            row["message"] = g.message
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.sort_values(["record", "variant"], kind="stable").reset_index(drop=True) if rows else frame


def batch_estimates(view: BatchView, parameter: str) -> list[float]:
    """The estimates of ``parameter`` by the successful items (the draws :func:`summarize_monte_carlo` uses)."""
    if parameter not in view.items.columns:
        return []
    ok = view.items[view.items["success"].astype(bool)]
    return [float(v) for v in ok[parameter].tolist() if v is not None and math.isfinite(float(v))]


def batch_csv(view: BatchView) -> bytes:
    """The per-item table as CSV (UTF-8)."""
    return view.items.to_csv(index=False).encode("utf-8")


#: What the dashboard's batch box starts with: docs/batch.md's Monte Carlo example with 200 draws.
MC_SPEC_EXAMPLE: Final = """kind = "monte_carlo"
study = "chirp design, coverage"
draws = 200                             # 1 to 100000
seed = 2026                             # base seed: draw i uses SeedSequence(seed, spawn_key=(i,))

[model]                                 # the true system (also the fitted model)
terms = ["m0", "c1", "k1", "k3"]
values = { m0 = 1.0, c1 = 0.8, k1 = 1500.0, k3 = 2e5 }

[excitation]                            # linear_chirp, log_chirp, schroeder_multisine, stepped_sine, stepped_amplitude
kind = "linear_chirp"
f0_hz = 1.0
f1_hz = 12.0
amplitude_n = 5.0
duration_s = 3.0
fs_hz = 200.0

[measurement]
channels = ["x"]
noise = { x = 1e-5 }                    # standard deviation per channel: x (m), v (m/s), a (m/s^2), f (N)

[fit]
method = "two-stage"
"""


def on_spec_upload() -> None:
    """Put an uploaded spec file into the spec box (at most the spec size limit, UTF-8 text)."""
    from nlid_core.batch.spec import MAX_SPEC_BYTES

    up = state.peek(state.STUDIES_BATCH_UPLOAD)
    if up is None:
        return
    data = up.getvalue()
    if len(data) > MAX_SPEC_BYTES:
        _post("error", f"{esc(up.name)} is larger than a spec may be ({MAX_SPEC_BYTES // 1000} kB); the spec box"
                       " is unchanged.")
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        _post("error", f"{esc(up.name)} is not UTF-8 text (a TOML spec is); the spec box is unchanged.")
        return
    state.set_widget(state.STUDIES_BATCH_SPEC, text)
    _post("info", f"Loaded {esc(up.name)} into the spec box: check it, then *Run batch*.")


def run_batch_here(owner: str, spec_text: str, *, study: str | None, restart: bool, key: str) -> BatchResult:
    """Run (or resume) a Monte Carlo spec as a job of this server, with progress and Cancel; the result.

    The job's worker opens the study database itself and saves every finished draw at once
    (:func:`nlid_core.batch.run.run_spec_text`), so a cancelled or failed batch keeps what it stored.

    Raises
    ------
    NlidError
        A bad spec (grids and files are refused), a changed spec without ``restart``, the database.
    app_support.jobs.JobError
        The worker failed (memory, crash).
    """
    from app_support import jobs
    from nlid_core.batch.run import run_spec_text

    result: BatchResult = jobs.run("Monte Carlo batch", run_spec_text, (db.default_url(), owner, spec_text),
                                   {"study": study, "restart": restart}, key=key, progress_arg="progress")
    return result


def batch_done_text(result: BatchResult) -> str:
    """One paragraph on a finished batch run from the dashboard (counts, time, coverage in or out of band)."""
    parts = [f"Batch set {result.batch_set} of {esc(result.study_name)}: {result.n_computed} draw(s) computed"
             f" in {result.elapsed_s:.1f} s, {result.n_skipped} already stored, {result.n_failed} failed."]
    mc = result.monte_carlo
    if mc is not None and mc.parameters:
        out = [p.name for p in mc.parameters if not p.within_band]
        cov = ", ".join(f"{esc(p.name)} {100 * p.coverage:.1f} %" for p in mc.parameters)
        parts.append(f"Coverage of the intervals: {cov}" + (f" (outside the band: {', '.join(esc(n) for n in out)})."
                                                             if out else " (all within the band)."))
    parts.append("Its Batch tab below has the summary, the estimates and the per-draw CSV.")
    return " ".join(parts)


def post_batch_done(result: BatchResult) -> None:
    """Say on the next run of the page how a batch run from the dashboard ended."""
    _post("success" if result.success else "warning", batch_done_text(result))


def resume_command(study: saved.Study) -> str:
    """The command that resumes the study's latest batch set (the spec file is the user's)."""
    import shlex

    owner = "" if study.owner == "local" else f" --owner {shlex.quote(study.owner)}"
    return f"python -m nlid_core batch SPEC.toml --study {shlex.quote(study.name)}{owner}"


# --------------------------------------------------------------------------- callbacks of the Studies page


def _typed(key: str, what: str) -> str:
    """The text typed in widget ``key``, stripped; DataValidationError asking for ``what`` when empty."""
    value = state.peek(key, "")
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        raise DataValidationError(f"type {what}")
    return text


def _post(kind: str, text: str, where: str = POSTS) -> None:
    state.post(where, kind, text)


def _act(action: Callable[[], str], failure: str, where: str = POSTS) -> None:
    """Run ``action`` (returns an escaped success message); post its outcome under ``where``."""
    try:
        _post("success", action(), where)
    except NlidError as exc:
        _post("error", f"{failure}: {esc(exc)}", where)


def on_create(store: db.Store, owner: str) -> None:
    def act() -> str:
        study = create_from_session(store, owner, _typed(state.STUDIES_NEW_NAME, "a name for the new study"),
                                    with_run=bool(state.peek(state.STUDIES_NEW_WITH_RUN, False)))
        state.set_open_study(state.StudyRef(id=study.id, name=study.name, owner=owner, viewer=owner))
        state.set_widget(state.STUDIES_PICK, study.id)
        return f"Created {esc(study.name)} with {len(state.records())} record(s); it is the open study now."
    _act(act, "No study was created")


def on_open(store: db.Store, owner: str, study_id: int) -> None:
    def act() -> str:
        ref, names, present = open_into_session(store, owner, study_id)
        parts = [f"Opened {esc(ref.name)}."]
        if names:
            parts.append(f"Loaded {', '.join(esc(n) for n in names)} into this session.")
        if present:
            parts.append(f"Already here: {', '.join(esc(n) for n in present)}.")
        study = call(saved.get_study, store, owner, study_id)
        restored, problems = restore_runs(store, owner, study)
        if restored:
            active = state.active_run()
            parts.append(f"Brought back {restored} run{'s' if restored > 1 else ''} with their models, options and"
                         f" validations; the active run is {esc(active.label) if active else 'none'}.")
        for line in problems:
            _post("warning", f"A saved run was not brought back: {esc(line)}")
        return " ".join(parts)
    _act(act, "The study was not opened")


def on_close() -> None:
    state.set_open_study(None)
    _post("info", "No saved study is open now; the session keeps its records and runs.")


def on_save_records(store: db.Store, owner: str, ref: state.StudyRef) -> None:
    def act() -> str:
        added, present, conflicting = add_session_records(store, owner, ref.id)
        if conflicting:
            _post("warning", f"{esc(ref.name)} holds other data under the name(s) "
                             f"{', '.join(esc(n) for n in conflicting)}; rename those records on the Data page to"
                             " save them too.")
        if not added:
            return f"{esc(ref.name)} already holds every record of this session it can."
        return f"Saved {', '.join(esc(n) for n in added)} into {esc(ref.name)}."
    _act(act, "No record was saved")


def on_rename(store: db.Store, owner: str, study_id: int) -> None:
    def act() -> str:
        new = _typed(state.key_for(state.STUDIES_RENAME_TO, study_id), "the study's new name")
        study = call(saved.rename_study, store, owner, study_id, new)
        ref = state.open_study(owner)
        if ref is not None and ref.id == study_id:
            state.set_open_study(dataclasses.replace(ref, name=study.name))
        return f"Renamed to {esc(study.name)}."
    _act(act, "The study was not renamed")


def on_duplicate(store: db.Store, owner: str, study: saved.Study) -> None:
    def act() -> str:
        name = _typed(state.key_for(state.STUDIES_DUPLICATE_TO, study.id), "a name for the copy")
        if study.owner == owner:
            copy = call(saved.duplicate_study, store, owner, study.id, name)
        else:  # a shared study: a copy of one's own, through the archive (records, runs and notes)
            copy = call(archive.import_study, store, owner, call(archive.export_study, store, owner, study.id),
                        name=name)
        state.set_widget(state.STUDIES_PICK, copy.id)
        return f"Copied {esc(study.name)} to {esc(copy.name)} (your study)."
    _act(act, "The study was not copied")


def on_notes(store: db.Store, owner: str, study_id: int) -> None:
    def act() -> str:
        notes = state.peek(state.key_for(state.STUDIES_NOTES, study_id), "")
        study = call(saved.set_notes, store, owner, study_id, notes if isinstance(notes, str) else "")
        return f"Notes of {esc(study.name)} saved."
    _act(act, "The notes were not saved")


_OWNER_NAME = re.compile(r"sub--[A-Za-z0-9_.@-]+|[A-Za-z0-9_.@-]+--[0-9a-f]{16}")


def typed_owner(who: str) -> str:
    """The owner an engineer typed: an owner name as the Studies page shows it (``sub--…`` for a sign-in by
    subject, ``…--<16 hex>`` for a long identity) as it is; else an e-mail or user name, mapped as sign-in
    maps it (``owner_from``)."""
    if _OWNER_NAME.fullmatch(who) and len(who) <= 64:
        return who
    return identity.owner_from(who)


def on_share(store: db.Store, owner: str, study_id: int) -> None:
    def act() -> str:
        who = state.peek(state.STUDIES_SHARE_WITH, "")
        who = who.strip() if isinstance(who, str) else ""
        if not who:
            raise DataValidationError("type the e-mail address or user name of an engineer")
        grantee = typed_owner(who)
        call(saved.share_study, store, owner, study_id, grantee)
        state.set_widget(state.STUDIES_SHARE_WITH, "")
        return f"Shared with {esc(who)}: they can open, compare, export and copy it, not change it."
    _act(act, "The study was not shared")


def on_unshare(store: db.Store, owner: str, study_id: int) -> None:
    def act() -> str:
        grantee = state.peek(state.STUDIES_UNSHARE_WHO)
        if not isinstance(grantee, str) or not grantee:
            raise DataValidationError("choose an engineer")
        call(saved.unshare_study, store, owner, study_id, grantee)
        return f"No longer shared with {esc(owner_text(grantee))}."
    _act(act, "Sharing was not changed")


def on_delete(store: db.Store, owner: str, study: saved.Study) -> None:
    def act() -> str:
        typed = state.peek(state.key_for(state.STUDIES_DELETE_CONFIRM, study.id), "")
        if not isinstance(typed, str) or not typed.strip():
            raise DataValidationError(f"type the study's name, {study.name!r}, to confirm")
        call(saved.delete_study, store, owner, study.id, confirm=typed.strip())
        ref = state.open_study(owner)
        if ref is not None and ref.id == study.id:
            state.set_open_study(None)
        state.reset_widget(state.STUDIES_PICK)
        return f"Deleted {esc(study.name)} with its runs. The records in this session stay."
    _act(act, "Nothing was deleted")


def on_import(store: db.Store, owner: str) -> None:
    def act() -> str:
        up = state.peek(state.STUDIES_IMPORT_FILE)
        if up is None:
            raise DataValidationError("choose a study file (.nlid.zip) first")
        name = state.peek(state.STUDIES_IMPORT_NAME, "")
        name = name.strip() if isinstance(name, str) else ""
        study = call(archive.import_study, store, owner, up.getvalue(), name=name or None)
        state.set_widget(state.STUDIES_PICK, study.id)
        return f"Imported {esc(study.name)} as your study."
    _act(act, "The file was not imported; nothing changed", IMPORT_POSTS)


def export_file_name(study: saved.Study) -> str:
    """``<study>.nlid.zip`` (study names hold no path characters)."""
    return f"{study.name}.nlid.zip"


def exporter(store: db.Store, owner: str, study_id: int) -> Callable[[], bytes]:
    """The archive of a study, built when the download is clicked (not on every page run)."""
    def build() -> bytes:
        return call(archive.export_study, store, owner, study_id)
    return build


# --------------------------------------------------------------------------- Identify page: save a run


def on_save_run(store: db.Store, owner: str, run: state.Run) -> None:
    def act() -> str:
        ref = state.open_study(owner)
        if ref is None:
            raise DataValidationError("no study is open")
        label = state.peek(state.key_for(state.IDENTIFY_SAVE_LABEL, run.id), default_label(run))
        stored = save_run(store, owner, ref, run, label if isinstance(label, str) else "")
        return f"Saved run #{run.id} into {esc(ref.name)} as {esc(stored.label)}; compare it on the Studies page."
    _act(act, "The run was not saved", RUN_POSTS)


def on_create_for_run(store: db.Store, owner: str, run: state.Run) -> None:
    def act() -> str:
        name = _typed(state.key_for(state.IDENTIFY_NEW_STUDY, run.id), "a name for the new study")
        study = call(saved.create_study, store, owner, name)
        ref = state.StudyRef(id=study.id, name=study.name, owner=owner, viewer=owner)
        state.set_open_study(ref)
        label = state.peek(state.key_for(state.IDENTIFY_SAVE_LABEL, run.id), default_label(run))
        stored = save_run(store, owner, ref, run, label if isinstance(label, str) else "")
        return (f"Created {esc(study.name)} (now the open study) and saved run #{run.id} into it as"
                f" {esc(stored.label)}.")
    _act(act, "The run was not saved", RUN_POSTS)


def save_run_control(run: state.Run) -> None:
    """The Identify page's *Save run to study*: a label and a button (a study name too when none is open)."""
    user = identity.current_user()
    if user is None:
        return
    with st.container(border=True, key="save_run_box"):
        st.markdown("**Save run to study**")
        try:
            store = get_store()
        except StoreUnavailable as exc:
            st.error(f"{esc(exc)}. The run stays in this session.")
            return
        ref = current_study(user.owner)
        done = state.saved_runs().get((ref.id, run.id)) if ref is not None else None
        if done is not None and ref is not None:
            st.caption(f"Run #{run.id} is saved in {esc(ref.name)} as {esc(done[1])}; compare it on the Studies page.")
        elif ref is not None and ref.owner == user.owner:
            c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
            c1.text_input("Label of the saved run", value=default_label(run), max_chars=MAX_NAME_LENGTH,
                          key=state.key_for(state.IDENTIFY_SAVE_LABEL, run.id))
            c2.button(f"Save run #{run.id} to {esc(ref.name)}", key=state.IDENTIFY_SAVE_RUN, type="primary",
                      on_click=on_save_run, args=(store, user.owner, run))
        else:
            st.caption(f"The open study, {esc(ref.name)}, is shared with you (read-only): save into a new study of"
                       " your own." if ref is not None else
                       "No study is open: name a new one (or open one on the Studies page).")
            c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
            c1.text_input("Label of the saved run", value=default_label(run), max_chars=MAX_NAME_LENGTH,
                          key=state.key_for(state.IDENTIFY_SAVE_LABEL, run.id))
            c2.text_input("New study", max_chars=MAX_NAME_LENGTH, placeholder="e.g. shaker rig, May tests",
                          key=state.key_for(state.IDENTIFY_NEW_STUDY, run.id))
            c3.button("Create and save", key=state.IDENTIFY_CREATE_STUDY, type="primary",
                      on_click=on_create_for_run, args=(store, user.owner, run))
    state.show_posts(RUN_POSTS)
