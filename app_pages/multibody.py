"""Multibody & interval: the flexible double pendulum of Guo & Jin (2025) — its model, a forward run (flexible
and rigid, animated), the deterministic inverse problem (release angles and moduli from a tip trajectory), the
interval forward problem (bounds of the tip response from input intervals) and the interval inverse problem
(input intervals from response bounds, standard and improved PSO on one surrogate)."""

import math

import streamlit as st

from app_support import jobs, state, tables
from app_support import multibody as mb
from app_support.text import esc
from nlid_core.errors import NlidError
from nlid_core.figures import multibody as mfig
from nlid_core.multibody.interval import forward_run_count
from nlid_core.analysis.estimates import duration_text

st.title("Multibody & interval")
state.show_notice()
jobs.prestart()
store = state.multibody()
ERRORS = (NlidError, jobs.JobError)
PRESET = mb.ModelForm()
MODEL_KEYS = {state.MB_LENGTH_OA: PRESET.length_oa, state.MB_LENGTH_AB: PRESET.length_ab,
              state.MB_HEIGHT: PRESET.height, state.MB_WIDTH: PRESET.width, state.MB_DENSITY: PRESET.density,
              state.MB_E_OA: PRESET.e_oa, state.MB_E_AB: PRESET.e_ab, state.MB_NU: PRESET.nu,
              state.MB_N_OA: PRESET.n_oa, state.MB_N_AB: PRESET.n_ab, state.MB_DT: PRESET.dt,
              state.MB_RHO_INF: PRESET.rho_inf}
T1, T2 = mb.PAPER_THETA
DEFAULTS = {
    **MODEL_KEYS, state.MB_THETA1: T1, state.MB_THETA2: T2, state.MB_T_END: 2.0, state.MB_DT_OUT: 0.05,
    state.MB_ANIMATION_LAYOUT: "side by side", state.MB_EXAGGERATE: 10.0, state.MB_FREE: ["theta1", "theta2"],
    state.MB_METHOD: "lsq",
    state.key_for(state.MB_MID, "theta1"): T1, state.key_for(state.MB_RADIUS, "theta1"): 0.05 * T1,
    state.key_for(state.MB_MID, "theta2"): T2, state.key_for(state.MB_RADIUS, "theta2"): 0.05 * T2,
    state.key_for(state.MB_MID, "E_ab"): PRESET.e_ab, state.key_for(state.MB_RADIUS, "E_ab"): 0.05 * PRESET.e_ab,
    state.MB_USE_E_AB: False, state.MB_ORDER: 4, state.MB_KIND: "total", state.MB_N_CHECK: 6,
    state.MB_INV_FREE: ["theta1", "theta2"], state.key_for(state.MB_INV_FIXED, "theta1"): T1,
    state.key_for(state.MB_INV_FIXED, "theta2"): T2, state.MB_INV_ORDER: 4, state.MB_INV_KIND: "total",
    state.MB_POPULATION: 40, state.MB_ITERATIONS: 100, state.MB_SEED: 0, state.MB_FWD_RELATIVE: True,
    state.MB_INV_RELATIVE: True,
}
state.restore_form(state.MULTIBODY_FORM, DEFAULTS)


def _preset() -> None:
    for key, value in MODEL_KEYS.items():
        state.set_widget(key, value)


def _made_with(entry: dict, model: object) -> None:
    """Say so when a kept result was computed with another model than the form's."""
    if entry.get("model") != model:
        st.caption("Computed with an earlier model (tab 1 has changed since); run again to update.")


t_model, t_sim, t_det, t_fwd, t_inv = st.tabs(
    ["1. Model", "2. Simulate", "3. Deterministic inverse", "4. Interval forward", "5. Interval inverse"],
    key=state.MB_TABS)

