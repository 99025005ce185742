"""Teaching mode: a guided identification with a hidden true system, revealed at the end."""

import dataclasses

import streamlit as st

from app_support import friction as fr
from app_support import cache, jobs, state, tables
from app_support.evidence import compute_evidence
from app_support.text import esc
from nlid_core import figures
from nlid_core.errors import NlidError
from nlid_core.estimate import identify
from nlid_core.examples import SEED_TRUTH, ExampleSpec, generate
from nlid_core.figures import friction as ffig
from nlid_core.figures.fits import fit_units
from nlid_core.friction.experiments import FRICTION_EXAMPLES
from nlid_core.models import TermModel
from nlid_core.terms import REGISTRY, baseline_terms
from nlid_core.analysis import chirp_design, predict_uncertainty
from nlid_core.validation import validate

st.title("Teaching mode")
state.show_notice()
jobs.prestart()
# Neutral names: the list must not give the answer away. The structure is named only at the reveal.
SYSTEMS = {
    "System A": {"structure": "hardening spring (cubic) with configuration-dependent mass and quadratic damping"
                              " (the seed benchmark)", "terms": dict(SEED_TRUTH), "noise": 4e-4},
    "System B": {"structure": "softening spring (negative cubic stiffness)",
                 "terms": {"m0": 1.5, "c1": 0.8, "k1": 1500.0, "k3": -2.0e5}, "noise": 2e-5},
    "System C": {"structure": "linear oscillator (mass, viscous damper, linear spring)",
                 "terms": {"m0": 2.0, "c1": 1.0, "k1": 800.0}, "noise": 1e-4},
    "System D": {"structure": "Coulomb friction beside a viscous damper and a linear spring",
                 "terms": {"m0": 1.0, "c1": 0.5, "fc": 1.5, "k1": 400.0}, "noise": 2e-5},
}
#: Each system's default test (amplitude [N], band [Hz], duration [s]). System B's softening spring has a barrier
#: at sqrt(k1/|k3|) = 87 mm; a 10 N chirp through its 5 Hz resonance carries it over, 4 N stays below 40 mm.
DESIGNS = {name: {state.TEACH_AMPLITUDE: 10.0, state.TEACH_BAND: (0.5, 5.0), state.TEACH_DURATION: 12.0}
           for name in SYSTEMS}
DESIGNS["System B"][state.TEACH_AMPLITUDE] = 4.0
demo = state.teaching()


def _new_system() -> None:
    """A newly chosen system starts from its own default test."""
    for key, value in DESIGNS[state.peek(state.TEACH_SYSTEM, next(iter(SYSTEMS)))].items():
        state.set_widget(key, value)

with st.expander("Friction experiments: where a static friction model fails"):
    exp = st.selectbox("Simulated experiment (LuGre friction, known truth)", list(FRICTION_EXAMPLES),
                       key=state.TEACH_FRICTION_EXPERIMENT, format_func=lambda n: f"{n}: {FRICTION_EXAMPLES[n].description}")
    if st.button("Simulate the experiment", key=state.TEACH_FRICTION_RUN):
        try:
            demo["friction"] = fr.teaching_experiment(exp)
        except (NlidError, jobs.JobError) as exc:
            st.error(esc(exc))
    shown = demo.get("friction")
    if shown is not None and shown["name"] == exp:
        rec = shown["record"]
        st.plotly_chart(figures.fig_record(rec), key="teach_fric_record")
        if "plateaus" in shown:
            st.plotly_chart(ffig.fig_plateaus(rec, shown["plateaus"]), key="teach_fric_plateaus")
            st.caption("Each settled plateau gives one point of the steady friction curve; static and LuGre models share "
                       "that curve, so the staircase alone cannot tell them apart.")
        elif "stick_slip" in shown:
            st.plotly_chart(ffig.fig_stick_slip(None, shown["stick_slip"], x_unit=rec.unit("x")), key="teach_fric_stick")
            st.caption("Same steady curve, different cycles: LuGre's bristles creep before breakaway, the static model "
                       "sticks rigidly and breaks away at Fs, so its cycle is longer and larger.")
        else:
            st.plotly_chart(figures.fig_hysteresis(rec, against="x"), key="teach_fric_loop")
            st.caption("Below breakaway a static friction model predicts no motion at all; the measured micrometre "
                       "loops are the bristles' (pre-sliding) deflection that LuGre models.")

st.markdown("#### 1. A system with a hidden answer")
state.restore_form(state.TEACH_FORM, {state.TEACH_SYSTEM: next(iter(SYSTEMS))})
system = st.selectbox("Bench system (its structure and parameters stay hidden until step 6)", list(SYSTEMS),
                      key=state.TEACH_SYSTEM, on_change=_new_system,
                      format_func=lambda n: f"{n}: a single-DOF test rig, displacement sensor noise"
                                            f" {1e3 * SYSTEMS[n]['noise']:g} mm")
truth = SYSTEMS[system]["terms"]
noise = SYSTEMS[system]["noise"]
true_params = TermModel(tuple(truth)).default_parameters(truth)  # settings such as v_eps at their defaults

