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
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

import pandas as pd
import sqlalchemy as sa
import streamlit as st

from app_support import identity, state
from app_support.text import plain
from nlid_core.batch.summary import SPEC_LABEL
from nlid_core.errors import DataValidationError, NlidError
from nlid_core.record import Record
from nlid_core.report import result_to_dict
from nlid_core.store import db
from nlid_core.store import studies as saved
from nlid_core.store.schema import MAX_NAME_LENGTH
from nlid_core.validation import validate
from .run_docs import _run_doc, _saved_validations, config_from_doc, restore_fit, run_config, run_validations

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
    "current_study",
    "run_config",
    "default_label",
    "check_session_names",
    "create_from_session",
    "add_session_records",
    "open_into_session",
    "save_run",
    "owner_text",
    "individual_runs",
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


def individual_runs(runs: Sequence[saved.Run]) -> tuple[saved.Run, ...]:
    """The runs saved one by one (from the Identify page or ``studies add-run``): not a batch's items nor its
    ``batch spec`` run."""
    return tuple(r for r in runs if r.item_key is None and r.label != SPEC_LABEL)


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


#: With more individual runs than this, the Compare tab asks which to compare.
COMPARE_PICK_ABOVE: Final = 12
#: The newest this many individual runs are compared by default.
COMPARE_DEFAULT: Final = 8


# --------------------------------------------------------------------------- batch studies


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


# --------------------------------------------------------------------------- callbacks of the Studies page


# --------------------------------------------------------------------------- Identify page: save a run


