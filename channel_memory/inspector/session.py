"""Inspector sessions: an HMAC-SHA256-signed cookie naming a server-side session.

The signing secret is generated when the server starts, so every session ends on
a restart; signing out ends the session on the server too, so a copied cookie dies
with it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from channel_memory.kernel.principal import Principal

COOKIE = "cm_inspect"


def sign(secret: bytes, payload: str) -> str:
    """The hex HMAC-SHA256 of ``payload`` under ``secret``."""
    return hmac.new(secret, payload.encode(), hashlib.sha256).hexdigest()


def cookie_value(secret: bytes, session_id: str, expires_us: int) -> str:
    """``<id>.<expiry>.<signature>``: tamper-evident, and carrying no identity itself."""
    payload = f"{session_id}.{expires_us}"
    return f"{payload}.{sign(secret, payload)}"


def verified_id(secret: bytes, value: str, now_us: int) -> str | None:
    """The session id of a cookie value signed with ``secret`` and not expired at
    ``now_us``; ``None`` for anything else."""
    parts = value.split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    session_id, expiry, signature = parts
    if not hmac.compare_digest(sign(secret, f"{session_id}.{expiry}"), signature):
        return None
    return session_id if int(expiry) > now_us else None


@dataclass(slots=True)
class Sessions:
    """Live sessions of one server process."""

    lifetime_us: int
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    _live: dict[str, tuple[Principal, int]] = field(default_factory=dict)

    def start(self, principal: Principal, now_us: int) -> tuple[str, int]:
        """A new session for ``principal``: ``(cookie value, lifetime in seconds)``."""
        self._live = {k: v for k, v in self._live.items() if v[1] > now_us}
        session_id = secrets.token_urlsafe(24)
        expires_us = now_us + self.lifetime_us
        self._live[session_id] = (principal, expires_us)
        return cookie_value(self.secret, session_id, expires_us), self.lifetime_us // 1_000_000

    def principal(self, value: str | None, now_us: int) -> Principal | None:
        """Who holds the session the cookie names, while it is live."""
        session_id = verified_id(self.secret, value or "", now_us)
        live = self._live.get(session_id) if session_id is not None else None
        return live[0] if live is not None and live[1] > now_us else None

    def end(self, value: str | None) -> None:
        """End the session the cookie names (whether or not it is still valid)."""
        session_id = (value or "").split(".")[0]
        self._live.pop(session_id, None)
