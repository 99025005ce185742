"""nlid dashboard entry point: page navigation and the sidebar shared by every page.

Run with ``streamlit run app.py``. Pages live in ``app_pages/`` (not ``pages/``: Streamlit would
serve that folder on its own, without this file, to a browser that opens a page URL directly);
helpers in ``app_support/``; all computation in ``nlid_core``.
"""

import streamlit as st

from app_support import cache, identity, state, studies
from app_support.icon import favicon_image
from app_support.text import esc

st.set_page_config(page_title="nlid: nonlinear system identification", page_icon=favicon_image(),
                   layout="wide")
user = identity.require_user()  # sign-in when the server requires it (OIDC or a proxy); else local mode

PAGES = [
    st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("app_pages/data.py", title="Data", icon=":material/folder_open:"),
    st.Page("app_pages/studies.py", title="Studies", icon=":material/inventory_2:"),
    st.Page("app_pages/nonlinearity.py", title="Nonlinearity", icon=":material/query_stats:"),
    st.Page("app_pages/model.py", title="Model", icon=":material/tune:"),
    st.Page("app_pages/identify.py", title="Identify", icon=":material/play_circle:"),
    st.Page("app_pages/friction.py", title="Friction & hysteresis", icon=":material/line_axis:"),
    st.Page("app_pages/mdof.py", title="Multi-DOF", icon=":material/hub:"),
    st.Page("app_pages/multibody.py", title="Multibody & interval", icon=":material/timeline:"),
    st.Page("app_pages/validate.py", title="Validate", icon=":material/monitoring:"),
    st.Page("app_pages/identifiability.py", title="Identifiability", icon=":material/troubleshoot:"),
    st.Page("app_pages/design.py", title="Excitation design", icon=":material/graphic_eq:"),
    st.Page("app_pages/export.py", title="Export", icon=":material/download:"),
    st.Page("app_pages/teaching.py", title="Teaching mode", icon=":material/school:"),
]
page = st.navigation(PAGES, expanded=True)  # every page listed (no "View more" fold)
cache.shared_cache()  # process-wide, bounded; its housekeeping thread frees what closed sessions left

with st.sidebar:
    st.caption("Engineer")
    st.markdown(f"**{identity.shown(user.display_name)}** ({identity.METHOD_TEXT[user.method]})")
    if user.method == "oidc":
        if st.button("Sign out", key=state.AUTH_SIGN_OUT, icon=":material/logout:"):
            st.logout()
    opened = studies.current_study(user.owner)  # checked against the database
    st.caption("Study")
    if opened is not None:
        shared = "" if opened.owner == user.owner else " (shared with you, read-only)"
        st.markdown(f"Open: **{esc(opened.name)}**{shared}")
    else:
        st.markdown("No saved study open (Studies page).")
    recs = state.records()
    st.caption("Records")
    if recs:
        for name, rec in recs.items():
            role = state.roles().get(name)
            st.markdown(f"- **{esc(name)}**{f' ({role})' if role else ''}: {rec.n:,} samples, {rec.fs:.10g} Hz,"
                        f" {','.join(rec.channels[1:])}")
    else:
        st.markdown("No record loaded yet.")
    active_slot = st.empty()


def _show_active_run() -> None:
    run = state.active_run()
    if run is not None:
        active_slot.markdown(f"Active run: **{esc(run.label)}** ({'ok' if run.result.success else '**failed**'})")
    else:
        active_slot.empty()


# the page may add a run (Identify) or choose another: the sidebar shows the active run after the page has run,
# also when the page stopped early
try:
    page.run()
finally:
    _show_active_run()
