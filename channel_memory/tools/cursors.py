"""Opaque, signed cursors: paging cursors bound to a query and caller, content cursors
bound to a message's exact content and an offset.

A cursor is ``base64url(json payload) . base64url(hmac-sha256)`` under a secret
kept in the database (so cursors survive restarts). Anything altered fails the
signature; a cursor for another query, channel set or caller fails its binding.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any

from channel_memory.store import Store
from channel_memory.store import state as state_store

SECRET_KEY = "cursor_secret"


class CursorError(Exception):
    """A cursor cannot be honoured; ``status`` is 400 (invalid) or 409 (content changed)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class CursorKeys:
    """The cursor keys one application has read: each store's key is read (or created)
    once, then served from memory. The application owns one; nothing is process-wide."""

    def __init__(self) -> None:
        self._known: dict[str, bytes] = {}

    async def secret(self, store: Store) -> bytes:
        """The deployment's cursor key, created on first use and kept in the database."""
        path = store.location
        cached = self._known.get(path)
        if cached is not None:
            return cached
        async with store.write() as conn:
            known = await state_store.get_state(conn, SECRET_KEY)
            if known is None:
                known = secrets.token_hex(32)
                await state_store.set_state(conn, SECRET_KEY, known)
        self._known[path] = bytes.fromhex(known)
        return self._known[path]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(secret: bytes, payload: dict[str, Any]) -> str:
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    mac = hmac.new(secret, body, hashlib.sha256).digest()[:16]
    return f"{_b64(body)}.{_b64(mac)}"


def verify(secret: bytes, token: str) -> dict[str, Any]:
    """The payload of a cursor this deployment signed. Raises ``CursorError`` 400."""
    try:
        body_text, mac_text = token.split(".", 1)
        body, mac = _unb64(body_text), _unb64(mac_text)
    except (ValueError, UnicodeError):
        raise CursorError(400, "cursor_invalid", "the cursor is malformed") from None
    expected = hmac.new(secret, body, hashlib.sha256).digest()[:16]
    if not hmac.compare_digest(mac, expected):
        raise CursorError(400, "cursor_invalid", "the cursor was not issued here or was altered")
    payload: dict[str, Any] = json.loads(body)
    return payload


def binding(tool: str, query: dict[str, Any], caller: str) -> str:
    """What a paging cursor is bound to: the tool, its query (channel set included), the caller."""
    seed = json.dumps([tool, query, caller], separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(seed.encode()).hexdigest()[:24]


def content_sha(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()
