"""Friction & hysteresis: staged LuGre identification (plateaus, Stribeck curve, pre-sliding), static vs
dynamic friction, the stick-slip oscillator, and Bouc-Wen hysteresis loops."""

import time

import streamlit as st

from app_support import cache, jobs, state, tables
from app_support import friction as fr
from app_support.text import esc
from nlid_core import figures
from nlid_core.errors import NlidError
from nlid_core.figures import friction as ffig

st.title("Friction & hysteresis")
state.show_notice()
jobs.prestart()
store = state.friction()
ERRORS = (NlidError, jobs.JobError)

# --------------------------------------------------------------------------- 1. records
st.markdown("#### 1. Records: a velocity staircase and a pre-sliding test")
source = st.radio("Records from", ["simulate an axis", "upload files", "records loaded on the Data page"],
                  key=state.FRICTION_SOURCE, horizontal=True)
if source == "simulate an axis":
    c1, c2, c3, c4, c5 = st.columns(5)
    mass = c1.number_input("Moving mass [kg]", 0.05, 100.0, 1.0, 0.05, key=state.FRICTION_MASS)
    noise = c2.number_input("Sensor noise (× default)", 0.0, 20.0, 1.0, 0.5, key=state.FRICTION_NOISE)
    seed = c3.number_input("Noise seed", 0, 10_000, 11, key=state.FRICTION_SEED)
    dwell = c4.number_input("Dwell per level [s]", 0.3, 3.0, 0.5, 0.1, key=state.FRICTION_DWELL)
    pre_s = c5.number_input("Pre-sliding chirp [s]", 0.5, 10.0, 2.0, 0.5, key=state.FRICTION_PRE_DURATION,
                            help="The pre-sliding stage's time grows with this length.")
    truth = fr.default_truth()
    with st.expander("True LuGre parameters of the simulated axis"):
        cols = st.columns(len(fr.PARAMETER_RANGES))
        keys = {"Fc": state.FRICTION_FC, "Fs": state.FRICTION_FS, "vs": state.FRICTION_VS,
                "sigma0": state.FRICTION_SIGMA0, "sigma1": state.FRICTION_SIGMA1, "sigma2": state.FRICTION_SIGMA2}
        for col, (name, (lo, hi, step, fmt)) in zip(cols, fr.PARAMETER_RANGES.items()):
            truth[name] = col.number_input(f"{name} [{fr.UNITS[name]}]", lo, hi, float(truth[name]), step,
                                           format=fmt, key=keys[name])
    if st.button("Simulate the experiments", key=state.FRICTION_SIMULATE, type="primary"):
        settings = fr.AxisSettings(truth=truth, mass=mass, noise_scale=noise, seed=int(seed), dwell_s=dwell,
                                   presliding_s=pre_s)
        try:
            steady_ex, pre_ex = fr.simulate_axis(settings)
        except ERRORS as exc:
            st.error(f"The simulation did not run: {esc(exc)}")
        else:
            store.clear()
            store.update(steady=steady_ex[0], presliding=pre_ex[0], truth=steady_ex[1], mass=mass)
elif source == "upload files":
    c1, c2 = st.columns(2)
    up_s = c1.file_uploader("Staircase record (columns t, f, x, v)", type=list(cache.UPLOAD_TYPES),
                            key=state.FRICTION_UPLOAD_STEADY)
    up_p = c2.file_uploader("Pre-sliding record (columns t, f, x)", type=list(cache.UPLOAD_TYPES),
                            key=state.FRICTION_UPLOAD_PRE)
    if st.button("Load the two files", key=state.FRICTION_LOAD_UPLOADS, disabled=not (up_s and up_p), type="primary"):
        try:
            steady = fr.check_steady(cache.load_uploaded(up_s.getvalue(), up_s.name, "", "", None, ""))
            pre = fr.check_presliding(cache.load_uploaded(up_p.getvalue(), up_p.name, "", "", None, ""))
        except NlidError as exc:
            st.error(f"The files were not loaded: {esc(exc)}")
        else:
            store.clear()
            store.update(steady=steady, presliding=pre)
else:
    recs = state.records()
    if not recs:
        st.info("No record is loaded: upload records on the Data page, or simulate an axis here.")
    else:
        c1, c2 = st.columns(2)
        name_s = c1.selectbox("Staircase record (t, f, x, v)", list(recs), key=state.FRICTION_PICK_STEADY)
        name_p = c2.selectbox("Pre-sliding record (t, f, x)", list(recs), key=state.FRICTION_PICK_PRE)
        if st.button("Use these records", key=state.FRICTION_USE_LOADED, type="primary"):
            try:
                steady, pre = fr.check_steady(recs[name_s]), fr.check_presliding(recs[name_p])
            except NlidError as exc:
                st.error(esc(exc))
            else:
                store.clear()
                store.update(steady=steady, presliding=pre)

