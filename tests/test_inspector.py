"""The read-only web inspector over HTTP: access, sessions, escaping, the feed as served,
no writes and no content in logs. The browser tests are in test_inspector_browser.py."""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from channel_memory.inspector import charts
from channel_memory.inspector.feedview import datetime_local_to_rfc3339, served_items
from channel_memory.inspector.session import COOKIE, Sessions, cookie_value, verified_id
from channel_memory.kernel.config import load_settings
from channel_memory.kernel.principal import Principal
from tests.conftest import FakeClock, LiveServer, at, ingest_ok, message_event, query

ADMIN = "admin-token-0123456789"
ALPHA = "alpha-read-token-0123456789"
BETA = "beta-read-token-0123456789"
BRIDGE = "bridge-ingest-token-0123456789"
CANARY = "zebracanary"
SCRIPT = f"<script>window.__pwned = 1</script>{CANARY}"
ATTRIBUTE = '"><img src=x onerror="window.__pwned = 2">'
LIFETIME = 3600


def inspector_settings(db: Path, **overrides: Any) -> Any:
    return load_settings(
        None,
        db=db,
        tokens=[
            {"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"},
            {
                "token": ALPHA,
                "scopes": ["read"],
                "agent_id": "analyst-alpha",
                "channels": ["floor", "quiet"],
                "self_author_ids": ["u-desk-lead"],
            },
            {"token": BETA, "scopes": ["read"], "agent_id": "analyst-beta", "channels": ["desk"]},
            {"token": BRIDGE, "scopes": ["ingest"], "agent_id": "bridge"},
        ],
        worker={"enabled": False},
        inspector={"enabled": True, "session_lifetime": LIFETIME},
        **overrides,
    )


def build_desk(server: LiveServer) -> None:
    """A small desk: hard events, an edit across ``as_of``, chatter that fills budgets, hostile
    content, a deleted and a forgotten message, a channel still deriving and an empty one."""
    with server.client(BRIDGE) as client:
        events = [
            message_event("m1", "FILLED 200 NVDA @ 131.20", created_at=at(2, 14)),
            message_event("m2", "Stop moved to 408 on NVDA.", created_at=at(0, 15)),
            message_event(
                "m2",
                "Stop moved to 410 on NVDA.",
                created_at=at(0, 15),
                edited_at=at(30, 15),
            ),
            message_event("x1", SCRIPT, created_at=at(5, 16), author="mallory"),
            message_event("x2", ATTRIBUTE, created_at=at(6, 16), author=ATTRIBUTE),
            message_event("gone", f"posted by mistake {CANARY}", created_at=at(7, 16)),
            message_event("del", f"deleted later {CANARY}", created_at=at(8, 16)),
            message_event("d1", "Stop moved to 99 on ES.", channel="desk", created_at=at(0, 17)),
            message_event("q1", "nothing to see", channel="quiet", created_at=at(0, 17)),
        ]
        events += [
            message_event(
                f"c{i:02d}",
                f"chatter {i}: the tape looks heavy into the close, watching flows on the "
                f"index and the sector rotation into defensives, nothing actionable yet {i}",
                created_at=at(i, 18),
                author=f"analyst{i % 3}",
            )
            for i in range(40)
        ]
        ingest_ok(client, *events)
        ingest_ok(
            client,
            {"type": "delete", "channel_id": "floor", "message_id": "del", "deleted_at": at(9, 16)},
            {"type": "delete", "channel_id": "quiet", "message_id": "q1", "deleted_at": at(1, 17)},
            {
                "type": "forget",
                "channel_id": "floor",
                "message_ids": ["gone"],
                "reason": "posted by mistake",
            },
        )
        server.drain()
        # after the worker's pass: desk has an edit waiting, its block cites a superseded version
        ingest_ok(
            client,
            message_event(
                "d1",
                "Stop moved to 101 on ES.",
                channel="desk",
                created_at=at(0, 17),
                edited_at=at(5, 17),
            ),
        )


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("inspector") / "channel-memory.db"
    with LiveServer(inspector_settings(db), FakeClock()) as server:
        build_desk(server)
        yield server


