"""Request body limit with our JSON error body.

Starlette's own ``max_body_size`` answers a plain-text 413 (and replaces any
response when ``Content-Length`` is too large), which would break the error
contract, so this small middleware does the same two checks: on
``Content-Length`` before reading, and while streaming a body without one.

A client that sends its whole body before it reads an answer (Python's ``urllib``, many
bridges) would see the connection reset rather than the 413 if the answer came while
the rest of its body was still in flight: the rest is read and discarded first, up to
``DRAIN_BYTES`` or four times the limit, whichever is larger (past that, the connection
is closed as before).
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from channel_memory.kernel.errors import ApiError


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            if int(declared) <= self.drain_bytes:
                await _discard(receive, 0, self.drain_bytes)
            response = ApiError(413, "body_too_large", self.message).response()
            await response(scope, receive, send)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    if message.get("more_body", False):
                        await _discard(receive, received, self.drain_bytes)
                    raise ApiError(413, "body_too_large", self.message)
            return message

        await self.app(scope, limited, send)

    @property
    def message(self) -> str:
        return f"the request body exceeds ingest.max_body_bytes ({self.max_body_bytes:,} bytes)"

    @property
    def drain_bytes(self) -> int:
        """How much of a body over the limit is read and discarded before the 413."""
        return max(DRAIN_BYTES, 4 * self.max_body_bytes)


DRAIN_BYTES = 64 * 1024 * 1024
"""At least this much of a body over the limit is read (and discarded) before the 413."""


async def _discard(receive: Receive, received: int, most: int) -> None:
    """Read the rest of a request's body and drop it, up to ``most`` bytes in all."""
    while received <= most:
        message = await receive()
        if message["type"] != "http.request":
            return
        received += len(message.get("body", b""))
        if not message.get("more_body", False):
            return
