"""Streamlit glue for the nlid dashboard: session state, cached core calls, jobs in worker processes, tables.

Pages read widgets, build typed configuration objects, call :mod:`nlid_core`
through :mod:`app_support.cache` and render with :mod:`nlid_core.figures`.
"""
