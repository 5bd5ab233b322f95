"""The documentation — the README and the pages in ``docs/`` — documents every
configuration key, CLI command and option, and HTTP endpoint, and nothing that does not
exist (in the manner of sqlite-utils' ``test_docs.py``); the checks are shown failing on
an undocumented addition. Its shell examples, pasted as they stand into bash on today's
date in the index's reading order, work against a real server. Its links resolve, and no
file in the repository refers to a document outside it."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, create_model

from channel_memory.cli import parser
from channel_memory.http.app import endpoints, wall_clock
from channel_memory.kernel.config import IngestSettings, Settings, TokenSettings
from tests.conftest import LiveServer

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"


def reading_order() -> list[Path]:
    """The README, the index, then the pages in the order the index lists them."""
    index = (DOCS / "README.md").read_text()
    listed = re.findall(r"^\d+\. \[[^]]+\]\(([\w-]+\.md)\)", index, re.M)
    return [ROOT / "README.md", DOCS / "README.md", *(DOCS / name for name in listed)]


PAGES = {page: page.read_text() for page in reading_order()}
REFERENCE = "\n".join(text for page, text in PAGES.items() if page.parent == DOCS)
"""The pages of ``docs/``: where every key, command and endpoint must be documented."""
EVERYTHING = "\n".join(PAGES.values())
"""Every page, the README included: none may document what does not exist."""
Mismatch = tuple[list[str], list[str]]
"""``(undocumented, documented but missing)``."""


def section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def _diff(actual: set[str], documented: set[str]) -> Mismatch:
    return sorted(actual - documented), sorted(documented - actual)


# --- configuration ------------------------------------------------------------------------------


def config_keys(model: type[BaseModel] = Settings, prefix: str = "") -> dict[str, str]:
    """Every scalar configuration key with its environment variable."""
    keys: dict[str, str] = {}
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys.update(config_keys(annotation, f"{prefix}{name}."))
        elif name != "tokens":  # a list of tables, documented by its example
            env = "CHANNEL_MEMORY_" + (prefix.replace(".", "__") + name).upper()
            keys[prefix + name] = env
    return keys


def check_config(readme: str, model: type[BaseModel] = Settings) -> Mismatch:
    rows = re.findall(r"^\| `([a-z_.]+)` \| `(CHANNEL_MEMORY_[A-Z_]+)` \|", readme, re.M)
    actual = {f"{key} {env}" for key, env in config_keys(model).items()}
    return _diff(actual, {f"{key} {env}" for key, env in rows})


def check_token_keys(readme: str) -> Mismatch:
    examples = re.findall(r"```toml\n(.*?)```", readme, re.S)
    documented = {
        key
        for example in examples
        if "[[tokens]]" in example
        for key in re.findall(r"^([a-z_]+) *=", example.split("[[tokens]]", 1)[1], re.M)
    }
    # keys of other tables after the tokens in an example are not token keys
    documented &= set(TokenSettings.model_fields) | {"db"}
    return _diff(set(TokenSettings.model_fields), documented - {"db"})


# --- command line ---------------------------------------------------------------------------


def cli_surface(root: argparse.ArgumentParser) -> set[str]:
    """Every command (``"rules test"``) and ``"<command> <option or POSITIONAL>"``."""
    found: set[str] = set()

    def walk(p: argparse.ArgumentParser, words: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    command = f"{words} {name}".strip()
                    if not any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                        found.add(command)
                    walk(sub, command)
            elif isinstance(action, argparse._HelpAction):
                continue
            elif action.option_strings:
                found.add(f"{words} {max(action.option_strings, key=len)}".strip())
            elif words:
                found.add(f"{words} POSITIONAL")

    walk(root, "")
    return found


def check_cli(readme: str, root: argparse.ArgumentParser) -> Mismatch:
    blocks = re.findall(r"```\n(channel-memory .*?)```", readme, re.S)
    assert blocks
    documented: set[str] = set()
    for line in "".join(blocks).splitlines():
        tokens = line.split()[1:]
        words = []
        while tokens and re.fullmatch(r"[a-z]+", tokens[0]):
            words.append(tokens.pop(0))
        command = " ".join(words)
        if command:
            documented.add(command)
        rest = " ".join(tokens)
        documented |= {f"{command} {o}".strip() for o in re.findall(r"--[a-z][a-z-]*", rest)}
        if [t for t in re.sub(r"\[--[^]]*\]", "", rest).split() if not t.startswith("--")]:
            documented.add(f"{command} POSITIONAL")
    return _diff(cli_surface(root), documented)


# --- endpoints ------------------------------------------------------------------------------


def served_endpoints(extra: list[tuple[str, str]] | None = None) -> set[str]:
    served = {f"{e.method} {e.path}" for e in endpoints()} | {"GET /openapi.json"}
    return served | {f"{m} {p}" for m, p in extra or []}


def check_endpoints(readme: str, served: set[str]) -> Mismatch:
    documented = set(re.findall(r"`((?:GET|POST|PUT|PATCH|DELETE) /[\w{}/.\-]*)`", readme))
    table = section(readme, "HTTP endpoints")
    in_table = set(re.findall(r"^\| `((?:GET|POST) /[\w{}/.\-]*)`", table, re.M))
    undocumented, missing = _diff(served, documented)
    return undocumented + [f"{e} (not in the endpoint table)" for e in served - in_table], missing


# --- the tests ------------------------------------------------------------------------------


def test_every_configuration_key_is_documented_with_its_environment_variable() -> None:
    assert check_config(REFERENCE) == ([], [])
    assert check_token_keys(REFERENCE) == ([], [])
    assert check_config(EVERYTHING)[1] == []


def test_every_command_and_option_is_documented() -> None:
    assert check_cli(REFERENCE, parser()) == ([], [])
    assert check_cli(EVERYTHING, parser())[1] == []


def test_every_endpoint_is_documented_and_every_documented_one_is_served() -> None:
    assert check_endpoints(REFERENCE, served_endpoints()) == ([], [])
    assert check_endpoints(EVERYTHING, served_endpoints())[1] == []


def test_the_index_lists_every_page() -> None:
    listed = {page.name for page in reading_order()[2:]}
    assert listed == {page.name for page in DOCS.glob("*.md")} - {"README.md"}


def test_the_checks_fail_on_an_undocumented_addition() -> None:
    ingest = create_model("IngestPlus", __base__=IngestSettings, max_batches=(int, 3))
    extended: Any = create_model("SettingsPlus", __base__=Settings, ingest=(ingest, ingest()))
    assert check_config(REFERENCE, extended) == (
        ["ingest.max_batches CHANNEL_MEMORY_INGEST__MAX_BATCHES"],
        [],
    )

    root = parser()
    commands = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    commands.choices["serve"].add_argument("--threads", type=int)
    commands.add_parser("vacuum")
    assert check_cli(REFERENCE, root)[0] == ["serve --threads", "vacuum"]
    commands.choices["vacuum"].add_argument("--into")
    assert check_cli(REFERENCE, root)[0] == ["serve --threads", "vacuum", "vacuum --into"]

    served = served_endpoints([("POST", "/v1/compact")])
    undocumented, _ = check_endpoints(REFERENCE, served)
    assert undocumented == ["POST /v1/compact", "POST /v1/compact (not in the endpoint table)"]


@pytest.mark.parametrize(
    ("remove", "check"),
    [
        ("| `feed.max_chars` |", lambda r: check_config(r)[0]),
        ("channel-memory worker ", lambda r: check_cli(r, parser())[0]),
        ("| `GET /v1/stats` |", lambda r: check_endpoints(r, served_endpoints())[0]),
    ],
)
def test_the_checks_fail_when_documentation_is_removed(remove: str, check: Any) -> None:
    readme = "\n".join(line for line in REFERENCE.split("\n") if not line.startswith(remove))
    assert readme != REFERENCE
    assert check(readme)


def test_the_checks_fail_on_documentation_of_what_does_not_exist() -> None:
    readme = REFERENCE.replace(
        "| `retention.days` |", "| `retention.hours` | `CHANNEL_MEMORY_RETENTION__HOURS` | 1 |\n"
        "| `retention.days` |"
    )  # fmt: skip
    assert check_config(readme)[1] == ["retention.hours CHANNEL_MEMORY_RETENTION__HOURS"]
    readme = REFERENCE.replace(
        "channel-memory --version", "channel-memory --version\nchannel-memory gc [--now]"
    )
    assert check_cli(readme, parser())[1] == ["gc", "gc --now"]
    readme = REFERENCE + "\n`DELETE /v1/blocks/{block_id}`\n"
    assert check_endpoints(readme, served_endpoints())[1] == ["DELETE /v1/blocks/{block_id}"]


# --- the examples, pasted into a shell against a real server on today's clock ------------------


def shell_examples(readme: str) -> list[str]:
    """A page's ``sh`` blocks that call the HTTP API or the command line, in order."""
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    return [b for b in blocks if re.search(r"^(\w+=\$\()?(curl|channel-memory) ", b, re.M)]


