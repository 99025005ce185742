"""Excitation design: generate test signals, predict the parameter uncertainty they give, check it."""

import pandas as pd
import streamlit as st

from app_support import cache, jobs, state, tables
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
from nlid_core.analysis import (
    compare_designs,
    design_defaults,
    design_seconds,
    duration_text,
    format_percent,
    monte_carlo_check,
    suggest_design,
)
from nlid_core.terms import REGISTRY, baseline_terms

st.title("Excitation design")
state.show_notice()
jobs.prestart()

st.markdown("Generate a test signal, then predict, **before anyone runs the test**, how well it will determine"
            " each parameter of a prior model (Cramér-Rao bound from the simulated sensitivities).")

# Units, sampling rate and start values come from the active run's record (else the seed example's SI values).
run = state.active_run()
recs = state.records()
prior_run = run if run is not None and run.result.success else None
record = None
if prior_run is not None:
    record = next((recs[n] for n in prior_run.config.fit_records if n in recs), None)
defaults = design_defaults(record, prior_run.result if prior_run is not None and prior_run.detailed else None)
fu, xu = defaults.force_unit, defaults.x_unit
if defaults.from_record and prior_run is not None:
    ctx = f"run{prior_run.id}"
    st.caption(f"Units, sampling rate and start values of run #{prior_run.id}, {esc(defaults.message)}.")
else:
    ctx = "seed"
    if run is None:
        why = "No identification run yet"
    elif not run.result.success:
        why = f"Run #{run.id} did not converge"
    else:
        why = f"The record of run #{run.id} is no longer loaded"
    st.info(f"{why}: the inputs start at the seed example's SI values (force in N, displacement in m, 500 Hz"
            " sampling). Identify a model on your record (Identify page) to design in its units and at its"
            " sampling rate.")

c1, c2, c3, c4 = st.columns(4)
kind = c1.selectbox("Signal", ["linear chirp", "log chirp", "Schroeder multisine", "stepped sine",
                               "stepped amplitude (linear chirp at several levels)"], key=state.DESIGN_KIND)
f0 = c2.number_input("Start / lowest frequency [Hz]", min_value=0.01, value=defaults.f_start_hz,
                     key=state.key_for(state.DESIGN_F0, ctx))
f1 = c3.number_input("End / highest frequency [Hz]", min_value=0.02, value=defaults.f_end_hz,
                     key=state.key_for(state.DESIGN_F1, ctx))
amp = c4.number_input(f"Amplitude [{fu}] (peak; rms for multisine)", min_value=0.0, value=defaults.amplitude,
                      step=defaults.amplitude / 10, format="%.4g", key=state.key_for(state.DESIGN_AMPLITUDE, ctx))
c5, c6, c7 = st.columns(3)
duration = c5.number_input("Duration [s]", min_value=0.5, value=defaults.duration_s,
                           key=state.key_for(state.DESIGN_DURATION, ctx))
fs = c6.number_input("Sampling rate [Hz]", min_value=10.0, value=defaults.fs_hz, format="%.10g",
                     key=state.key_for(state.DESIGN_FS, ctx))
steps = int(c7.number_input("Steps (stepped sine / amplitude levels)", min_value=2, max_value=50, value=8,
                            key=state.DESIGN_STEPS))
try:
    if kind == "linear chirp":
        exc = linear_chirp(f0, f1, amplitude_n=amp, duration_s=duration, fs_hz=fs, force_unit=fu)
    elif kind == "log chirp":
        exc = log_chirp(f0, f1, amplitude_n=amp, duration_s=duration, fs_hz=fs, force_unit=fu)
    elif kind == "Schroeder multisine":
        exc = schroeder_multisine(f0, f1, amplitude_n=amp, duration_s=duration, fs_hz=fs, force_unit=fu)
    elif kind == "stepped sine":
        exc = stepped_sine(step_frequencies(f0, f1, steps), amplitude_n=amp, dwell_s=duration / steps, fs_hz=fs,
                           force_unit=fu)
    else:
        base = linear_chirp(f0, f1, amplitude_n=amp, duration_s=duration / steps, fs_hz=fs, force_unit=fu)
        exc = stepped_amplitude(base, step_levels(steps))
except NlidError as exc_err:
    st.error(esc(exc_err))
    st.stop()

