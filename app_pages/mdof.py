"""Multi-DOF: a chain or platform model (preset or model file), simulated or mapped records, the FRF matrix and
coupling, the staged identification run stage by stage, its comparison with a one-shot fit, validation and
downloads."""

import streamlit as st

from app_support import jobs, state, tables
from app_support import mdof as md
from app_support.text import esc
from nlid_core.errors import NlidError
from nlid_core.figures import mdof as mfig
from nlid_core.mdof.data import column_spec
from nlid_core.mdof.stages import dump_plan
from nlid_core.nonlinearity.mimo import channel_fit
from nlid_core.terms.registry import connection_terms

st.title("Multi-DOF")
state.show_notice()
jobs.prestart()
store = state.mdof()
ERRORS = (NlidError, jobs.JobError)
FORM = [state.MDOF_SOURCE, state.MDOF_CHAIN_N, state.MDOF_CHAIN_TERMS, state.MDOF_CHAIN_FIXED_END,
        state.MDOF_CHAIN_DRIVEN, state.MDOF_PLATFORM_IDENTICAL, state.MDOF_RECORDS_FROM, state.MDOF_LEVEL,
        state.MDOF_NOISE, state.MDOF_FS, state.MDOF_DURATION, state.MDOF_SEED, state.MDOF_START_ERROR]
state.restore_form(state.MDOF_FORM, {
    state.MDOF_SOURCE: "chain", state.MDOF_CHAIN_N: 3, state.MDOF_CHAIN_TERMS: list(connection_terms()),
    state.MDOF_CHAIN_FIXED_END: False, state.MDOF_CHAIN_DRIVEN: [1], state.MDOF_PLATFORM_IDENTICAL: False,
    state.MDOF_RECORDS_FROM: "simulate experiments", state.MDOF_LEVEL: 1.0, state.MDOF_NOISE: 0.5,
    state.MDOF_FS: 500.0, state.MDOF_DURATION: 10.0, state.MDOF_SEED: 1, state.MDOF_START_ERROR: 30,
})
t_model, t_records, t_evidence, t_stages, t_validate, t_downloads = st.tabs(
    ["1. Model", "2. Records", "3. Evidence", "4. Stages", "5. Validate", "6. Downloads"], key=state.MDOF_TABS)

# --------------------------------------------------------------------------- 1. model
with t_model:
    source = st.radio("Model", md.PRESET_KINDS, key=state.MDOF_SOURCE, horizontal=True,
                      format_func=lambda k: {"chain": "chain of masses", "platform": "six-DOF platform",
                                             "model file": "upload a model file (.toml)"}[k])
    model = None
    try:
        if source == "chain":
            c1, c2, c3, c4 = st.columns([2, 5, 3, 4], vertical_alignment="bottom")
            n = int(c1.number_input("Masses", 1, 12, key=state.MDOF_CHAIN_N))
            terms = c2.multiselect("Terms of every connection", md.TERM_CHOICES, key=state.MDOF_CHAIN_TERMS)
            fixed_end = c3.toggle("Last mass to ground", key=state.MDOF_CHAIN_FIXED_END)
            driven_now = [d for d in state.widget_value(state.MDOF_CHAIN_DRIVEN, [1]) if 1 <= d <= n]
            state.set_widget(state.MDOF_CHAIN_DRIVEN, driven_now or [1])
            driven = c4.multiselect("Driven masses (force input)", list(range(1, n + 1)), key=state.MDOF_CHAIN_DRIVEN)
            model = md.preset_model(md.PresetSettings(kind="chain", n=n, terms=tuple(terms), fixed_end=fixed_end,
                                                      driven=tuple(driven) or (1,)))
        elif source == "platform":
            identical = st.toggle("Identical mounts (one set of mount parameters shared by the four)",
                                  key=state.MDOF_PLATFORM_IDENTICAL)
            model = md.preset_model(md.PresetSettings(kind="platform", identical=identical))
        else:
            up = st.file_uploader("Model file (TOML, at most 200 kB)", type=["toml"], key=state.MDOF_UPLOAD)
            if up is not None:
                try:
                    store["uploaded"] = md.read_model_file(up.getvalue(), up.name)
                except NlidError as exc:
                    st.error(f"The model file was not read: {esc(exc, 1500)}")
            model = store.get("uploaded")
            if model is None:
                st.info("Upload a model file: DOFs and connections (or a body on mounts), inputs, outputs and the"
                        " parameters' start values. Download a preset's file below to start from.")
    except NlidError as exc:
        st.error(f"No model: {esc(exc, 1000)}")
    if model is not None:
        if md.use_model(store, model):
            st.info("The model changed: the records and results of the previous model were cleared.")
        st.code(model.describe(), language=None, wrap_lines=True)
        single = md.single_dof_note(model)
        if single:
            st.info(single)
        st.plotly_chart(mfig.model_figure(model), key="mdof_diagram", width="content")
        st.markdown("**Parameters** (start values from the model; the simulated experiments use them as the truth)")
        tables.show(md.parameter_table(model), key="mdof_param_table", fmt="%.5g")
        st.download_button("Download the model file (TOML)", md.model_key(model), "model.toml", "application/toml",
                           key=state.MDOF_DL_MODEL)