# --------------------------------------------------------------------------- 1. model
with t_model:
    st.markdown("A planar double pendulum of two flexible beams under gravity: rod OA pinned at O, rod AB pinned"
                " to it at A, released from rest at angles θ1, θ2 below the horizontal; absolute nodal coordinate"
                " (ANCF) beam elements, generalized-α time integration (Guo & Jin, *J. Vibration Engineering*"
                " 38(5), 2025).")
    c = st.columns(4)
    length_oa = c[0].number_input("Length OA [m]", 0.05, 20.0, step=0.1, key=state.MB_LENGTH_OA)
    length_ab = c[1].number_input("Length AB [m]", 0.05, 20.0, step=0.1, key=state.MB_LENGTH_AB)
    height = c[2].number_input("Section height (in plane) [m]", 0.001, 2.0, step=0.01, format="%.3f",
                               key=state.MB_HEIGHT)
    width = c[3].number_input("Section width [m]", 0.001, 2.0, step=0.01, format="%.3f", key=state.MB_WIDTH)
    c = st.columns(4)
    density = c[0].number_input("Density [kg/m³]", 1.0, 50_000.0, step=10.0, key=state.MB_DENSITY)
    e_oa = c[1].number_input("E of OA [Pa]", 1e3, 1e13, step=1e7, format="%.4e", key=state.MB_E_OA)
    e_ab = c[2].number_input("E of AB [Pa]", 1e3, 1e13, step=1e6, format="%.4e", key=state.MB_E_AB)
    nu = c[3].number_input("Poisson's ratio ν", 0.0, 0.49, step=0.01, key=state.MB_NU)
    c = st.columns(4)
    n_oa = c[0].number_input("Elements on OA", 1, 16, key=state.MB_N_OA)
    n_ab = c[1].number_input("Elements on AB", 1, 16, key=state.MB_N_AB)
    dt = c[2].number_input("Time step [s]", 1e-5, 1e-2, step=1e-4, format="%.1e", key=state.MB_DT)
    rho_inf = c[3].number_input("Spectral radius ρ∞ (generalized-α)", 0.0, 1.0, step=0.05, key=state.MB_RHO_INF)
    st.button("Reset to the paper's preset", key=state.MB_PRESET, on_click=_preset)
    st.caption("The preset is the paper's pendulum (OA 1 m, AB 2 m, ρ = 5540 kg/m³, E_OA = 2e8 Pa, E_AB = 2e7 Pa,"
               " ν = 0.3, 2 + 4 elements, step 5e-4 s) with one change: the section's in-plane **height is 0.4 m**"
               " instead of the printed 0.04 m. With the printed section no beam model reproduces the paper's"
               " appendix table (errors of 9–14 cm); with 0.4 m the flexible model matches it to about 0.5 mm rms."
               " Only the in-plane height enters the planar response (bending stiffness and rotary inertia); the"
               " width cancels out.")
    spec = settings = None
    try:
        spec, settings = mb.model_of(mb.ModelForm(
            length_oa=length_oa, length_ab=length_ab, height=height, width=width, density=density, e_oa=e_oa,
            e_ab=e_ab, nu=nu, n_oa=int(n_oa), n_ab=int(n_ab), dt=dt, rho_inf=rho_inf))
    except NlidError as exc:
        st.error(f"The model is not valid: {esc(exc, 1000)}")
state.keep_form(state.MULTIBODY_FORM, list(DEFAULTS))

if spec is None or settings is None:
    for tab in (t_sim, t_det, t_fwd, t_inv):
        tab.info("Fix the model first (tab 1).")
    st.stop()