if "steady" not in store:
    st.info("Simulate an axis, upload a staircase and a pre-sliding record, or pick loaded records.")
else:
    steady, pre, truth = store["steady"], store["presliding"], store.get("truth")
    st.caption(f"Staircase **{esc(steady.name)}**: {steady.n:,} samples at {steady.fs:.4g} Hz; pre-sliding "
               f"**{esc(pre.name)}**: {pre.n:,} samples at {pre.fs:.4g} Hz"
               + (" (simulated: the true parameters are known)" if truth else "") + ".")
    with st.expander("The records"):
        left, right = st.columns(2)
        left.plotly_chart(figures.fig_record(steady), key="fric_rec_steady")
        right.plotly_chart(figures.fig_record(pre), key="fric_rec_pre")

    # ----------------------------------------------------------------------- 2. plateaus
    st.markdown("#### 2. Constant-velocity plateaus")
    c1, c2 = st.columns([2, 3], vertical_alignment="bottom")
    known = c1.toggle("The moving mass is known", value=True, key=state.FRICTION_FIX_MASS,
                      help="Fixed in the identification and used for the plateaus' inertia correction.")
    mass = c2.number_input("Moving mass [kg]", 0.001, 1e4, float(store.get("mass", 1.0)), key=state.FRICTION_KNOWN_MASS,
                           disabled=not known) if known else None
    try:
        detection = fr.plateaus(steady, mass)
    except NlidError as exc:
        st.error(f"No plateaus: {esc(exc)}")
        st.stop()
    st.caption(esc(detection.message))
    st.plotly_chart(ffig.fig_plateaus(steady, detection), key="fric_plateaus")
    st.caption("Hover over a red cross for the reason a candidate was rejected; zoom in to see the slow levels.")
    with st.expander(f"Plateau candidates ({len(detection.accepted)} of {len(detection.plateaus)} accepted)"):
        tables.show(fr.plateau_table((detection,)), key="fric_plateau_table")

    # ----------------------------------------------------------------------- 3. identify
    st.markdown("#### 3. Staged LuGre identification")
    polish = st.toggle("Joint polish after the stages (slower)", key=state.FRICTION_POLISH)
    if st.button("Identify the friction", key=state.FRICTION_IDENTIFY, type="primary"):
        t_start = time.perf_counter()
        try:
            result = fr.identify(steady, pre, mass=mass, polish=polish)
        except ERRORS as exc:
            st.error(f"The identification could not run: {esc(exc)}. Earlier results are kept.")
        else:
            for k in ("result", "stick_slip"):
                store.pop(k, None)
            store["result"] = result
            store["result_mass"] = mass
            store["result_seconds"] = (time.perf_counter() - t_start, steady.n + (pre.n if pre is not None else 0))
    result = store.get("result")
    if result is None:
        st.info("Press **Identify the friction**: it runs in the background with its progress and a Cancel"
                " button; earlier results stay until it ends.")
    else:
        if "result_seconds" in store:
            took, n = store["result_seconds"]
            st.caption(f"The last identification took {took:.0f} s on {n:,} samples (it grows with the number of"
                       " samples and the plateaus).")
        with st.container(key="fric_results", border=True):
            st.subheader("converged" if result.success else "FAILED")
            (st.success if result.success else st.error)(esc(result.message))
            if result.verdict:
                st.markdown(f"**Verdict.** {esc(result.verdict, 2000)}")
            for w in result.warnings:
                st.warning(esc(w))
            st.markdown("**Stages** (what each estimated, what it held fixed, and why)")
            tables.show(fr.stage_table(result), key="fric_stage_table")
            st.markdown("**Parameters** (value, standard error, interval, flags)")
            tables.show(fr.parameter_table(result), key="fric_param_table", fmt="%.6g")
            if truth:
                st.markdown("**Against the truth** of the simulated axis")
                tables.show(fr.truth_table(result, {**truth}), key="fric_truth_table", fmt="%.5g")
            st.plotly_chart(ffig.fig_stribeck(result, force_unit=steady.unit("f"), velocity_unit=steady.unit("v")),
                            key="fric_stribeck")
            st.markdown("**Static against dynamic friction.** Static curves fitted to the same plateaus (lower AIC"
                        " is better); below breakaway every static model sticks (0 displacement), LuGre's bristles"
                        " move.")
            tables.show(fr.static_table(result), key="fric_static_table")
            for i, fit in enumerate(result.presliding):
                st.plotly_chart(ffig.fig_presliding(fit, x_unit=pre.unit("x"), force_unit=pre.unit("f"),
                                                    time_unit=pre.unit("t")), key=f"fric_presliding_{i}")
            if result.success:
                try:
                    rp = fr.replay(result, steady)
                except NlidError as exc:
                    st.caption(f"No steady replay: {esc(exc)}")
                else:
                    st.plotly_chart(ffig.fig_steady_replay(rp, force_unit=steady.unit("f"),
                                                           time_unit=steady.unit("t")), key="fric_replay")
            d1, d2 = st.columns(2)
            d1.download_button("Download the result (JSON)", fr.result_json(result), "friction_result.json",
                               "application/json", key=state.FRICTION_DL_JSON)
            d2.download_button("Download the plateau table (CSV)",
                               fr.plateau_table(result.plateaus).to_csv(index=False), "plateaus.csv", "text/csv",
                               key=state.FRICTION_DL_PLATEAUS)

        # ------------------------------------------------------------------- 4. stick-slip
        # keyed: it stays open across the run its button starts (and across pages), as the user left it
        with st.expander("4. Stick-slip oscillator: LuGre against the static model", key=state.FRIC_STICK_PANEL,
                         on_change="rerun"):
            st.markdown("A mass on a spring (500 N/m) dragged by a belt at 1 mm/s. The identified LuGre and its "
                        "static Stribeck curve predict the stick-slip period and amplitude"
                        + (", compared with the simulated truth." if truth else "."))
            if st.button("Simulate the oscillator", key=state.FRICTION_STICK_SLIP, disabled=not result.success):
                try:
                    store["stick_slip"] = fr.stick_slip_comparison(result, truth, float(mass or result.values["m0"]))
                except ERRORS as exc:
                    st.error(f"The stick-slip runs did not finish: {esc(exc)}")
            runs = store.get("stick_slip")
            if runs:
                tables.show(fr.stick_slip_table(runs), key="fric_stick_table")
                t_run = runs.get("truth (simulated)")
                st.plotly_chart(ffig.fig_stick_slip(t_run, {k: v for k, v in runs.items() if v is not t_run}),
                                key="fric_stick_fig")

