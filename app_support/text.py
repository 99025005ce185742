"""Escaping of user-supplied text (file, record, column and run names; error messages) for Streamlit.

Streamlit renders markdown in ``st.markdown``, ``st.error``, ``st.success``,
``st.caption``, widget labels and more. A file named ``![x](http://host/p.png).csv``
would make every browser that shows it fetch that URL, and ``**``, ``_`` or
``$`` in a name would change how a message looks. Every piece of text that
came from a user or a file passes through :func:`esc` before it is placed in
markdown; text shown with ``st.code``, ``st.text`` or in a dataframe needs
no escaping.
"""

from __future__ import annotations

import re

__all__ = ["esc", "plain"]

# Markdown and Streamlit-specific syntax: emphasis, code, links and images, headings,
# lists, tables, block quotes, html, LaTeX ($), emoji shortcodes (:name:), colour/icon
# directives (:red[...], :material/...:).
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&\"'=^])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def plain(text: object, max_len: int = 500) -> str:
    """``text`` as one line of printable characters, at most ``max_len`` long."""
    s = _CONTROL.sub(" ", str(text)).replace("\n", " ").replace("\r", " ").replace("\t", " ")
    s = re.sub(r" {2,}", " ", s).strip()
    if len(s) > max_len:
        s = s[: max_len - 1] + "…"
    return s


def esc(text: object, max_len: int = 500) -> str:
    """``text`` made inert for Streamlit markdown: one line, bounded length, every markup character escaped.

    Backticks, with which the core's messages mark names (``record `seed```), become plain quotes: escaped they
    would show as stray backticks."""
    return _SPECIAL.sub(r"\\\1", plain(text, max_len).replace("`", "'"))
