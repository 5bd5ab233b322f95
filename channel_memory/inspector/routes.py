"""``/inspect``: server-rendered, read-only pages over what the sidecar stores and serves.

Every page reads inside ``Store.read()`` and writes nothing; the feed shown is the one
``/channel-awareness`` serves (``parse_values`` then ``candidates.serve``). Content is
HTML-escaped by the templates (autoescape) and never logged. A channel outside the
signed-in token's list answers the same 404 page as an unknown one.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from channel_memory.feed import candidates
from channel_memory.feed.awareness import parse_values, read_feed
from channel_memory.feed.layout import BudgetTooSmall
from channel_memory.http.api import AppContext
from channel_memory.inspector import charts
from channel_memory.inspector.feedview import ServedItem, datetime_local_to_rfc3339, served_items
from channel_memory.inspector.session import COOKIE, Sessions
from channel_memory.kernel.config import Settings
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.models import (
    HARD_EVENT_BLOCK,
    ID_PATTERN,
    TOMBSTONE_BLOCK,
    RecallBlock,
    SourceVersion,
    source_handle,
)
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import (
    MICROS_PER_DAY,
    MICROS_PER_SECOND,
    format_rfc3339,
    utc_day,
)
from channel_memory.kernel.trust import block_trust, trust_of
from channel_memory.store import blocks, sources, stats
from channel_memory.store import inspect as inspect_store
from channel_memory.store import llm as llm_store
from channel_memory.worker.rules import ModelDecision, RulesError, RuleSet, load_rules, parse_rules
from channel_memory.worker.rules_report import RulesReport

PREFIX = "/inspect"
_ID = re.compile(ID_PATTERN)
HERE = Path(__file__).parent
BUDGETS = (2048, 4096, 8192, 12000, 24000)
"""The budgets the "where the bytes went" page serves the feed at."""
RECENT_HARD_EVENTS = 30
RULES_EXAMPLES = 20
SECURITY_HEADERS = {
    # no inline script or style anywhere: the pages' only script is none, their only style
    # the one stylesheet; SVG charts use presentation attributes, which CSP allows
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}

Page = Callable[[Request, AppContext, Principal], Awaitable[Response]]


def _time(micros: int | None) -> str:
    return "—" if micros is None else format_rfc3339(micros)


_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_templates.filters["t"] = _time
_templates.filters["n"] = lambda value: f"{value:,}"


def _html(name: str, status: int = 200, **values: Any) -> Response:
    body = _templates.get_template(name).render(prefix=PREFIX, **values)
    return Response(body, status, headers=SECURITY_HEADERS, media_type="text/html")


def _not_found(principal: Principal | None = None) -> Response:
    """The one answer for an unknown page, channel, block or message, and for one the
    token may not see: the two are indistinguishable, as in the API."""
    return _html("not_found.html", 404, principal=principal)


def _redirect(path: str) -> Response:
    return RedirectResponse(PREFIX + path, 303, headers=SECURITY_HEADERS)


class _NotFound(Exception):
    pass


def _can_read(principal: Principal) -> bool:
    return bool({"read", "admin"} & principal.scopes)


def _consumers(ctx: AppContext, principal: Principal) -> list[Principal]:
    """Whose feed the signed-in caller may look at: an admin every configured reader's, a
    read token only its own."""
    if "admin" not in principal.scopes:
        return [principal]
    found = {principal.agent_id: principal}
    secrets = [ctx.settings.token] if ctx.settings.token else []
    secrets += [entry.resolve() for entry in ctx.settings.tokens]
    for secret in secrets:
        consumer = ctx.tokens.principal_for(secret)
        if _can_read(consumer):
            found.setdefault(consumer.agent_id, consumer)
    return list(found.values())


async def _visible_channel(ctx: AppContext, principal: Principal, channel_id: str) -> None:
    """Raise ``_NotFound`` unless the channel exists and the caller may see it."""
    if not _valid_id(channel_id) or not principal.may_see(channel_id):
        raise _NotFound
    async with ctx.store.read() as conn:
        if channel_id not in await sources.channel_kinds(conn, [channel_id]):
            raise _NotFound


def _valid_id(value: str) -> bool:
    return _ID.match(value) is not None


# --- pages ----------------------------------------------------------------------------------


async def channels_page(request: Request, ctx: AppContext, principal: Principal) -> Response:
    now = ctx.clock()
    rows: list[dict[str, Any]] = []
    async with ctx.store.read() as conn:
        listed = [c for c in await stats.channel_stats(conn) if principal.may_see(c["channel_id"])]
        spend = await llm_store.spend_by_channel(conn, utc_day(now))
        for channel in listed:
            try:
                query = parse_values({"channels": channel["channel_id"]}, ctx)
                body = await candidates.serve(conn, query, principal)
                status = str(body.numbers["digest"])
            except (ApiError, BudgetTooSmall):
                status = "unavailable"
            usage = spend.get(channel["channel_id"], llm_store.Usage())
            rows.append({**channel, "status": status, "llm": usage})
        depth, oldest = await stats.backlog(conn)
    caps = ctx.settings.llm
    return _html(
        "channels.html",
        principal=principal,
        channels=rows,
        caps=caps,
        backlog=depth if "admin" in principal.scopes else None,
        oldest=oldest,
        now=now,
    )


def _feed_values(params: Mapping[str, str], channel_id: str) -> dict[str, str]:
    values = {"channels": channel_id, "format": "text"}
    for name in ("max_chars", "since", "context_kind", "limit"):
        if params.get(name):
            values[name] = params[name]
    if params.get("as_of"):
        values["as_of"] = datetime_local_to_rfc3339(params["as_of"])
    return values


async def _item_blocks(ctx: AppContext, items: list[ServedItem]) -> dict[int, RecallBlock]:
    """For items whose line names no block, the stored block of that kind citing the item's
    message (the live feed serves stored blocks; an ``as_of`` view may render from sources)."""
    found: dict[int, RecallBlock] = {}
    async with ctx.store.read() as conn:
        for index, item in enumerate(items):
            if item.block_id is not None:
                block = await blocks.block_by_id(conn, item.block_id)
            elif item.kind == "message":
                continue
            else:
                citing = await inspect_store.blocks_citing(conn, item.channel_id, item.message_id)
                block = next((b for b in citing if b.kind == item.kind and not b.dirty), None)
            if block is not None:
                found[index] = block
    return found


async def feed_page(request: Request, ctx: AppContext, principal: Principal) -> Response:
    channel_id = str(request.path_params["channel_id"])
    await _visible_channel(ctx, principal, channel_id)
    params = request.query_params
    consumers = _consumers(ctx, principal)
    chosen = next((c for c in consumers if c.agent_id == params.get("consumer")), consumers[0])
    values = _feed_values(params, channel_id)
    error = None
    body_text = None
    numbers: dict[str, Any] = {}
    items: list[ServedItem] = []
    links: dict[int, RecallBlock] = {}
    read_id = None
    try:
        query = parse_values(values, ctx)
        # the proxy's own read path: the same 404 for a channel the consumer may not see,
        # the same 422s; it records nothing (a proxy's request records the read)
        body, read_id = await read_feed(ctx, chosen, query)
        if read_id is not None:
            body = body.with_read_id(read_id)
        body_text, numbers = body.content, body.numbers
        items = served_items(body_text)
        links = await _item_blocks(ctx, items)
    except ApiError as exc:
        fields = ", ".join(d.field for d in exc.details if d.field)
        error = f"{exc.status} {exc.code}: {exc.message}" + (f" ({fields})" if fields else "")
    form = {
        "consumer": chosen.agent_id,
        "max_chars": params.get("max_chars") or str(ctx.settings.feed.max_chars),
        "since": params.get("since") or "24h",
        "context_kind": params.get("context_kind") or "raw_window+digest",
        "as_of": params.get("as_of", ""),
    }
    return _html(
        "feed.html",
        principal=principal,
        channel_id=channel_id,
        consumers=[c.agent_id for c in consumers],
        form=form,
        error=error,
        body=body_text,
        numbers=numbers,
        items=items,
        links=links,
        now=ctx.clock(),
        read_id_known=read_id is not None,
        proxy_query=urlencode({k: v for k, v in values.items() if k != "format"}),
    )


async def block_page(request: Request, ctx: AppContext, principal: Principal) -> Response:
    block_id = str(request.path_params["block_id"])
    async with ctx.store.read() as conn:
        block = await blocks.block_by_id(conn, block_id)
        if block is None or not principal.may_see(block.channel_id):
            raise _NotFound
        ids = [s.message_id for s in block.sources]
        deleted = await sources.deleted_messages(conn, block.channel_id, ids)
        exact = await inspect_store.exact_sources(
            conn, block.channel_id, [(s.message_id, s.content_hash) for s in block.sources]
        )
        current = await sources.current_versions(conn, block.source_kind, block.channel_id, ids)
    withheld = bool(deleted) and block.kind != TOMBSTONE_BLOCK
    cited = []
    for source in block.sources:
        version = exact.get((source.message_id, source.content_hash))
        if version is None:
            state = "forgotten or dropped"
        elif source.message_id in deleted:
            state = "deleted"
        else:
            state = "current" if version.is_current else "superseded"
        cited.append(
            {
                "handle": source_handle(block.channel_id, source.message_id),
                "message_id": source.message_id,
                "content_hash": source.content_hash,
                "state": state,
                # a deleted message's content is hidden from readers, as in the API
                "content": version.content
                if version is not None and source.message_id not in deleted
                else None,
                "trust": trust_of(version.origin, version.author_id, principal)
                if version is not None
                else None,
                "author": (version.author_name or version.author_id) if version else None,
            }
        )
    # matching is CPU work (a first match compiles what it needs): off the event loop
    made_by = await asyncio.to_thread(_made_by, request, block, current)
    return _html(
        "block.html",
        principal=principal,
        block=block,
        trust=block_trust(block, principal),
        withheld=withheld,
        cited=cited,
        made_by=made_by,
    )


def _made_by(request: Request, block: RecallBlock, current: Mapping[str, Any]) -> str | None:
    """Why a hard event is one: the current rules' match on its message, or its processor."""
    if block.kind != HARD_EVENT_BLOCK:
        return None
    if block.processor.startswith("llm-detect"):
        return f"promoted by model-assisted detection ({block.processor}), type {block.event_type}"
    if block.answers:
        return f"a decision by reply to {block.answers}, type {block.event_type}"
    rules: RuleSet | None = request.app.state.inspector_rules
    first = current.get(block.sources[0].message_id) if block.sources else None
    if rules is not None and first is not None and not first.deleted:
        rule = rules.first_match(first.content, first.tags, first.author_id, first.author_name)
        if rule is not None:
            return f"rule {rule.name!r} (event type {rule.event_type}) of {rules.source}"
        found = rules.decide(first.content, first.tags, first.author_id, first.author_name)
        if isinstance(found, ModelDecision):
            return (
                f"the decision model of {rules.source} (probability {found.probability:.2f}), "
                f"type {block.event_type}"
            )
    return f"event type {block.event_type}; no current rule matches its message now"