# --------------------------------------------------------------------------- 2. simulate
with t_sim:
    c = st.columns(4)
    theta1 = c[0].number_input("θ1 [rad]", -math.pi, math.pi, step=0.01, format="%.6f", key=state.MB_THETA1,
                               help="Angle of OA below the horizontal at release (π/4 = 0.785398).")
    theta2 = c[1].number_input("θ2 [rad]", -math.pi, math.pi, step=0.01, format="%.6f", key=state.MB_THETA2,
                               help="Angle of AB below the horizontal at release (π/6 = 0.523599).")
    t_end = c[2].number_input("Duration [s]", 0.01, 10.0, step=0.5, key=state.MB_T_END)
    dt_out = c[3].number_input("Output every [s]", 0.001, 1.0, step=0.01, format="%.3f", key=state.MB_DT_OUT)
    st.caption(f"θ1 = {math.degrees(theta1):.4g}°, θ2 = {math.degrees(theta2):.4g}°. The flexible (ANCF) and the"
               " rigid model are run from the same release; the output grid is also used by the interval forward"
               " analysis (tab 4).")
    if st.button("Simulate", key=state.MB_SIMULATE, type="primary"):
        try:
            runs = mb.simulate(spec, settings, theta1, theta2, t_end, dt_out)
        except ERRORS as exc:
            st.error(f"The pendulum was not simulated: {esc(exc, 1000)}. Earlier results are kept.")
        else:
            store["sim"] = {"runs": runs, "theta": (theta1, theta2), "spec": spec, "model": (spec, settings)}
    sim = store.get("sim")
    if sim is None:
        st.info("Press **Simulate** to run the flexible and the rigid model.")
    else:
        runs = sim["runs"]
        _made_with(sim, (spec, settings))
        for run in runs:
            (st.success if run.success else st.error)(
                f"{'Flexible (ANCF)' if run.model == 'ancf' else 'Rigid'}: {esc(run.message.rstrip('.'), 500)};"
                f" {run.elapsed_s:.2f} s.")
        drawn = [r for r in runs if r.nodes is not None]  # a failed run is drawn up to where it failed
        with st.container(key="mb_sim_results"):
            c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
            layout = c1.radio("Animation", ["side by side", "overlaid"], key=state.MB_ANIMATION_LAYOUT,
                              horizontal=True)
            factor = c2.number_input("Bending drawn × (display only)", 1.0, 1000.0, step=5.0,
                                     key=state.MB_EXAGGERATE,
                                     help="Each rod's deflection from its chord is drawn this many times larger;"
                                          " the joints and the tip are where they are. At the preset the rods bend"
                                          " by about 2 cm, invisible at 1×.")
            paper = mb.paper_table("A1") if mb.is_paper_case(sim["spec"], *sim["theta"]) else None
            try:
                st.plotly_chart(mfig.fig_pendulum_animation(drawn, overlay=layout == "overlaid", exaggerate=factor,
                                                            joint=sim["spec"].n_oa), key="mb_animation")
                st.plotly_chart(mfig.fig_tip_trajectory(drawn, measured=paper, measured_label="paper, Table A1"),
                                key="mb_tip_fig")
            except NlidError as exc:
                st.warning(f"Nothing to draw: {esc(exc, 500)}")
            if paper is not None:
                st.caption("Markers: the paper's appendix Table A1 (θ1 = π/4, θ2 = π/6). Expect agreement at the"
                           " 1 mm level for the flexible model and 1–1.5 cm for the rigid one.")
            c = st.columns(len(runs))
            for k, run in enumerate(runs):
                if run.success:
                    c[k].download_button(f"Tip trajectory, {run.model} (CSV)", mb.run_csv(run),
                                         f"tip_{run.model}.csv", "text/csv",
                                         key=state.key_for(state.MB_DL_SIMULATED, run.model))