freq, spec = exc.spectrum()
st.plotly_chart(figures.fig_excitation(exc.t_s, exc.force, freq, spec, title=exc.description or kind, force_unit=fu),
                key="exc_fig")
m1c, m2c, m3c, m4c = st.columns(4)
m1c.metric("peak", f"{exc.peak:.3g} {fu}")
m2c.metric("rms", f"{exc.rms:.3g} {fu}")
m3c.metric("crest factor", f"{exc.crest_factor:.2f}")
m4c.metric("samples", f"{exc.n_samples:,}")
label = f"{kind} {f0:g}-{f1:g} Hz, {amp:.4g} {fu}, {duration:g} s at {fs:.10g} Hz"
b1, b2 = st.columns(2)
b1.download_button("Signal for the shaker controller (CSV)", exc.to_frame().to_csv(index=False).encode(),
                   file_name="excitation.csv", mime="text/csv", key=state.DESIGN_DOWNLOAD)
if b2.button("Add to the comparison", key=state.DESIGN_ADD_DESIGN):
    state.add_design(label, exc)

st.subheader("Prior model and noise")
source = st.radio("Prior model", ["identified (active run)", "typed in"] if prior_run else ["typed in"],
                  horizontal=True, key=state.DESIGN_PRIOR_SOURCE)
if source.startswith("identified") and prior_run is not None:
    model = prior_run.result.model
    values = prior_run.result.values
else:
    start_values = dict(prior_run.result.values) if prior_run is not None else dict(SEED_TRUTH)
    start_terms = list(prior_run.result.model.terms) if prior_run is not None else list(SEED_TRUTH)
    terms = st.multiselect("Terms", list(REGISTRY), default=[t for t in start_terms if t in REGISTRY],
                           key=state.key_for(state.DESIGN_PRIOR_TERMS, ctx),
                           format_func=lambda n: f"{n}: {REGISTRY[n].expr}")
    model = TermModel(terms or baseline_terms())
    prior = model.default_parameters({n: v for n, v in start_values.items() if n in model.param_names},
                                     force_unit=fu, x_unit=xu)
    table = st.data_editor(pd.DataFrame({"parameter": list(prior.names), "value": list(prior.values),
                                         "unit": [p.unit for p in prior]}),
                           hide_index=True, disabled=["parameter", "unit"],
                           key=state.key_for(state.DESIGN_PRIOR_VALUES, ctx, *model.terms))
    values = dict(zip(table["parameter"], table["value"].astype(float)))
noise = st.number_input(f"Displacement noise standard deviation [{xu}]", min_value=0.0, value=defaults.noise_sd,
                        step=defaults.noise_sd / 10, format="%.3g", key=state.key_for(state.DESIGN_NOISE_SD, ctx),
                        help="The measurement noise of the displacement (output) channel of the planned test;"
                             " it starts at the residual level of the active run's fit.")
if not noise > 0:
    st.error(f"The noise standard deviation must be above 0 {xu}: with noise-free data every design is perfect.")
    st.stop()

designs = state.designs()
candidates = [(label, exc)] + [d for d in designs if d[0] != label]
inputs = cache.designs_key(model.terms, values, noise, [(lab, e.force) for lab, e in candidates])
kept = state.design_kept()
if kept.get("predictions", ("",))[0] != inputs:
    try:
        kept["predictions"] = (inputs, jobs.run(
            "predicted uncertainty", compare_designs, (model, values, [(lab, e.t_s, e.force) for lab, e in candidates]),
            {"noise_sd": noise}, key=state.DESIGN_PREDICT_JOB, progress_arg="progress"))
    except (NlidError, jobs.JobError) as exc_err:
        st.error(f"The prediction could not be computed: {esc(exc_err)}")
        st.stop()
preds = kept["predictions"][1]
current = preds[0]
with st.container(key="design_results", border=True):
    st.markdown("**Predicted relative standard errors [%]** (current signal first)")
    frame = tables.design_table(preds).rename(columns={"x peak": f"x peak [{xu}]"})
    numeric = [c for c in frame.columns if c not in ("design", "ok", "worst")]
    st.dataframe(frame, hide_index=True, key="design_table",
                 column_config={c: st.column_config.NumberColumn(format="%.3g") for c in numeric})
    st.plotly_chart(figures.fig_design_comparison(preds), key="design_fig")
    if current.success and defaults.x_peak > 0 and current.x_max > 2 * defaults.x_peak:
        st.warning(f"The prior model predicts a peak displacement of {current.x_max:.3g} {xu} for this signal,"
                   f" {current.x_max / defaults.x_peak:.2g} times the largest in the record"
                   f" ({defaults.x_peak:.3g} {xu}): the prediction extrapolates the model beyond the data it was"
                   " fitted on. A smaller amplitude stays within it.")
    if designs and st.button("Clear the comparison", key=state.DESIGN_CLEAR_DESIGNS):
        state.clear_designs()
        st.rerun()

