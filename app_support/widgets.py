"""What a page's widgets keep across reruns and page changes: values set before drawing, choices and forms
remembered for the next visit, data editors' tables, and messages queued for the next render.

Streamlit forgets a page's widget values when the page is left; these helpers keep what a user chose. Read
through :mod:`app_support.state`, which re-exports them (``state.set_widget``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import streamlit as st

from .keys import CHOICES, EDITOR_TABLES, NOTICE, PAGE_MESSAGES
from .text import esc

__all__ = ["editor_base", "keep_editor", "keep_form", "key_for", "move_editor", "peek", "post",
           "remember_choice", "remembered_choice", "reset_widget", "restore_form", "set_widget", "show_notice",
           "show_posts", "widget_value"]


def reset_widget(key: str) -> None:
    """Forget a widget's value (it shows its default on the next run); ``key`` is one of the keys below."""
    st.session_state.pop(key, None)


def widget_value(key: str, initial: Any) -> Any:
    """A widget's current value, set to ``initial`` first when the widget has none (for widgets created
    without a default, whose value the page manages)."""
    if key not in st.session_state:
        st.session_state[key] = initial
    return st.session_state[key]


def peek(key: str, default: Any = None) -> Any:
    """A widget's current value (``default`` when it has none), read without setting it (in callbacks)."""
    return st.session_state.get(key, default)


def set_widget(key: str, value: Any) -> None:
    """Set a widget's value before it is drawn (the frontend then shows it)."""
    st.session_state[key] = value


def remembered_choice(key: str, options: Sequence[Any], default: Any) -> None:
    """Before a chooser ``key`` is drawn: give it the value chosen on an earlier visit of its page (Streamlit
    forgets a page's widgets when the page is left), or ``default``, when it has none or a stale one. Call
    :func:`remember_choice` after drawing it."""
    if st.session_state.get(key) in options:
        return
    kept = st.session_state.get(CHOICES, {}).get(key)
    st.session_state[key] = kept if kept in options else default


def remember_choice(key: str) -> None:
    """Keep chooser ``key``'s value for the next visit of its page."""
    if key in st.session_state:
        st.session_state.setdefault(CHOICES, {})[key] = st.session_state[key]


def restore_form(store: str, defaults: dict[str, Any]) -> None:
    """Give each widget of a form (keys of ``defaults``) the value :func:`keep_form` kept under ``store``,
    or its default, when it has none (Streamlit forgets a page's widget values when the page is left).
    Call before the widgets are drawn, and create them without a default value."""
    kept: dict[str, Any] = st.session_state.get(store, {})
    for key, default in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = kept.get(key, default)


def keep_form(store: str, keys: Iterable[str]) -> None:
    """Keep the current values of the widgets ``keys`` under ``store`` (see :func:`restore_form`)."""
    kept: dict[str, Any] = st.session_state.setdefault(store, {})
    for key in keys:
        if key in st.session_state:
            kept[key] = st.session_state[key]


def editor_base(key: str, default: Any) -> Any:
    """The data the ``st.data_editor`` of key ``key`` starts from: the table :func:`keep_editor` kept on an
    earlier visit of the page, else ``default``. It stays the same while the editor lives (Streamlit keeps
    the user's edits relative to it), so a page passes it on every run and keeps the edited table."""
    tables: dict[str, dict[str, Any]] = st.session_state.setdefault(EDITOR_TABLES, {})
    entry = tables.setdefault(key, {"latest": default})
    if key not in st.session_state or "base" not in entry:
        entry["base"] = entry["latest"]
    return entry["base"]


def keep_editor(key: str, value: Any) -> None:
    """Keep the edited table of the editor ``key`` for the next visit of the page (see :func:`editor_base`)."""
    st.session_state.setdefault(EDITOR_TABLES, {}).setdefault(key, {})["latest"] = value


def move_editor(old: str, new: str) -> None:
    """Let the editor ``new`` start from the table kept for the editor ``old`` (e.g. after a rename)."""
    tables: dict[str, dict[str, Any]] = st.session_state.setdefault(EDITOR_TABLES, {})
    if old in tables:
        tables[new] = {"latest": tables.pop(old).get("latest")}


def post(where: str, kind: str, text: str) -> None:
    """Queue a message (``kind`` success/info/warning/error, ``text`` markdown whose user data is escaped)
    for the next render of the page section ``where`` (messages from button callbacks)."""
    st.session_state.setdefault(PAGE_MESSAGES, {}).setdefault(where, []).append((kind, text))


def show_posts(where: str) -> None:
    """Show and forget the messages queued for ``where`` by :func:`post`."""
    for kind, text in st.session_state.get(PAGE_MESSAGES, {}).pop(where, []):
        show = getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")
        show(text)


def show_notice() -> None:
    notice = st.session_state.pop(NOTICE, None)
    if notice:
        kind, text, markdown = (*notice, False)[:3]
        show = getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")
        show(text if markdown else esc(text, 1000))


def key_for(base: str, *parts: object) -> str:
    """The key of widget ``base`` for one term set, channel or run: ``base_part1,part2``."""
    return f"{base}_{','.join(str(p) for p in parts)}"