state.keep_form(state.MDOF_FORM, FORM)

if model is None:
    for tab in (t_records, t_evidence, t_stages, t_validate, t_downloads):
        tab.info("Choose or upload a model first (tab 1).")
    st.stop()

# --------------------------------------------------------------------------- 2. records
with t_records:
    origin = st.radio("Records from", ["simulate experiments", "records loaded on the Data page"],
                      key=state.MDOF_RECORDS_FROM, horizontal=True)
    if origin == "simulate experiments":
        c = st.columns(6)
        level = c[0].number_input("Level (× 2 mm static deflection)", 0.1, 5.0, step=0.1, key=state.MDOF_LEVEL)
        noise = c[1].number_input("Output noise [% of range]", 0.0, 10.0, step=0.1, key=state.MDOF_NOISE)
        fs = c[2].number_input("Sampling rate [Hz]", 50.0, 5000.0, step=50.0, key=state.MDOF_FS)
        duration = c[3].number_input("Duration [s]", 1.0, 60.0, step=1.0, key=state.MDOF_DURATION)
        seed = c[4].number_input("Seed", 0, 100_000, key=state.MDOF_SEED)
        error = c[5].slider("Start error [± %]", 0, 80, key=state.MDOF_START_ERROR)
        st.caption("The experiments are simulated with the model's values as the truth: static load cases, small"
                   " high-frequency motion, a sweep per driven DOF (the others held), two multi-input records. The"
                   f" identification then starts from the true values each perturbed by up to ± {error} % (seeded),"
                   " so that it has something to do; the truth is shown next to the estimates.")
        if st.button("Simulate experiments", key=state.MDOF_SIMULATE, type="primary"):
            settings = md.SimulationSettings(level=level, noise_percent=noise, fs=fs, duration_s=duration,
                                             seed=int(seed), start_error_percent=float(error))
            try:
                recs = md.simulate(model, settings)
            except ERRORS as exc:
                st.error(f"The experiments were not simulated: {esc(exc, 1000)}. Lower the level or change the"
                         " model's values; earlier records are kept.")
            else:
                truth = md.truth_of(recs)
                md.clear_results(store)
                store.update(records=recs, truth=truth,
                             start=md.start_values(model, truth, settings.start_error_percent, settings.seed))
                md.reset_plan(store)
    else:
        loaded = state.records()
        try:
            spec = column_spec(model, "time")
        except NlidError as exc:
            st.error(f"This model cannot take loaded records: {esc(exc)}. Add [inputs] and [outputs] to its file.")
            spec = None
        if spec is not None:
            st.markdown("Load the files on the **Data** page with this column mapping (the model file's columns;"
                        " replace `time` by your time column), angles in rad, deg or mrad:")
            st.code(spec, language=None, wrap_lines=True)
        if not loaded:
            st.info("No record is loaded on the Data page.")
        elif spec is not None:
            choices = {}
            for name in loaded:
                c1, c2, c3 = st.columns([2, 1, 3], vertical_alignment="bottom")
                use = c1.checkbox(esc(name), key=state.key_for(state.MDOF_MAP_USE, name))
                kind = c2.selectbox("Kind", ["dynamic", "static"], key=state.key_for(state.MDOF_MAP_KIND, name),
                                    disabled=not use)
                held = c3.multiselect("Held DOFs", model.dof_names, key=state.key_for(state.MDOF_MAP_HELD, name),
                                      disabled=not use)
                if use:
                    choices[name] = (kind == "static", held)
            if st.button("Use the chosen records", key=state.MDOF_MAP, disabled=not choices, type="primary"):
                mapped, problems = md.map_records(model, loaded, choices)
                for p in problems:
                    st.error(esc(p, 1000))
                if mapped and not problems:
                    md.clear_results(store)
                    store.update(records=tuple(mapped), truth=None, start=model.parameters())
                    md.reset_plan(store)
    records = store.get("records")
    if not records:
        st.info("Simulate the experiments or map loaded records.")
    else:
        with st.container(key="mdof_records"):
            st.markdown(f"**{len(records)} records**"
                        + (" (simulated: the truth is known)" if store.get("truth") else "")
                        + "; outputs' ranges as min … max")
            tables.show(md.record_table(model, records), key="mdof_record_table")
            names = [r.name for r in records]
            shown = st.selectbox("Plot the record", names, key=state.MDOF_SHOW_RECORD)
            rec = records[names.index(shown)] if shown in names else records[0]
            st.plotly_chart(mfig.record_figure(model, rec), key="mdof_record_fig")
            st.markdown("Download each record as CSV (the model file's column names):")
            cols = st.columns(min(len(records), 6))
            for k, r in enumerate(records):
                cols[k % len(cols)].download_button(f"{r.name}.csv", md.record_csv(model, r), f"{r.name}.csv",
                                                    "text/csv", key=state.key_for(state.MDOF_DL_RECORD, r.name))

