"""Who is signed in: the pure decision of ``app_support.identity`` (OIDC, proxy header, local mode), owner
names that the store accepts and that never collide, and the sign-in and refusal pages (AppTest)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import identity, state
from app_support.identity import AUTH_HEADER_ENV, LOCAL_USER_ENV, owner_from, resolve
from nlid_core.store.schema import MAX_OWNER_LENGTH
from nlid_core.store.studies import validate_owner

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 90

EMAILS = [
    "ann@lab.org", "Ann@lab.org", "ann.lee@lab.org", "ann_lee@lab.org", "ann-lee@lab.org", "ann+lee@lab.org",
    "ann-2blee@lab.org", "ann lee@lab.org", "ann%2blee@lab.org", "jürgen@lab.de", "j-c3-bcrgen@lab.de",
    "анна@lab.org", "ann@lab.org ", "ann\x00@lab.org", "sub--ann", "-", "--", "-2d", "a" * 64, "a" * 65,
    "a" * 200 + "@lab.org", "a" * 200 + "@lab.orh", "ü" * 40 + "@lab.org", "ü" * 41 + "@lab.org",
    "x-" * 40, "x-" * 41, "O'Brien@lab.org", "../../etc/passwd", "'; DROP TABLE studies; --",
]


@pytest.mark.parametrize("text", EMAILS)
def test_owner_names_are_valid_for_the_store(text):
    for kind in ("email", "sub"):
        owner = owner_from(text, kind=kind)
        assert validate_owner(owner) == owner and len(owner) <= MAX_OWNER_LENGTH
        assert owner_from(text, kind=kind) == owner  # deterministic


def test_owner_names_do_not_collide():
    owners = {(text, kind): owner_from(text, kind=kind) for text in EMAILS for kind in ("email", "sub")}
    assert len(set(owners.values())) == len(owners), [
        (a, b) for a, b in itertools.combinations(owners, 2) if owners[a] == owners[b]]


def test_plain_addresses_keep_their_form_and_escapes_decode():
    assert owner_from("ann.lee@lab.org") == "ann.lee@lab.org"
    assert owner_from("ann-lee@lab.org") == "ann-2dlee@lab.org"  # '-' itself is escaped: "-2d"
    assert owner_from("ann+lee@lab.org") == "ann-2blee@lab.org"
    assert owner_from("jürgen@lab.de") == "j-c3-bcrgen@lab.de"  # UTF-8 bytes
    assert owner_from("1234567890", kind="sub") == "sub--1234567890"
    from app_support.studies import owner_text

    for text in ("ann-lee@lab.org", "jürgen@lab.de", "ann lee"):
        assert owner_text(owner_from(text)) == text
    long = owner_from("a" * 200 + "@lab.org")
    assert len(long) == MAX_OWNER_LENGTH and long.count("--") == 1 and owner_text(long) == long


def test_long_identities_are_not_cut_inside_an_escape():
    for n in range(30, 70):
        owner = owner_from("ü" * n + "@x")
        head = owner.rsplit("--", 1)[0] if "--" in owner else owner
        assert all(len(part) >= 2 for part in head.split("-")[1:]), owner


def test_empty_identity_is_refused():
    with pytest.raises(ValueError, match="`identity`"):
        owner_from("")


# ----------------------------------------------------------------------------- precedence and modes
AUTH = {"auth": {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x", "client_id": "c",
                 "client_secret": "s", "server_metadata_url": "https://id.example/.well-known/openid-configuration"}}


def test_oidc_takes_precedence_and_requires_sign_in():
    env = {AUTH_HEADER_ENV: "X-Forwarded-User", LOCAL_USER_ENV: "bob"}
    res = resolve(auth_configured=True, user_info={"is_logged_in": False}, headers={"X-Forwarded-User": "eve"},
                  env=env)
    assert res.mode == "oidc" and res.user is None and res.problem == "sign-in"
    res = resolve(auth_configured=True, user_info={"is_logged_in": True, "email": "ann@lab.org", "name": "Ann Lee",
                                                   "sub": "42"}, headers={"X-Forwarded-User": "eve"}, env=env)
    assert res.user == identity.User(owner="ann@lab.org", display_name="Ann Lee", method="oidc")


def test_oidc_uses_sub_without_a_verified_email():
    res = resolve(auth_configured=True, user_info={"is_logged_in": True, "email": "ceo@lab.org",
                                                   "email_verified": False, "sub": "g-7"}, headers={}, env={})
    assert res.user is not None and res.user.owner == "sub--g-2d7" and res.user.owner != "ceo@lab.org"
    res = resolve(auth_configured=True, user_info={"is_logged_in": True, "sub": "g-7"}, headers={}, env={})
    assert res.user is not None and res.user.owner == "sub--g-2d7" and res.user.display_name == "g-7"
    res = resolve(auth_configured=True, user_info={"is_logged_in": True, "email": "  "}, headers={}, env={})
    assert res.user is None and res.problem == "no-identity"


def test_header_mode_reads_the_named_header_and_refuses_without_it():
    env = {AUTH_HEADER_ENV: "X-Auth-Request-Email", LOCAL_USER_ENV: "bob"}
    res = resolve(auth_configured=False, user_info={"email": "test@example.com"},
                  headers={"x-auth-request-email": " ann@lab.org "}, env=env)  # names compared without case
    assert res.mode == "header" and res.user == identity.User(owner="ann@lab.org", display_name="ann@lab.org",
                                                              method="header")
    for headers in ({}, {"X-Auth-Request-Email": ""}, {"X-Forwarded-User": "ann"}):
        res = resolve(auth_configured=False, user_info={}, headers=headers, env=env)
        assert res.user is None and res.problem == "no-header" and res.mode == "header"


def test_local_mode():
    res = resolve(auth_configured=False, user_info={"email": "test@example.com"}, headers={"X-Forwarded-User": "x"},
                  env={})
    assert res.user == identity.User(owner="local", display_name="local", method="local")
    res = resolve(auth_configured=False, user_info={}, headers={}, env={LOCAL_USER_ENV: "bob", AUTH_HEADER_ENV: " "})
    assert res.user is not None and res.user.owner == "bob" and res.mode == "local"


# ----------------------------------------------------------------------------- pages (AppTest)
def app(monkeypatch, tmp_path) -> AppTest:
    monkeypatch.setenv("NLID_DATABASE_URL", f"sqlite:///{tmp_path / 'studies.sqlite'}")
    return AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)


def test_header_mode_without_the_header_shows_only_the_refusal(monkeypatch, tmp_path):
    monkeypatch.setenv(AUTH_HEADER_ENV, "X-Forwarded-User")
    at = app(monkeypatch, tmp_path).run()  # AppTest sends no request headers
    assert not at.exception
    assert any("expects sign-in through its proxy" in e.value for e in at.error)
    assert not at.button and not at.sidebar.markdown  # no page, no navigation, no data


def with_authlib(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Let the sign-in page find what Streamlit's st.login needs (Authlib, httpx), installed or not."""
    monkeypatch.setattr(identity, "sign_in_missing", lambda: "")