async def message_page(request: Request, ctx: AppContext, principal: Principal) -> Response:
    channel_id = str(request.path_params["channel_id"])
    message_id = str(request.path_params["message_id"])
    await _visible_channel(ctx, principal, channel_id)
    async with ctx.store.read() as conn:
        versions = await inspect_store.message_versions(conn, channel_id, message_id)
        forgotten_us, ledger = await inspect_store.forget_ledger(conn, channel_id, message_id)
        citing = await inspect_store.blocks_citing(conn, channel_id, message_id)
    if not versions and forgotten_us is None:
        raise _NotFound
    deleted = any(v.is_current and v.deleted for v in versions)
    rows = [
        {
            "version": v,
            "state": "forgotten"
            if v.forgotten_us is not None
            else "deletion"
            if v.deleted
            else "current"
            if v.is_current
            else "superseded",
            "content": None if deleted or v.forgotten_us is not None else v.content,
            "trust": trust_of(v.origin, v.author_id, principal),
        }
        for v in versions
    ]
    return _html(
        "message.html",
        principal=principal,
        channel_id=channel_id,
        message_id=message_id,
        rows=rows,
        deleted=deleted,
        forgotten_us=forgotten_us,
        ledger=ledger,
        citing=citing,
    )


async def bytes_page(request: Request, ctx: AppContext, principal: Principal) -> Response:
    channel_id = str(request.path_params["channel_id"])
    await _visible_channel(ctx, principal, channel_id)
    now = ctx.clock()
    budgets = [b for b in BUDGETS if b <= ctx.settings.feed.max_chars_limit]
    served: list[tuple[int, dict[str, Any], int]] = []
    async with ctx.store.read() as conn:
        raw = await inspect_store.raw_window(conn, channel_id, now - MICROS_PER_DAY, now)
        for budget in budgets:
            query = parse_values({"channels": channel_id, "max_chars": str(budget)}, ctx)
            try:
                body = await candidates.serve(conn, query, principal)
            except BudgetTooSmall:
                continue
            served.append((budget, body.numbers, len(body.content)))
    size_rows: list[tuple[str, list[int]]] = [("raw 24h window", [raw.chars, 0, 0])]
    omitted_rows: list[tuple[str, list[int]]] = []
    for budget, numbers, length in served:
        raw_bytes, digest_bytes = int(numbers["raw_bytes"]), int(numbers["digest_bytes"])
        size_rows.append(
            (
                f"max_chars {budget:,}",
                [0, raw_bytes + digest_bytes, length - raw_bytes - digest_bytes],
            )
        )
        hard = len(numbers["omitted_hard_events"]) + int(numbers["more_hard_events"])
        older = int(numbers["digest_older_raw_omitted"])
        rest = max(0, int(numbers["omitted"]) - hard - older)
        omitted_rows.append((f"max_chars {budget:,}", [hard, older, rest]))
    sizes = charts.stacked_bars(
        size_rows, ["raw window", "served items", "header and section lines"]
    )
    omitted = charts.stacked_bars(
        omitted_rows,
        ["hard events that did not fit", "older messages no rollup covers", "other messages"],
    )
    return _html(
        "bytes.html",
        principal=principal,
        channel_id=channel_id,
        raw=raw,
        served=served,
        sizes=sizes,
        omitted=omitted,
    )