def json_documents(text: str) -> list[Any]:
    """The JSON answers ``curl -s`` printed one after another, without separators."""
    decoder = json.JSONDecoder()
    documents, at = [], 0
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        document, at = decoder.raw_decode(text, at)
        documents.append(document)
    return documents


def feed_header(feed: str) -> dict[str, str]:
    first = feed.split("\n", 1)[0]
    assert first.startswith("[channel-awareness] "), feed
    return dict(part.split("=", 1) for part in first.split(" ")[1:])


@pytest.fixture
def server_today(make_settings: Callable[..., Settings]) -> Iterator[LiveServer]:
    """A server on the wall clock: the examples must work on the day they are pasted."""
    with LiveServer(make_settings(), wall_clock) as server:  # type: ignore[arg-type]
        yield server


def paste(example: str, server: LiveServer, folder: Path) -> str:
    """Run an example as a user pastes it into bash; any curl failing on 4xx/5xx fails it."""
    prelude = 'set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n'
    script = prelude + example.replace("http://127.0.0.1:8765", server.url).replace(
        "./channel-memory.db", str(server.settings.db)
    )
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    for name in ("CHANNEL_MEMORY_TOKEN", "CHANNEL_MEMORY_CONFIG", "CHANNEL_MEMORY_DB"):
        environment.pop(name, None)
    result = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=60, check=False,
        cwd=folder, env=environment,
    )  # fmt: skip
    assert result.returncode == 0, (example, result.stdout, result.stderr)
    server.drain()
    return result.stdout


