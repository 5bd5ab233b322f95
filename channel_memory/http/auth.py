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

    def __init__(self, settings: Settings, *, unset_skipped: bool = False) -> None:
        """``unset_skipped``: a token whose ``token_env`` this process's environment does not
        hold is left out rather than refused (``channel-memory mcp`` acts for one token: an
        agent's environment need not hold the bridge's secret). The table stays closed
        whenever tokens are configured, whether or not any of them is left out."""
        entries: list[tuple[bytes, Principal]] = []
        self.unset: list[str] = []
        """The ``token_env`` variables of the tokens left out (names, never values)."""
        if settings.token:
            entries.append((settings.token.encode(), _EVERYTHING))
        for entry in settings.tokens:
            try:
                secret = entry.resolve()
            except ValueError:
                if not unset_skipped:
                    raise
                if entry.token_env is not None:
                    self.unset.append(entry.token_env)
                continue
            entries.append(
                (
                    secret.encode(),
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
        self._configured = bool(settings.token) or bool(settings.tokens)

    @property
    def open(self) -> bool:
        return not self._configured

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
