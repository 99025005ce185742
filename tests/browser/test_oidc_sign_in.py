"""Signing in through OpenID Connect for real: ``st.login`` against an identity provider, in a browser.

The dashboard runs with an ``[auth]`` section in its secrets pointing at a small OIDC provider on the
loopback interface (``oidc_provider.py``: discovery, RS256-signed ID tokens with nonce, PKCE, one-time
codes). Each engineer, in their own browser, meets the sign-in page, presses *Sign in*, is sent to the
provider, picks who they are, comes back through ``/oauth2callback`` signed in (Streamlit's signed
cookie), and must see their own studies and nobody else's. Someone whose provider says their e-mail is
*unverified* gets the owner of their subject, not the e-mail's. Signing out returns to the sign-in page,
and a forged (unsigned) identity cookie is not taken.
"""

from __future__ import annotations

import json
import secrets

from .conftest import free_port, goto, serve, shot, wait_idle, wait_text
from .oidc_provider import running_provider

CLIENT_ID = "nlid-lab"
USERS = {
    "alice": {"sub": "alice-0001", "email": "alice@lab.example", "email_verified": True, "name": "Alice Keller"},
    "bob": {"sub": "bob-0002", "email": "bob@lab.example", "email_verified": True, "name": "Bob Ortiz"},
    # claims alice's address, but the provider has not verified it: the subject is the identity
    "mallory": {"sub": "mallory-0003", "email": "alice@lab.example", "email_verified": False, "name": "Mallory"},
}
STUDIES = {"alice@lab.example": "alice beam", "bob@lab.example": "bob shaker"}


def _studies_offered(pg) -> str:  # type: ignore[no-untyped-def]
    """The Studies page's text and, when it has a picker, every study it offers."""
    goto(pg, "Studies")
    assert pg.locator('[data-testid="stException"]').count() == 0
    text = " ".join(pg.locator('[data-testid="stMain"]').inner_text().split())
    if pg.locator(".st-key-studies_pick").count():
        pg.locator('.st-key-studies_pick [role="combobox"]').click()
        pg.get_by_role("option").first.wait_for()
        text += " | " + " | ".join(pg.get_by_role("option").all_inner_texts())
        pg.keyboard.press("Escape")
    return text


def _sign_in(browser, url: str, issuer: str, who: str):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1280, "height": 1200})
    pg = ctx.new_page()
    pg.set_default_timeout(90_000)
    pg.goto(url)
    wait_idle(pg)
    assert wait_text(pg.locator('[data-testid="stMain"]'), "sign in to continue")
    assert pg.locator('[data-testid="stSidebarNav"]').count() == 0  # no pages before sign-in
    pg.get_by_role("button", name="Sign in").click()
    pg.wait_for_url(f"{issuer}/authorize*")  # the provider's own page
    pg.get_by_role("button", name=who, exact=True).click()
    pg.wait_for_url(f"{url}/**")  # back through /oauth2callback to the dashboard
    wait_idle(pg)
    return ctx, pg


def test_engineers_sign_in_with_oidc_and_see_only_their_own_studies(browser, tmp_path):  # type: ignore[no-untyped-def]
    from nlid_core.store import studies as S
    from nlid_core.store.db import open_store
    from nlid_core.store.owners import owner_from

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    db = f"sqlite:///{tmp_path / 'lab.sqlite'}"
    with open_store(db) as store:
        for email, name in STUDIES.items():
            S.create_study(store, owner_from(email), name)
    with running_provider(client_id=CLIENT_ID, client_secret=secrets.token_urlsafe(24),
                          redirect_uri=f"{url}/oauth2callback", users=USERS) as idp:
        secrets_file = tmp_path / "secrets.toml"
        secrets_file.write_text(
            "[auth]\n"
            f'redirect_uri = "{url}/oauth2callback"\n'
            f'cookie_secret = "{secrets.token_urlsafe(32)}"\n'
            f'client_id = "{CLIENT_ID}"\n'
            f'client_secret = "{idp.client_secret}"\n'
            f'server_metadata_url = "{idp.metadata_url}"\n')
        # plain http on loopback only (a real provider is https; Authlib refuses http unless told)
        env = {"NLID_DATABASE_URL": db, "AUTHLIB_INSECURE_TRANSPORT": "1"}
        with serve(env, port=port, args=["--secrets.files", str(secrets_file)]) as server:
            # alice: her study, not bob's; her name in the sidebar
            ctx, pg = _sign_in(browser, server.url, idp.issuer, "alice")
            side = wait_text(pg.locator('[data-testid="stSidebar"]'), "Alice Keller")
            assert "Alice Keller" in side and "single sign-on" in side, side
            seen = _studies_offered(pg)
            assert "alice beam" in seen and "bob shaker" not in seen, seen
            shot(pg, "oidc-signed-in-studies")
            cookies = {c["name"]: c for c in ctx.cookies()}
            assert any(name.startswith("_streamlit_user") for name in cookies), list(cookies)
            pg.get_by_role("button", name="Sign out").click()
            wait_idle(pg)
            assert wait_text(pg.locator('[data-testid="stMain"]'), "sign in to continue")
            pg.goto(server.url)  # the sign-out holds on a fresh load
            wait_idle(pg)
            assert "sign in to continue" in wait_text(pg.locator('[data-testid="stMain"]'), "sign in to continue")
            ctx.close()

            # bob, in another browser: his study only
            ctx, pg = _sign_in(browser, server.url, idp.issuer, "bob")
            assert "Bob Ortiz" in wait_text(pg.locator('[data-testid="stSidebar"]'), "Bob Ortiz")
            seen = _studies_offered(pg)
            assert "bob shaker" in seen and "alice beam" not in seen, seen
            ctx.close()

            # mallory's provider has not verified the address she gave: she is her subject, not alice
            ctx, pg = _sign_in(browser, server.url, idp.issuer, "mallory")
            assert "Mallory" in wait_text(pg.locator('[data-testid="stSidebar"]'), "Mallory")
            seen = _studies_offered(pg)
            assert "alice beam" not in seen and "bob shaker" not in seen, seen
            ctx.close()

            # a forged identity cookie (not signed with the server's cookie secret) is not a sign-in
            ctx = browser.new_context()
            forged = json.dumps({"email": "alice@lab.example", "email_verified": True, "is_logged_in": True,
                                 "origin": server.url, "provider": "default"})
            ctx.add_cookies([{"name": "_streamlit_user", "value": forged, "url": server.url}])
            pg = ctx.new_page()
            pg.goto(server.url)
            wait_idle(pg)
            assert "sign in to continue" in wait_text(pg.locator('[data-testid="stMain"]'), "sign in to continue")
            ctx.close()
    assert idp.tokens_issued == ["alice-0001", "bob-0002", "mallory-0003"], idp.tokens_issued
    assert not idp.refused, idp.refused
    with open_store(db) as store:
        assert not S.list_studies(store, owner_from("mallory-0003", kind="sub"))
