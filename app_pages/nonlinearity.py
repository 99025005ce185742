"""Nonlinearity: the evidence to look at before choosing terms."""

import streamlit as st

from app_support import cache, jobs, state, tables
from app_support.cache import results as cached
from app_support.evidence import compute_evidence
from app_support.text import esc
from nlid_core import figures, nonlinearity
from nlid_core.errors import NlidError
from nlid_core.estimate import identify
from nlid_core.figures import evidence as evfig
from nlid_core.terms.models import LINEAR

st.title("Nonlinearity")
state.show_notice()
jobs.prestart()
recs = state.require_records()
left, right = st.columns([5, 6], gap="medium")
fit_parts = [n for n in state.ensure_config().fit_records if n in recs]
state.remembered_choice(state.NL_RECORD, list(recs), (fit_parts or list(recs))[0])  # the fit part by default
with left:
    name = st.selectbox("Record", list(recs), key=state.NL_RECORD)
state.remember_choice(state.NL_RECORD)
rec = recs[name]
try:
    full = cache.derived(cache.record_key(rec), "savgol", rec) if rec.a is None or rec.v is None else rec
except NlidError as exc:
    st.error(f"Could not derive velocity/acceleration: {esc(exc)}")
    st.stop()

try:
    with left:
        ev = cache.evidence(cache.record_key(full), full, run=lambda r: jobs.run(
            "nonlinearity evidence", compute_evidence, (r,), key=state.NL_EVIDENCE_JOB, progress_arg="progress"))
except (NlidError, jobs.JobError) as exc:
    st.error(f"Analysis failed: {esc(exc)}")
    st.stop()

with left, st.container(key="nl_summary", border=True, height=470):
    st.markdown("**What the data suggest**")
    for line in ev.summary:
        st.markdown(f"- {esc(line)}")
    if full is not rec:
        st.caption("Velocity and acceleration derived from displacement (Savitzky-Golay) for the equation-error"
                   " test, the loops and the restoring force.")
oe = ev.output_check
if oe is not None and oe.success and oe.selected:
    with left:
        suggested = oe.path[-1].terms
        if st.button(f"Fit this model: {', '.join(suggested)}", key=state.NL_USE_MODEL, type="primary",
                     help="Sets the model's terms (default bounds) on the Model page, fitted on this record"
                          " (or the fit records chosen there)."):
            cfg = state.use_terms(suggested, name)
            state.notify("success", f"Model set from the term check: {', '.join(cfg.terms)}, fitted on"
                                    f" {', '.join(cfg.fit_records)}. Next: run it on the Identify page.")
            st.switch_page("app_pages/model.py")
with right:
    periodic = ev.broadband is not None and ev.broadband.layout.mode == "periodic"
    if periodic:
        st.plotly_chart(evfig.fig_bla(ev.broadband, show_phase=False, height=520), key="nl_headline")
    else:
        st.plotly_chart(figures.fig_restoring_force(ev.restoring, against="x"), key="nl_headline")

tab_bla, tab_check, tab_loops, tab_restoring, tab_spectra, tab_levels, tab_linear = st.tabs(
    ["Broadband (BLA)", "Term check", "Hysteresis loops", "Restoring force", "Spectra and harmonics", "Levels",
     "Linear model"], key=state.NL_TABS)