@contextmanager
def signed_in(server: LiveServer, token: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.post("/inspect/sign-in", data={"token": token})
        assert response.status_code == 303, response.text
        assert response.headers["location"] == "/inspect/"
        yield client


def cookie(value: str) -> dict[str, str]:
    return {"cookie": f"{COOKIE}={value}"}


def pre(page: str, element_id: str) -> str:
    match = re.search(f'<pre id="{element_id}">(.*?)</pre>', page, re.S)
    assert match is not None, element_id
    return html.unescape(match.group(1))


# --- pure parts -------------------------------------------------------------------------------


def test_session_cookie_is_signed_and_expires() -> None:
    secret = b"k" * 32
    value = cookie_value(secret, "abc", 1_000)
    assert verified_id(secret, value, 999) == "abc"
    assert verified_id(secret, value, 1_000) is None  # expired
    assert verified_id(b"x" * 32, value, 0) is None  # another server's secret
    assert verified_id(secret, value.replace(".1000.", ".9999."), 0) is None  # extended
    assert verified_id(secret, "abc", 0) is None


def test_sessions_end_on_sign_out_and_with_a_new_secret() -> None:
    sessions = Sessions(lifetime_us=10)
    principal = Principal("someone", frozenset({"read"}), frozenset({"floor"}))
    value, _ = sessions.start(principal, 0)
    assert sessions.principal(value, 5) is principal
    assert sessions.principal(value, 10) is None
    assert Sessions(lifetime_us=10).principal(value, 5) is None  # a restart: a new secret
    sessions.end(value)
    assert sessions.principal(value, 5) is None


def test_served_items_read_a_text_feed_back() -> None:
    body = (
        "[channel-awareness] kind=raw_window+digest\n"
        "[digest; channel floor, trust unverified, role user, new unless marked]\n"
        "[14:02 fill m1 desk-lead]\n> FILLED 200\n"
        "[14:03 hard:custom m2 desk-lead]\n> a rules file's own type\n"
        "[15:00-16:00 sequence c01+4 id=abc123 self]\n> [15:00 x] y\n> z\n"
        '[16:05 x1 "a id=zzz"]\n> [16:00 fill m9 x]\n'
        "[raw recent; trust unverified, role user, new unless marked]\n"
        "[16:06 desk/y1 fill]\n> an author named like a kind\n"
    )
    items = served_items(body)
    assert [(i.kind, i.channel_id, i.message_id, i.more, i.block_id) for i in items] == [
        ("hard_event", "floor", "m1", 0, None),
        ("hard_event", "floor", "m2", 0, None),
        ("sequence_rollup", "floor", "c01", 4, "abc123"),
        ("message", "floor", "x1", 0, None),  # content looking like an item is not one
        ("message", "desk", "y1", 0, None),  # a feed of several channels: whole handles
    ]
    assert items[2].chars == len("[15:00-16:00 sequence c01+4 id=abc123 self]\n") + 18
    assert items[0].content == ("FILLED 200",) and items[0].handle == "floor/m1"


def test_served_items_read_a_lone_token_as_a_handle() -> None:
    # the renderer never writes an item line without a handle; the reader of a body it is
    # handed still reads one, as a message named so, rather than fail
    items = served_items("[digest; channel floor, trust unverified]\n[10:46 fill]\n> x\n")
    assert [(i.kind, i.label, i.handle) for i in items] == [("message", "", "floor/fill")]


def test_time_picker_values_are_utc() -> None:
    assert datetime_local_to_rfc3339("2026-05-21T14:02") == "2026-05-21T14:02:00Z"
    assert datetime_local_to_rfc3339("2026-05-21T14:02:30") == "2026-05-21T14:02:30Z"
    assert datetime_local_to_rfc3339("yesterday") == "yesterday"


def test_charts_share_one_scale() -> None:
    chart = charts.stacked_bars([("a", [100, 0]), ("b", [25, 25])], ["x", "y"])
    full, half = chart.bars
    assert full.segments[0].width == 2 * sum(s.width for s in half.segments)
    assert half.segments[1].x == half.segments[0].x + half.segments[0].width


# --- the served inspector ---------------------------------------------------------------------


def test_inspector_is_off_unless_enabled(
    make_server: Any, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_server()
    with server.client() as client:
        assert client.get("/inspect/").status_code == 404
        assert client.get("/inspect/sign-in").status_code == 404


def test_pages_need_a_session(desk: LiveServer) -> None:
    with desk.client() as client:
        for path in ("/inspect/", "/inspect/channels/floor", "/inspect/rules", "/inspect/x"):
            response = client.get(path)
            assert response.status_code == 303
            assert response.headers["location"] == "/inspect/sign-in"
        forged = cookie_value(b"f" * 32, "abc", 2**62)
        assert client.get("/inspect/", headers=cookie(forged)).status_code == 303


def test_sign_in_refuses_bad_and_ingest_tokens(desk: LiveServer) -> None:
    with desk.client() as client:
        bad = client.post("/inspect/sign-in", data={"token": "not-a-token-at-all"})
        assert bad.status_code == 401
        assert COOKIE not in bad.cookies
        bridge = client.post("/inspect/sign-in", data={"token": BRIDGE})
        assert bridge.status_code == 403
        assert COOKIE not in bridge.cookies


def test_session_cookie_flags_expiry_and_sign_out(desk: LiveServer) -> None:
    with desk.client() as client:
        response = client.post("/inspect/sign-in", data={"token": ADMIN})
        set_cookie = response.headers["set-cookie"]
        value = response.cookies[COOKIE]
    parts = {p.strip().split("=")[0].lower(): p.strip() for p in set_cookie.split(";")}
    assert "httponly" in parts
    assert parts["samesite"].lower() == "samesite=strict"
    assert parts["path"] == "Path=/inspect"
    assert parts["max-age"] == f"Max-Age={LIFETIME}"
    assert ADMIN not in set_cookie
    with desk.client() as client:
        assert client.get("/inspect/", headers=cookie(value)).status_code == 200
        desk.clock.advance(LIFETIME + 1)
        try:
            assert client.get("/inspect/", headers=cookie(value)).status_code == 303
        finally:
            desk.clock.advance(-(LIFETIME + 1))
    with signed_in(desk, ADMIN) as client:
        kept = client.cookies[COOKIE]
        out = client.post("/inspect/sign-out")
        assert out.status_code == 303
        assert (
            'cm_inspect=""' in out.headers["set-cookie"]
            or "Max-Age=0" in (out.headers["set-cookie"])
        )
    with desk.client() as client:
        # the old cookie, replayed, no longer names a session
        assert client.get("/inspect/", headers=cookie(kept)).status_code == 303


def test_pages_are_strict_and_escape_content(desk: LiveServer) -> None:
    with signed_in(desk, ADMIN) as client:
        pages = [
            client.get("/inspect/"),
            client.get("/inspect/channels/floor", params={"max_chars": "60000"}),
            client.get("/inspect/channels/floor/messages/x1"),
            client.get("/inspect/channels/floor/messages/x2"),
            client.get("/inspect/channels/floor/bytes"),
            client.get("/inspect/rules"),
        ]
    for page in pages:
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp
        assert "script-src" not in csp  # none allowed at all
        assert "unsafe-inline" not in csp
        assert "<script" not in page.text
        # escaped, the payload is text: its quote is &#34; (or \&#34; where a JSON-quoted
        # author name shows it); never an attribute
        assert "onerror=" not in page.text.replace("onerror=&#34;", "").replace(
            "onerror=\\&#34;", ""
        )
        assert "<img" not in page.text
    feed, message = pages[1].text, pages[2].text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in message
    assert "&lt;script&gt;" in feed
    assert "&#34;&gt;&lt;img src=x onerror=" in pages[3].text


def test_feed_is_byte_for_byte_the_proxys(desk: LiveServer) -> None:
    params = {"max_chars": "1500", "since": "24h", "context_kind": "raw_window+digest"}
    with signed_in(desk, ADMIN) as client:
        for consumer, token in (("analyst-alpha", ALPHA), ("ops", ADMIN)):
            with desk.client(token) as proxy:
                served = proxy.get("/channel-awareness", params={**params, "channels": "floor"})
            page = client.get("/inspect/channels/floor", params={**params, "consumer": consumer})
            assert pre(page.text, "feed-text") == served.text
        # as_of through the time picker's format: the edit is not yet made at 15:10
        page = client.get("/inspect/channels/floor", params={"as_of": "2026-05-21T15:10"})
        with desk.client(ADMIN) as proxy:
            then = proxy.get(
                "/channel-awareness", params={"channels": "floor", "as_of": at(10, 15)}
            )
        assert pre(page.text, "feed-text") == then.text
        assert "Stop moved to 408" in then.text
        assert "Stop moved to 410" not in then.text
        # trust markers are the chosen consumer's: alpha's own messages are "self"
        alpha = client.get(
            "/inspect/channels/floor", params={"consumer": "analyst-alpha", "max_chars": "60000"}
        )
        ops = client.get(
            "/inspect/channels/floor", params={"consumer": "ops", "max_chars": "60000"}
        )
        assert pre(alpha.text, "feed-text") != pre(ops.text, "feed-text")
        assert re.search(r"\[14:02 fill m1 desk-lead self\b", pre(alpha.text, "feed-text"))
        # a consumer without the channel sees what the API answers it
        beta = client.get("/inspect/channels/floor", params={"consumer": "analyst-beta"})
        assert "404 channel_not_found" in beta.text
        bad = client.get("/inspect/channels/floor", params={"max_chars": "0"})
        assert "422 validation_failed" in bad.text and "max_chars" in bad.text


def test_read_token_sees_only_its_channels(desk: LiveServer) -> None:
    with desk.client(ALPHA) as api:
        forbidden_api = api.get("/channel-awareness", params={"channels": "desk"})
        unknown_api = api.get("/channel-awareness", params={"channels": "nope"})
    assert forbidden_api.status_code == unknown_api.status_code == 404
    assert forbidden_api.content == unknown_api.content
    with signed_in(desk, ADMIN) as admin:
        desk_block = re.search(
            r'/inspect/blocks/([a-z0-9]+)"', admin.get("/inspect/channels/desk/messages/d1").text
        )
    assert desk_block is not None
    with signed_in(desk, ALPHA) as client:
        listing = client.get("/inspect/").text
        assert ">floor</a>" in listing and ">desk</a>" not in listing
        assert "analyst-beta" not in client.get("/inspect/channels/floor").text
        pairs = [
            ("/inspect/channels/desk", "/inspect/channels/nope"),
            ("/inspect/channels/desk/bytes", "/inspect/channels/nope/bytes"),
            ("/inspect/channels/desk/messages/d1", "/inspect/channels/nope/messages/d1"),
            (f"/inspect/blocks/{desk_block.group(1)}", "/inspect/blocks/nosuchblock"),
        ]
        for forbidden, unknown in pairs:
            a, b = client.get(forbidden), client.get(unknown)
            assert a.status_code == b.status_code == 404
            assert a.content == b.content
            assert "Stop moved" not in a.text
        # testing a pasted rules file runs its patterns over the store: admin only
        refused = client.post("/inspect/rules", data={"rules": RULES}).text
        assert "needs an admin token" in refused
        assert "would stop matching" not in refused and "desk/d1" not in refused


RULES = """
[[rule]]
name = "fills only"
event_type = "trade_fill"
patterns = ['\\bfilled\\b']
"""


def test_channels_page_shows_stale_backlog_and_empty(desk: LiveServer) -> None:
    with signed_in(desk, ADMIN) as client:
        page = client.get("/inspect/").text
    rows = {m.group(1): m.group(0) for m in re.finditer(r">(\w+)</a>.*?</tr>", page, re.S)}
    assert "status-stale" in rows["desk"] and "deriving: 1 pending" in rows["desk"]
    assert "status-ok" in rows["floor"]
    assert "empty: no message retained" in rows["quiet"]


def test_block_and_message_pages_reach_exact_sources(desk: LiveServer) -> None:
    with signed_in(desk, ADMIN) as client:
        message = client.get("/inspect/channels/desk/messages/d1").text
        block_id = re.search(r'/inspect/blocks/([a-z0-9]+)"', message)
        assert block_id is not None
        block = client.get(f"/inspect/blocks/{block_id.group(1)}").text
        hashes = re.findall(r'<code class="hash">([^<]+)</code>', message)
        assert len(hashes) == 2  # two versions, in the order observed
        assert message.index("Stop moved to 99") < message.index("Stop moved to 101")
        assert "hard_event" in block and "deterministic" in block
        assert "superseded" in block  # the block still cites the first version
        assert hashes[0] in block and "Stop moved to 99 on ES." in block
        assert "dirty: awaiting the worker" in block
        assert "rule " in re.search(r'id="made-by">([^<]*)<', block).group(1)  # type: ignore[union-attr]
        deleted = client.get("/inspect/channels/floor/messages/del").text
        assert "Deleted" in deleted and CANARY not in deleted
        forgotten = client.get("/inspect/channels/floor/messages/gone").text
        assert "Forgotten at" in forgotten
        assert "posted by mistake" in forgotten  # the ledger's reason, never the content
        assert CANARY not in forgotten
        assert client.get("/inspect/channels/floor/messages/never").status_code == 404


def test_rules_page_tests_without_switching(desk: LiveServer) -> None:
    with signed_in(desk, ADMIN) as client:
        page = client.get("/inspect/rules").text
        assert "floor/m1" in page and "trade_fill" in page
        report = client.post("/inspect/rules", data={"rules": RULES}).text
        assert "would stop matching" in report
        broken = client.post("/inspect/rules", data={"rules": "[[rule]]\nname = 1"})
        assert broken.status_code == 200 and 'class="error"' in broken.text
        assert "trade_fill" in client.get("/inspect/rules").text


def test_browsing_writes_nothing_and_logs_no_content(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "channel-memory.db"
    with LiveServer(inspector_settings(db), FakeClock()) as server:
        build_desk(server)
        server.drain()
        files = [db, db.with_name(db.name + "-wal")]
        before = [f.read_bytes() if f.exists() else b"" for f in files]
        caplog.set_level(logging.DEBUG)
        with signed_in(server, ADMIN) as client:
            message = client.get("/inspect/channels/floor/messages/m2").text
            block_ids = set(re.findall(r"/inspect/blocks/([a-z0-9]+)", message))
            paths = [
                "/inspect/",
                "/inspect/channels/floor?max_chars=800&as_of=2026-05-21T15:10",
                "/inspect/channels/floor/bytes",
                "/inspect/channels/floor/messages/x1",
                "/inspect/channels/floor/messages/gone",
                "/inspect/channels/desk",
                "/inspect/rules",
                *(f"/inspect/blocks/{b}" for b in block_ids),
            ]
            for path in paths:
                assert client.get(path).status_code == 200, path
            assert client.post("/inspect/rules", data={"rules": RULES}).status_code == 200
            client.post("/inspect/sign-out")
        after = [f.read_bytes() if f.exists() else b"" for f in files]
        assert query(db, "SELECT count(*) FROM dirty_messages") == [(0,)]
    assert before == after
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert CANARY not in logged and "Stop moved" not in logged
