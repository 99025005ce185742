"""A small OpenID Connect provider on the loopback interface, for signing in through ``st.login`` in tests.

It implements the authorization-code flow the way Streamlit's sign-in (Authlib's Starlette client) uses
it, and checks what a real provider checks:

- discovery (``/.well-known/openid-configuration``) and the signing keys (``/jwks``, one RSA key);
- ``/authorize`` shows a page with one button per test engineer (the "login form"); pressing one
  redirects to the registered ``redirect_uri`` with a one-time code and the client's ``state``; an unknown
  client or a redirect URI other than the registered one is refused;
- ``/token`` exchanges the code once (client id and secret by HTTP Basic or in the form, the same
  ``redirect_uri``, the PKCE ``code_verifier`` when the request had a ``code_challenge``) for an ID token
  signed RS256 with ``iss``, ``aud``, ``exp``, ``iat``, ``nonce`` and the engineer's claims.

OpenID Connect Core 1.0 (https://openid.net/specs/openid-connect-core-1_0.html) §3.1 and RFC 7636 (PKCE)
are the references. Not a server for anything but tests: no consent, no refresh tokens, no TLS.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from joserfc import jwt
from joserfc.jwk import RSAKey


@dataclass
class Provider:
    """State of the running provider (see :func:`running_provider`)."""

    issuer: str
    client_id: str
    client_secret: str
    redirect_uri: str
    users: Mapping[str, Mapping[str, Any]]  # button label -> claims (``sub`` required)
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, parameters={"kid": "nlid-test"},
                                                                    private=True))
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    tokens_issued: list[str] = field(default_factory=list)  # ``sub`` of every ID token handed out
    refused: list[str] = field(default_factory=list)  # why each refused request was refused
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "email", "email_verified", "name"],
        }

    def id_token(self, claims: Mapping[str, Any], nonce: str | None) -> str:
        now = int(time.time())
        body = dict(claims, iss=self.issuer, aud=self.client_id, iat=now, exp=now + 600)
        if nonce:
            body["nonce"] = nonce
        return jwt.encode({"alg": "RS256", "kid": self.key.kid}, body, self.key)


def _handler(provider: Provider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return

        def _send(self, status: int, body: bytes, ctype: str, headers: Mapping[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, obj: Any) -> None:
            self._send(status, json.dumps(obj).encode(), "application/json")

        def _refuse(self, why: str, status: int = 400) -> None:
            with provider.lock:
                provider.refused.append(why)
            self._json(status, {"error": "invalid_request", "error_description": why})

        def _form(self) -> dict[str, str]:
            n = int(self.headers.get("Content-Length") or 0)
            return dict(urllib.parse.parse_qsl(self.rfile.read(n).decode()))

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            if url.path == "/.well-known/openid-configuration":
                self._json(200, provider.metadata())
            elif url.path == "/jwks":
                self._json(200, {"keys": [provider.key.as_dict(private=False) | {"use": "sig", "alg": "RS256"}]})
            elif url.path == "/authorize":
                if query.get("client_id") != provider.client_id:
                    self._refuse("unknown client")
                elif query.get("redirect_uri") != provider.redirect_uri:
                    self._refuse("redirect_uri is not the registered one")
                elif query.get("response_type") != "code" or "openid" not in query.get("scope", "").split():
                    self._refuse("only the authorization-code flow with the openid scope")
                else:
                    hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                                     for k, v in query.items())
                    buttons = "".join(f'<button name="engineer" value="{html.escape(u)}">{html.escape(u)}</button>'
                                      for u in provider.users)
                    page = (f"<html><head><title>Test identity provider</title></head><body><h1>Sign in as</h1>"
                            f'<form method="post" action="/authorize">{hidden}{buttons}</form></body></html>')
                    self._send(200, page.encode(), "text/html; charset=utf-8")
            else:
                self._send(404, b"not found", "text/plain")

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            url = urllib.parse.urlsplit(self.path)
            form = self._form()
            if url.path == "/authorize":
                engineer = form.get("engineer", "")
                if engineer not in provider.users or form.get("redirect_uri") != provider.redirect_uri:
                    self._refuse("unknown engineer or redirect_uri")
                    return
                code = secrets.token_urlsafe(24)
                with provider.lock:
                    provider.codes[code] = {"claims": dict(provider.users[engineer]), "nonce": form.get("nonce"),
                                            "redirect_uri": form["redirect_uri"],
                                            "challenge": form.get("code_challenge"),
                                            "method": form.get("code_challenge_method", "plain")}
                params = {"code": code}
                if "state" in form:
                    params["state"] = form["state"]
                self._send(302, b"", "text/plain",
                           {"Location": f"{form['redirect_uri']}?{urllib.parse.urlencode(params)}"})
            elif url.path == "/token":
                client_id, client_secret = form.get("client_id"), form.get("client_secret")
                auth = self.headers.get("Authorization", "")
                if auth.startswith("Basic "):
                    user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
                    client_id, client_secret = urllib.parse.unquote(user), urllib.parse.unquote(password)
                if client_id != provider.client_id or client_secret != provider.client_secret:
                    self._refuse("client authentication failed", 401)
                    return
                with provider.lock:
                    grant = provider.codes.pop(form.get("code", ""), None)  # a code is good once
                if form.get("grant_type") != "authorization_code" or grant is None:
                    self._refuse("unknown or used code")
                    return
                if form.get("redirect_uri") != grant["redirect_uri"]:
                    self._refuse("redirect_uri differs from the authorization request's")
                    return
                if grant["challenge"]:
                    verifier = form.get("code_verifier", "")
                    if grant["method"] == "S256":
                        digest = hashlib.sha256(verifier.encode()).digest()
                        derived = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
                    else:
                        derived = verifier
                    if derived != grant["challenge"]:
                        self._refuse("PKCE verification failed")
                        return
                token = provider.id_token(grant["claims"], grant["nonce"])
                with provider.lock:
                    provider.tokens_issued.append(str(grant["claims"]["sub"]))
                self._json(200, {"access_token": secrets.token_urlsafe(24), "token_type": "Bearer",
                                 "expires_in": 600, "id_token": token, "scope": "openid email profile"})
            else:
                self._send(404, b"not found", "text/plain")

    return Handler


@contextmanager
def running_provider(*, client_id: str, client_secret: str, redirect_uri: str,
                     users: Mapping[str, Mapping[str, Any]]) -> Iterator[Provider]:
    """Serve a :class:`Provider` on a free loopback port for the duration of the ``with`` block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    provider = Provider(issuer=f"http://127.0.0.1:{server.server_address[1]}", client_id=client_id,
                        client_secret=client_secret, redirect_uri=redirect_uri, users=users)
    server.RequestHandlerClass = _handler(provider)
    thread = threading.Thread(target=server.serve_forever, name="test-oidc-provider", daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
