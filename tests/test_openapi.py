"""/openapi.json describes every endpoint from the models that validate requests."""

from __future__ import annotations

import re

import httpx

from channel_memory.http.app import endpoints
from channel_memory.ingest.events import IngestBatch


def test_every_endpoint_is_described(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    described = {
        (method.upper(), path) for path, ops in document["paths"].items() for method in ops
    }
    assert described == {(e.method, e.path) for e in endpoints()}
    ingest = document["paths"]["/v1/ingest"]["post"]
    assert set(ingest["responses"]) >= {"200", "400", "401", "413", "422", "503"}
    assert ingest["x-scope"] == "ingest"
    assert "security" not in document["paths"]["/health"]["get"]


def test_request_schemas_are_the_validating_models(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    ref = document["paths"]["/v1/ingest"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]["$ref"]
    assert ref == "#/components/schemas/IngestBatch"
    assert schemas["IngestBatch"]["additionalProperties"] is False
    message = schemas["NativeMessage"]
    assert set(message["required"]) == {"id", "created_at", "content"}
    assert message["properties"]["created_at"]["format"] == "date-time"
    assert message["properties"]["id"]["pattern"] == "^[A-Za-z0-9._:-]{1,128}$"
    assert set(schemas) >= {"MessageEvent", "DeleteEvent", "ForgetEvent", "ErrorBody"}
    assert IngestBatch.model_json_schema()["additionalProperties"] is False


def test_the_feed_documents_its_query_parameters(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    feed = document["paths"]["/channel-awareness"]["get"]
    names = [p["name"] for p in feed["parameters"]]
    assert names == [
        "channels", "context_kind", "since", "limit", "max_chars", "format", "detail", "as_of",
        "trigger", "unconsumed",
    ]  # fmt: skip
    assert feed["parameters"][0]["required"] is True
    detail = next(p for p in feed["parameters"] if p["name"] == "detail")
    assert detail["schema"]["enum"] == ["full", "lean"] and detail["schema"]["default"] == "full"
    assert set(feed["responses"]) >= {"200", "304", "401", "404", "422"}
    assert set(feed["responses"]["200"]["content"]) == {"text/plain", "application/json"}


def test_path_parameters_are_declared(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    for path, operations in document["paths"].items():
        names = set(re.findall(r"{(\w+)}", path))
        for operation in operations.values():
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert declared == names, path


def test_the_feed_parameters_come_from_their_one_model(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    parameters = {
        p["name"]: p for p in document["paths"]["/channel-awareness"]["get"]["parameters"]
    }
    channels = parameters["channels"]
    assert channels["schema"]["type"] == "array" and channels["explode"] is False
    assert parameters["since"]["schema"]["default"] == "24h"
    assert parameters["limit"]["schema"] == {"type": "integer", "minimum": 0, "maximum": 1000}
    assert parameters["unconsumed"]["schema"]["enum"] == ["all", "only"]
    assert parameters["as_of"]["schema"]["format"] == "date-time"


def test_peer_models_are_named_apart_from_the_native_ones(client: httpx.Client) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert {"PeerSearchRequest", "PeerSearchResponse", "PeerDigestRequest", "SearchRequest"} <= set(
        schemas
    )
    assert not [name for name in schemas if "__" in name]


def test_the_native_tools_responses_are_described(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]

    def response_of(path: str, method: str = "post") -> str:
        ok = document["paths"][path][method]["responses"]["200"]
        return str(ok["content"]["application/json"]["schema"]["$ref"]).rsplit("/", 1)[1]

    assert response_of("/v1/tools/search_channel_context") == "SearchOutput"
    assert response_of("/v1/tools/get_channel_messages") == "MessagesOutput"
    assert response_of("/v1/blocks/{block_id}", "get") == "BlockOutput"
    assert {"hits", "has_more", "next_cursor"} <= set(schemas["SearchOutput"]["properties"])
    assert {"messages", "read_content", "fragment"} <= set(schemas["MessagesOutput"]["properties"])
    assert "provenance" in schemas["BlockOutput"]["properties"]