records = store.get("records")
if not records:
    for tab in (t_evidence, t_stages, t_validate, t_downloads):
        tab.info("Simulate the experiments or map loaded records first (tab 2).")
    st.stop()
truth = store.get("truth")

# --------------------------------------------------------------------------- 3. evidence
with t_evidence:
    pool, default_pool = md.frf_candidates(records)
    if not pool:
        st.info("The FRF matrix needs dynamic records (records in time).")
    else:
        state.restore_form(state.MDOF_FORM, {state.MDOF_FRF_RECORDS: default_pool})
        if not set(state.widget_value(state.MDOF_FRF_RECORDS, default_pool)) <= set(pool):
            state.set_widget(state.MDOF_FRF_RECORDS, default_pool)
        chosen_frf = st.multiselect(
            "Records analysed", pool, key=state.MDOF_FRF_RECORDS,
            help="The FRF matrix pools the chosen records in which nothing was held (a record with held DOFs is"
                 " another system, the rig with those DOFs locked); by default the longest such records, as records"
                 " of another band or level lower the coherence. The level drift compares records exciting one"
                 " input at different levels.")
        state.keep_form(state.MDOF_FORM, [state.MDOF_FRF_RECORDS])
        kept_ev: dict = store.setdefault("evidence", {})  # the evidence of the current choice only
        pick = tuple(chosen_frf)
        if pick not in kept_ev:
            kept_ev.clear()
            try:
                kept_ev[pick] = md.evidence(model, [r for r in records if r.name in pick])
            except NlidError as exc:
                kept_ev[pick] = str(exc)
        ev = kept_ev[pick]
        if isinstance(ev, str):
            st.warning(f"No FRF matrix: {esc(ev, 1000)}")
        else:
            with st.container(key="mdof_evidence"):
                st.markdown("\n".join(f"- {esc(line, 1000)}" for line in ev.summary))
                if ev.frf is not None:
                    out_name = st.radio("FRFs into", list(ev.frf.output_names), horizontal=True,
                                        key=state.MDOF_FRF_OUTPUT)
                    st.plotly_chart(mfig.frf_output_figure(ev.frf, out_name), key="mdof_frf")
                    st.caption("One output at a time, every input a line (its unit in the legend); dotted where the"
                               " line is not valid (outside the input's band or a low multiple coherence).")
                if ev.coupling is not None:
                    st.markdown("**Cross-coupling**: each output's main input and every other input's share")
                    tables.show(ev.coupling.to_frame().rename(columns={
                        "main_input": "main input", "relative_percent": "share of the main input's [%]",
                        "n_lines": "lines averaged"}), key="mdof_coupling_table")
                    st.plotly_chart(mfig.coupling_figure(ev.coupling), key="mdof_coupling_fig")
                for k, drift in enumerate(ev.drifts):
                    st.plotly_chart(mfig.level_drift_figure(drift), key=f"mdof_drift_{k}")