def test_the_examples_work_when_pasted_today(server_today: LiveServer, tmp_path: Path) -> None:
    server = server_today
    examples = [example for text in PAGES.values() for example in shell_examples(text)]
    assert len(examples) >= 8
    for example in examples:
        # a fixed date goes stale: the feed shows 24 h, retention keeps 30 days
        assert not re.search(r"\d{4}-\d{2}-\d{2}T\d", example), example
    [rules] = [b for b in re.findall(r"```toml\n(.*?)```", EVERYTHING, re.S) if "[[rule]]" in b]
    (tmp_path / "ops-rules.toml").write_text(rules)

    out = {example: paste(example, server, tmp_path) for example in examples}

    def output(marker: str) -> str:
        [found] = [text for example, text in out.items() if marker in example]
        return found

    [native] = json_documents(output("/v1/ingest"))
    message = native["results"][0]
    assert message["source_handle"] == "floor/1301"
    assert message["inserted"] is True and not message.get("expired"), native
    ingested, digest, forgotten = json_documents(output("/digest"))
    assert ingested["inserted"] is True and not ingested.get("expired"), ingested
    assert digest["status"] != "unavailable" and digest["blocks"], digest
    assert forgotten["forgotten"] >= 1, forgotten

    feed = output("max_chars=8192")
    header = feed_header(feed)
    assert int(header["available"]) > 0 and header["digest"] != "unavailable", header
    # a sample feed in the pages shows the header keys a feed has today, in their order
    samples = re.findall(r"^\[channel-awareness\] .*$", EVERYTHING, re.M)
    assert samples
    for sample in samples:
        assert list(feed_header(sample)) == list(header), sample
    assert "> FILLED 200 NVDA @ 131.20" in feed
    assert output("If-None-Match").strip() == "304"
    stats = json_documents(output("/v1/stats"))[-1]
    [floor] = [c for c in stats["channels"] if c["channel_id"] == "floor"]
    assert floor["messages"] > 0, stats

    search, fetched = json_documents(output("search_channel_context"))
    assert search["status"] == "ok", search
    assert "floor/1301" in [hit["source_handle"] for hit in search["hits"]], search
    assert [m["content"] for m in fetched["messages"]] == ["FILLED 200 NVDA @ 131.20"]

    imported = json.loads(output("channel-memory ingest").strip().splitlines()[-1])
    assert imported["inserted"] == 1, imported
    assert output("rules test").strip()

    # the next retention pass keeps what the examples stored, and the feed still serves it
    assert server.run(server.app.state.worker.apply_retention()) == 0
    assert "> FILLED 200 NVDA @ 131.20" in paste(
        next(e for e in examples if "max_chars=8192" in e), server, tmp_path
    )


