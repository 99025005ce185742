"""Data: upload records, map columns and units, preview, split into named records, rename, trim, filter, derive."""

import dataclasses

import pandas as pd
import streamlit as st

from app_support import cache, state
from app_support.cache.uploads import FIELD_LABELS, parse_rate_field, parse_rows_field
from app_support.text import esc
from nlid_core import figures
from nlid_core.errors import DataValidationError, NlidError
from nlid_core.guard import prestart_reader
from nlid_core.record import CHANNEL_LABELS, trim
from nlid_core.segments import Segment, SegmentError, overlaps, segment_rows, split_record
from nlid_core.signals import DIFFERENTIATORS, filter_record

prestart_reader()  # a file-reading worker with its imports done waits for the upload

st.title("Data")
state.show_notice()

FORM = [state.DATA_COLUMNS, state.DATA_UNITS, state.DATA_FS, state.DATA_ROWS, state.DATA_RESAMPLE,
        state.DATA_SPLIT_BY, state.DATA_UPLOAD_PANEL]
state.restore_form(state.DATA_FORM, {
    state.DATA_COLUMNS: "", state.DATA_UNITS: "", state.DATA_FS: "", state.DATA_ROWS: "", state.DATA_RESAMPLE: False,
    state.DATA_SPLIT_BY: "rows", state.DATA_UPLOAD_PANEL: not state.records(),
})


def _load(files: list, columns: str, units: str, fs_text: str, rows_text: str, resample: bool) -> list[str]:
    """Load the uploads; every outcome is posted to the upload panel. Returns the names loaded."""
    try:
        fs, rows = parse_rate_field(fs_text), parse_rows_field(rows_text)
    except DataValidationError as exc:
        state.post("upload", "error", esc(exc))
        return []
    loaded: list[str] = []
    for up in files:
        try:
            if not state.room_for_records():
                raise state.SessionLimitError(state.records_full_message())
            rec = cache.load_uploaded(up.getvalue(), up.name, columns, units, fs, rows, resample)
            loaded += state.add_records([rec])
        except NlidError as exc:
            state.post("upload", "error", f"**{esc(up.name, 120)}** was not loaded: {esc(exc)}")
    if loaded:
        cfg = state.config()
        if cfg is None or not cfg.fit_records:
            state.set_config(state.default_config(fit_records=(loaded[0],)))
        state.post("upload", "success", f"Loaded {', '.join(esc(n) for n in loaded)}.")
    return loaded


# the panel stays open or closed as the user leaves it (its state is kept, also across pages)
with st.expander("Upload records", key=state.DATA_UPLOAD_PANEL, on_change="rerun"):
    files = st.file_uploader(
        "Test records: CSV/TSV/TXT, Parquet, Excel (.xlsx), MATLAB .mat (several files = several levels)",
        type=list(cache.UPLOAD_TYPES), accept_multiple_files=True, key=state.DATA_UPLOAD,
    )
    c1, c2 = st.columns(2)
    columns = c1.text_input(f"{FIELD_LABELS['columns']} (optional)", placeholder="t=time,f=force,x=disp",
                            key=state.DATA_COLUMNS,
                            help="Columns named t, f, x, v, a (or time, force, disp, vel, acc) need no mapping;"
                                 " other names are mapped as CHANNEL=COLUMN, e.g. f=V1,x=V2.")
    units = c2.text_input(f"{FIELD_LABELS['units']} (optional)", placeholder="x=mm,f=kN,a=g", key=state.DATA_UNITS,
                          help="Converted to SI. Units nlid does not know (e.g. V) are kept as they are. A number is"
                               " the factor to SI: f=35.15 reads a drive's command in volts through its 35.15 N/V"
                               " gain as a force in N (the command line's --scale f=35.15N).")
    c3, c4 = st.columns(2)
    fs_text = c3.text_input(f"{FIELD_LABELS['fs']} (files without a time column)", key=state.DATA_FS,
                            placeholder="e.g. 610.3515625; empty when the file has a time column",
                            help="Read exactly as typed: sample i is at t = i / rate.")
    rows_text = c4.text_input(f"{FIELD_LABELS['rows']} (optional, START:STOP)", placeholder="0:50000",
                              key=state.DATA_ROWS,
                              help="Rows of the file, from 0, stop excluded. To cut one file into several"
                                   " records (training and test parts), load it whole and use 'Split into"
                                   " records' below.")
    resample = st.checkbox(FIELD_LABELS["resample"], key=state.DATA_RESAMPLE,
                           help="Interpolate a file whose time steps vary onto a uniform grid instead of refusing it.")
    if st.button("Load files", key=state.DATA_LOAD_UPLOAD, disabled=not files, type="primary"):
        loaded = _load(list(files or []), columns, units, fs_text, rows_text, resample)
        if loaded:
            state.set_widget(state.DATA_RECORD, loaded[0])  # drawn below: show what was just loaded
            state.keep_form(state.DATA_FORM, FORM)
            st.rerun()  # the sidebar (drawn before this page) shows the new records at once
    state.show_posts("upload")

state.keep_form(state.DATA_FORM, FORM)
recs = state.records()
if not recs:
    st.info("No record yet: upload a file above, or load an example on the Home page.")
    st.stop()

if state.widget_value(state.DATA_RECORD, next(iter(recs))) not in recs:
    state.set_widget(state.DATA_RECORD, next(iter(recs)))
