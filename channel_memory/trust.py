"""Trust markers: who may a consumer take instructions from.

Computed per request from the requesting token: ``system`` for system origin,
``self`` for the consumer's own author ids, ``authorized`` for authors it lists
as allowed to instruct it, ``unverified`` for everyone and everything else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from channel_memory.auth import Principal
from channel_memory.models import RecallBlock

Trust = Literal["system", "self", "authorized", "unverified"]
_RANK: dict[Trust, int] = {"unverified": 0, "authorized": 1, "self": 2, "system": 3}


def trust_of(origin: str, author_id: str | None, principal: Principal) -> Trust:
    if origin == "system":
        return "system"
    if author_id is not None and author_id in principal.self_author_ids:
        return "self"
    if author_id is not None and author_id in principal.authorized_author_ids:
        return "authorized"
    return "unverified"


def lowest(trusts: Iterable[Trust]) -> Trust:
    """The least trusted of several (``unverified`` when there are none)."""
    return min(trusts, key=_RANK.__getitem__, default="unverified")


def block_trust(block: RecallBlock, principal: Principal) -> Trust:
    """A block is as trusted as its least trusted source; LLM text is at most unverified."""
    if block.processor != "deterministic":
        return "unverified"
    if not block.trust_authors:
        return "system"
    return lowest(trust_of("", author or None, principal) for author in block.trust_authors)
