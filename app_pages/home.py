"""Home: what the tool does, the workflow, and one click to load an example study."""

import streamlit as st

from app_support import cache, state
from app_support.text import esc
from nlid_core.errors import NlidError
from nlid_core.examples import SEED_TRUTH
from nlid_core.nonlinearity.baseline import evidence_stiffness_terms
from nlid_core.terms import baseline_terms, parse_terms

st.title("nlid: identify nonlinear mechanical systems from measured data")
state.show_notice()
st.markdown(
    """
Upload a test record of a single-degree-of-freedom structure (force and displacement, optionally velocity
and acceleration), look at the evidence of nonlinearity, choose model terms, identify them with their
uncertainty, and compare the simulated with the measured response.

The model is built from named terms:

`(m0 + m1·x²)·ẍ + c1·ẋ + c2·|ẋ|·ẋ + fc·tanh(ẋ/v_eps) + k1·x + k2·x² + k3·x³ + kg·dz(x) + f0 = f(t)`
"""
)

steps = [
    ("Data", "upload records, map columns and units, trim, filter, derive missing velocity/acceleration"),
    ("Nonlinearity", "hysteresis loops, restoring force, harmonics, FRFs across levels, a short verdict"),
    ("Model", "tick terms, edit initial values and bounds, choose the residual and its channels"),
    ("Identify", "run the fit: parameters with standard errors, intervals, flags and correlations"),
    ("Validate", "simulate on another record: time and frequency domain, residual tests"),
    ("Export", "parameters (CSV, JSON), validation data and a self-contained HTML report"),
]
cols = st.columns(len(steps))
for col, (title, text) in zip(cols, steps):
    col.markdown(f"**{title}**  \n{text}")

st.subheader("Start with an example")
left, right = st.columns(2)
with left:
    st.markdown(
        "**Seed benchmark** (simulated, known answer): "
        + ", ".join(f"{k} = {v:g}" for k, v in SEED_TRUTH.items())
        + "; 10 N chirp 0.5 to 5 Hz, 12 s at 500 Hz, noisy x, v, a (one noise draw: the benchmark's own,"
          " generator seed 42; the Identify page says how often such a draw's intervals miss the truth)."
    )
    if st.button("Load the seed example", key=state.HOME_LOAD_EXAMPLE, type="primary"):
        rec = cache.example("seed")
        try:
            names = state.add_records([rec])
        except NlidError as exc:
            st.error(f"Could not load the example: {esc(exc)}")
        else:
            state.set_config(state.default_config(fit_records=(names[0],)))
            state.notify("success", f"Loaded {names[0]} ({rec.n} samples). Next: look at the Nonlinearity page.")
            st.switch_page("app_pages/nonlinearity.py")
with right:
    if cache.silverbox_path() is not None:
        st.markdown(
            "**Silverbox** (real measurements of an electronic Duffing oscillator, volts): the standard"
            " training part and two test parts (multisine and arrow)."
        )
        if st.button("Load Silverbox", key=state.HOME_LOAD_SILVERBOX):
            try:
                names = state.add_records(list(cache.silverbox()))
                state.set_parts("silverbox", [(n, a, b, role) for n, (a, b), role in zip(
                    names, cache.SILVERBOX_ROWS, (state.FIT_ROLE, state.TEST_ROLE, state.TEST_ROLE), strict=True)])
            except (NlidError, OSError) as exc:
                st.error(f"Could not load Silverbox: {esc(exc)}")
            else:
                duffing = parse_terms((*baseline_terms(), *evidence_stiffness_terms()))  # linear + nonlinear springs
                state.set_config(state.default_config(duffing, fit_records=(names[0],)))
                state.notify("success", "Loaded Silverbox: fit on the training part, validate on the test parts.")
                st.switch_page("app_pages/model.py")
    else:
        st.caption("The Silverbox benchmark data is not installed on this server.")
