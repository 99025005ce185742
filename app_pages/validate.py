"""Validate: simulate the active run on a record and compare with the measurement, also inside a position loop."""

import streamlit as st

from app_support import known_answer, loop_check, state, studies, tables
from app_support.text import esc
from nlid_core import figures
from nlid_core.errors import NlidError
from nlid_core.metrics import residual, rms
from nlid_core.quantity import quantity
from nlid_core.record import MIN_SAMPLES
from nlid_core.validation import fitted_record, validate

st.title("Validate")
state.show_notice()
recs = state.records()
run = state.active_run()
if run is None or not recs:
    st.info("Run an identification first (Identify page).")
    st.stop()
fit = run.result
if not fit.success:
    st.error(f"The active run #{run.id} failed ({esc(fit.message)}); choose a successful run on the Identify page.")
    st.stop()
if not fit.model.can_simulate:
    st.error("This model has no mass term m0, so it cannot be simulated. Add m0 on the Model page.")
    st.stop()
if not run.detailed:
    st.info(f"Run #{run.id}: {state.DROPPED} (Identify page) to see its fit. The validation below simulates"
            " its identified parameters, which are kept.")

names = list(recs)
fitted = run.config.fit_records
held_out = [n for n in names if not state.shared_samples(n, fitted)]
tests = [n for n in held_out if state.roles().get(n) == state.TEST_ROLE]
default = (tests or held_out or names)[0]
state.remembered_choice(state.VALIDATE_RECORD, names, default)
c1, c2 = st.columns([2, 1])
name = c1.selectbox("Validation record", names, key=state.VALIDATE_RECORD,
                    help="A record the fit did not use (a test part, another excitation level) tests the model"
                         " honestly.")
if state.roles().get(name):
    c1.caption(f"The {esc(state.roles()[name])} part of a split.")
state.remember_choice(state.VALIDATE_RECORD)
shared = state.shared_samples(name, fitted)
if shared:
    what = ("was fitted" if name in fitted else f"shares samples with the fitted {', '.join(shared)}")
    st.warning(f"**Not a validation:** {esc(name)} {esc(what)}, so the numbers below show how well the model fits"
               " data it was fitted to." + (f" Held-out records: {esc(', '.join(held_out))}." if held_out else
                                            " Split a record on the Data page to keep a part out of the fit."))
FROM_FIT = "the fit's own"
FROM_SAMPLES = "estimated from the first samples"
own = fitted_record(fit, recs[name])
init_choice = c2.radio("Initial state", [FROM_FIT, FROM_SAMPLES], key=state.VALIDATE_INIT,
                       help="On a record the fit used, its own initial state reproduces the fit's residual and"
                            " metrics; estimated from the first samples, as for a new record, it is less certain.",
                       ) if own else FROM_SAMPLES
if init_choice == FROM_FIT:
    n_init = 0  # the key (run, record, 0) is reserved for the fit's own initial state
else:
    n_max = max(recs[name].n - MIN_SAMPLES, 1)
    n_init = int(c2.number_input("Samples for the initial state", min_value=1, max_value=n_max,
                                 value=min(50, n_max), key=state.VALIDATE_N_INIT))
key = (run.id, name, n_init)
val = state.validations().get(key)
if val is None:
    try:
        val = validate(fit, recs[name], n_init=n_init, init="fit" if n_init == 0 else "estimate")
    except NlidError as exc:
        st.error(f"Validation could not run: {esc(exc)}")
        st.stop()
    state.add_validation(key, val)
    if val.success:
        problem = studies.resave_validations(run)
        if problem:
            st.warning(esc(problem))
if not val.success:
    st.error(esc(val.message))
    st.stop()

with st.container(key="validation", border=True):
    st.subheader(f"Run #{run.id} on {esc(name)}")
    tables.show(tables.metrics_table(val.metrics), key="val_metrics")
    how = {"fit": f"{known_answer.fit_state_text(fit, name)} by the fit (so these are the fit's own metrics)",
           "estimate": f"estimated from the first {val.n_init} samples, parameters held",
           "data": "taken from the first sample", "rest": "at rest"}.get(val.init, val.init)
    st.caption(known_answer.whiteness_note(val.metrics, initial_state=how, start=val.n_init))
    notes = [n for m in val.metrics for n in m.notes(fit.model.terms, fitted=bool(shared))]
    if notes:
        st.warning("**The residual carries structure:**\n" + "\n".join(f"- {esc(n)}" for n in notes))
    channel = st.radio("Channel", [m.channel for m in val.metrics], horizontal=True, key=state.VALIDATE_CHANNEL)
    st.plotly_chart(figures.fig_fit(val, channel=channel), key="val_fit_fig")
    resid = residual(val.measured[channel], val.predicted[channel], start=val.n_init)
    left, right = st.columns(2)
    left.plotly_chart(figures.fig_residual_spectrum(val.t[val.n_init:], resid, unit=val.units.get(channel, "")),
                      key="val_resid_spec")
    right.plotly_chart(figures.fig_residual_acf(resid, max_lag=val.metric(channel).whiteness.lags),
                       key="val_resid_acf")
    st.plotly_chart(figures.fig_fit_spectrum(val, channel=channel), key="val_spectrum")
    st.caption(f"Initial state {how}: x0 = {val.x0[0]:.4g} {esc(val.units.get('x', ''), 40)},"
               f" v0 = {val.x0[1]:.4g} {esc(val.units.get('v', ''), 40)}. Residual rms"
               f" {esc(quantity(rms(resid), val.units.get(channel, ''), 4), 40)}.")

loop_check.panel(run.id, fit, recs, name)