# --- links between the pages, and no reference to a document outside the repository ----------


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    prose = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {slug(heading) for heading in re.findall(r"^#+ (.*)$", prose, re.M)}


def broken_links(pages: dict[Path, str]) -> list[str]:
    """Every relative link of the pages whose file, or heading anchor, does not exist."""
    broken = []
    for page, text in pages.items():
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists() or (anchor and anchor not in anchors(linked)):
                broken.append(f"{page.name}: {target}")
    return broken


def test_every_link_between_the_pages_resolves(tmp_path: Path) -> None:
    assert broken_links(PAGES) == []
    page = tmp_path / "page.md"
    page.write_text("# A heading\n[ok](#a-heading) [gone](missing.md) [no anchor](#elsewhere)\n")
    assert broken_links({page: page.read_text()}) == ["page.md: missing.md", "page.md: #elsewhere"]


OUTSIDE = re.compile(
    # spelled so this file does not match itself
    r"\.\./shared\b|\bDESI[G]N\b|(?i:\bdesi[g]n\.md\b|\bdesi[g]n section\b)"
    r"|/wor[k]/|/hom[e]/\w|/User[s]/\w"
)
"""A reference to a document outside the repository: a sibling folder, a design document
the repository does not hold, or an absolute path on some machine."""
NOT_THE_PROJECT = {
    ".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    ".hypothesis", ".bench-cache", "dist", "build",
}  # fmt: skip


def outside_references(root: Path) -> list[str]:
    """``path:line`` of every line of a text file under ``root`` that refers to a document
    outside it (caches, environments and databases are not the project's files)."""
    found = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or NOT_THE_PROJECT & set(relative.parts[:-1]):
            continue
        if re.search(r"\.db(-wal|-shm)?$", path.name):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # a screenshot or another binary file
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{relative}:{number}")
    return found


def test_no_file_refers_to_a_document_outside_the_repository(tmp_path: Path) -> None:
    assert outside_references(ROOT) == []
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(
        '"""As the design says."""\n"""See ' + "DESI" + 'GN section 4."""\n'
    )
    (tmp_path / "notes.md").write_text("From ../" + "shared/notes.\nBuilt in /" + "work/x.\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "site.py").write_text("/" + "work/main\n")
    assert outside_references(tmp_path) == ["notes.md:1", "notes.md:2", "pkg/mod.py:2"]
