"""Identifiability of a finished fit: where the information is, weak directions, profiles, multi-start,
regularisation, and whether each term is needed."""

import pandas as pd
import streamlit as st

from app_support import jobs, state, tables
from app_support.text import esc
from nlid_core import figures
from nlid_core.errors import NlidError
from nlid_core.grids import log_grid
from nlid_core.analysis import (
    duration_text,
    fit_seconds,
    multistart,
    profile_likelihood,
    regularisation_path,
    sensitivity_study,
    structure_check,
    structure_variants,
    study_seconds,
)

st.title("Identifiability")
state.show_notice()
jobs.prestart()
recs = state.require_records()
run = state.active_run()
if run is None:
    st.info("No identification run yet: the studies start from a fit. Identify the model first (Identify page).")
    st.stop()
if not run.result.success:
    st.info(f"Run #{run.id} did not converge ({esc(run.result.message)}); the studies need a successful fit."
            " Change the model or its start values and identify again (Identify page), or choose another run there.")
    st.stop()
if run.result.method == "equation-error":
    st.info(f"Run #{run.id} is an equation-error fit; the studies simulate the model, so they need a two-stage or"
            " output-error fit (method on the Model page, then the Identify page).")
    st.stop()
if not run.detailed:
    st.info(f"Run #{run.id}: {state.DROPPED} (Identify page), or choose a recent run there.")
    st.stop()
fit = run.result
fit_recs = [recs[n] for n in run.config.fit_records if n in recs]
if len(fit_recs) != len(run.config.fit_records):
    st.warning("A record of this run was removed; the studies need the records the run was fitted on.")
    st.stop()
st.markdown(f"Run **#{run.id}** on {esc(', '.join(run.config.fit_records))}: `{fit.equation(with_errors=False)}`")
studies = state.studies()
t_fit = fit_seconds(fit)


def estimate(study: str, count: int = 1) -> str:
    """'about 40 s on this record (the fit took 1.5 s)' for a study of ``count`` refits."""
    return (f"Takes {duration_text(study_seconds(fit, study, count))} on this record (estimated from this run's fit,"
            f" which took {t_fit:.2g} s).")


key = (run.id, "sensitivity")
if key not in studies:
    try:
        state.add_study(key, jobs.run("sensitivity study", sensitivity_study, (fit, fit_recs),
                                      key=state.IDENT_SENSITIVITY_JOB, progress_arg="progress"))
    except (NlidError, jobs.JobError) as exc:
        st.error(f"The sensitivity study could not run: {esc(exc)}")
        st.stop()
study = state.studies()[key]
with st.container(key="identifiability_summary", border=True):
    if not study.success:
        st.error(esc(study.message))
    else:
        st.subheader(f"Weakest parameter: {study.weakest_parameter}")
        st.markdown(esc(study.reason))
        for w in study.weak_directions:
            st.markdown(f"- weak direction: {esc(w)}")
        st.caption(f"Scaled condition number {study.condition_number:.3g}.")
        tables.show(tables.sensitivity_table(study), key="sens_table")
        st.plotly_chart(figures.fig_sensitivity(study), key="sens_fig")

# the chosen tab is kept by the server (a rerun after choosing a record there redrew the page and showed the first
# tab again); this page reruns in a fraction of a second, so a rerun per tab switch costs nothing that shows
tab_profile, tab_multi, tab_reg, tab_struct = st.tabs(
    ["Profile likelihood", "Multi-start", "Regularisation", "Do I need this term?"],
    key=state.IDENT_TABS, on_change="rerun")
free = [e.name for e in fit.estimates if e.vary]
with tab_profile:
    name = st.selectbox("Parameter", free, key=state.IDENT_PROFILE_PARAM)
    n_points = int(st.number_input("Grid points", 5, 41, 11, key=state.IDENT_PROFILE_POINTS))
    st.caption(estimate("profile", n_points + 1))
    if st.button("Compute the profile", key=state.IDENT_RUN_PROFILE):
        try:
            state.add_study((run.id, "profile", name, n_points), jobs.run(
                f"profile likelihood of {name}", profile_likelihood, (fit, fit_recs, name),
                {"n_points": n_points}, key=state.IDENT_PROFILE_JOB, progress_arg="progress"))
        except (NlidError, jobs.JobError) as exc:
            st.error(esc(exc))
    prof = studies.get((run.id, "profile", name, n_points))
    if prof is not None:
        if prof.success:
            st.plotly_chart(figures.fig_profile(prof, unit=fit.estimate(name).unit), key="profile_fig")
            st.markdown(f"Likelihood-ratio interval [{prof.interval[0]:.4g}, {prof.interval[1]:.4g}], Wald interval"
                        f" [{prof.wald_interval[0]:.4g}, {prof.wald_interval[1]:.4g}]: "
                        + ("they agree, the covariance can be trusted." if prof.agrees else
                           "they differ: trust the profile."))
        else:
            st.error(esc(prof.message))
