"""Who is using the dashboard: the engineer whose studies a session sees.

Three ways to sign in, tried in this order (the first that is configured is the only one used):

1. **OIDC** (Streamlit's built-in sign-in): when the secrets (``.streamlit/secrets.toml``) have an
   ``[auth]`` section, every page requires sign-in: a session that is not signed in sees only a
   *Sign in* button (``st.login()``); once signed in the owner comes from ``st.user`` -- the
   ``email`` claim, else the ``sub`` claim -- and the sidebar has a *Sign out* button
   (``st.logout()``). An ``email`` whose provider says ``email_verified = false`` is not trusted (the
   ``sub`` is used instead), so nobody takes an engineer's studies by registering their address
   unverified. See ``.streamlit/secrets.toml.example`` and Streamlit's "User authentication and
   information" (https://docs.streamlit.io/develop/api-reference/user/st.login).
2. **Trusted reverse-proxy header**: when ``NLID_AUTH_HEADER`` names a header (e.g.
   ``X-Forwarded-User`` or ``X-Auth-Request-Email``), a proxy in front of the dashboard has already
   authenticated the engineer and says who it is in that header; the owner is its value
   (``st.context.headers``, the headers of the request that opened the session:
   https://docs.streamlit.io/develop/api-reference/utilities/st.context). A request without it is
   refused with a page saying the server expects sign-in through its proxy.
   **The dashboard must then listen only where the proxy can reach it** (the compose file binds
   ``127.0.0.1``): anyone who can reach Streamlit directly can send the header and be anybody. The
   proxy must also set the header on the WebSocket request (``/_stcore/stream``) and remove one sent
   by the browser.
3. **Local** (neither configured): no sign-in; the owner is ``NLID_LOCAL_USER``, else ``local``.

Owner names
    :func:`nlid_core.store.owners.owner_from` maps an identity onto the store's owner names (kept
    characters, ``-xx`` escapes, ``sub--`` for OIDC subjects, a hash suffix beyond 64 characters);
    the CLI uses the same functions, so an engineer is the same owner in both.

:func:`resolve` is the pure decision (configuration, ``st.user``, headers and environment in, a
:class:`Resolution` out) so that every branch is testable without a browser; :func:`current_user`
feeds it from Streamlit, and :func:`require_user` draws the sign-in or refusal page and stops the
script when nobody is signed in. Streamlit's sign-in needs its ``auth`` extra (``Authlib`` and ``httpx``,
through which Authlib's Starlette client fetches the provider's metadata and exchanges the code for
tokens); a server configured for OIDC without them says which package is missing instead of offering a
button that cannot work.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from nlid_core.store.owners import DEFAULT_LOCAL_USER, LOCAL_USER_ENV, local_name, owner_from

__all__ = [
    "AUTH_HEADER_ENV",
    "LOCAL_USER_ENV",
    "DEFAULT_LOCAL_USER",
    "User",
    "Resolution",
    "owner_from",
    "resolve",
    "shown",
    "auth_configured",
    "sign_in_missing",
    "current_user",
    "require_user",
]

#: Environment variable naming the trusted header set by the reverse proxy.
AUTH_HEADER_ENV: Final = "NLID_AUTH_HEADER"
#: How a session signed in, as the sidebar says it.
METHOD_TEXT: Final = {"oidc": "single sign-on", "header": "the lab's proxy", "local": "local mode, no sign-in"}



@dataclass(frozen=True, kw_only=True)
class User:
    """The signed-in engineer.

    Attributes
    ----------
    owner : str
        Owner name in the study store (valid for ``validate_owner``).
    display_name : str
        What the sidebar shows (a name or an e-mail; escape it before markdown).
    method : {"oidc", "header", "local"}
        How the session signed in.
    """

    owner: str
    display_name: str
    method: str


@dataclass(frozen=True, kw_only=True)
class Resolution:
    """The outcome of :func:`resolve`.

    Attributes
    ----------
    mode : {"oidc", "header", "local"}
        The sign-in configured on this server.
    user : User or None
        The engineer, or None when nobody is signed in.
    problem : str
        Why ``user`` is None: ``"sign-in"`` (OIDC, not signed in), ``"no-header"`` (the proxy header
        is missing or empty), ``"no-identity"`` (signed in, but neither e-mail nor subject); ``""``
        when signed in.
    """

    mode: str
    user: User | None
    problem: str = ""


def _header(headers: Mapping[str, str], name: str) -> str:
    wanted = name.strip().lower()
    for key, value in headers.items():
        if str(key).lower() == wanted:
            return str(value).strip()
    return ""


def resolve(*, auth_configured: bool, user_info: Mapping[str, Any], headers: Mapping[str, str],
            env: Mapping[str, str]) -> Resolution:
    """Who is signed in, from the server's configuration and the request (pure; see the module notes).

    Parameters
    ----------
    auth_configured : bool
        The secrets have an ``[auth]`` section (OIDC sign-in).
    user_info : mapping
        ``st.user`` as a dict (``is_logged_in``, ``email``, ``email_verified``, ``sub``, ``name``).
    headers : mapping of str to str
        The request headers (names compared without regard to case).
    env : mapping of str to str
        The environment (``NLID_AUTH_HEADER``, ``NLID_LOCAL_USER``).

    Returns
    -------
    Resolution
    """
    if auth_configured:
        if not user_info.get("is_logged_in"):
            return Resolution(mode="oidc", user=None, problem="sign-in")
        email = user_info.get("email")
        trusted = user_info.get("email_verified", True) not in (False, "false", "False")
        sub = user_info.get("sub")
        name = user_info.get("name")
        if isinstance(email, str) and email.strip() and trusted:
            owner = owner_from(email.strip())
            shown = email.strip()
        elif isinstance(sub, str) and sub.strip():
            owner = owner_from(sub.strip(), kind="sub")
            shown = sub.strip()
        else:
            return Resolution(mode="oidc", user=None, problem="no-identity")
        display = name.strip() if isinstance(name, str) and name.strip() else shown
        return Resolution(mode="oidc", user=User(owner=owner, display_name=display, method="oidc"))
    header = env.get(AUTH_HEADER_ENV, "").strip()
    if header:
        value = _header(headers, header)
        if not value:
            return Resolution(mode="header", user=None, problem="no-header")
        return Resolution(mode="header", user=User(owner=owner_from(value), display_name=value, method="header"))
    local = local_name(env)
    return Resolution(mode="local", user=User(owner=owner_from(local), display_name=local, method="local"))


def shown(text: str) -> str:
    """An identity (name, e-mail) escaped for markdown, at most 120 characters."""
    from app_support.text import esc

    return esc(text, 120)


def auth_configured() -> bool:
    """The secrets have an ``[auth]`` section (Streamlit's OIDC sign-in is configured)."""
    import streamlit as st

    try:
        return bool(st.secrets.load_if_toml_exists() and "auth" in st.secrets)
    except Exception:  # an unreadable secrets file: Streamlit reports it; sign-in is then not configured
        return False


def sign_in_missing() -> str:
    """The package Streamlit's OIDC sign-in needs and cannot import (``""`` when sign-in can work).

    Imports what ``st.login`` imports when the button is pressed (Authlib's Starlette client, which
    imports ``httpx``), so a server missing either says so on the sign-in page instead of failing after
    the click.
    """
    try:
        importlib.import_module("authlib.integrations.starlette_client")
    except ModuleNotFoundError as exc:
        return (exc.name or "authlib").split(".")[0]
    except ImportError as exc:  # present but broken (e.g. a version without the Starlette client)
        return getattr(exc, "name", None) or "authlib"
    return ""


def _resolution() -> Resolution:
    import streamlit as st

    configured = auth_configured()
    info: dict[str, Any] = {}
    if configured:
        info = dict(st.user.to_dict())
    headers: Mapping[str, str] = {}
    if not configured and os.environ.get(AUTH_HEADER_ENV, "").strip():
        try:
            headers = dict(st.context.headers)
        except Exception:  # no request (e.g. a bare script run): treated as a request without the header
            headers = {}
    return resolve(auth_configured=configured, user_info=info, headers=headers, env=os.environ)


def current_user() -> User | None:
    """The engineer of this session, or None when nobody is signed in (see the module notes)."""
    return _resolution().user


def require_user() -> User:
    """The engineer of this session; else draw the sign-in (or refusal) page and stop the script."""
    import streamlit as st

    from app_support import state

    res = _resolution()
    if res.user is not None:
        return res.user
    st.title("nlid: nonlinear system identification")
    if res.problem == "sign-in":
        missing = sign_in_missing()
        if missing:
            package = {"authlib": "Authlib"}.get(missing, missing)
            st.error(f"This server is configured for single sign-on (an `[auth]` section in its secrets), but"
                     f" the {package} package that Streamlit's sign-in needs is not installed. Ask the"
                     f" server's administrator to install nlid's requirements (`pip install -r requirements.txt`,"
                     f" which pins Authlib and httpx) or to remove the `[auth]` section.")
            st.stop()
        st.markdown("This lab server keeps every engineer's studies apart: sign in to continue.")
        if st.button("Sign in", key=state.AUTH_SIGN_IN, type="primary", icon=":material/login:"):
            st.login()
    elif res.problem == "no-identity":
        st.error("Your sign-in did not say who you are (the provider sent neither an e-mail address nor a"
                 " subject). Ask the server's administrator to request the `email` or `openid` scope.")
        if st.button("Sign out", key=state.AUTH_SIGN_OUT):
            st.logout()
    else:
        st.error("This server expects sign-in through its proxy, and this request did not come through it"
                 " (it lacks the header that names the signed-in engineer). Open the dashboard at the lab's"
                 " address, not the server's own port.")
    st.stop()
    raise AssertionError("unreachable")  # st.stop() raises
