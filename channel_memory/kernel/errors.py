"""HTTP errors with a machine-readable code; bodies never carry message content."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from starlette.responses import JSONResponse

from channel_memory.kernel.wire import ErrorBody, ErrorDetail, ErrorInfo


class ApiError(Exception):
    """An error answer: ``status``, a stable ``code``, a message and optional details."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Sequence[ErrorDetail] = (),
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = list(details)
        self.headers = headers

    def response(self) -> JSONResponse:
        body = ErrorBody(
            error=ErrorInfo(code=self.code, message=self.message, details=self.details)
        )
        return JSONResponse(body.model_dump(mode="json"), self.status, headers=self.headers)


_JSON_ERRORS = {"json_invalid", "json_type", "recursion_loop"}
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _field_part(part: Any) -> str:
    """A location part fit for an answer: an index, or a field name; an unknown key that
    does not look like a field name (it may be content) is never repeated."""
    if isinstance(part, int) or _FIELD_NAME.match(str(part)):
        return str(part)
    return "<key>"


def _message(error: Any) -> str:
    """pydantic's message for an error, unless it repeats what the client sent: an unknown
    discriminator tag ("Input tag '…' found using 'type'…") is quoted in the message, and
    any message quoting a string input is replaced by one naming only the problem."""
    if error["type"] == "union_tag_invalid":
        ctx = error.get("ctx", {})
        expected = ctx.get("expected_tags", "")
        return f"unknown {ctx.get('discriminator', 'tag')}; expected one of {expected}"
    message = str(error["msg"])
    if error["type"] in FIXED_MESSAGES:
        return message  # our own text, never the input (which may happen to appear in it)
    value = error.get("input")
    if isinstance(value, str) and value and value in message:
        return f"invalid value ({error['type']})"
    return message


FIXED_MESSAGES = frozenset({"source_handle", "invalid_combination"})
"""Error types whose message is fixed text of ours: shown as written."""


def validation_error(exc: ValidationError, *, batch_field: str | None = None) -> ApiError:
    """Turn a pydantic error into a 400 (unparseable JSON) or 422 (wrong shape).

    With ``batch_field`` (``"events"``) the location's event index is reported
    separately and the discriminator tag is dropped from the field path. Input
    values are never copied into the answer.
    """
    details: list[ErrorDetail] = []
    for error in exc.errors(include_url=False):
        loc: list[Any] = list(error["loc"])
        if not loc and isinstance(error.get("ctx"), dict) and "field" in error["ctx"]:
            loc = [error["ctx"]["field"]]  # a model's refusal of a combination names its field
        index: int | None = None
        if batch_field is not None and len(loc) >= 2 and loc[0] == batch_field:
            index = int(loc[1])
            loc = loc[3:] if len(loc) > 2 else ["type"]
        details.append(
            ErrorDetail(
                index=index,
                field=".".join(_field_part(part) for part in loc) or None,
                code=error["type"],
                message=_message(error),
            )
        )
    if any(d.code in _JSON_ERRORS for d in details):
        return ApiError(400, "invalid_json", "the request body is not valid JSON", details[:1])
    parts: list[str] = []
    if details and details[0].index is not None:
        parts.append(f"event {details[0].index}")
    if details and details[0].field:
        parts.append(f"field {details[0].field}")
    where = f" ({', '.join(parts)})" if parts else ""
    return ApiError(422, "validation_failed", f"the request is invalid{where}", details[:50])


def field_refused(field: str, code: str, message: str) -> ApiError:
    """A 422 for one field refused after validation (a bound, a limit, a time), worded
    and located as ``validation_error`` words pydantic's: the field named, never its
    value."""
    return ApiError(
        422,
        "validation_failed",
        f"the request is invalid (field {field})",
        [ErrorDetail(field=field, code=code, message=message)],
    )


def writer_busy() -> ApiError:
    """The answer to a write that waited ``ingest.writer_wait`` for the writer in vain."""
    return ApiError(
        503, "writer_busy", "the writer is saturated; retry shortly", headers={"Retry-After": "1"}
    )
