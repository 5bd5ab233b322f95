"""The channel-awareness feed an LLM proxy polls: its parameters, the query they ask
for, the read that serves it, and the record of one feed served. Never calls an LLM.

``GET /channel-awareness`` (``channel_memory.http.feed_routes``), the MCP tool
``channel_awareness`` and the inspector serve the feed through these functions.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Annotated, Literal, Protocol

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
)
from pydantic_core import PydanticCustomError

from channel_memory.feed import candidates, reads
from channel_memory.feed.candidates import ContextKind, FeedQuery, answered_id
from channel_memory.feed.layout import Body, BudgetTooSmall
from channel_memory.feed.reads import ReadContext
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.models import ID_PATTERN, SourceVersion, source_handle
from channel_memory.kernel.ops import ContextOp
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import (
    MICROS_PER_SECOND,
    TimeFormatError,
    format_rfc3339,
    parse_go_duration,
    parse_rfc3339,
)
from channel_memory.kernel.wire import ErrorDetail, TextModel
from channel_memory.store.connection import Connection

_ID = re.compile(ID_PATTERN)
_HANDLE = re.compile(r"^[A-Za-z0-9._:-]{1,128}/[A-Za-z0-9._:-]{1,128}$")
MAX_CHANNELS = 32


def _invalid(field: str, message: str) -> ApiError:
    detail = ErrorDetail(field=field, code="invalid", message=message)
    return ApiError(422, "validation_failed", f"the request is invalid (field {field})", [detail])


def _problem(message: str) -> PydanticCustomError:
    """A parameter's own refusal: its message is the one the 422 names (never the value)."""
    return PydanticCustomError("invalid", message)


def _lowered(value: object) -> object:
    """Text in lower case (``format=JSON`` is ``json``); anything else as it is."""
    return value.lower() if isinstance(value, str) else value


def _channel_list(value: object) -> object:
    # a query string lists the ids comma-separated; empties are dropped, repeats kept once
    if isinstance(value, str):
        value = value.split(",")
    if isinstance(value, list | tuple):
        return list(dict.fromkeys(c for c in value if c))
    return value


def _channels(value: list[str]) -> list[str]:
    if not value:
        raise _problem("at least one channel id is required")
    if len(value) > MAX_CHANNELS or not all(_ID.match(c) for c in value):
        raise _problem(f"up to {MAX_CHANNELS} ids matching {ID_PATTERN}")
    return value


def _or_default(default: str) -> Callable[[object], object]:
    def fill(value: object) -> object:
        return default if value in (None, "") else value

    return fill


def _none_if_empty(value: object) -> object:
    return None if value == "" else value


def _plus(value: object) -> object:
    # "+" in a query string decodes to a space: accept both spellings
    return value.replace(" ", "+") if isinstance(value, str) else value


def _digits(value: object) -> object:
    # a query string's integer is plain digits: no sign, no spaces, no exponent
    if value == "":
        return None
    if isinstance(value, str) and not value.isdigit():
        raise _problem("not an integer")
    return value


def _since(value: str) -> str:
    try:
        length = parse_go_duration(value)
    except TimeFormatError:
        raise _problem("must be a Go duration such as 24h or 90m") from None
    if length <= 0:
        raise _problem("must be longer than zero")
    return value


AS_OF_RULE = "must be an RFC 3339 time with its offset (Z or ±hh:mm)"
"""What a bad ``as_of`` is told, as ingest and the tools tell a time without its offset."""


def _as_of(value: str | None) -> str | None:
    if value is not None:
        try:
            parse_rfc3339(value)
        except TimeFormatError:
            raise _problem(AS_OF_RULE) from None
    return value


def max_chars_rule(most: int) -> str:
    """What ``max_chars`` must be, one lower bound in every refusal: the header's (a budget
    below it is refused with the figure it needs)."""
    return f"must be an integer of at most {most}, and at least what the header needs"


def _max_chars(value: int | None, info: ValidationInfo) -> int | None:
    most = (info.context or {}).get("max_chars_limit")
    if value is not None and most is not None and value > most:
        raise _problem(max_chars_rule(most))
    return value


TRIGGER_RULE = (
    "must be a source handle, channel/message: the message's channel, a slash, then its id "
    "(a message id alone names no channel)"
)
"""The trigger's refusal: a new user gave the bare message id."""