with tab_multi:
    n_starts = int(st.number_input("Random starts", 2, 50, 8, key=state.IDENT_N_STARTS))
    st.caption(estimate("multistart", n_starts))
    if st.button("Run the multi-start", key=state.IDENT_RUN_MULTISTART):
        try:
            state.add_study((run.id, "multistart", n_starts), jobs.run(
                "multi-start", multistart, (fit_recs, fit.model, run.config.params, run.config.options),
                {"n_starts": n_starts, "rng": 0}, key=state.IDENT_MULTISTART_JOB, progress_arg="progress"))
        except (NlidError, jobs.JobError) as exc:
            st.error(esc(exc))
    ms = studies.get((run.id, "multistart", n_starts))
    if ms is not None:
        st.markdown(f"{ms.n_at_best} of {len(ms.costs)} starts reached the best cost ({ms.best_cost:.6g}).")
        ends, spread = tables.multistart_tables(ms)
        tables.show(ends, key="multistart_table", index=True)
        tables.show(spread, key="multistart_spread")
with tab_reg:
    st.markdown("Tikhonov prior λ‖D(θ − θ0)‖²: choose θ0 and a λ range; the L-curve corner is a good λ.")
    prior_df = st.data_editor(pd.DataFrame({"parameter": free, "prior θ0": [fit.values[n] for n in free]}),
                              hide_index=True, disabled=["parameter"], key=state.key_for(state.IDENT_PRIOR, run.id))
    lo_exp, hi_exp = st.slider("λ from 10^a to 10^b", -8, 4, (-6, 2), key=state.IDENT_LAMBDA_RANGE)
    lams = log_grid(lo_exp, hi_exp)
    st.caption(estimate("regularisation", len(lams)))
    if st.button("Compute the regularisation path", key=state.IDENT_RUN_REGULARISATION):
        try:
            state.add_study((run.id, "regularisation"), jobs.run(
                "regularisation path", regularisation_path,
                (fit_recs, fit.model, run.config.params, run.config.options,
                 dict(zip(prior_df["parameter"], prior_df["prior θ0"].astype(float))), lams),
                key=state.IDENT_REGULARISATION_JOB, progress_arg="progress"))
        except (NlidError, jobs.JobError) as exc:
            st.error(esc(exc))
    path = studies.get((run.id, "regularisation"))
    if path is not None:
        if path.success:
            st.plotly_chart(figures.fig_lcurve(path), key="lcurve_fig")
            st.markdown(f"Suggested λ = {path.suggested_lambda:.3g} (corner of the L-curve).")
            table, errors = tables.regularisation_tables(path)
            st.markdown("Estimates along the path (equation error):")
            tables.show(table, key="reg_table")
            st.markdown("Relative standard errors [%] along the path (the prior adds information):")
            tables.show(errors, key="reg_stderr_table")
        else:
            st.error(esc(path.message))
with tab_struct:
    others = [n for n in recs if n not in run.config.fit_records]
    val_name = st.selectbox("Validation record (optional)", ["none"] + others, key=state.IDENT_STRUCTURE_VALIDATION)
    plan = structure_variants(fit.model)
    st.caption(f"{len(plan)} refits ({', '.join(label for label, *_ in plan)}), each started from this run's"
               " estimate. " + estimate("structure", len(plan)))
    if st.button("Refit with each term removed or added", key=state.IDENT_RUN_STRUCTURE):
        try:
            state.add_study((run.id, "structure", val_name), jobs.run(
                "structure check", structure_check, (fit_recs, fit.model, run.config.options),
                {"validation": None if val_name == "none" else recs[val_name], "base_fit": fit},
                key=state.IDENT_STRUCTURE_JOB, progress_arg="progress"))
        except (NlidError, jobs.JobError) as exc:
            st.error(esc(exc))
    sc = studies.get((run.id, "structure", val_name))
    if sc is not None:
        if not sc.success:
            st.error(esc(sc.message))
        for line in sc.recommendations:
            st.markdown(f"- {esc(line)}")
        tables.show(tables.structure_table(sc), key="struct_table", fmt="%.6g")
        starts = {v.label: v.start for v in sc.variants if v.start != "base estimate"}
        st.caption(f"Took {sc.seconds:.3g} s. Each variant was fitted by output error from this run's estimate"
                   + (" (" + "; ".join(f"{esc(k)}: {esc(v)}" for k, v in starts.items()) + ")" if starts else "")
                   + ".")
