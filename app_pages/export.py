"""Export: parameters (CSV, JSON), validation data (CSV) and a self-contained HTML report."""

import json

import streamlit as st

from app_support import state, tables
from app_support.text import esc
from nlid_core import figures
from nlid_core.figures.fits import fit_units
from nlid_core.report import format_report, html_report, result_to_dict

st.title("Export")
state.show_notice()
run = state.active_run()
if run is None:
    st.info("Run an identification first (Identify page).")
    st.stop()
fit = run.result
vals = [v for (rid, _, _), v in state.validations().items() if rid == run.id]
st.markdown(f"Exporting **run #{run.id}** ({esc(run.label)}) with {len(vals)} validation(s). Choose another run on"
            " the Identify page.")
if not run.detailed:
    st.info(f"Run #{run.id}: {state.DROPPED} (Identify page) to include its fit figure and initial states. The"
            " parameters, metrics and validations below are complete.")
stem = f"nlid-run{run.id}"

c1, c2, c3 = st.columns(3)
c1.download_button("Parameters (CSV)", tables.parameter_table(fit).to_csv(index=False).encode(),
                   file_name=f"{stem}-parameters.csv", mime="text/csv", key=state.EXPORT_PARAMS_CSV)
c2.download_button("Result (JSON)", json.dumps(result_to_dict(fit, vals), indent=2, allow_nan=False).encode(),
                   file_name=f"{stem}.json", mime="application/json", key=state.EXPORT_JSON)
if vals:
    frame = tables.validation_frame(vals)
    if frame is not None:
        c3.download_button("Validation data (CSV)", frame.to_csv(index=False).encode(),
                           file_name=f"{stem}-validation.csv", mime="text/csv", key=state.EXPORT_VALIDATION_CSV)
else:
    c3.caption("No validation yet for this run (Validate page).")

with st.expander("The report as text (parameters with units, metrics, validations, warnings)"):
    st.code(format_report(fit, vals), language=None, wrap_lines=True)

if st.button("Build the HTML report", key=state.EXPORT_BUILD_REPORT):
    figs = []
    if fit.records:
        first = fit.records[0]
        figs.append(("Fit on " + first.name, figures.fig_fit(first, channel=first.fitted_channels[0],
                                                             units=fit_units(fit, first.name))))
    if fit.uncertainty is not None and len(fit.uncertainty.names) > 1:
        figs.append(("Parameter correlations", figures.fig_correlation(fit)))
    for v in vals:
        if v.success:
            figs.append((f"Validation on {v.record}", figures.fig_fit(v, channel=v.metrics[0].channel)))
    fragments = [(caption, figures.fig_to_html(fig, include_plotlyjs=(i == 0))) for i, (caption, fig) in enumerate(figs)]
    state.set_report_html(run.id, html_report(fit, vals, fragments, title=f"nlid report: run #{run.id}"))
report = state.report_html(run.id)
if report:
    st.download_button("HTML report", report.encode(), file_name=f"{stem}-report.html", mime="text/html",
                       key=state.EXPORT_REPORT)
    st.caption(f"{len(report) / 1e6:.1f} MB, figures included (works offline).")
