"""The callbacks of the Studies page's buttons (and of the Identify page's *Save run to study*): each runs
one store action and posts its outcome (a success line, or the reason nothing changed) in its page's
message section; the batch upload and run; the study's export."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import streamlit as st
from app_support import identity, state
from app_support.text import esc
from nlid_core.batch.run import BatchResult
from nlid_core.errors import DataValidationError, NlidError
from nlid_core.store import archive, db
from nlid_core.store import studies as saved
from nlid_core.store.schema import MAX_NAME_LENGTH
from .studies import (
    IMPORT_POSTS, POSTS, RUN_POSTS, StoreUnavailable, add_session_records, call, create_from_session, current_study,
    default_label, get_store, open_into_session, owner_text, restore_runs, save_run
)

__all__ = ["on_spec_upload", "run_batch_here", "batch_done_text", "post_batch_done", "on_create", "on_open",
           "on_close", "on_save_records", "on_rename", "on_duplicate", "on_notes", "typed_owner", "on_share",
           "on_unshare", "on_delete", "on_import", "export_file_name", "exporter", "on_save_run",
           "on_create_for_run", "save_run_control"]


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