with tab_bla:
    st.markdown("The **best linear approximation** (BLA) from the force to the displacement, with the spread that"
                " noise causes (over periods) and the spread that nonlinear distortion adds (over realisations of a"
                " random-phase multisine). Periods and realisations are found from the force; set them by hand if"
                " the automatic cut is wrong.")
    manual = st.toggle("Set the cut by hand (period and transient, or segments)", key=state.NL_BLA_MANUAL)
    b = ev.broadband
    if manual:
        auto = ev.broadband.layout if ev.broadband is not None else None
        how = st.radio("Cut the record into", ["periods and realisations", "segments (the force does not repeat)"],
                       horizontal=True, key=state.NL_BLA_CUT)
        c1, c2 = st.columns(2)
        try:
            if how.startswith("periods"):
                period = c1.number_input(
                    "Period [samples]", min_value=8, max_value=max(rec.n, 8), step=1,
                    value=min(auto.period if auto is not None and auto.mode == "periodic" else 1024, rec.n),
                    key=state.NL_BLA_PERIOD)
                transient = c2.number_input("Transient per realisation [samples]", min_value=0,
                                            max_value=max(rec.n - 1, 0), step=1,
                                            value=auto.transient if auto is not None else 0,
                                            key=state.NL_BLA_TRANSIENT)
                b = cached.bla(cache.record_key(full), full, int(period), int(transient), 8)
            else:
                segments = c1.number_input("Segments", min_value=2, max_value=1000, step=1, value=8,
                                           key=state.NL_BLA_SEGMENTS)
                b = cached.bla(cache.record_key(full), full, None, None, int(segments), True)
        except NlidError as exc:
            st.error(f"No best linear approximation with these settings: {esc(exc)}")
            b = None
    elif ev.broadband is None:
        st.error(f"No best linear approximation: {esc(ev.broadband_error)}")
    if b is not None:
        st.caption(esc(b.layout.describe(b.fs) + ". " + " ".join(n[:1].upper() + n[1:] + "." for n in b.layout.notes)))
        for line in nonlinearity.bla_findings(b):
            st.markdown(f"- {esc(line)}")
        st.plotly_chart(evfig.fig_bla(b), key="bla_fig")
        if b.layout.mode == "periodic":
            st.plotly_chart(evfig.fig_detection_lines(b), key="detection_fig")
            tables.show(tables.detection_table(b), key="detection_table")
        else:
            st.caption("Segment averaging: the spread mixes noise, nonlinear distortion and leakage. A periodic"
                       " random-phase multisine (several periods, several realisations) separates them.")
        st.download_button("BLA table (CSV)", tables.bla_table(b).to_csv(index=False).encode(),
                           file_name=f"{b.record}_bla.csv", mime="text/csv", key=state.NL_BLA_DOWNLOAD)
with tab_check:
    oe = ev.output_check
    st.markdown("**Output-error check** — the linear model is simulated from the measured force, then each"
                " candidate term is added and kept when it lowers the displacement RMSE by at least"
                f" {100 * nonlinearity.thresholds.OE_IMPROVEMENT:.0f} %. This is the reference: the equation-error"
                " test below uses derived, noisy velocity and acceleration and is biased towards the linear model."
                " The Identifiability page's structure check is the full version (all samples, AIC/BIC).")
    if oe is None:
        st.info("The output-error check could not run on this record.")
    else:
        for line in oe.findings():
            st.markdown(f"- {esc(line)}")
        tables.show(tables.output_check_table(oe), key="output_check_table")
        st.caption(f"Took {oe.elapsed_s:.1f} s.")
    st.markdown("**Equation-error fits: does one nonlinear term explain much more of the force?**")
    tables.show(tables.linear_check_table(ev.check), key="linear_check")
with tab_loops:
    color = st.radio("Colour by", ["time", "amplitude"], horizontal=True, key=state.NL_LOOP_COLOR)
    left, right = st.columns(2)
    left.plotly_chart(figures.fig_hysteresis(full, against="x", color_by=color), key="loop_x")
    right.plotly_chart(figures.fig_hysteresis(full, against="v", color_by=color), key="loop_v")
with tab_restoring:
    if ev.slices is not None:
        st.plotly_chart(evfig.fig_restoring_slices(ev.slices), key="rf_slices")
        st.caption("Bin means of the restoring force where the velocity is near zero (the spring) and where the"
                   " displacement is near zero (the damper): their curvature names the terms even when the"
                   " scatter below is a cloud (broadband data).")
    left, right = st.columns(2)
    left.plotly_chart(figures.fig_restoring_force(ev.restoring, against="x"), key="rf_x")
    right.plotly_chart(figures.fig_restoring_force(ev.restoring, against="v"), key="rf_v")
    surface = nonlinearity.restoring_surface(ev.restoring)
    run = state.active_run()
    model_force = None
    if run is not None and run.result.success:
        model_force = nonlinearity.model_restoring_surface(surface, run.result.model, run.result.parameters.values)
    st.plotly_chart(figures.fig_restoring_surface(surface, model_force), key="rf_surface")
    if model_force is None:
        st.caption("Run an identification to see the fitted model's surface beside the measured one.")
