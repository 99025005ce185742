"""Excitation design: generate test signals, predict the parameter uncertainty they give, check it."""

import pandas as pd
import streamlit as st

from app_support import jobs, state, tables
from app_support.text import esc
from nlid_core import figures
from nlid_core.errors import NlidError
from nlid_core.examples import SEED_TRUTH
from nlid_core.excitation import (
    linear_chirp,
    log_chirp,
    schroeder_multisine,
    stepped_amplitude,
    stepped_sine,
)
from nlid_core.grids import design_search_grid, step_frequencies, step_levels
from nlid_core.models import TermModel
from nlid_core.terms import REGISTRY, baseline_terms
from nlid_core.studies import compare_designs, monte_carlo_check, suggest_design

st.title("Excitation design")
state.show_notice()
jobs.prestart()

st.markdown("Generate a test signal, then predict, **before anyone runs the test**, how well it will determine"
            " each parameter of a prior model (Cramér-Rao bound from the simulated sensitivities).")

c1, c2, c3, c4 = st.columns(4)
kind = c1.selectbox("Signal", ["linear chirp", "log chirp", "Schroeder multisine", "stepped sine",
                               "stepped amplitude (linear chirp at several levels)"], key=state.DESIGN_KIND)
f0 = c2.number_input("Start / lowest frequency [Hz]", min_value=0.01, value=0.5, key=state.DESIGN_F0)
f1 = c3.number_input("End / highest frequency [Hz]", min_value=0.02, value=10.0, key=state.DESIGN_F1)
amp = c4.number_input("Amplitude [N] (peak; rms for multisine)", min_value=0.0, value=30.0, key=state.DESIGN_AMPLITUDE)
c5, c6, c7 = st.columns(3)
duration = c5.number_input("Duration [s]", min_value=0.5, value=12.0, key=state.DESIGN_DURATION)
fs = c6.number_input("Sampling rate [Hz]", min_value=10.0, value=500.0, key=state.DESIGN_FS)
steps = int(c7.number_input("Steps (stepped sine / amplitude levels)", min_value=2, max_value=50, value=8,
                            key=state.DESIGN_STEPS))
try:
    if kind == "linear chirp":
        exc = linear_chirp(f0, f1, amplitude_n=amp, duration_s=duration, fs_hz=fs)
    elif kind == "log chirp":
        exc = log_chirp(f0, f1, amplitude_n=amp, duration_s=duration, fs_hz=fs)
    elif kind == "Schroeder multisine":
        exc = schroeder_multisine(f0, f1, amplitude_n=amp, duration_s=duration, fs_hz=fs)
    elif kind == "stepped sine":
        exc = stepped_sine(step_frequencies(f0, f1, steps), amplitude_n=amp, dwell_s=duration / steps, fs_hz=fs)
    else:
        base = linear_chirp(f0, f1, amplitude_n=amp, duration_s=duration / steps, fs_hz=fs)
        exc = stepped_amplitude(base, step_levels(steps))
except NlidError as exc_err:
    st.error(esc(exc_err))
    st.stop()

freq, spec = exc.spectrum()
st.plotly_chart(figures.fig_excitation(exc.t_s, exc.force, freq, spec, title=exc.description or kind), key="exc_fig")
m1c, m2c, m3c, m4c = st.columns(4)
m1c.metric("peak", f"{exc.peak:.3g} N")
m2c.metric("rms", f"{exc.rms:.3g} N")
m3c.metric("crest factor", f"{exc.crest_factor:.2f}")
m4c.metric("samples", f"{exc.n_samples:,}")
label = f"{kind} {f0:g}-{f1:g} Hz, {amp:g} N, {duration:g} s"
b1, b2 = st.columns(2)
b1.download_button("Signal for the shaker controller (CSV)", exc.to_frame().to_csv(index=False).encode(),
                   file_name="excitation.csv", mime="text/csv", key=state.DESIGN_DOWNLOAD)
if b2.button("Add to the comparison", key=state.DESIGN_ADD_DESIGN):
    state.add_design(label, exc)

