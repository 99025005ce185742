"""Identify: run the identification, show parameters with uncertainty, flags, correlations, history."""

import time

import streamlit as st

from app_support import jobs, known_answer, loop_check, state, study_actions, tables
from app_support.text import esc
from nlid_core import figures
from nlid_core.errors import NlidError
from nlid_core.estimate import identify
from nlid_core.figures.fits import fit_units
from nlid_core.identifiability import rank_summary
from nlid_core.report import baseline_text, covariance_text
from nlid_core.verdict import judge

st.title("Identify")
state.show_notice()
jobs.prestart()
recs = state.require_records()
cfg = state.ensure_config()
missing = [n for n in cfg.fit_records if n not in recs]
st.markdown(
    f"**Model:** `{cfg.model.equation()}`  \n**Method:** {cfg.options.method}, output channels "
    f"{', '.join(cfg.options.outputs)}, input {cfg.options.input_hold}, initial state {cfg.options.initial_state}"
    f"  \n**Records:** {', '.join(esc(n) for n in cfg.fit_records)}"
)

if st.button("Run identification", key=state.IDENTIFY_RUN, type="primary", disabled=bool(missing)):
    start = time.perf_counter()
    try:
        result = jobs.run("identification", identify, ([recs[n] for n in cfg.fit_records], cfg.model),
                          {"params": cfg.params, "options": cfg.options, "explore": True}, key=state.IDENTIFY_JOB,
                          progress_arg="progress")
    except (NlidError, jobs.JobError) as exc:
        st.error(f"The identification could not run: {esc(exc)}. Earlier results are kept.")
    else:
        run = state.add_run(cfg, result, time.perf_counter() - start)
        if not result.success:
            st.error(f"Run #{run.id} failed: {esc(result.message)}. Earlier results are kept; change the start values"
                     " or the model and try again.")
            earlier = [r for r in state.runs() if r.result.success]
            if earlier:
                state.set_active_run(earlier[-1].id)

loop_check.identify_panel(cfg, recs)

run = state.active_run()
if run is None:
    st.info("No run yet: press **Run identification**.")
    st.stop()

fit = run.result
with st.container(key="results", border=True):
    st.subheader(f"Run #{run.id}: {'converged' if fit.success else 'FAILED'} ({run.elapsed_s:.2f} s)")
    if not fit.success:
        st.error(esc(fit.message))
    verdict = judge(fit)
    if fit.success and not verdict.ok:
        box = st.error if verdict.status == "failed" else st.warning
        box(f"**{'A failed fit' if verdict.status == 'failed' else 'Do not trust this fit yet'}:**\n"
            + "\n".join(f"- {esc(r, 400)}" for r in verdict.reasons)
            + "\n\n**Try:** " + " ".join(esc(a, 400) + "." for a in verdict.advice))
    st.markdown("**Identified equation** (value ± standard error):")
    st.code(fit.equation(), language=None, wrap_lines=True)
    tables.show(tables.parameter_table(fit), key="param_table", fmt="%.6g")
    note = known_answer.interval_note(fit, recs)
    if note:
        st.info(note)
    for e in fit.estimates:
        if e.vary and e.flags:
            st.warning(f"**{esc(e.name)}**: " + "; ".join(esc(n) for n in e.notes))
    if fit.uncertainty is not None:
        st.caption(f"Scaled condition number {fit.uncertainty.condition_number:.3g}, "
                   f"{rank_summary(fit.uncertainty)}. Intervals: {esc(covariance_text(fit))}.")
    for w in fit.weak_directions:
        st.caption(f"Weak direction: {esc(w)}")
    if fit.warnings:  # one box, not one per note
        st.info("**Notes on this fit:**\n" + "\n".join(f"- {esc(w, 1000)}" for w in dict.fromkeys(fit.warnings)))
    if fit.metrics:
        tables.show(tables.metrics_table(fit.metrics, closed_loop=fit.method == "closed-loop"), key="metrics_table")
        st.caption(known_answer.whiteness_note(fit.metrics, initial_state=known_answer.fit_state_text(fit),
                                               closed_loop=fit.method == "closed-loop"))
        notes = [n for m in fit.metrics for n in m.notes(fit.model.terms)]
        if notes:
            st.warning("**The residual carries structure:**\n" + "\n".join(f"- {esc(n)}" for n in notes))
    if fit.baseline_fit:
        st.caption(esc(baseline_text(fit)) + ".")
    if fit.minima:
        st.markdown("**Other starts** (the residual is not white, so the fit may have several minima):")
        tables.show(tables.minima_table(fit), key="minima_table")
    left, right = st.columns(2)
    if fit.uncertainty is not None and len(fit.uncertainty.names) > 1:
        left.plotly_chart(figures.fig_correlation(fit), key="corr_fig")
    if not run.detailed:
        st.caption(state.DROPPED)
    if fit.records:
        channel = fit.records[0].fitted_channels[0]
        right.plotly_chart(figures.fig_fit(fit.records[0], channel=channel, units=fit_units(fit, fit.records[0].name)),
                           key="fit_fig")

study_actions.save_run_control(run)  # into the open saved study (or a new one)

st.subheader("History")
history = state.runs()
tables.show(tables.runs_table(history), key="runs_table")
ids = [r.id for r in history]
# the selector follows the active run (a new identification makes its run active); choosing in it
# makes the chosen run active before the page is drawn again
state.set_widget(state.IDENTIFY_ACTIVE_RUN, run.id)
st.selectbox("Active run (used by Validate and Export)", ids, key=state.IDENTIFY_ACTIVE_RUN,
             format_func=lambda i: next(r.label for r in history if r.id == i),
             on_change=lambda: state.set_active_run(state.widget_value(state.IDENTIFY_ACTIVE_RUN, run.id)))
compare = st.multiselect("Compare runs side by side", ids, default=ids[-2:], key=state.IDENTIFY_COMPARE_RUNS)
if compare:
    tables.show(tables.compare_table([r for r in history if r.id in compare]), key="compare_table", index=True)