with tab_spectra:
    band = ev.band
    spec = ev.spectrum
    peak = spec.tonal_hz("f")
    st.plotly_chart(figures.fig_spectrum(spec, harmonics_of=peak), key="spectrum_fig")
    if peak:
        st.caption(f"Dotted lines: harmonics of the force's frequency ({peak:.3g} Hz).")
    st.caption(f"Force power lies mainly between {band[0]:.3g} and {band[1]:.3g} Hz.")
    times, freqs, power = ev.spectrogram
    st.plotly_chart(figures.fig_spectrogram(times, freqs, power, max_freq=min(6 * band[1], full.fs / 2)),
                    key="spectrogram_fig")
    if ev.harmonics.n_valid:
        against = st.radio("Harmonic levels against", ["time", "frequency"], horizontal=True,
                           key=state.NL_HARMONICS_AGAINST)
        st.plotly_chart(figures.fig_harmonics(ev.harmonics, against=against), key="harmonics_fig")
    else:
        st.info("No harmonic levels: no window of this record is driven by a single sine (a multisine, noise or a"
                " fast sweep). The Broadband (BLA) tab holds the evidence for such records.")
    with st.expander("Two-tone test: sum and difference frequencies"):
        t1, t2 = st.columns(2)
        f_a = t1.number_input("First tone [Hz]", min_value=0.01, value=max(band[0], 0.01), key=state.NL_TONE1)
        f_b = t2.number_input("Second tone [Hz]", min_value=0.01, value=max(band[1], 0.02), key=state.NL_TONE2)
        try:
            lines = nonlinearity.two_tone_products(full, f_a, f_b)
        except NlidError as exc:
            st.error(esc(exc))
        else:
            st.caption("For a steady two-tone force, a linear system answers only at the two tones; harmonics and"
                       " intermodulation products p·f1 + q·f2 above about -40 dB point to a nonlinearity.")
            tables.show(tables.two_tone_table(lines), key="two_tone_table")
with tab_levels:
    if len(recs) < 2:
        st.info("Load records at several excitation levels to compare their FRFs (a shifting resonance or"
                " changing damping means the system is nonlinear).")
    chosen = st.multiselect("Records to overlay", list(recs), default=list(recs)[:4], key=state.NL_FRF_RECORDS)
    if chosen:
        try:
            frfs = [(n, nonlinearity.frf(recs[n])) for n in chosen]
            levels = nonlinearity.equivalent_linear([recs[n] for n in chosen])
        except NlidError as exc:
            st.error(esc(exc))
        else:
            st.plotly_chart(figures.fig_frf_overlay(frfs), key="frf_fig")
            st.caption("Faded, dotted: lines outside the excitation band or with a coherence below"
                       f" {nonlinearity.thresholds.MIN_COHERENCE:g} (no phase drawn there).")
            for line in nonlinearity.level_drift_summary(levels):
                st.markdown(f"- {esc(line)}")
            if len(levels) > 1:
                st.plotly_chart(figures.fig_equivalent_linear(levels), key="eqlin_fig")
            tables.show(tables.equivalent_linear_table(levels), key="eqlin_table")
            tables.show(tables.equivalent_linear_se_table(levels), key="eqlin_se_table")
with tab_linear:
    st.markdown("A linear model m0·ẍ + c1·ẋ + k1·x = f fitted to this record by output error, to see where it"
                " fails and why nonlinear terms are needed.")
    if st.button("Fit the linear model", key=state.NL_FIT_LINEAR):
        try:
            lin = jobs.run("linear model", identify, (full if rec.v is None else rec, LINEAR),
                           key=state.NL_LINEAR_JOB, progress_arg="progress")
        except (NlidError, jobs.JobError) as exc:
            st.error(esc(exc))
        else:
            state.set_linear_fit(cache.record_key(rec), lin)
    lin = state.linear_fit(cache.record_key(rec))
    if lin is not None:
        if not lin.success:
            st.error(esc(lin.message))
        else:
            st.code(lin.equation(), language=None, wrap_lines=True)
            m = lin.metrics[0]
            st.markdown(f"Linear model: fit {m.fit_percent:.1f} %, NRMSE {m.nrmse:.3g}, residual"
                        f" {'white' if m.whiteness.white else 'NOT white (structure missing)'}.")
            st.plotly_chart(figures.fig_fit(lin.records[0], channel="x", units=dict(rec.units)), key="linear_fit_fig")