# --------------------------------------------------------------------------- 3. deterministic inverse
with t_det:
    sources = ["upload a CSV"]
    if store.get("sim") is not None:
        sources.insert(0, "the simulated flexible run (tab 2)")
    table_a1 = mb.paper_table("A1")
    if table_a1 is not None:
        sources.insert(0, "the paper's Table A1")
    if state.widget_value(state.MB_TRAJ_SOURCE, sources[0]) not in sources:
        state.set_widget(state.MB_TRAJ_SOURCE, sources[0])
    source = st.radio("Trajectory", sources, key=state.MB_TRAJ_SOURCE, horizontal=True)
    frame, truth = None, None
    label = source
    if source == "upload a CSV":
        up = st.file_uploader("Trajectory CSV: columns t [s], x_B, y_B [m]; rows uniformly spaced from t = 0",
                              type=["csv"], key=state.MB_TRAJ_UPLOAD)
        if up is not None:
            label = f"the uploaded {up.name}"
            try:
                frame = mb.read_trajectory_upload(up.getvalue(), up.name)
            except NlidError as exc:
                st.error(f"The trajectory was not read: {esc(exc, 1000)}")
    elif source.startswith("the simulated"):
        run = store["sim"]["runs"][0]
        if run.success:
            frame = run.to_frame()
            truth = dict(zip(("theta1", "theta2"), store["sim"]["theta"]))
        else:
            st.error("The simulated flexible run failed; simulate again in tab 2.")
    else:
        frame = table_a1
    c1, c2 = st.columns([3, 2])
    free = c1.multiselect("Free parameters", list(mb.PARAMETERS), key=state.MB_FREE,
                          help="θ1, θ2 [rad], E_ab, E_oa [Pa]. Moduli that are not free keep the model's values"
                               " (tab 1); angles that are not free come from the first row (release from rest).")
    method = c2.radio("Method", ["lsq", "pso"], key=state.MB_METHOD, horizontal=True,
                      format_func=lambda m: {"lsq": "least squares (exact sensitivities)",
                                             "pso": "improved PSO on a surrogate"}[m])
    if st.button("Identify", key=state.MB_IDENTIFY, type="primary", disabled=frame is None or not free):
        try:
            fit = mb.identify(frame, free, {}, spec, settings, method)
        except ERRORS as exc:
            st.error(f"The trajectory fit did not run: {esc(exc, 1000)}. Earlier results are kept.")
        else:
            store["fit"] = {"fit": fit, "data": frame, "source": label, "truth": truth, "model": (spec, settings)}
    kept = store.get("fit")
    if kept is None:
        st.info("Choose a trajectory and the free parameters, then press **Identify**.")
    else:
        fit = kept["fit"]
        _made_with(kept, (spec, settings))
        with st.container(key="mb_fit_results"):
            (st.success if fit.success else st.warning)(
                f"{fit.method.upper()} on {esc(kept['source'])}: {esc(fit.message.rstrip('.'), 500)}. Tip misfit"
                f" {1e3 * fit.rms_m:.3g} mm rms; {fit.forward_runs} forward runs, {fit.elapsed_s:.1f} s.")
            tables.show(mb.fit_table(fit, kept["truth"]), key="mb_fit_table", fmt="%.6g")
            st.caption("Standard errors and 95 % intervals from the final Jacobian (exact sensitivities of the"
                       " discrete solution); the misfit is mostly model and rounding error, so they describe its"
                       " size rather than a sampling distribution.")
            st.plotly_chart(mfig.fig_tip_trajectory([fit.fitted], ["fitted"], measured=kept["data"],
                                                    measured_label="given"), key="mb_fit_fig")
            st.download_button("Download the fit (JSON)", mb.fit_json(fit), "trajectory_fit.json",
                               "application/json", key=state.MB_DL_FIT)