def _trigger(value: str | None, info: ValidationInfo) -> str | None:
    if value is not None:
        if not _HANDLE.match(value):
            raise _problem(TRIGGER_RULE)
        if info.data.get("as_of"):
            raise _problem("does not combine with as_of")
    return value


def _unconsumed(value: str, info: ValidationInfo) -> str:
    if value == "only" and info.data.get("as_of"):
        raise _problem("does not combine with as_of")
    return value


HTTP_ONLY_NOTES = {
    "channels": "; in a query string, comma-separated or the parameter repeated",
    "trigger": "; not with as_of",
    "unconsumed": " (not with as_of)",
}
"""What the feed's parameter descriptions say of the HTTP query string and of ``as_of``,
written once: the MCP tool, which takes JSON and no ``as_of``, publishes them without."""


class FeedParameters(TextModel):
    """The feed's parameters: the one definition the HTTP query string, the MCP tool and
    the OpenAPI document share. Query-string values arrive as text and typed values as
    themselves; both validate the same way. ``max_chars``'s ceiling
    (``feed.max_chars_limit``) comes in the validation context; the defaults that depend
    on settings (``limit``, ``max_chars``) stay None here and are resolved by
    :func:`query_of`."""

    model_config = ConfigDict(frozen=True)

    channels: Annotated[
        list[str],
        BeforeValidator(_channel_list),
        AfterValidator(_channels),
        Field(
            description=f"Channel ids (1 to {MAX_CHANNELS}){HTTP_ONLY_NOTES['channels']}.",
            json_schema_extra={"items": {"type": "string", "pattern": ID_PATTERN}},
        ),
    ]
    context_kind: Annotated[
        Literal["raw_window+digest", "raw_window"],
        BeforeValidator(_plus),
        Field(description="raw_window+digest, or raw_window (recent messages only)."),
    ] = "raw_window+digest"
    since: Annotated[
        str,
        BeforeValidator(_or_default("24h")),
        AfterValidator(_since),
        Field(description="The window, a Go duration."),
    ] = "24h"
    limit: Annotated[
        Annotated[int, Field(ge=0, le=1000)] | None,
        BeforeValidator(_digits),
        Field(
            description="Most messages in the raw recent tier (default feed.raw_recent_limit, "
            "or feed.raw_window_limit for raw_window).",
        ),
    ] = None
    max_chars: Annotated[
        Annotated[int, Field(ge=1)] | None,
        BeforeValidator(_digits),
        Field(
            description="The whole body's budget in code points (default feed.max_chars, at "
            "most feed.max_chars_limit).",
        ),
        AfterValidator(_max_chars),
    ] = None
    format: Annotated[
        Literal["text", "json"],
        BeforeValidator(_lowered),
        Field(description="text, or json (one object; any case: JSON)."),
    ] = "text"
    detail: Annotated[
        Literal["full", "lean"],
        BeforeValidator(_or_default("full")),
        BeforeValidator(_lowered),
        Field(
            description="With format=json: full (each digest item the whole block, each "
            "message the whole version), or lean (what a model reads: handles, time, author, "
            "type, role, origin, trust, new and text; about twice the items in a budget). "
            "Text is always lean."
        ),
    ] = "full"
    as_of: Annotated[
        str | None,
        BeforeValidator(_none_if_empty),
        AfterValidator(_as_of),
        Field(
            description="RFC 3339: the feed as it was then.",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None
    trigger: Annotated[
        str | None,
        BeforeValidator(_none_if_empty),
        AfterValidator(_trigger),
        Field(
            description="The handle (channel/message) of the message that woke the agent: "
            "shown first, complete, outside max_chars; its channel must be among channels"
            f"{HTTP_ONLY_NOTES['trigger']}.",
            json_schema_extra={"pattern": _HANDLE.pattern},
        ),
    ] = None
    unconsumed: Annotated[
        Literal["all", "only"],
        BeforeValidator(_or_default("all")),
        AfterValidator(_unconsumed),
        Field(
            description="all, or only: serve only what this consumer has not consumed"
            f"{HTTP_ONLY_NOTES['unconsumed']}."
        ),
    ] = "all"


# The order today's parameters are checked in: with several wrong, the first one is named.
_CHECK_ORDER = (
    "channels", "context_kind", "format", "detail", "since", "as_of", "trigger", "unconsumed",
    "limit", "max_chars",
)  # fmt: skip
_TYPE_MESSAGES = {
    "channels": "at least one channel id is required",
    "context_kind": "must be raw_window+digest or raw_window",
    "format": "must be text or json",
    "detail": "must be full or lean",
    "since": "must be a Go duration such as 24h or 90m",
    "as_of": AS_OF_RULE,
    "trigger": TRIGGER_RULE,
    "unconsumed": "must be all or only",
    "limit": "must be an integer from 0 to 1000",
}


def _refusal(exc: ValidationError, max_chars_limit: int) -> ApiError:
    """The one 422 for a refused parameter set: the first wrong parameter in check order,
    with its own message; a type error gets the parameter's general message. Never the
    value."""
    wrong: dict[str, str] = {}
    for error in exc.errors(include_url=False):
        name = str(error["loc"][0]) if error["loc"] else "channels"
        if name in wrong:
            continue
        if error["type"] == "invalid" and name not in ("limit", "max_chars"):
            wrong[name] = str(error["msg"])
        elif name == "max_chars":
            wrong[name] = max_chars_rule(max_chars_limit)
        else:
            wrong[name] = _TYPE_MESSAGES.get(name, "invalid value")
    name = next((n for n in _CHECK_ORDER if n in wrong), next(iter(wrong)))
    return _invalid(name, wrong[name])


def feed_parameters(values: Mapping[str, object], ctx: ReadContext) -> FeedParameters:
    """The feed's parameters from name/value pairs (a query string's text, an MCP call's
    typed values). Raises ``ApiError`` 422 naming the first wrong parameter."""
    most = ctx.settings.feed.max_chars_limit
    try:
        return FeedParameters.model_validate(dict(values), context={"max_chars_limit": most})
    except ValidationError as exc:
        raise _refusal(exc, most) from None


def query_of(parameters: FeedParameters, ctx: ReadContext) -> FeedQuery:
    """The feed query the parameters ask for, the settings' defaults filled in."""
    feed = ctx.settings.feed
    kind: ContextKind = parameters.context_kind
    default_limit = feed.raw_window_limit if kind == "raw_window" else feed.raw_recent_limit
    as_of = parameters.as_of
    return FeedQuery(
        channels=tuple(parameters.channels),
        kind=kind,
        since_us=parse_go_duration(parameters.since),
        to_us=parse_rfc3339(as_of) if as_of else ctx.clock(),
        as_of=bool(as_of),
        limit=default_limit if parameters.limit is None else parameters.limit,
        max_chars=feed.max_chars if parameters.max_chars is None else parameters.max_chars,
        fmt=parameters.format,
        lean=parameters.detail == "lean",
        raw_recent_us=int(feed.raw_recent_window * MICROS_PER_SECOND),
        llm_enabled=ctx.settings.llm.enabled,
        trigger=parameters.trigger,
        unconsumed_only=parameters.unconsumed == "only",
    )


class MultiValues(Protocol):
    """A query string read as it came: every value of a name, in order."""

    def keys(self) -> Iterable[str]: ...

    def getlist(self, key: str) -> list[str]: ...


def query_string_values(params: MultiValues) -> dict[str, str]:
    """A query string's name/value pairs for :func:`parse_values`: ``channels`` given more
    than once lists them all (``channels=a&channels=b``, as many HTTP clients write a list,
    is ``channels=a,b``); any other feed parameter given more than once is a 422 naming it,
    not its last value silently. A name that is a feed parameter's written otherwise
    (``maxchars``, ``max-chars``, ``maxChars``, ``channel``) is a 422 naming the parameter
    meant, not a default served in silence; other names the feed does not take are
    ignored, as before (a cache-buster ``_=1`` sent twice included)."""
    values: dict[str, str] = {}
    for name in dict.fromkeys(params.keys()):
        given = params.getlist(name)
        meant = _MEANT.get(_folded_name(name))
        if meant is not None and meant != name:
            raise _invalid(name, f"not a feed parameter; the feed's is {meant}")
        if name == "channels":
            values[name] = ",".join(given)
        elif len(given) > 1 and name in FeedParameters.model_fields:
            raise _invalid(name, "given more than once; give it once")
        else:
            values[name] = given[-1]
    return values


def _folded_name(name: str) -> str:
    """A parameter name without case, separators or a plural's ``s``."""
    folded = re.sub(r"[\W_]", "", name).lower()
    return folded[:-1] if folded.endswith("s") else folded


_MEANT = {
    **{_folded_name(name): name for name in FeedParameters.model_fields},
    # names other APIs give a budget, a channel list or a format
    **{_folded_name(alias): "max_chars" for alias in ("budget", "chars", "max_length", "maxlen")},
    **{_folded_name(alias): "channels" for alias in ("channel_id", "channel_ids")},
    "fmt": "format",
}
"""Each feed parameter by its folded name (:func:`_folded_name`), and by the names other APIs
give a budget, a channel list or a format."""


def parse_values(values: Mapping[str, object], ctx: ReadContext) -> FeedQuery:
    """The feed query from name/value pairs (a query string, an MCP call, the inspector).
    Raises ``ApiError`` 422."""
    return query_of(feed_parameters(values, ctx), ctx)


async def feed_trigger(
    conn: Connection, ctx: ReadContext, principal: Principal, query: FeedQuery
) -> tuple[FeedQuery, SourceVersion | None]:
    """The query with its trigger's author, and the trigger's current version (None when
    the query names none). Raises the one ``404 trigger_not_found`` for an unknown,
    invisible, deleted or forgotten trigger, ``422 trigger_too_large`` over
    ``feed.trigger_max_chars``, and 422 when its channel is not among ``channels``."""
    if query.trigger is None:
        return query, None
    version = await reads.resolve_trigger(conn, principal, query.trigger)
    if version.key.channel_id not in query.channels:
        raise _invalid("trigger", "its channel must be among channels")
    size = len(version.content)
    most = ctx.settings.feed.trigger_max_chars
    if size > most:
        handle = version.key.handle
        detail = ErrorDetail(
            field="trigger",
            code="trigger_too_large",
            message=f"{size} characters; read_content: get_channel_messages "
            f'source_handles=["{handle}"] returns it in fragments',
        )
        raise ApiError(
            422,
            "trigger_too_large",
            f"the trigger message has {size} characters, more than feed.trigger_max_chars "
            f"({most}); it is never cut: read it with get_channel_messages "
            f'source_handles=["{handle}"]',
            [detail],
        )
    target = answered_id(version)  # as the trigger's line names it
    answers = None if target is None else source_handle(version.key.channel_id, target)
    return replace(query, trigger_author=version.author_id, trigger_answers=answers), version


async def read_feed(
    ctx: ReadContext, principal: Principal, query: FeedQuery
) -> tuple[Body, str | None]:
    """Serve a feed in one read snapshot: 404 for unknown or invisible channels, the
    trigger's checks, 422 for a budget too small. Returns the body (its read id still a
    placeholder) and the read id it gets when that is known without writing."""
    async with ctx.store.read() as conn:
        await reads.visible_channels(conn, principal, query.channels)
        query, trigger = await feed_trigger(conn, ctx, principal, query)
        try:
            body = await candidates.serve(conn, query, principal, trigger)
        except BudgetTooSmall as exc:
            raise _invalid("max_chars", str(exc)) from None
        return body, await reads.known_read_id(conn, principal, body.complete, body.summarized)


def feed_op(
    ctx: ReadContext,
    principal: Principal,
    query: FeedQuery,
    body: Body,
    started: float,
    status_code: int = 200,
) -> ContextOp:
    """The ``channel_context_op`` of one feed served. Its numbers are the ones the body's
    header states (``body.numbers``), so the log line and /metrics never disagree with it."""
    numbers = body.numbers
    return ContextOp(
        ts=format_rfc3339(ctx.clock()),
        type="feed",
        consumer=principal.agent_id,
        kind=query.kind,
        channels=list(query.channels),
        retained=numbers["retained"],
        returned=numbers["messages"] + numbers["digest_blocks"],
        omitted=numbers["omitted"],
        raw_bytes=numbers["raw_bytes"],
        digest_bytes=numbers["digest_bytes"],
        digest_blocks=numbers["digest_blocks"],
        coverage_gaps=numbers["coverage_gaps"],
        deterministic_only=numbers["deterministic_only"],
        status=numbers["digest"],
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        status_code=status_code,
    )
