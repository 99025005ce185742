"""Studies: saved studies in the database -- open, create, save records, rename, copy, notes, share, compare
runs, a batch's progress and summary, export, import, delete."""

import streamlit as st

from app_support import identity, jobs, state, studies, study_actions, study_batches, study_compare, tables
from app_support.text import esc
from nlid_core.batch.spec import MAX_SPEC_BYTES
from nlid_core.errors import NlidError
from nlid_core.figures.saved_runs import fig_monte_carlo_estimates, fig_parameter_across_runs
from nlid_core.store.schema import MAX_NAME_LENGTH
from nlid_core.store.studies import Run

st.title("Studies")
state.show_notice()
user = identity.require_user()
owner = user.owner
try:
    store = studies.get_store()
    rows = studies.overview(store, owner)
except NlidError as exc:
    st.error(f"Saved studies are unavailable: {esc(exc)}. The rest of the dashboard works as before; records and"
             " runs stay in this session.")
    st.stop()

st.caption(f"Signed in as **{identity.shown(user.display_name)}** ({identity.METHOD_TEXT[user.method]})."
           f" Studies are kept in this server's {esc(store.dialect)} database and outlive this browser session;"
           f" on the command line you are `--owner {user.owner}`.")
state.show_posts(studies.POSTS)

with st.expander("New study from this session", expanded=not rows):
    recs = state.records()
    run = state.active_run()
    st.caption(f"Saves the {len(recs)} record(s) of this session" + (" and, if ticked, the active run." if run else "."))
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.text_input("Name", max_chars=MAX_NAME_LENGTH, key=state.STUDIES_NEW_NAME, placeholder="e.g. shaker rig, May")
    c2.button("Create study", key=state.STUDIES_CREATE, type="primary", on_click=study_actions.on_create, args=(store, owner))
    if run is not None:
        st.checkbox(f"Include the active run ({esc(run.label)})", value=True, key=state.STUDIES_NEW_WITH_RUN)

with st.expander("Run a Monte Carlo batch on this server"):
    st.caption("A Monte Carlo study of a test design: a true model, an excitation, measurement noise and N draws;"
               " each draw is simulated, identified and its intervals checked against the truth (format:"
               " `docs/batch.md`). It runs in one worker of this server with progress and *Cancel*; every"
               " finished draw is saved into the study at once, so running the same spec again resumes it."
               " Grid batches read record files on the server: run those with `python -m nlid_core batch`.")
    st.file_uploader("Load a spec file (.toml), or edit the example below", type=["toml"],
                     key=state.STUDIES_BATCH_UPLOAD, on_change=study_actions.on_spec_upload)
    if state.peek(state.STUDIES_BATCH_SPEC) is None:
        state.set_widget(state.STUDIES_BATCH_SPEC, studies.MC_SPEC_EXAMPLE)
    st.text_area("Spec (TOML)", key=state.STUDIES_BATCH_SPEC, height=360, max_chars=MAX_SPEC_BYTES)
    s1, s2 = st.columns([3, 2], vertical_alignment="bottom")
    s1.text_input("Into study (default: the spec's `study`)", max_chars=MAX_NAME_LENGTH,
                  key=state.STUDIES_BATCH_STUDY)
    s2.checkbox("Start a new run set", key=state.STUDIES_BATCH_RESTART,
                help="Needed when the study already holds a batch of another spec; its runs are kept.")
    if st.button("Run batch", key=state.STUDIES_BATCH_RUN, type="primary", icon=":material/play_arrow:"):
        typed = str(state.peek(state.STUDIES_BATCH_STUDY, "") or "").strip()
        try:
            done = study_actions.run_batch_here(owner, str(state.peek(state.STUDIES_BATCH_SPEC, "")), study=typed or None,
                                          restart=bool(state.peek(state.STUDIES_BATCH_RESTART, False)),
                                          key=state.STUDIES_BATCH_JOB)
        except (NlidError, jobs.JobError) as exc:
            st.error(f"The batch did not run: {esc(exc)}. Draws stored before are kept.")
        else:
            (st.success if done.success else st.warning)(study_actions.batch_done_text(done))
            state.set_widget(state.STUDIES_PICK, done.study_id)
            rows = studies.overview(store, owner)

