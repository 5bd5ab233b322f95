"""Bearer tokens with scopes, compared in constant time."""

from __future__ import annotations

import hmac

from starlette.requests import Request

from channel_memory.kernel.config import ALL_SCOPES, Settings
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.principal import Principal

_EVERYTHING = Principal("local", frozenset(ALL_SCOPES), frozenset({"*"}))
ANONYMOUS = Principal("anonymous", frozenset(), frozenset())
"""The caller of an open endpoint (``/health``): no scopes, no channels."""


class TokenTable:
    """The configured tokens. Empty means open access (the server then binds loopback only)."""

    def __init__(self, settings: Settings) -> None:
        entries: list[tuple[bytes, Principal]] = []
        if settings.token:
            entries.append((settings.token.encode(), _EVERYTHING))
        for entry in settings.tokens:
            entries.append(
                (
                    entry.resolve().encode(),
                    Principal(
                        agent_id=entry.agent_id,
                        scopes=frozenset(entry.scopes),
                        channels=frozenset(entry.channels),
                        self_author_ids=frozenset(entry.self_author_ids),
                        authorized_author_ids=frozenset(entry.authorized_author_ids),
                    ),
                )
            )
        self._entries = entries

    @property
    def open(self) -> bool:
        return not self._entries

    def authenticate(self, request: Request) -> Principal:
        """The caller's principal, or 401 when the bearer token is missing or unknown."""
        if self.open:
            return _EVERYTHING
        header = request.headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            raise _unauthorized("a bearer token is required")
        return self.principal_for(presented.strip())

    def principal_for(self, token: str | None) -> Principal:
        """The principal of a token (everyone's when none is configured); 401 otherwise."""
        if self.open:
            return _EVERYTHING
        if not token:
            raise _unauthorized("a token is required")
        candidate = token.encode()
        found: Principal | None = None
        # Compare against every entry so timing does not reveal which one matched.
        for secret, principal in self._entries:
            if hmac.compare_digest(secret, candidate) and found is None:
                found = principal
        if found is None:
            raise _unauthorized("the bearer token is not valid")
        return found


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})
