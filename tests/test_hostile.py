"""Hostile input: schemathesis against ``/openapi.json`` for every endpoint, and
hypothesis-generated malformed bodies. Never a 5xx, never a partial write, never
content echoed in an error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from channel_memory.http.app import endpoints
from channel_memory.http.openapi import openapi_document
from tests.conftest import LiveServer, message_event, query

EXAMPLES = 30
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)


def written(db: Path) -> tuple[Any, ...]:
    """Everything a request could have written."""
    keys = {"source_messages": "id", "coverage_gaps": "id", "forget_ledger": "id"}
    keys["dirty_messages"] = "seq"
    return tuple(
        query(db, f"SELECT count(*), coalesce(max({key}), 0) FROM {table}")[0]
        for table, key in keys.items()
    )


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):  # values only: an answer may name a field
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def assert_not_echoed(sent: Any, answer: str) -> None:
    for text in strings(sent):
        if len(text) >= 12 and text.strip():  # short strings occur in any body by chance
            assert text not in answer, "an error echoed request content"


@pytest.fixture
def fuzzed(make_server: Any) -> LiveServer:
    server: LiveServer = make_server(worker={"enabled": False})  # no background writes
    with server.client() as client:
        client.post("/v1/ingest", json={"events": [message_event("1", "FILLED 200 NVDA")]})
    server.drain()
    return server


# The document /openapi.json serves (a test in test_openapi.py checks they are equal);
# loaded here because schemathesis' lazy fixture loading does not work with pytest 9.
schema = schemathesis.openapi.from_dict(openapi_document(endpoints()))


# The generated requests exercise the HTTP layer's validation, which is the same on every
# backend; what PostgreSQL refuses that SQLite takes (NUL, oversized text) is fuzzed on
# both backends by the malformed bodies below. One backend keeps make test's time.
@pytest.mark.sqlite_only
@schema.parametrize()
@SETTINGS
def test_every_endpoint_survives_generated_requests(
    case: Any, fuzzed: LiveServer, db_path: Path
) -> None:
    before = written(db_path)
    response = case.call(base_url=fuzzed.url)
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert written(db_path) == before  # a refused request wrote nothing
        assert_not_echoed(case.body, response.text)
        assert_not_echoed(case.query, response.text)
        assert "error" in response.json()  # machine-readable: {"error": {"code", …}}


# --- malformed bodies -----------------------------------------------------------------------

CANARY = "zq-canary-7731-payload"
VALID = json.dumps({"events": [message_event("2", CANARY + " FILLED 100 AAPL")]})


def _deep(depth: int) -> bytes:
    return ('{"events":' + "[" * depth + "]" * depth + "}").encode()


bad_utf8 = st.binary(min_size=1, max_size=64).map(
    lambda junk: VALID.encode()[:40] + b"\xff\xfe" + junk + VALID.encode()[40:]
)
deep = st.integers(min_value=64, max_value=200_000).map(_deep)
huge_number = st.sampled_from(["1e999999", "-1e999999", "9" * 5000, "1" + "0" * 400, "NaN"]).map(
    lambda n: VALID.replace('"id": "2"', f'"id": {n}').encode()
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = ["id", "author_id", "author_name", "created_at", "content", "tags", "reply_to"]


@st.composite
def wrong_type(draw: st.DrawFn) -> bytes:
    event = json.loads(VALID)
    message = event["events"][0]["message"]
    field = draw(st.sampled_from(FIELDS))
    value = draw(json_values)
    message[field] = value
    if draw(st.booleans()):
        event["events"][0][draw(st.sampled_from(["type", "channel_id", "message"]))] = value
    return json.dumps(event, allow_nan=True).encode()


oversized = st.sampled_from(["id", "author_name", "channel_id", "content", "reply_to"]).map(
    lambda field: VALID.replace(f'"{field}": "', f'"{field}": "{"x" * 1_100_000}').encode()
)
duplicate_keys = st.sampled_from(
    [
        VALID.replace('"content": ', '"content": "first", "content": '),
        VALID.replace('{"events": ', '{"events": [], "events": '),
        VALID.replace('"id": "2"', '"id": "2", "id": "3"'),
    ]
).map(str.encode)
null_bytes = st.sampled_from(
    [
        VALID.replace('"id": "2"', '"id": "2\\u0000x"'),
        VALID.replace('"channel_id": "floor"', '"channel_id": "fl\\u0000or"'),
        VALID.replace(CANARY, CANARY + "\\u0000"),
        VALID[:30] + "\x00" + VALID[30:],
    ]
).map(str.encode)
MALFORMED = bad_utf8 | deep | huge_number | wrong_type() | oversized | duplicate_keys | null_bytes
ENDPOINTS = ["/v1/ingest", "/ingest", "/forget", "/coverage-gaps", "/digest", "/search",
             "/source-messages", "/v1/tools/search_channel_context",
             "/v1/tools/get_channel_messages"]  # fmt: skip


@given(body=MALFORMED, path=st.sampled_from(ENDPOINTS))
@settings(
    max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
def test_malformed_bodies_never_5xx_never_write_never_echo(
    fuzzed: LiveServer, db_path: Path, body: bytes, path: str
) -> None:
    before = written(db_path)
    with fuzzed.client() as client:
        response = client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code < 500, (path, response.text[:300])
    assert CANARY not in response.text or response.status_code < 400
    if response.status_code >= 400:
        assert written(db_path) == before
        error = response.json()["error"]
        assert error["code"] and error["message"]


def test_the_fuzzed_schema_is_what_the_server_serves(fuzzed: LiveServer) -> None:
    with fuzzed.client() as client:
        served = client.get("/openapi.json").json()
    assert served == json.loads(json.dumps(openapi_document(endpoints())))
    assert len(list(schema.get_all_operations())) == sum(len(p) for p in served["paths"].values())


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/ingest", {"events": [{"type": CANARY, "channel_id": "floor"}]}),
        ("/v1/ingest", {"events": [message_event("1", "hi") | {"source_kind": CANARY}]}),
        ("/v1/ingest", {"events": [message_event("1", "hi", created_at=CANARY)]}),
        ("/v1/ingest", {"events": [{**message_event("1", "hi"), "channel_id": CANARY + " x"}]}),
        ("/v1/tools/search_channel_context", {"channels": ["floor"], "query": 7, "sort": CANARY}),
        ("/v1/tools/get_channel_messages", {"channels": ["floor"], "after": [CANARY]}),
        ("/ingest", {"channel_id": "floor", "message": {"id": "1", "created_at": CANARY}}),
    ],
)
def test_a_refused_value_is_never_repeated_in_the_error(
    fuzzed: LiveServer, path: str, body: dict[str, Any]
) -> None:
    with fuzzed.client() as client:
        response = client.post(path, json=body)
    assert 400 <= response.status_code < 500, response.text[:300]
    assert CANARY not in response.text