# --------------------------------------------------------------------------- 4. interval forward
with t_fwd:
    st.markdown("Inputs in intervals **midpoint ± radius**; a Chebyshev surrogate of the tip response over the"
                " box gives its bounds, checked against true runs inside the box.")
    use_e = st.toggle("E_ab uncertain too", key=state.MB_USE_E_AB)
    names = ["theta1", "theta2"] + (["E_ab"] if use_e else [])
    mids, radii = [], []
    for name in names:
        c1, c2 = st.columns(2)
        unit = mb.UNITS[name]
        fmt = "%.4e" if unit == "Pa" else "%.6f"
        mids.append((name, c1.number_input(f"{name} midpoint [{unit}]", format=fmt,
                                           key=state.key_for(state.MB_MID, name))))
        radii.append((name, c2.number_input(f"{name} radius [{unit}]", 0.0, format=fmt,
                                            key=state.key_for(state.MB_RADIUS, name))))
    c = st.columns(3)
    order = c[0].number_input("Surrogate order", 1, 8, key=state.MB_ORDER)
    kind = c[1].radio("Basis", ["total", "tensor"], key=state.MB_KIND, horizontal=True,
                      format_func=lambda k: {"total": "total degree", "tensor": "tensor product"}[k])
    n_check = c[2].number_input("Held-out true runs", 1, 20, key=state.MB_N_CHECK)
    n_runs = forward_run_count(len(names), int(order), kind, int(n_check))
    per_run, basis = None, ""
    done_fw, done_sim = store.get("forward"), store.get("sim")
    if done_fw is not None and done_fw["analysis"].forward_runs:
        per_run = done_fw["analysis"].elapsed_s / done_fw["analysis"].forward_runs
        basis = "measured on the last forward analysis"
    elif done_sim is not None and done_sim["runs"][0].success and done_sim["runs"][0].t[-1] > 0:
        flex = done_sim["runs"][0]
        per_run = flex.elapsed_s * t_end / float(flex.t[-1])
        basis = "scaled from the flexible simulation of tab 2"
    when = (f"about {duration_text(n_runs * per_run)} ({per_run:.2g} s per run, {basis})" if per_run is not None
            else "each as long as one flexible simulation: simulate in tab 2 first for a time estimate")
    st.caption(f"Output grid of tab 2: 0 to {t_end:g} s every {dt_out:g} s. The paper's case: θ1 = π/4·(1 ± 0.05),"
               f" θ2 = π/6·(1 ± 0.05) (the defaults). {n_runs} forward runs, {when}.")
    if st.button("Run the interval forward analysis", key=state.MB_FORWARD, type="primary"):
        form = mb.IntervalForm(mids=tuple(mids), radii=tuple(radii), order=int(order), kind=kind,
                               n_check=int(n_check), t_end=t_end, dt_out=dt_out)
        try:
            analysis = mb.forward(form, {}, spec, settings)
        except ERRORS as exc:
            st.error(f"The interval forward analysis did not run: {esc(exc, 1000)}. Earlier results are kept.")
        else:
            store["forward"] = {"analysis": analysis, "model": (spec, settings),
                                "paper": mb.is_paper_interval(form, spec)}
    kept = store.get("forward")
    if kept is None:
        st.info("Set the intervals and press **Run the interval forward analysis**.")
    else:
        analysis = kept["analysis"]
        _made_with(kept, (spec, settings))
        given = mb.paper_bounds() if kept["paper"] else None
        with st.container(key="mb_forward_results"):
            (st.success if analysis.success else st.warning)(esc(analysis.message, 500))
            st.markdown(f"**Held-out error of the surrogate**: {1e3 * analysis.holdout_rms:.3g} mm rms,"
                        f" {1e3 * analysis.holdout_max:.3g} mm max on {len(analysis.samples)} true runs inside the"
                        " box (the band is widened to contain them).")
            tables.show(mb.forward_summary(analysis), key="mb_forward_table")
            relative = st.toggle("Relative to the band's mid-line, in mm", key=state.MB_FWD_RELATIVE)
            st.plotly_chart(mfig.fig_interval_bounds(analysis, given=given, given_label="paper, Table A2",
                                                     relative=relative), key="mb_bounds_fig")
            st.caption("Band: the surrogate's bounds over the box; grey: true runs inside it; dashed: the bounds"
                       " from the box's corners only — where the band reaches beyond them, the extreme response"
                       " lies inside the box." + (" Markers: the paper's Table A2." if given is not None else "")
                       + (" Every curve is drawn in mm about the band's mid-line (the band is centimetres wide on a"
                          " swing of metres)." if relative else ""))
            st.download_button("Download the bounds (CSV)", mb.bounds_csv(analysis.bounds), "bounds.csv", "text/csv",
                               key=state.MB_DL_BOUNDS)