st.subheader("Prior model and noise")
run = state.active_run()
source = st.radio("Prior model", ["identified (active run)", "typed in"] if run and run.result.success else ["typed in"],
                  horizontal=True, key=state.DESIGN_PRIOR_SOURCE)
if source.startswith("identified") and run is not None:
    model = run.result.model
    values = run.result.values
else:
    terms = st.multiselect("Terms", list(REGISTRY), default=list(SEED_TRUTH), key=state.DESIGN_PRIOR_TERMS,
                           format_func=lambda n: f"{n}: {REGISTRY[n].expr}")
    model = TermModel(terms or baseline_terms())
    prior = model.default_parameters({n: v for n, v in SEED_TRUTH.items() if n in model.param_names})
    table = st.data_editor(pd.DataFrame({"parameter": list(prior.names), "value": list(prior.values),
                                         "unit": [p.unit for p in prior]}),
                           hide_index=True, disabled=["parameter", "unit"],
                           key=state.key_for(state.DESIGN_PRIOR_VALUES, *model.terms))
    values = dict(zip(table["parameter"], table["value"].astype(float)))
noise = st.number_input("Displacement noise standard deviation [m]", min_value=1e-9, value=4e-4, format="%.2g",
                        key=state.DESIGN_NOISE_SD)

designs = state.designs()
candidates = [(label, exc)] + [d for d in designs if d[0] != label]
try:
    preds = compare_designs(model, values, [(lab, e.t_s, e.force) for lab, e in candidates], noise_sd=noise)
except NlidError as exc_err:
    st.error(esc(exc_err))
    st.stop()
with st.container(key="design_results", border=True):
    st.markdown("**Predicted relative standard errors [%]** (current signal first)")
    st.dataframe(tables.design_table(preds), hide_index=True, key="design_table")
    st.plotly_chart(figures.fig_design_comparison(preds), key="design_fig")
    if designs and st.button("Clear the comparison", key=state.DESIGN_CLEAR_DESIGNS):
        state.clear_designs()
        st.rerun()

st.subheader("Suggest a design")
if st.button("Search chirp amplitudes and bands", key=state.DESIGN_SUGGEST):
    try:
        amplitudes, bands = design_search_grid(amp, f0, f1, fs)
        sug = jobs.run("design search", suggest_design, (model, values),
                       {"noise_sd": noise, "duration_s": duration, "fs_hz": fs, "amplitudes": amplitudes,
                        "bands": bands}, key=state.DESIGN_SUGGEST_JOB)
    except (NlidError, jobs.JobError) as exc_err:
        st.error(esc(exc_err))
    else:
        if sug.success and sug.best is not None and sug.best_settings is not None:
            a, lo, hi = sug.best_settings
            st.success(f"Best: chirp {a:.3g} N over {lo:g}-{hi:g} Hz; worst parameter {sug.best.worst_parameter}"
                       f" at {100 * sug.best.max_rel_stderr:.1f} % relative standard error.")
        else:
            st.warning(esc(sug.message))

st.subheader("Check the prediction")
st.caption("Simulates the current signal on the prior model, adds noise, identifies each realisation and compares"
           " the spread with the prediction.")
n_runs = int(st.number_input("Monte Carlo runs", min_value=4, max_value=200, value=12, key=state.DESIGN_MC_RUNS))
if st.button("Run the Monte Carlo check", key=state.DESIGN_RUN_MC):
    try:
        mc = jobs.run("Monte Carlo check", monte_carlo_check, (model, values, exc.t_s, exc.force),
                      {"noise_sd": noise, "n_runs": n_runs, "rng": 1}, key=state.DESIGN_MC_JOB)
    except (NlidError, jobs.JobError) as exc_err:
        st.error(esc(exc_err))
    else:
        state.set_monte_carlo(mc)
mc = state.monte_carlo()
if mc is not None:
    if mc.success:
        st.dataframe(tables.monte_carlo_table(mc), hide_index=True, key="mc_table")
        st.markdown(f"{mc.n_ok} of {mc.n_runs} runs converged; worst agreement: {mc.worst_parameter}"
                    f" (ratio {mc.worst_ratio:.2f}).")
    else:
        st.error(esc(mc.message))
