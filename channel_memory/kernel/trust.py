"""Trust markers and roles: who may a consumer take instructions from, and who wrote what.

Computed per request from the requesting token (and, in a feed that names one, the
trigger: the message that woke the agent):

- ``trust``: ``system`` for system origin, ``self`` for the consumer's own author ids,
  ``trigger`` for the author of the trigger (the person whose request this turn
  serves), ``authorized`` for authors the consumer lists as allowed to instruct it,
  ``unverified`` for everyone and everything else. Ranked
  ``unverified < authorized < trigger < self < system``.
- ``role`` relative to the consumer: ``user`` for people, ``assistant`` for the
  consumer's own agent (its ``self_author_ids``, whatever kind of author sent them: a bot
  account, an import), ``other`` for other agents, apps, imports and system. Only system
  origin decides before the author.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from channel_memory.kernel.models import RecallBlock
from channel_memory.kernel.principal import Principal

Trust = Literal["system", "self", "trigger", "authorized", "unverified"]
TRUSTS: tuple[Trust, ...] = ("unverified", "authorized", "trigger", "self", "system")
"""Every trust marker, least trusted first."""
_RANK: dict[Trust, int] = {t: n for n, t in enumerate(TRUSTS)}
Role = Literal["user", "assistant", "other"]
ROLES: tuple[Role, ...] = ("user", "assistant", "other")
_NOT_A_PARTY = frozenset({"system", "import", "app"})
"""Origins whose messages are never the conversation's user or assistant."""


def trust_of(
    origin: str, author_id: str | None, principal: Principal, trigger_author: str | None = None
) -> Trust:
    """One message's trust for ``principal``; ``trigger_author`` is the trigger's author id
    when the answer names a trigger (None otherwise)."""
    if origin == "system":
        return "system"
    if author_id is not None and author_id in principal.self_author_ids:
        return "self"
    if (
        author_id is not None
        and trigger_author is not None
        and author_id == trigger_author
        and origin not in _NOT_A_PARTY  # an import or app message is not the person's request
    ):
        return "trigger"
    if author_id is not None and author_id in principal.authorized_author_ids:
        return "authorized"
    return "unverified"


def lowest(trusts: Iterable[Trust]) -> Trust:
    """The least trusted of several (``unverified`` when there are none)."""
    return min(trusts, key=_RANK.__getitem__, default="unverified")


def block_trust(
    block: RecallBlock, principal: Principal, trigger_author: str | None = None
) -> Trust:
    """A block is as trusted as its least trusted source; LLM text is at most unverified."""
    if block.processor != "deterministic":
        return "unverified"
    if not block.trust_authors:
        return "system"
    origin = "" if block.origin == "mixed" else block.origin
    return lowest(
        trust_of(origin, author or None, principal, trigger_author)
        for author in block.trust_authors
    )


def role_of(origin: str, author_id: str | None, principal: Principal) -> Role:
    """One message's role relative to ``principal``: ``user``, ``assistant`` or ``other``.
    The consumer's own ``self_author_ids`` are its ``assistant`` whatever kind of author
    sent them (an agent posting through a bot account, its own messages imported), as
    their trust is ``self``; only a system message is never a party."""
    if origin == "system":
        return "other"
    if author_id is not None and author_id in principal.self_author_ids:
        return "assistant"
    if origin in _NOT_A_PARTY:
        return "other"
    return "user" if origin == "human" else "other"


def block_role(block: RecallBlock, principal: Principal) -> Role:
    """A block's role: its sources' one shared role; ``other`` when they differ (a block
    mixing people and agents speaks for neither) and for LLM-written text."""
    if block.processor != "deterministic" or block.origin == "mixed" or not block.trust_authors:
        return "other"
    roles = {role_of(block.origin, author or None, principal) for author in block.trust_authors}
    return roles.pop() if len(roles) == 1 else "other"