# --------------------------------------------------------------------------- 5. interval inverse
with t_inv:
    sources = ["upload a CSV"]
    if store.get("forward") is not None:
        sources.insert(0, "the forward analysis's bounds (tab 4)")
    table_a2 = mb.paper_bounds()
    if table_a2 is not None:
        sources.insert(0, "the paper's Table A2")
    if state.widget_value(state.MB_BOUNDS_SOURCE, sources[0]) not in sources:
        state.set_widget(state.MB_BOUNDS_SOURCE, sources[0])
    source = st.radio("Response bounds", sources, key=state.MB_BOUNDS_SOURCE, horizontal=True)
    bounds = None
    bounds_label = source
    if source == "upload a CSV":
        up = st.file_uploader("Bounds CSV: columns t [s], x_B_min, x_B_max, y_B_min, y_B_max [m]", type=["csv"],
                              key=state.MB_BOUNDS_UPLOAD)
        if up is not None:
            bounds_label = f"the uploaded {up.name}"
            try:
                bounds = mb.read_bounds_upload(up.getvalue(), up.name)
            except NlidError as exc:
                st.error(f"The bounds were not read: {esc(exc, 1000)}")
    elif source.startswith("the forward"):
        bounds = store["forward"]["analysis"].bounds
    else:
        bounds = table_a2
    inv_free = st.multiselect("Parameters with an unknown interval", list(mb.PARAMETERS), key=state.MB_INV_FREE,
                              help="Moduli that are not chosen keep the model's values (tab 1).")
    held = [n for n in mb.ANGLES if n not in inv_free]
    fixed = {}
    if held:
        c = st.columns(len(held))
        for k, name in enumerate(held):
            fixed[name] = c[k].number_input(f"{name}, known [rad]", -math.pi, math.pi, format="%.6f",
                                            key=state.key_for(state.MB_INV_FIXED, name))
    c = st.columns(5)
    inv_order = c[0].number_input("Surrogate order", 1, 8, key=state.MB_INV_ORDER)
    inv_kind = c[1].radio("Basis", ["total", "tensor"], key=state.MB_INV_KIND, horizontal=True)
    population = c[2].number_input("Population", 4, 400, key=state.MB_POPULATION)
    iterations = c[3].number_input("Iterations", 1, 2000, key=state.MB_ITERATIONS)
    seed = c[4].number_input("Seed", 0, 1_000_000, key=state.MB_SEED)
    st.caption("One first estimate (least squares on the bounds' mid-line), one surrogate over a search domain"
               " around it, then the standard PSO and the improved PSO (three sub-swarms, an archive of good"
               " positions, linearly decreasing inertia) with the same population, iterations and seed. The"
               " fitness is Σ‖Y_lower − Ȳ_lower‖² + ‖Y_upper − Ȳ_upper‖² (m²).")
    if st.button("Run PSO and IPSO", key=state.MB_INVERSE, type="primary", disabled=bounds is None or not inv_free):
        form = mb.InverseForm(free=tuple(inv_free), fixed=tuple(fixed.items()), order=int(inv_order), kind=inv_kind,
                              population=int(population), iterations=int(iterations), seed=int(seed))
        try:
            results = mb.inverse(bounds, form, spec, settings)
        except ERRORS as exc:
            st.error(f"The interval inverse did not run: {esc(exc, 1000)}. Earlier results are kept.")
        else:
            store["inverse"] = {"results": results, "bounds": bounds, "source": bounds_label, "model": (spec, settings)}
    kept = store.get("inverse")
    if kept is None:
        st.info("Choose the bounds and the parameters, then press **Run PSO and IPSO**.")
    else:
        results = kept["results"]
        _made_with(kept, (spec, settings))
        with st.container(key="mb_inverse_results"):
            for res in results:
                (st.success if res.success else st.warning)(f"{res.method.upper()}: {esc(res.message, 500)}")
            st.markdown(f"**Bounds from** {esc(kept['source'])}; PSO and IPSO side by side:")
            tables.show(mb.inverse_table(results), key="mb_inverse_table")
            st.plotly_chart(mfig.fig_swarm_convergence([r.swarm for r in results],
                                                       [r.method.upper() for r in results]), key="mb_swarm_fig")
            best = min(results, key=lambda r: r.fitness)
            relative = st.toggle("Relative to the band's mid-line, in mm", key=state.MB_INV_RELATIVE)
            st.plotly_chart(mfig.fig_interval_bounds(best.fitted_bounds, given=kept["bounds"], relative=relative,
                                                     band_label=f"{best.method.upper()}'s bounds (surrogate)",
                                                     given_label="given bounds",
                                                     title="Given bounds and those of the recovered intervals"),
                            key="mb_inverse_fig")
            st.download_button("Download the results (JSON)", mb.inverse_json(results), "interval_inverse.json",
                               "application/json", key=state.MB_DL_INVERSE)
