"""Model: terms, parameters (values, bounds, fixed/free), residual type, channels and weights."""

import dataclasses

import pandas as pd
import streamlit as st

from app_support import state, tables
from app_support.text import esc
from nlid_core.errors import NlidError
from nlid_core.estimate import INITIAL_STATES, METHODS, FitOptions, equation_error
from nlid_core.models import TermModel
from nlid_core.params import Parameter, ParameterSet
from nlid_core.simulate import INPUT_HOLDS
from nlid_core.terms import REGISTRY
from nlid_core.terms.expr import FUNCTIONS

st.title("Model")
state.show_notice()
recs = state.require_records()
cfg = state.ensure_config()

fit_records = st.multiselect("Records to fit (jointly, one parameter set)", list(recs),
                             default=[n for n in cfg.fit_records if n in recs], key=state.MODEL_FIT_RECORDS,
                             format_func=state.record_label)
tests = [n for n in fit_records if state.roles().get(n) == state.TEST_ROLE]
if tests:
    st.warning(f"{esc(', '.join(tests))} {'is a test part' if len(tests) == 1 else 'are test parts'} of a split:"
               " fitting on it leaves it no longer held out, so validating on it later shows the fit, not a"
               " validation. Fit on the fit parts and keep the test parts for Validate.")
# typed terms: NAME=EXPR lines; a bad line keeps the previous ones (and so the previous model)
custom_text = st.text_area(
    "Custom terms (NAME=EXPR, one per line)", value="\n".join(f"{n}={e}" for n, e in cfg.custom),
    key=state.MODEL_CUSTOM, placeholder="asym=ka*x*abs(x)",
    help="A force in x, v (velocity), a (acceleration, linearly) and parameter names, e.g. asym=ka*x*abs(x);"
         f" functions: {', '.join(FUNCTIONS)}. Each other name is a parameter.")
try:
    custom = state.parse_custom_text(custom_text)
except NlidError as exc:
    st.error(f"Custom terms: {esc(exc)}. The model keeps its previous terms.")
    custom = cfg.custom
defs = {**REGISTRY, **{t.name: t for t in state.custom_terms(custom)}}
chosen = state.widget_value(state.MODEL_TERMS, [n for n in cfg.terms if n in defs])
if custom != cfg.custom:  # the choices change: typed terms join the model, removed ones leave it
    added = [n for n, _ in custom if n not in dict(cfg.custom)]
    state.set_widget(state.MODEL_TERMS, [n for n in (*chosen, *added) if n in defs])
terms = st.multiselect("Model terms", list(defs), key=state.MODEL_TERMS, format_func=lambda n: f"{n}: {defs[n].expr}")
if not fit_records or not terms:
    st.warning("Choose at least one record and one term.")
    st.stop()
first = recs[fit_records[0]]
try:
    model = TermModel(terms, cfg.settings, custom=state.custom_terms(custom))
except NlidError as exc:
    st.error(f"Model: {esc(exc)}")
    st.stop()
st.markdown("**Equation:** `" + model.equation() + "`")

# parameters (settings such as v_eps included, fixed by default): keep edited values of those that stay
defaults = model.default_parameters(force_unit=first.unit("f"), x_unit=first.unit("x"))
old = {p.name: p for p in cfg.params}
rows = []
for p, term in zip(defaults, model.term_of_param, strict=True):
    q = old.get(p.name, p)
    rows.append({"parameter": p.name, "term": term, "force term": defs[term].expr, "unit": tables.unit_text(p.unit),
                 "description": p.description, "initial value": q.value, "lower": q.lower, "upper": q.upper,
                 "fixed": not q.vary})
st.caption("Initial values are the start of an output-error fit; two-stage and equation error start from a"
           " linear solve and use only the bounds and the fixed values. Settings (e.g. v_eps) are fixed"
           " parameters: edit their value, or untick fixed to estimate them.")
params_key = state.key_for(state.MODEL_PARAMS, *model.terms, *(e for n, e in custom if n in model.terms))
edited = st.data_editor(
    pd.DataFrame(rows), key=params_key, hide_index=True,
    disabled=["parameter", "term", "force term", "unit", "description"],
    column_config={"initial value": st.column_config.NumberColumn(format="%.6g"),
                   "lower": st.column_config.NumberColumn(format="%.6g"),
                   "upper": st.column_config.NumberColumn(format="%.6g")},
)
try:
    params = ParameterSet(
        Parameter(name=r["parameter"], value=float(r["initial value"]), lower=float(r["lower"]),
                  upper=float(r["upper"]), vary=not bool(r["fixed"]), description=r["description"],
                  unit=defaults[r["parameter"]].unit)
        for r in edited.to_dict("records")
    )
    # the settings' start values follow the table (their parameters)
    settings = dataclasses.replace(
        cfg.settings, **{k: params[k].value for k in cfg.settings.values() if k in params.names})
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
                    key=state.MODEL_INPUT_HOLD, help="cubic: smooth excitations; foh: linear; zoh: held over each sample (a controller's output;"
                         " equation error then balances the mean of the values held either side of a sample)")
init = c3.selectbox("Initial state", INITIAL_STATES, index=INITIAL_STATES.index(cfg.options.initial_state),
                    key=state.MODEL_INITIAL_STATE, help="auto: at rest when the record starts at rest, else estimated")
threshold = c1.slider("Equation error: drop samples with |f| below this fraction of max|f|", 0.0, 0.5,
                      float(cfg.options.force_threshold), 0.01, key=state.MODEL_FORCE_THRESHOLD)

try:
    options = FitOptions(method=method, outputs=tuple(outputs) or ("x",), channel_weights=weights,
                         input_hold=hold, initial_state=init, force_threshold=threshold)
    new_cfg = state.ModelConfig(terms=model.terms, settings=settings, params=params, options=options,
                                fit_records=tuple(fit_records), custom=custom)
except NlidError as exc:
    st.error(esc(exc))
    st.stop()
state.set_config(new_cfg)

if st.button("Automatic initial guess (equation error)", key=state.MODEL_AUTO_GUESS,
             help="Fills the initial values from a bounded linear fit of the equation error"):
    try:
        ee = equation_error([recs[n] for n in fit_records], new_cfg.model, params,
                            dataclasses.replace(options, method="equation-error"))
    except NlidError as exc:
        st.error(f"Equation error failed: {esc(exc)}")
    else:
        state.set_config(dataclasses.replace(new_cfg, params=ee.parameters))
        state.reset_widget(params_key)
        state.notify("success", "Initial values set from the equation-error fit.")
        st.rerun()

st.success(f"Ready: {len(terms)} terms, {method}, fitting {esc(', '.join(fit_records))}. Go to Identify.")
