"""Request body limit with our JSON error body.

Starlette's own ``max_body_size`` answers a plain-text 413 (and replaces any
response when ``Content-Length`` is too large), which would break the error
contract, so this small middleware does the same two checks: on
``Content-Length`` before reading, and while streaming a body without one.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from channel_memory.kernel.errors import ApiError


class BodyTooLarge(HTTPException):
    def __init__(self) -> None:
        super().__init__(status_code=413)


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
            response = ApiError(413, "body_too_large", _MESSAGE).response()
            await response(scope, receive, send)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise BodyTooLarge
            return message

        await self.app(scope, limited, send)


_MESSAGE = "the request body exceeds ingest.max_body_bytes"