name = st.selectbox("Record", list(recs), key=state.DATA_RECORD)
rec = recs[name]
units_txt = ", ".join(f"{CHANNEL_LABELS[c]} [{esc(rec.unit(c), 40)}]" + (" (derived)" if c in rec.derived else "")
                      for c in rec.channels)
st.markdown(f"**{rec.n:,} samples** at {rec.fs:.10g} Hz, t = {rec.t[0]:.10g} s to {rec.t[-1]:.10g} s."
            f" Channels: {units_txt}.")
for note in rec.warnings:
    st.caption(f"Note: {esc(note)}")

st.plotly_chart(figures.fig_record(rec), key="data_preview")


def _rename(old: str, key: str) -> None:
    """Rename the selected record (a callback: it runs before the page, so the selection and the sidebar follow)."""
    try:
        new = state.rename_record(old, state.widget_value(key, old))
    except DataValidationError as exc:
        state.post("rename", "error", f"{esc(old)} was not renamed: {esc(exc)}")
    else:
        if new != old:
            state.set_widget(state.DATA_RECORD, new)
            for unit in ("rows", "time"):  # the split table follows the record
                state.move_editor(state.key_for(state.DATA_SPLIT_TABLE, old, unit),
                                  state.key_for(state.DATA_SPLIT_TABLE, new, unit))
            state.post("rename", "success", f"Renamed {esc(old)} to {esc(new)}.")


r1, r2 = st.columns([3, 1], vertical_alignment="bottom")
rename_key = state.key_for(state.DATA_RENAME_TO, name)
r1.text_input("Name of this record", value=name, key=rename_key, max_chars=state.MAX_RECORD_NAME)
r2.button("Rename", key=state.DATA_RENAME, on_click=_rename, args=(name, rename_key))
state.show_posts("rename")

st.subheader("Split into records")
st.caption(
    f"Cut {esc(name)} into named records, e.g. a training part and a test part. Rows run from 0 to {rec.n}"
    f" (start included, stop excluded); times from {rec.t[0]:.10g} s to {rec.t[-1]:.10g} s (start <= t < stop)."
    f" Each part keeps its time stamps, units and channels; {esc(name)} stays as it is. Parts may overlap."
)
by = st.radio("Bounds in", ["rows", "time"], key=state.DATA_SPLIT_BY, horizontal=True,
              format_func=lambda b: "rows" if b == "rows" else "seconds")
table_key = state.key_for(state.DATA_SPLIT_TABLE, name, by)
default = pd.DataFrame({"name": ["part 1"], "from": [0.0 if by == "rows" else float(rec.t[0])],
                        "to": [float(rec.n) if by == "rows" else float(rec.t[-1]) + rec.dt],
                        "role": [state.FIT_ROLE]})
number = (st.column_config.NumberColumn(format="%d", step=1, min_value=0) if by == "rows"
          else st.column_config.NumberColumn(format="%.10g"))
table = st.data_editor(
    state.editor_base(table_key, default), key=table_key, num_rows="dynamic", hide_index=True,
    column_config={"name": st.column_config.TextColumn("name", max_chars=state.MAX_RECORD_NAME),
                   "from": number, "to": number,
                   "role": st.column_config.SelectboxColumn(
                       "role", options=list(state.ROLE_NAMES),
                       help="fit: the Model page fits it by default; test: Validate checks the model on it"
                            " (empty: the first part fits, the others test)")},
)
state.keep_editor(table_key, table)
if st.button("Create records", key=state.DATA_SPLIT, type="primary"):
    segments = [Segment(name=str(r["name"]) if isinstance(r["name"], str) else "",
                        start=None if pd.isna(r["from"]) else float(r["from"]),
                        stop=None if pd.isna(r["to"]) else float(r["to"])) for r in table.to_dict("records")]
    try:
        rows = segment_rows(rec, segments, by)
        parts = split_record(rec, segments, by)
        made = state.add_named_records(parts)
        given = [r.get("role") for r in table.to_dict("records")]
        part_roles = [g if g in state.ROLE_NAMES else (state.FIT_ROLE if i == 0 else state.TEST_ROLE)
                      for i, g in enumerate(given)]
        state.set_parts(name, [(n, a, b, role) for n, (a, b), role in zip(made, rows, part_roles, strict=True)])
    except SegmentError as exc:
        seg = segments[exc.index].name.strip()
        st.error(f"Row {exc.index + 1} of the table{f' ({esc(seg, 60)})' if seg else ''}: {esc(exc.reason)}")
    except DataValidationError as exc:
        st.error(f"No record was created: {esc(exc)}")
    else:
        for line in overlaps(rows, [s.name for s in segments]):
            state.post("split", "warning", f"Overlap: {esc(line)}.")
        state.post("split", "success", "Created " + ", ".join(f"{esc(p.name)} ({p.n:,} samples)" for p in parts)
                   + f" from {esc(name)}.")
        fit_parts = [n for n, role in zip(made, part_roles, strict=True) if role == state.FIT_ROLE]
        test_parts = [n for n, role in zip(made, part_roles, strict=True) if role == state.TEST_ROLE]
        if fit_parts:
            cfg = state.ensure_config()
            state.set_config(dataclasses.replace(cfg, fit_records=tuple(fit_parts)))
            state.reset_widget(state.MODEL_FIT_RECORDS)
            state.post("split", "info", f"The Model page now fits {esc(', '.join(fit_parts))}"
                       + (f"; Validate checks the model on {esc(', '.join(test_parts))}." if test_parts else "."))
        st.rerun()  # the sidebar shows the new records at once
state.show_posts("split")

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