st.markdown("#### 2. Design the test")
state.restore_form(state.TEACH_FORM, DESIGNS[system])
c1, c2, c3 = st.columns(3)
amp = c1.slider("Chirp amplitude [N]", 1.0, 40.0, key=state.TEACH_AMPLITUDE)
band = c2.slider("Frequency band [Hz]", 0.2, 20.0, key=state.TEACH_BAND)
duration = c3.slider("Duration [s]", 4.0, 30.0, key=state.TEACH_DURATION)
state.keep_form(state.TEACH_FORM, [state.TEACH_SYSTEM, *DESIGNS[system]])
spec = ExampleSpec(terms=truth, amplitude_n=amp, f0_hz=band[0], f1_hz=band[1], duration_s=duration, fs_hz=500.0,
                   noise={"x": noise}, measured=("x",), seed=11)
t, force = chirp_design(amp, band[0], band[1], duration, 500.0)
pred = predict_uncertainty(list(truth), true_params, t, force, noise_sd=noise)
if pred.success:
    # only the linear coefficients every system has are named: the others would give the structure away
    linear = [(n, r) for n, r in zip(pred.names, pred.rel_stderr) if n in baseline_terms()]
    st.markdown("Predicted relative standard errors of the linear coefficients if the true model were fitted: "
                + ", ".join(f"**{n}** {100 * r:.2g} %" for n, r in linear)
                + ". Those of the other terms, if there are any, are shown at the reveal.")
else:
    st.warning(f"This test would make the system diverge ({esc(pred.message.split(': ', 1)[-1])}). Lower the"
               " amplitude or move the band away from the resonance; the test cannot be run as it is.")

st.markdown("#### 3. Measure")
if st.button("Run the test (simulate with sensor noise)", key=state.TEACH_MEASURE, type="primary",
             disabled=not pred.success):
    try:
        rec = jobs.run("test measurement", generate, (spec,), {"name": "lecture test"}, key=state.TEACH_TEST_JOB)
        rec2 = jobs.run("second test measurement", generate,
                        (dataclasses.replace(spec, amplitude_n=amp * 0.6, seed=12),), {"name": "lecture check"},
                        key=state.TEACH_CHECK_JOB)
    except (NlidError, jobs.JobError) as exc:
        st.error(esc(exc))
    else:
        demo.clear()
        demo.update(record=rec, check=rec2, system=system)
if demo.get("system") != system:
    st.info("Press the button to measure.")
    st.stop()
rec = demo["record"]
st.plotly_chart(figures.fig_record(rec), key="teach_record")

st.markdown("#### 4. Look for nonlinearity")
if rec.v is None or rec.a is None:
    st.caption("Only the displacement was measured: velocity and acceleration are derived from it (Savitzky-Golay)"
               " for the restoring force and the equation-error check.")
try:
    summary = cache.evidence(cache.record_key(rec), rec, run=lambda r: jobs.run(
        "nonlinearity evidence", compute_evidence, (r,), key=state.TEACH_EVIDENCE_JOB, progress_arg="progress")).summary
except (NlidError, jobs.JobError) as exc:
    st.error(f"Analysis failed: {esc(exc)}")
else:
    for line in summary:
        st.markdown(f"- {esc(line)}")
st.plotly_chart(figures.fig_hysteresis(rec, against="x"), key="teach_loop")

st.markdown("#### 5. A linear model first")
if "linear" not in demo:
    try:
        demo["linear"] = jobs.run("linear fit", identify, (rec, baseline_terms()), key=state.TEACH_LINEAR_JOB,
                                  progress_arg="progress")
    except (NlidError, jobs.JobError) as exc:
        st.error(esc(exc))
lin = demo.get("linear")
if lin is not None and lin.success:
    st.markdown(f"Linear fit: **{lin.metrics[0].fit_percent:.1f} %**, residual "
                f"{'white' if lin.metrics[0].whiteness.white else '**not white**: the structure misses something'}.")
    st.plotly_chart(figures.fig_fit(lin.records[0], channel="x", units=fit_units(lin)), key="teach_linear")

st.markdown("#### 6. Add terms, identify, and reveal the truth")
terms = st.multiselect("Terms", list(REGISTRY), default=list(baseline_terms()), key=state.TEACH_TERMS,
                       format_func=lambda n: f"{n}: {REGISTRY[n].expr}")
if st.button("Identify", key=state.TEACH_IDENTIFY) and terms:
    try:
        demo["fit"] = jobs.run("identification", identify, (rec, terms), key=state.TEACH_FIT_JOB,
                               progress_arg="progress")
    except (NlidError, jobs.JobError) as exc:
        st.error(esc(exc))
fit = demo.get("fit")
if fit is not None:
    if not fit.success:
        st.error(esc(fit.message))
    else:
        val = validate(fit, demo["check"])
        st.markdown(f"Fit {fit.metrics[0].fit_percent:.2f} % on the test; on a second test at 60 % of the level:"
                    f" **{val.metrics[0].fit_percent:.2f} %**.")
        st.plotly_chart(figures.fig_fit(val, channel="x"), key="teach_validation")
        if st.toggle("Reveal the true system", key=state.TEACH_REVEAL):
            st.markdown(f"**{esc(system)}** is a **{esc(SYSTEMS[system]['structure'])}**:")
            st.code(TermModel(tuple(truth)).equation(), language=None, wrap_lines=True)
            tables.show(tables.truth_table(dict(zip(true_params.names, true_params.values)), fit), key="teach_truth",
                        fmt="%.5g")
            if pred.success:
                st.caption("Predicted relative standard errors of this test for every true term: "
                           + ", ".join(f"{esc(n)} {100 * r:.2g} %" for n, r in zip(pred.names, pred.rel_stderr)))