def test_the_runtime_requirements_can_sign_in():
    # st.login imports Authlib's Starlette client, which needs httpx: both are runtime pins
    assert identity.sign_in_missing() == ""


@pytest.mark.parametrize(("missing", "package"), [("authlib", "Authlib"), ("httpx", "httpx")])
def test_oidc_without_its_packages_says_what_is_missing(monkeypatch, tmp_path, missing, package):
    # in a fresh interpreter where the package cannot be imported (None in sys.modules)
    code = (f"import sys; sys.modules[{missing!r}] = None; from app_support.identity import sign_in_missing;"
            f" print(sign_in_missing())")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.stdout.strip() == missing, out.stderr[-2000:]
    monkeypatch.setattr(identity, "sign_in_missing", lambda: missing)
    at = app(monkeypatch, tmp_path)
    at.secrets = AUTH
    at.user = {"is_logged_in": False}
    at.run()
    assert not at.exception and not at.button and not at.sidebar.markdown
    assert any(f"the {package} package" in e.value for e in at.error)


def test_oidc_sign_in_page_then_signed_in_sidebar(monkeypatch, tmp_path):
    with_authlib(monkeypatch)
    at = app(monkeypatch, tmp_path)
    at.secrets = AUTH
    at.user = {"is_logged_in": False}
    at.run()
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in"] and not at.sidebar.markdown
    at.user = {"is_logged_in": True, "email": "ann-lee@lab.org", "name": "Ann <b>Lee</b>"}
    at.run()
    assert not at.exception
    side = " ".join(m.value for m in at.sidebar.markdown)
    assert "Ann \\<b\\>Lee\\</b\\>" in side and "single sign" in side  # escaped
    assert at.button(key=state.AUTH_SIGN_OUT).label == "Sign out"
    at.switch_page("app_pages/studies.py").run()
    assert not at.exception
    at.text_input(key=state.STUDIES_NEW_NAME).set_value("beam").run()
    at.button(key=state.STUDIES_CREATE).click().run()
    assert not at.exception and not at.error
    from nlid_core.store.db import open_store
    from nlid_core.store.studies import list_studies

    with open_store(f"sqlite:///{tmp_path / 'studies.sqlite'}") as store:
        assert [s.owner for s in list_studies(store, "ann-2dlee@lab.org")] == ["ann-2dlee@lab.org"]


def test_a_typed_owner_name_of_a_subject_sign_in_is_taken_as_it_is():
    from app_support.study_actions import typed_owner

    sub = owner_from("248289761001", kind="sub")
    long = owner_from("x" * 80 + "@lab.org")
    assert typed_owner(sub) == sub and typed_owner(long) == long
    assert typed_owner("j-doe@lab.org") == owner_from("j-doe@lab.org") == "j-2ddoe@lab.org"
    assert typed_owner("ann@lab.org") == "ann@lab.org"
