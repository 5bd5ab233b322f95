"""A PostgreSQL server that goes away under a running server: every request that needs
the database answers 503 ``storage_unavailable`` with ``Retry-After`` (not a 500), nothing
is written, and the liveness probe stays up."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

from channel_memory.store import StorageUnavailable, Store
from tests.conftest import LiveServer, message_event
from tests.pgcluster import PgCluster

TOKEN = "admin-token-0123456789ab"


@pytest.fixture
def cluster(pg_cluster: PgCluster) -> Iterator[PgCluster]:
    """A server of the test's own, which it stops (the session's server stays up)."""
    own = PgCluster(pg_cluster.bindir).start()
    yield own
    own.stop()


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # its own server, once
def test_a_server_whose_database_went_away_answers_503_and_says_why(
    backend: str,
    cluster: PgCluster,
    make_server: Callable[..., LiveServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = cluster.create_database()
    server = make_server(db=url, tokens=[{"token": TOKEN, "scopes": ["admin"], "agent_id": "ops"}])
    with server.client(TOKEN) as client:
        batch = {"events": [message_event("m1", "bought 5k AAPL 189.40")]}
        assert client.post("/v1/ingest", json=batch).status_code == 200
        assert client.get("/ready").status_code == 200
    cluster.stop()
    with server.client(TOKEN) as client:
        answers = {
            "ready": client.get("/ready"),
            "feed": client.get("/channel-awareness", params={"channels": "floor"}),
            "search": client.post(
                "/v1/tools/search_channel_context",
                json={"channels": ["floor"], "query": "AAPL"},
            ),
            "ingest": client.post(
                "/v1/ingest", json={"events": [message_event("m2", "sold 5k AAPL")]}
            ),
        }
        for name, answer in answers.items():
            assert answer.status_code == 503, (name, answer.status_code, answer.text)
            assert answer.json()["error"]["code"] == "storage_unavailable", name
            assert answer.headers["Retry-After"] == "1", name
        assert client.get("/health").status_code == 200
    assert "storage error storage_unavailable" in caplog.text


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_the_mcp_tools_answer_storage_unavailable_too(
    backend: str, cluster: PgCluster
) -> None:
    url = cluster.create_database()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHANNEL_MEMORY_")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "channel_memory", "mcp", "--db", url], env=env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        cluster.stop()
        for tool, arguments in (
            ("search_channel_context", {"channels": ["floor"], "query": "AAPL"}),
            ("channel_awareness", {"channels": ["floor"]}),
        ):
            result = await session.call_tool(tool, arguments)
            assert result.is_error, tool
            [content] = result.content
            assert isinstance(content, TextContent)
            assert json.loads(content.text)["error"]["code"] == "storage_unavailable", tool


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_erasing_forgotten_text_on_a_lost_server_is_an_outage(
    backend: str, cluster: PgCluster
) -> None:
    # a forget's VACUUM that loses the server answers 503 storage_unavailable, not a 500
    store = await Store.open(cluster.create_database())
    cluster.stop()
    with pytest.raises(StorageUnavailable):
        await store.erase_pending()
    with pytest.raises(StorageUnavailable):
        await store.close()  # it erases what is pending first, then closes its pools