# --------------------------------------------------------------------------- 5. Bouc-Wen
st.markdown("#### 5. Hysteresis: a Bouc-Wen model")
bw_source = st.radio("Data", ["simulate the Bouc-Wen benchmark", "a record loaded on the Data page"],
                     key=state.FRICTION_BW_SOURCE, horizontal=True)
recs = state.records()
if bw_source == "a record loaded on the Data page":
    bw_name = st.selectbox("Record (t, f, x)", list(recs), key=state.FRICTION_BW_RECORD) if recs else None
    bw_seed = 0
else:
    bw_name = None
    bw_seed = st.number_input("Multisine seed", 0, 10_000, 0, key=state.FRICTION_BW_SEED)
if st.button("Identify m0, c1, k1, bouc_wen", key=state.FRICTION_BW_IDENTIFY,
             disabled=bw_source != "simulate the Bouc-Wen benchmark" and not bw_name):
    try:
        bw_rec = recs[bw_name] if bw_name else fr.bouc_wen_records(int(bw_seed))
        bw_fit = fr.fit_bouc_wen(bw_rec)
    except ERRORS as exc:
        st.error(f"The Bouc-Wen identification could not run: {esc(exc)}")
    else:
        store["bouc_wen"] = (bw_rec, bw_fit)
if "bouc_wen" in store:
    bw_rec, bw_fit = store["bouc_wen"]
    if not bw_fit.success:
        st.error(f"The Bouc-Wen fit failed: {esc(bw_fit.message)}")
    else:
        st.code(bw_fit.equation(), language=None, wrap_lines=True)
        tables.show(tables.parameter_table(bw_fit), key="fric_bw_table", fmt="%.6g")
        try:
            st.plotly_chart(ffig.fig_hysteretic_loops(fr.loops(bw_rec, bw_fit)), key="fric_bw_loops")
        except NlidError as exc:
            st.error(f"No loops: {esc(exc)}")
        st.download_button("Download the Bouc-Wen parameters (CSV)", tables.parameter_table(bw_fit).to_csv(index=False),
                           "bouc_wen_parameters.csv", "text/csv", key=state.FRICTION_DL_BW)
