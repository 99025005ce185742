"""Model: terms, parameters (values, bounds, fixed/free), residual type, channels and weights."""

import dataclasses

import pandas as pd
import streamlit as st

from app_support import state
from app_support.text import esc
from nlid_core.errors import NlidError
from nlid_core.estimate import INITIAL_STATES, METHODS, FitOptions, equation_error
from nlid_core.models import TERMS, ModelSettings, TermModel
from nlid_core.params import Parameter, ParameterSet
from nlid_core.simulate import INPUT_HOLDS

st.title("Model")
state.show_notice()
recs = state.require_records()
cfg = state.ensure_config()

fit_records = st.multiselect("Records to fit (jointly, one parameter set)", list(recs),
                             default=[n for n in cfg.fit_records if n in recs], key=state.MODEL_FIT_RECORDS)
terms = st.multiselect("Model terms", list(TERMS), default=list(cfg.terms), key=state.MODEL_TERMS,
                       format_func=lambda n: f"{n}: {TERMS[n].expr}")
if not fit_records or not terms:
    st.warning("Choose at least one record and one term.")
    st.stop()
first = recs[fit_records[0]]
model = TermModel(terms)
st.markdown("**Equation:** `" + model.equation() + "`")

# parameters: keep edited values of terms that stay, defaults for new ones
defaults = model.default_parameters(force_unit=first.unit("f"), x_unit=first.unit("x"))
old = {p.name: p for p in cfg.params}
rows = []
for p in defaults:
    q = old.get(p.name, p)
    rows.append({"term": p.name, "force term": TERMS[p.name].expr, "unit": p.unit, "initial value": q.value,
                 "lower": q.lower, "upper": q.upper, "fixed": not q.vary})
st.caption("Initial values are the start of an output-error fit; two-stage and equation error start from a"
           " linear solve and use only the bounds and the fixed values.")
edited = st.data_editor(
    pd.DataFrame(rows), key=state.key_for(state.MODEL_PARAMS, *model.terms), hide_index=True,
    disabled=["term", "force term", "unit"],
    column_config={"initial value": st.column_config.NumberColumn(format="%.6g"),
                   "lower": st.column_config.NumberColumn(format="%.6g"),
                   "upper": st.column_config.NumberColumn(format="%.6g")},
)
try:
    params = ParameterSet(
        Parameter(name=r["term"], value=float(r["initial value"]), lower=float(r["lower"]), upper=float(r["upper"]),
                  vary=not bool(r["fixed"]), unit=r["unit"], description=TERMS[r["term"]].description)
        for r in edited.to_dict("records")
    )
except (NlidError, ValueError, TypeError) as exc:
    st.error(f"Parameter table: {esc(exc)}")
    st.stop()

c1, c2, c3 = st.columns(3)
method = c1.radio("Residual", METHODS, index=METHODS.index(cfg.options.method), key=state.MODEL_METHOD,
                  help="two-stage: equation error gives the start of an output-error fit (recommended)")
common = [c for c in ("x", "v", "a") if all(c in recs[n].measured for n in fit_records)]
outputs = c2.multiselect("Output-error channels (measured)", common,
                         default=[c for c in cfg.options.outputs if c in common] or common[:1], key=state.MODEL_OUTPUTS)
weights = {c: c2.number_input(f"weight of {c}", min_value=0.01, value=float(cfg.options.channel_weights.get(c, 1.0)),
                              key=state.key_for(state.MODEL_WEIGHT, c)) for c in outputs}
hold = c3.selectbox("Input between samples", INPUT_HOLDS, index=INPUT_HOLDS.index(cfg.options.input_hold),
                    key=state.MODEL_INPUT_HOLD, help="cubic: smooth excitations; foh: linear; zoh: held")
init = c3.selectbox("Initial state", INITIAL_STATES, index=INITIAL_STATES.index(cfg.options.initial_state),
                    key=state.MODEL_INITIAL_STATE, help="auto: at rest when the record starts at rest, else estimated")
threshold = c1.slider("Equation error: drop samples with |f| below this fraction of max|f|", 0.0, 0.5,
                      float(cfg.options.force_threshold), 0.01, key=state.MODEL_FORCE_THRESHOLD)
settings = cfg.settings
if "fc" in terms or "kg" in terms:
    s1, s2 = st.columns(2)
    v_eps = s1.number_input(f"Coulomb velocity scale v_eps [{esc(first.unit('x'), 40)}/s]", min_value=1e-9,
                            value=float(settings.v_eps), format="%.3g", key=state.MODEL_V_EPS,
                            disabled="fc" not in terms)
    gap = s2.number_input(f"Dead-zone half-width [{esc(first.unit('x'), 40)}]", min_value=0.0,
                          value=float(settings.gap), format="%.3g", key=state.MODEL_GAP, disabled="kg" not in terms)
    settings = ModelSettings(v_eps=v_eps, gap=gap)

try:
    options = FitOptions(method=method, outputs=tuple(outputs) or ("x",), channel_weights=weights,
                         input_hold=hold, initial_state=init, force_threshold=threshold)
    new_cfg = state.ModelConfig(terms=model.terms, settings=settings, params=params, options=options,
                                fit_records=tuple(fit_records))
except NlidError as exc:
    st.error(esc(exc))
    st.stop()
state.set_config(new_cfg)

if st.button("Automatic initial guess (equation error)", key=state.MODEL_AUTO_GUESS,
             help="Fills the initial values from a bounded linear fit of the equation error"):
    try:
        ee = equation_error([recs[n] for n in fit_records], TermModel(model.terms, settings), params,
                            dataclasses.replace(options, method="equation-error"))
    except NlidError as exc:
        st.error(f"Equation error failed: {esc(exc)}")
    else:
        state.set_config(dataclasses.replace(new_cfg, params=ee.parameters))
        state.reset_widget(state.key_for(state.MODEL_PARAMS, *model.terms))
        state.notify("success", "Initial values set from the equation-error fit.")
        st.rerun()

st.success(f"Ready: {len(terms)} terms, {method}, fitting {esc(', '.join(fit_records))}. Go to Identify.")