st.subheader("Suggest a design")
try:
    amplitudes, bands = design_search_grid(amp, f0, f1, fs)
except NlidError as exc_err:
    amplitudes, bands = (), ()
    st.error(esc(exc_err))
n_grid = len(amplitudes) * len(bands)
length_ratio = duration * fs / max(current.n_samples, 1)
stroke = 2 * defaults.x_peak if defaults.from_record else None  # beyond it the prior model is extrapolated
st.caption(f"{n_grid} linear chirps ({', '.join(f'{a:.3g}' for a in amplitudes)} {fu} over"
           f" {', '.join(f'{lo:g}-{hi:g}' for lo, hi in bands)} Hz), {duration:g} s at {fs:.10g} Hz"
           + (f"; designs predicted to move beyond {stroke:.3g} {xu} (twice the record's largest displacement)"
              " are skipped" if stroke else "") + ". Takes"
           f" {duration_text(design_seconds(current.seconds, 'search', n_grid, length_ratio=length_ratio))}"
           " (estimated from the prediction above).")
if n_grid and st.button("Search chirp amplitudes and bands", key=state.DESIGN_SUGGEST):
    try:
        sug = jobs.run("design search", suggest_design, (model, values),
                       {"noise_sd": noise, "duration_s": duration, "fs_hz": fs, "amplitudes": amplitudes,
                        "bands": bands, "force_unit": fu, "max_displacement": stroke},
                       key=state.DESIGN_SUGGEST_JOB, progress_arg="progress")
    except (NlidError, jobs.JobError) as exc_err:
        st.error(f"The design search could not run: {esc(exc_err)}")
    else:
        kept["suggestion"] = (inputs, sug, fu, f"noise {noise:.3g} {xu}, {duration:g} s at {fs:.10g} Hz")
if "suggestion" in kept:
    made_for, sug, sug_unit, what = kept["suggestion"]
    with st.container(key="design_suggestion", border=True):
        if sug.success and sug.best is not None and sug.best_settings is not None:
            a, lo, hi = sug.best_settings
            st.success(f"Best: chirp {a:.3g} {esc(sug_unit)} over {lo:g}-{hi:g} Hz; worst parameter"
                       f" {esc(sug.best.worst_parameter)} at {format_percent(sug.best.max_rel_stderr)} relative"
                       " standard error.")
        else:
            st.warning(esc(sug.message))
        st.caption(f"Searched for {esc(what)}" + ("." if made_for == inputs else
                                                   "; the inputs have changed since: search again to update."))

st.subheader("Check the prediction")
st.caption("Simulates the current signal on the prior model, adds noise, identifies each realisation and compares"
           " the spread with the prediction.")
n_runs = int(st.number_input("Monte Carlo runs", min_value=4, max_value=200, value=12, key=state.DESIGN_MC_RUNS))
st.caption(f"Takes {duration_text(design_seconds(current.seconds, 'monte carlo', n_runs))}"
           " (estimated from the prediction above).")
if st.button("Run the Monte Carlo check", key=state.DESIGN_RUN_MC):
    try:
        mc = jobs.run("Monte Carlo check", monte_carlo_check, (model, values, exc.t_s, exc.force),
                      {"noise_sd": noise, "n_runs": n_runs, "rng": 1}, key=state.DESIGN_MC_JOB,
                      progress_arg="progress")
    except (NlidError, jobs.JobError) as exc_err:
        st.error(f"The Monte Carlo check could not run: {esc(exc_err)}")
    else:
        state.set_monte_carlo(mc)
mc = state.monte_carlo()
if mc is not None:
    if mc.success:
        tables.show(tables.monte_carlo_table(mc), key="mc_table")
        st.markdown(f"{mc.n_ok} of {mc.n_runs} runs converged; worst agreement: {mc.worst_parameter}"
                    f" (ratio {mc.worst_ratio:.2f}).")
    else:
        st.error(esc(mc.message))
