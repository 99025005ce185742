"""Owner names of the study store from the identities engineers sign in with.

The store accepts owners of 1-64 characters of ``A-Z a-z 0-9 _ . @ -``
(:func:`nlid_core.store.studies.validate_owner`). :func:`owner_from` maps any identity text (an
e-mail, a proxy's user name, an OIDC subject) onto that set deterministically and without
collisions: those characters are kept except ``-``; every other byte of the UTF-8 text, and ``-``
itself, becomes ``-xx`` (two lower-case hex digits), so an escaped text never contains ``--`` and
decodes uniquely. A ``sub`` claim becomes ``sub--<escaped sub>`` (never equal to an escaped e-mail,
which has no ``--``). A result longer than 64 characters keeps a prefix (never cut inside an escape)
and ends in ``--`` and 16 hex digits of the SHA-256 of the text: distinct identities then collide
only with a SHA-256 collision in 64 bits. Case is kept: ``Ann@lab.org`` and ``ann@lab.org`` are
different owners.

The dashboard (every sign-in mode) and the command line (its default owner, :func:`local_owner`)
use these functions, so an engineer is the same owner in both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Final

#: Longest owner name stored (the schema's column width).
MAX_OWNER_LENGTH = 64

__all__ = ["LOCAL_USER_ENV", "DEFAULT_LOCAL_USER", "owner_from", "local_name", "local_owner"]

#: Environment variable with the engineer's name in local mode (no sign-in) and for the CLI.
LOCAL_USER_ENV: Final = "NLID_LOCAL_USER"
#: The engineer in local mode without ``NLID_LOCAL_USER``.
DEFAULT_LOCAL_USER: Final = "local"

_KEEP: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.@")
_HASH_HEX: Final = 16


def _escape(text: str) -> str:
    return "".join(ch if ch in _KEEP else "".join(f"-{b:02x}" for b in ch.encode("utf-8")) for ch in text)


def owner_from(identity: str, *, kind: str = "email") -> str:
    """The store owner name of an identity (an e-mail, a proxy user name or an OIDC subject).

    Parameters
    ----------
    identity : str
        Non-empty text.
    kind : {"email", "sub"}
        ``"sub"`` marks an OIDC subject (its owner starts with ``sub--``); every other identity is
        ``"email"`` (the escaping is the same).

    Returns
    -------
    str
        1-64 characters of ``A-Z a-z 0-9 _ . @ -``; equal outputs only for equal inputs (up to a 64-bit
        hash collision for identities longer than 64 characters once escaped).

    Raises
    ------
    ValueError
        ``identity`` empty or not text.
    """
    if not isinstance(identity, str) or not identity:
        raise ValueError(f"`identity` must be non-empty text; got {identity!r:.80}")
    escaped = ("sub--" if kind == "sub" else "") + _escape(identity)
    if len(escaped) <= MAX_OWNER_LENGTH:
        return escaped
    digest = hashlib.sha256(f"{kind}:{identity}".encode()).hexdigest()[:_HASH_HEX]
    cut = MAX_OWNER_LENGTH - 2 - _HASH_HEX
    head = escaped[:cut]
    dash = head.rfind("-", max(0, cut - 3))  # never end inside an escape "-xx"
    if dash >= 0 and len(head) - dash < 3:
        head = head[:dash]
    head = head.rstrip("-")
    return f"{head}--{digest}"


def local_name(env: Mapping[str, str]) -> str:
    """The engineer's name without sign-in: ``NLID_LOCAL_USER`` when set and not blank, else ``"local"``."""
    return env.get(LOCAL_USER_ENV, "").strip() or DEFAULT_LOCAL_USER


def local_owner(env: Mapping[str, str]) -> str:
    """The owner of :func:`local_name` (``owner_from`` of it): the dashboard's local mode and the CLI's default."""
    return owner_from(local_name(env))