async def rules_page(request: Request, ctx: AppContext, principal: Principal) -> Response:
    current: RuleSet | None = request.app.state.inspector_rules
    pasted = ""
    report = None
    error = None
    if request.method == "POST" and "admin" not in principal.scopes:
        # a pasted file's patterns run over the store: an operator's tool, like the CLI
        error = "testing a rules file needs an admin token"
    elif request.method == "POST":
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        pasted = (form.get("rules") or [""])[0]
        try:
            candidate = parse_rules(pasted, "the pasted rules")
        except RulesError as exc:
            error = str(exc)
        else:
            if current is not None:
                report = await _rules_report(ctx, principal, current, candidate)
    async with ctx.store.read() as conn:
        channels = [
            c for c in await stats.channel_stats(conn) if principal.may_see(c["channel_id"])
        ]
        recent = await inspect_store.recent_hard_events(
            conn, [c["channel_id"] for c in channels], RECENT_HARD_EVENTS
        )
        found = [
            (
                block,
                await sources.current_versions(
                    conn, block.source_kind, block.channel_id, [block.sources[0].message_id]
                ),
            )
            for block in recent
        ]
    whys = await asyncio.to_thread(lambda: [_made_by(request, b, v) for b, v in found])
    matches = [{"block": b, "why": why} for (b, _), why in zip(found, whys, strict=True)]
    return _html(
        "rules.html",
        principal=principal,
        rules_source=current.source if current is not None else None,
        matches=matches,
        pasted=pasted,
        report=report.render() if report is not None else None,
        error=error,
    )