# --------------------------------------------------------------------------- 4. stages
with t_stages:
    st.markdown("**The plan**: per stage, record name patterns and free parameter patterns (comma-separated shell"
                " wildcards; `!name` leaves a record out, e.g. one kept for validation). Parameters fixed in the model"
                " stay fixed; each stage starts from the earlier ones' estimates.")
    editor_key = state.key_for(state.MDOF_PLAN_EDITOR, store.get("plan_version", 0))
    edited = st.data_editor(state.editor_base(editor_key, md.plan_frame(store["plan"])), key=editor_key,
                            num_rows="dynamic", hide_index=True, width="stretch",
                            column_config={c: st.column_config.TextColumn(c) for c in md.PLAN_COLUMNS})
    state.keep_editor(editor_key, edited)
    try:
        plan = md.plan_from_frame(edited)
    except NlidError as exc:
        st.error(f"The plan is not valid: {esc(exc, 1000)}")
        plan = None
    c1, c2, c3 = st.columns(3, vertical_alignment="center")
    if c1.button("Reset to the default plan", key=state.MDOF_PLAN_RESET):
        md.reset_plan(store)
        st.rerun()
    if plan is not None:
        c2.download_button("Download the plan (TOML)", dump_plan(plan), "plan.toml", "application/toml",
                           key=state.MDOF_DL_PLAN)
    with c3.popover("Load a plan file (TOML)"):
        plan_up = st.file_uploader("Plan file", type=["toml"], key=state.MDOF_PLAN_UPLOAD)
        if st.button("Load the plan file", key=state.MDOF_PLAN_LOAD, disabled=plan_up is None):
            try:
                loaded_plan = md.read_plan_file(plan_up.getvalue(), plan_up.name)
            except NlidError as exc:
                st.error(f"The plan file was not read: {esc(exc, 1000)}")
            else:
                store.update(plan=loaded_plan, plan_version=int(store.get("plan_version", 0)) + 1)
                st.rerun()

    reports = store.get("reports", [])
    if plan is not None:
        done = len(reports)
        left = len(plan.stages) - done
        c1, c2, c3 = st.columns(3)
        next_label = (f"Run stage {done + 1}: {esc(plan.stages[done].name, 80)}" if left > 0 else "Every stage has run")
        run_next = c1.button(next_label, key=state.MDOF_RUN_NEXT, type="primary", disabled=left <= 0)
        run_all = c2.button(f"Run all remaining stages ({max(left, 0)})", key=state.MDOF_RUN_ALL, disabled=left <= 0)
        if c3.button("Start again from the start values", key=state.MDOF_RESTART, disabled=not reports):
            md.forget_stages(store)
            st.rerun()
        if run_next or run_all:
            failed = False
            for _ in range(1 if run_next else left):
                try:
                    md.run_next_stage(store, plan)
                except ERRORS as exc:
                    st.error(f"The stage did not run: {esc(exc, 1000)}. Earlier stages are kept.")
                    failed = True
                    break
            if not failed:
                st.rerun()  # the buttons above now name the next stage
    reports = store.get("reports", [])
    if reports:
        with st.container(key="mdof_stage_results"):
            st.markdown("**Stages run**")
            tables.show(md.stage_summary(reports), key="mdof_stage_table")
        params_after = store["params"]
        for k, rep in enumerate(reports):
            fit = rep.fit
            title = f"Stage {k + 1}: {esc(rep.stage.name, 80)}" + ("" if fit else " (skipped)")
            with st.expander(title, expanded=k == len(reports) - 1):
                if rep.stage.note:
                    st.caption(esc(rep.stage.note, 1000))
                if fit is None:
                    st.warning(f"Skipped: {esc(rep.skipped, 1000)}")
                    continue
                (st.success if fit.success else st.error)(esc(fit.message, 1000))
                st.markdown(f"**Records**: {esc(', '.join(rep.records))}. **Condition number** {fit.condition:.3g};"
                            f" {fit.elapsed_s:.1f} s, {fit.iterations} iterations in all ({fit.nfev} evaluations).")
                st.markdown(f"**Trust.** {esc(rep.trust, 2000)}")
                if fit.weakest:
                    st.markdown(f"**Weakest direction.** {esc(fit.weakest, 2000)}")
                if fit.undetermined:
                    st.warning("Not determined by these records (held at their values): "
                               + esc(", ".join(fit.undetermined), 2000))
                st.markdown("**Estimated**" + (" (against the truth of the simulation)" if truth else ""))
                tables.show(md.estimates_table(fit, truth), key=f"mdof_est_{k}", fmt="%.5g")
                if rep.held:
                    with st.popover(f"Held: {len(rep.held)} parameters, and from where"):
                        tables.show(md.held_table(rep, params_after[k]), key=f"mdof_held_{k}", fmt="%.5g")
                st.markdown("**Per channel**")
                tables.show(md.channel_table(fit), key=f"mdof_channels_{k}")

    st.markdown("#### Compare with a one-shot fit")
    st.caption("Every free parameter on every record at once, from the same start values.")
    if st.button("Compare with one-shot", key=state.MDOF_ONE_SHOT):
        try:
            store["one_shot"] = md.run_one_shot(store)
        except ERRORS as exc:
            st.error(f"The one-shot fit did not run: {esc(exc, 1000)}")
    shot = store.get("one_shot")
    if shot is not None:
        per_param, routes = md.comparison_tables(store, shot)
        st.markdown("**Staged against one-shot**" + (" (errors against the truth)" if truth else ""))
        (st.success if shot.success else st.warning)(f"One-shot: {esc(shot.message, 1000)}")
        tables.show(routes, key="mdof_compare_routes")
        tables.show(per_param, key="mdof_compare_table", fmt="%.5g")

