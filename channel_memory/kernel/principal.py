"""Who is calling: the principal every stage checks channels, scopes and roles against.

Tokens resolve to principals at the HTTP face (``channel_memory.http.auth``); the
stages only ever see the principal.
"""

from __future__ import annotations

from dataclasses import dataclass

from channel_memory.kernel.config import Scope
from channel_memory.kernel.errors import ApiError


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling, and what they may see and do."""

    agent_id: str
    scopes: frozenset[Scope]
    channels: frozenset[str]
    self_author_ids: frozenset[str] = frozenset()
    authorized_author_ids: frozenset[str] = frozenset()

    def may_see(self, channel_id: str) -> bool:
        return "admin" in self.scopes or "*" in self.channels or channel_id in self.channels

    def require(self, scope: Scope) -> None:
        """Raise 403 unless this principal holds ``scope`` (``admin`` holds all)."""
        if scope not in self.scopes and "admin" not in self.scopes:
            raise ApiError(403, "forbidden", f"this token lacks the {scope} scope")