def _add_all(report: RulesReport, versions: list[SourceVersion]) -> None:
    for version in versions:
        report.add(version)


async def _rules_report(
    ctx: AppContext, principal: Principal, current: RuleSet, candidate: RuleSet
) -> RulesReport:
    """What ``rules test`` shows for a candidate file, over the messages the caller may see.
    Read-only: the report never switches the rules."""
    report = RulesReport(current, candidate, RULES_EXAMPLES)
    after = 0
    while True:
        async with ctx.store.read() as conn:
            page = await sources.current_page(conn, after, 2000)
        if not page:
            return report
        visible = [v for v in page if principal.may_see(v.key.channel_id)]
        # matching is CPU work over stored content: off the event loop, a page at a time
        await asyncio.to_thread(_add_all, report, visible)
        after = page[-1].id


# --- sign-in and the page wrapper -------------------------------------------------------------


def _sessions(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.inspector_sessions
    return sessions


def _signed_in(request: Request, ctx: AppContext) -> Principal | None:
    return _sessions(request).principal(request.cookies.get(COOKIE), ctx.clock())


def _page(handler: Page) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        ctx: AppContext = request.app.state.ctx
        principal = _signed_in(request, ctx)
        if principal is None:
            return _redirect("/sign-in")
        try:
            return await handler(request, ctx, principal)
        except _NotFound:
            return _not_found(principal)

    return handle


async def sign_in(request: Request) -> Response:
    ctx: AppContext = request.app.state.ctx
    if request.method == "GET":
        if _signed_in(request, ctx) is not None:
            return _redirect("/")
        return _html("sign_in.html", principal=None, error=None, open=ctx.tokens.open)
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    token = (form.get("token") or [""])[0].strip()
    try:
        principal = ctx.tokens.principal_for(token or None)
    except ApiError:
        return _html(
            "sign_in.html", 401, principal=None, error="that token is not valid", open=False
        )
    if not _can_read(principal):
        return _html(
            "sign_in.html", 403, principal=None, error="that token cannot read", open=False
        )
    value, max_age = _sessions(request).start(principal, ctx.clock())
    response = _redirect("/")
    response.set_cookie(
        COOKIE,
        value,
        max_age=max_age,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


async def sign_out(request: Request) -> Response:
    _sessions(request).end(request.cookies.get(COOKIE))
    response = _redirect("/sign-in")
    response.delete_cookie(COOKIE, path=PREFIX, httponly=True, samesite="strict")
    return response


async def stylesheet(request: Request) -> Response:
    return Response(
        (HERE / "static" / "inspector.css").read_bytes(),
        headers={**SECURITY_HEADERS, "Cache-Control": "max-age=300"},
        media_type="text/css",
    )


async def _unknown(request: Request) -> Response:
    ctx: AppContext = request.app.state.ctx
    principal = _signed_in(request, ctx)
    return _not_found(principal) if principal is not None else _redirect("/sign-in")


def mount(settings: Settings) -> BaseRoute:
    """The inspector's routes under ``/inspect`` (call only when ``inspector.enabled``)."""
    routes = [
        Route("/", _page(channels_page), methods=["GET"]),
        Route("/sign-in", sign_in, methods=["GET", "POST"]),
        Route("/sign-out", sign_out, methods=["POST"]),
        Route("/inspector.css", stylesheet, methods=["GET"]),
        Route("/channels/{channel_id}", _page(feed_page), methods=["GET"]),
        Route("/channels/{channel_id}/bytes", _page(bytes_page), methods=["GET"]),
        Route("/channels/{channel_id}/messages/{message_id}", _page(message_page), methods=["GET"]),
        Route("/blocks/{block_id}", _page(block_page), methods=["GET"]),
        Route("/rules", _page(rules_page), methods=["GET", "POST"]),
        Route("/{rest:path}", _unknown, methods=["GET", "POST"]),
    ]
    return Mount(PREFIX, routes=routes)


def install(app: Any, settings: Settings) -> None:
    """Give the application the inspector's state: live sessions and the current rules."""
    app.state.inspector_sessions = Sessions(
        int(settings.inspector.session_lifetime * MICROS_PER_SECOND)
    )
    try:
        app.state.inspector_rules = load_rules(settings.worker.rules_file)
    except (RulesError, OSError):
        app.state.inspector_rules = None
