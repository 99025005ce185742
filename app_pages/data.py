"""Data: upload records, map columns and units, preview, trim, filter, derive missing channels."""

import streamlit as st

from app_support import cache, state
from app_support.text import esc
from nlid_core import figures
from nlid_core.errors import NlidError
from nlid_core.record import CHANNEL_LABELS, trim
from nlid_core.signals import DIFFERENTIATORS, filter_record

st.title("Data")
state.show_notice()

with st.expander("Upload records", expanded=not state.records()):
    files = st.file_uploader(
        "Test records: CSV/TSV/TXT, Parquet, Excel (.xlsx), MATLAB .mat (several files = several levels)",
        type=list(cache.UPLOAD_TYPES), accept_multiple_files=True, key=state.DATA_UPLOAD,
    )
    c1, c2 = st.columns(2)
    columns = c1.text_input("Column mapping (optional)", placeholder="t=time,f=force,x=disp,a=acc",
                            key=state.DATA_COLUMNS,
                            help="Columns named t, f, x, v, a (or time, force, disp, vel, acc) need no mapping.")
    units = c2.text_input("Units of the file's columns (optional)", placeholder="x=mm,f=kN,a=g", key=state.DATA_UNITS,
                          help="Converted to SI. Units nlid does not know (e.g. V) are kept as they are.")
    c3, c4 = st.columns(2)
    fs = c3.number_input("Sampling rate [Hz] for files without a time column (0 = the file has one)",
                         min_value=0.0, max_value=1e9, value=0.0, step=1.0, format="%.6g", key=state.DATA_FS)
    rows = c4.text_input("Rows to keep (optional, START:STOP)", placeholder="0:50000", key=state.DATA_ROWS)
    if st.button("Load files", key=state.DATA_LOAD_UPLOAD, disabled=not files, type="primary"):
        loaded, failed = [], []
        for up in files or []:
            try:
                if not state.room_for_records():
                    raise state.SessionLimitError(state.records_full_message())
                rec = cache.load_uploaded(up.getvalue(), up.name, columns, units, fs or None, rows)
                loaded += state.add_records([rec])
            except NlidError as exc:
                failed.append(f"**{esc(up.name, 120)}** was not loaded: {esc(exc)}")
        for msg in failed:
            st.error(msg)
        if loaded:
            cfg = state.config()
            if cfg is None or not cfg.fit_records:
                state.set_config(state.default_config(fit_records=(loaded[0],)))
            st.success(f"Loaded {', '.join(esc(n) for n in loaded)}.")

recs = state.records()
if not recs:
    st.info("No record yet: upload a file above, or load an example on the Home page.")
    st.stop()

name = st.selectbox("Record", list(recs), key=state.DATA_RECORD)
rec = recs[name]
units_txt = ", ".join(f"{CHANNEL_LABELS[c]} [{esc(rec.unit(c), 40)}]" + (" (derived)" if c in rec.derived else "")
                      for c in rec.channels)
st.markdown(f"**{rec.n:,} samples** at {rec.fs:.6g} Hz over {rec.duration:.4g} s. Channels: {units_txt}.")
for note in rec.warnings:
    st.caption(f"Note: {esc(note)}")

st.plotly_chart(figures.fig_record(rec), key="data_preview")

with st.expander("Trim, filter, derive"):
    t0, t1 = float(rec.t[0]), float(rec.t[-1])
    span = st.slider("Keep time range [s]", min_value=t0, max_value=t1, value=(t0, t1), key=state.DATA_TRIM_RANGE)
    a1, a2, a3 = st.columns(3)
    if a1.button("Apply trim", key=state.DATA_APPLY_TRIM):
        try:
            state.replace_record(name, trim(rec, span[0], span[1]))
            st.rerun()
        except NlidError as exc:
            st.error(esc(exc))
    nyq = 0.5 * rec.fs
    cut = a2.number_input("Low-pass cut-off [Hz]", min_value=0.0, max_value=float(nyq), value=min(50.0, 0.4 * nyq),
                          key=state.DATA_LOWPASS_HZ)
    if a2.button("Apply zero-phase low-pass", key=state.DATA_APPLY_FILTER):
        try:
            state.replace_record(name, filter_record(rec, cut))
            st.rerun()
        except NlidError as exc:
            st.error(esc(exc))
    method = a3.selectbox("Differentiation", list(DIFFERENTIATORS), key=state.DATA_DIFF_METHOD)
    missing = [c for c in ("v", "a") if getattr(rec, c) is None]
    if a3.button(f"Derive {', '.join(missing) or 'nothing'} from x", key=state.DATA_APPLY_DERIVE, disabled=not missing):
        try:
            state.replace_record(name, cache.derived(cache.record_key(rec), method, rec))
            st.rerun()
        except NlidError as exc:
            st.error(esc(exc))
    # visible check of the differentiation against what was measured
    measured_va = [c for c in ("v", "a") if c in rec.measured]
    if measured_va:
        try:
            check = cache.derived_from_x(cache.record_key(rec), method, rec)
        except NlidError as exc:
            st.error(esc(exc))
        else:
            for c in measured_va:
                st.plotly_chart(
                    figures.fig_derivative_check(rec.t, rec.channel(c), check.channel(c), name=CHANNEL_LABELS[c],
                                                 unit=rec.unit(c)),
                    key=f"derive_check_{c}",
                )

if st.button(f"Remove {esc(name)}", key=state.DATA_REMOVE_RECORD):
    state.remove_record(name)
    st.rerun()