# --------------------------------------------------------------------------- 5. validate
with t_validate:
    reports = store.get("reports", [])
    st.caption("Simulate the model with the parameters after the last stage run"
               + (f" ({esc(reports[-1].stage.name)})" if reports else " (none has run: the start values)")
               + " from a record's inputs; the initial state is the fitted one when a stage used the record.")
    names = [r.name for r in records]
    used = md.fitted_records(store)
    free = md.frf_candidates(records)[1]  # dynamic records in which nothing was held
    first = ([n for n in free if n not in used] or [n for n in names if n not in used] or free or names)[0]
    # the default follows the stages (a record they fitted is no validation) unless the user chose another
    current = state.peek(state.MDOF_VALIDATE_RECORD)
    if current not in names or (current == store.get("validate_default") and current != first):
        state.set_widget(state.MDOF_VALIDATE_RECORD, first)
    store["validate_default"] = first
    chosen = st.selectbox("Record", names, key=state.MDOF_VALIDATE_RECORD,
                          format_func=lambda n: f"{n} (fitted)" if n in used else f"{n} (held out)" if used else n)
    if chosen in used:
        st.warning(f"**Not a validation:** a stage fitted {esc(chosen)}, so this shows the fit on its own data."
                   + (f" Held out: {esc(', '.join(n for n in names if n not in used))}." if len(used) < len(names)
                      else " Keep a record out of the plan's stages (e.g. `!multi2` in the joint stage's records)"
                           " to validate on it."))
    try:
        val = md.validate(store, chosen)
    except ERRORS as exc:
        st.error(f"The validation did not run: {esc(exc, 1000)}")
    else:
        if not val.success:
            st.warning(f"The simulation did not finish: {esc(val.message, 1000)}. Run the stages or check the"
                       " model's values.")
        else:
            fits = channel_fit(val.measured, val.simulated, val.names, val.units)
            with st.container(key="mdof_validation"):
                st.plotly_chart(mfig.channel_fit_figure(val.t, val.measured, val.simulated, val.names, val.units, fits),
                                key="mdof_validation_fig")
                tables.show(tables.channel_fit_table(fits), key="mdof_validation_table")

# --------------------------------------------------------------------------- 6. downloads
with t_downloads:
    reports = store.get("reports", [])
    st.markdown("The estimates after the last stage run"
                + (f" ({esc(reports[-1].stage.name)})" if reports else " (no stage has run: the start values)")
                + ", the model file with them as values, the plan, and the report of the stages run (as the CLI"
                " writes it).")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Estimates (CSV)", md.estimates_csv(store), "estimates.csv", "text/csv",
                       key=state.MDOF_DL_ESTIMATES)
    c2.download_button("Model file with the estimates (TOML)", md.final_model_file(store), "model_estimated.toml",
                       "application/toml", key=state.MDOF_DL_FINAL_MODEL)
    c3.download_button("Plan (TOML)", dump_plan(store["plan"] if plan is None else plan), "plan.toml",
                       "application/toml", key=state.MDOF_DL_FINAL_PLAN)
    if reports:
        text, doc = md.staged_report(store)
        c4, c5, _ = st.columns(3)
        c4.download_button("Report (JSON, as identify --model --json)", doc, "mdof_report.json", "application/json",
                           key=state.MDOF_DL_REPORT_JSON)
        c5.download_button("Report (text)", text, "mdof_report.txt", "text/plain", key=state.MDOF_DL_REPORT_TEXT)