if not rows:
    st.info("No saved study yet: create one above from this session's records, or import a study file below.")
else:
    tables.show(studies.overview_table(rows, owner), key="studies_table")
    by_id = {r.study.id: r.study for r in rows}
    ref = state.open_study(owner)
    if ref is not None and ref.id not in by_id:  # deleted, or no longer shared
        state.set_open_study(None)
        ref = None
    if state.widget_value(state.STUDIES_PICK, ref.id if ref else rows[0].study.id) not in by_id:
        state.set_widget(state.STUDIES_PICK, rows[0].study.id)
    pick = st.selectbox("Study", list(by_id), key=state.STUDIES_PICK, format_func=lambda i: by_id[i].name + (
        "" if by_id[i].owner == owner else f"  (shared by {studies.owner_text(by_id[i].owner)})"))
    study = by_id[pick]
    mine = study.owner == owner
    b1, b2, b3 = st.columns(3)
    b1.button("Open (load its records)", key=state.STUDIES_OPEN, type="primary", on_click=study_actions.on_open,
              args=(store, owner, study.id))
    if ref is not None:
        b2.button("Close the open study", key=state.STUDIES_CLOSE, on_click=study_actions.on_close,
                  help=f"{esc(ref.name)} stays saved; this session keeps its records and runs.")
        if ref.owner == owner:
            b3.button("Save session records into it", key=state.STUDIES_SAVE_RECORDS,
                      on_click=study_actions.on_save_records, args=(store, owner, ref),
                      help=f"Adds the records of this session that {esc(ref.name)} lacks.")

    runs: tuple[Run, ...] = ()
    batch: study_batches.BatchView | None = None
    try:
        runs = study_compare.study_runs(store, owner, study.id)
        batch = study_batches.batch_view(store, owner, study.id, runs)
    except NlidError as exc:
        st.error(esc(exc))
    names = ["Records & notes", "Compare runs"] + (["Batch"] if batch is not None else []) + [
        "Rename, copy, export, delete", "Sharing"]
    tabs = dict(zip(names, st.tabs(names)))
    t_rec, t_cmp, t_manage, t_share = (tabs[n] for n in ("Records & notes", "Compare runs",
                                                         "Rename, copy, export, delete", "Sharing"))
    with t_rec:
        try:
            stored = studies.study_records(store, owner, study.id)
        except NlidError as exc:
            stored = ()
            st.error(esc(exc))
        if stored:
            tables.show(studies.records_table(stored), key="study_records_table")
        else:
            st.caption("No record in this study yet.")
        notes_key = state.key_for(state.STUDIES_NOTES, study.id)
        if mine:
            st.text_area("Notes", value=study.notes, key=notes_key, height=120, max_chars=100_000)
            st.button("Save notes", key=state.STUDIES_SAVE_NOTES, on_click=study_actions.on_notes,
                      args=(store, owner, study.id))
        else:
            st.caption("Notes (read-only: the study is shared with you)")
            st.text(study.notes or "(none)")

    with t_cmp:
        single = studies.individual_runs(runs)
        chosen = [r.id for r in single]
        if batch is not None:
            st.caption(f"Runs saved one by one; the {batch.status.n_done} item(s) of the batch are on the"
                       " *Batch* tab.")
        if len(single) > studies.COMPARE_PICK_ABOVE:
            label_of = {r.id: f"#{r.id} {r.label}" for r in single}
            chosen = st.multiselect(f"Runs to compare ({len(single)} saved; the newest {studies.COMPARE_DEFAULT}"
                                    " by default)", list(label_of), default=study_compare.default_compared(single),
                                    format_func=label_of.__getitem__,
                                    key=state.key_for(state.STUDIES_COMPARE_RUNS, study.id))
        comp: study_compare.Comparison | None = None
        if not single:
            st.caption("No saved run in this study yet: save one from the Identify page.")
        elif not chosen:
            st.info("Choose the runs to compare above.")
        else:
            try:
                comp = study_compare.compare(store, owner, study.id, chosen, runs)
            except NlidError as exc:
                st.error(esc(exc))
        if comp is not None and not comp.frame.empty:
            st.dataframe(study_compare.compare_display(comp), key="study_compare_table", hide_index=True)
            if comp.parameters:
                param = st.selectbox("Parameter", comp.parameters, key=state.STUDIES_COMPARE_PARAM)
                labels, values, errs = study_compare.parameter_series(comp, param)
                st.plotly_chart(fig_parameter_across_runs(labels, values, errs, parameter=param,
                                                          unit=comp.units.get(param, "")), key="study_compare_fig")

    if batch is not None:
        with tabs["Batch"]:
            bs = batch.status
            kind = {"monte_carlo": "Monte Carlo", "grid": "grid"}.get(bs.kind, esc(bs.kind))
            st.markdown(f"**Batch set {bs.batch_set}** ({kind}): {bs.n_done} of {bs.n_items} items stored,"
                        f" {bs.n_failed} failed.")
            st.progress(min(bs.n_done / bs.n_items, 1.0) if bs.n_items else 0.0,
                        text=f"{bs.n_done}/{bs.n_items}")
            if bs.n_done < bs.n_items:
                here = mine and bs.kind == "monte_carlo" and bool(batch.spec_toml)
                st.caption("Unfinished: run the same spec again to compute the missing items (the stored ones are"
                           " skipped)" + (" — here, or from the command line:" if here else ". Resume with:"))
                if here and st.button("Resume here", key=state.STUDIES_BATCH_RESUME, icon=":material/replay:"):
                    try:
                        done = study_actions.run_batch_here(owner, batch.spec_toml, study=study.name, restart=False,
                                                      key=state.STUDIES_BATCH_RESUME_JOB)
                    except (NlidError, jobs.JobError) as exc:
                        st.error(f"The batch did not resume: {esc(exc)}. Draws stored before are kept.")
                    else:
                        study_actions.post_batch_done(done)
                        st.rerun()
                st.code(study_batches.resume_command(study), language="bash")
            with st.expander("Spec"):
                if batch.spec_toml:
                    st.code(batch.spec_toml, language="toml")
                else:
                    st.caption("The set's spec run holds no spec text.")
            if batch.monte_carlo is not None:
                mc = batch.monte_carlo
                st.markdown(f"**Monte Carlo summary** over {mc.n_ok} successful draw(s) of {mc.n_draws}"
                            f" ({mc.n_failed} failed). Bias = mean − truth; spread = standard deviation of the"
                            " estimates, which the mean standard error should match; coverage = fraction of the"
                            " intervals holding the truth ± its binomial standard error, flagged when outside the"
                            " band exact intervals would give 95 % of the time.")
                if mc.parameters:
                    st.dataframe(study_batches.monte_carlo_table(batch), key="study_batch_summary", hide_index=True)
                    ordered = study_batches.monte_carlo_parameters(batch)
                    names_p = [p.name for p in ordered]
                    truth = {p.name: p.truth for p in ordered}
                    if state.peek(state.STUDIES_BATCH_PARAM) not in names_p:
                        state.reset_widget(state.STUDIES_BATCH_PARAM)
                    bp = st.selectbox("Parameter", names_p, key=state.STUDIES_BATCH_PARAM)
                    vals = study_batches.batch_estimates(batch, bp)
                    if vals:
                        st.plotly_chart(fig_monte_carlo_estimates(vals, parameter=bp, truth=truth[bp],
                                                                  unit=batch.units.get(bp, "")),
                                        key="study_batch_fig")
                else:
                    st.caption("No successful draw yet.")
            else:
                st.markdown(f"**Grid**: {len(batch.grid)} stored item(s), a row per record × variant.")
                if batch.grid:
                    st.dataframe(study_batches.grid_table(batch), key="study_batch_grid", hide_index=True)
            if not batch.items.empty:
                st.download_button("Download the per-item results (CSV)", study_batches.batch_csv(batch),
                                   file_name=f"{study.name} batch {bs.batch_set}.csv", mime="text/csv",
                                   key=state.STUDIES_BATCH_CSV, on_click="ignore", icon=":material/download:")

    with t_manage:
        m1, m2 = st.columns(2, vertical_alignment="bottom")
        if mine:
            m1.text_input("New name", value=study.name, max_chars=MAX_NAME_LENGTH,
                          key=state.key_for(state.STUDIES_RENAME_TO, study.id))
            m2.button("Rename", key=state.STUDIES_RENAME, on_click=study_actions.on_rename, args=(store, owner, study.id))
        m1.text_input("Name of the copy", value=f"{study.name} copy"[:MAX_NAME_LENGTH], max_chars=MAX_NAME_LENGTH,
                      key=state.key_for(state.STUDIES_DUPLICATE_TO, study.id))
        m2.button("Copy to my studies" if not mine else "Duplicate", key=state.STUDIES_DUPLICATE,
                  on_click=study_actions.on_duplicate, args=(store, owner, study))
        st.download_button("Export (.nlid.zip)", study_actions.exporter(store, owner, study.id),
                           file_name=study_actions.export_file_name(study), mime="application/zip",
                           key=state.STUDIES_EXPORT, on_click="ignore", icon=":material/download:")
        if mine:
            st.markdown("**Delete**: the study and its runs go; records other studies use stay.")
            d1, d2 = st.columns(2, vertical_alignment="bottom")
            d1.text_input(f"Type {esc(study.name)} to confirm", key=state.key_for(state.STUDIES_DELETE_CONFIRM,
                                                                                 study.id))
            d2.button("Delete study", key=state.STUDIES_DELETE, on_click=study_actions.on_delete, args=(store, owner, study),
                      icon=":material/delete:")

    with t_share:
        if not mine:
            st.caption(f"Shared with you by {esc(studies.owner_text(study.owner))}: you can open, compare, export"
                       " and copy it; only its owner changes it.")
        else:
            try:
                grantees = studies.shares(store, owner, study.id)
            except NlidError as exc:
                grantees = ()
                st.error(esc(exc))
            st.caption("Shared with: " + (", ".join(esc(studies.owner_text(g)) for g in grantees) or "nobody"))
            s1, s2 = st.columns([3, 1], vertical_alignment="bottom")
            s1.text_input("Share with (e-mail address or user name, as they sign in)", key=state.STUDIES_SHARE_WITH,
                          help="Or their owner name as their Studies page shows it (`--owner ...`), e.g. for an"
                               " engineer whose sign-in has no e-mail address.")
            s2.button("Share", key=state.STUDIES_SHARE, on_click=study_actions.on_share, args=(store, owner, study.id))
            if grantees:
                u1, u2 = st.columns([3, 1], vertical_alignment="bottom")
                u1.selectbox("Stop sharing with", grantees, key=state.STUDIES_UNSHARE_WHO,
                             format_func=studies.owner_text)
                u2.button("Stop sharing", key=state.STUDIES_UNSHARE, on_click=study_actions.on_unshare,
                          args=(store, owner, study.id))

st.divider()
st.subheader("Import a study file")
st.file_uploader("Study file (.nlid.zip, exported from nlid)", type=["zip"], key=state.STUDIES_IMPORT_FILE)
i1, i2 = st.columns([3, 1], vertical_alignment="bottom")
i1.text_input("Name (optional; default: the name in the file)", max_chars=MAX_NAME_LENGTH,
              key=state.STUDIES_IMPORT_NAME)
i2.button("Import", key=state.STUDIES_IMPORT, on_click=study_actions.on_import, args=(store, owner))
state.show_posts(studies.IMPORT_POSTS)
