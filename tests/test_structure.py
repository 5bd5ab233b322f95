"""The package's shape: the root holds the entry points; the layers import downwards
only; group keys have one home."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "channel_memory"
GROUP_KEY_LITERALS = {"m:", "l:", "l;", "d:", "t:", "a:", "r:", "p:", "q:"}


def test_the_package_root_holds_only_the_entry_points() -> None:
    modules = {p.name for p in PACKAGE.glob("*.py")}
    assert modules <= {"__init__.py", "__main__.py", "cli.py"}, modules
    for folder in (p for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"):
        if any(folder.glob("*.py")):
            assert (folder / "__init__.py").exists(), folder.name


FACES = ("http", "inspector", "demo", "cli", "__main__")
"""The package's faces: they assemble the stages and serve them; nothing below imports them."""
BELOW_THE_FACES = ("kernel", "store", "ingest", "worker", "feed", "tools")
LOWER_LAYERS = {"kernel": {"kernel"}, "store": {"kernel", "store"}}
"""What the bottom layers may import of the package (the kernel imports only itself)."""


def _package_imports(source: str) -> list[tuple[int, str]]:
    """Every module of the package ``source`` imports, anywhere in it (inside functions
    and ``TYPE_CHECKING`` blocks too), with its line: ``from channel_memory import x``
    imports ``channel_memory.x``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, "the package imports absolutely"
            if node.module == "channel_memory":
                found += [(node.lineno, f"channel_memory.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name.split(".")[0] == "channel_memory"]


def _part(module: str) -> str:
    """The subpackage (or root module) a package module belongs to."""
    return module.split(".")[1] if "." in module else ""


def _offending_imports(folders: tuple[str, ...], allowed: dict[str, set[str]]) -> list[str]:
    """``path:line imports module`` for each import in ``folders`` outside what the
    folder may import (``allowed``; a folder without an entry may import anything but a
    face)."""
    offenders = []
    for folder in folders:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            for line, module in _package_imports(path.read_text(encoding="utf-8")):
                part = _part(module)
                if part in FACES or (folder in allowed and part not in allowed[folder]):
                    offenders.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
    return offenders


def test_the_detector_sees_every_spelling_of_an_import() -> None:
    source = (
        "from channel_memory.http.api import AppContext\n"
        "import channel_memory.inspector.routes\n"
        "from channel_memory import cli, __version__\n"
        "def later() -> None:\n"
        "    from channel_memory.demo import run\n"
        "from channel_memory.kernel.models import RecallBlock\n"
        "import json\n"
    )
    faces = [(line, m) for line, m in _package_imports(source) if _part(m) in FACES]
    assert faces == [
        (1, "channel_memory.http.api"),
        (2, "channel_memory.inspector.routes"),
        (3, "channel_memory.cli"),
        (5, "channel_memory.demo"),
    ]


def test_the_stages_import_only_the_store_the_kernel_and_themselves() -> None:
    # the HTTP endpoints of a stage live in http/, which passes the stage what it needs
    # (the stage declares it as a Protocol); the stages never reach up into a face
    assert _offending_imports(BELOW_THE_FACES, LOWER_LAYERS) == []
    for folder in BELOW_THE_FACES:  # the walk reads something in every folder
        assert list((PACKAGE / folder).rglob("*.py")), folder


def _string_literals(path: Path) -> set[str]:
    found = set()
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for token in tokens:
        if token.type == tokenize.STRING and token.string[-1] in "'\"":
            body = token.string.lstrip("rbuRBU").strip("'\"")
            found.add(body)
    return found


def test_group_key_prefixes_are_written_only_where_they_are_defined() -> None:
    defining = PACKAGE / "kernel" / "groups.py"
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(_string_literals(path) & GROUP_KEY_LITERALS)
        for path in PACKAGE.rglob("*.py")
        if path != defining and _string_literals(path) & GROUP_KEY_LITERALS
    }
    assert offenders == {}
    assert GROUP_KEY_LITERALS - {"l;"} <= _string_literals(defining)


BLOCK_KIND_LITERALS = {
    "hard_event", "raw_excerpt", "tombstone", "telemetry_count", "low_value_ack",
    "decision_repeat", "sequence_rollup", "topic_rollup", "message_summary",
}  # fmt: skip
# where a kind's name is written out: its definition, the message classes that share two
# of the names, and one Literal type (a type cannot name a constant)
KIND_HOMES = {"kernel/models.py", "kernel/groups.py", "worker/llm_rollups.py"}


def test_block_kinds_are_written_out_only_where_they_are_defined() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(_string_literals(path) & BLOCK_KIND_LITERALS)
        for path in PACKAGE.rglob("*.py")
        if str(path.relative_to(PACKAGE)) not in KIND_HOMES
        and _string_literals(path) & BLOCK_KIND_LITERALS
    }
    assert offenders == {}
    assert _string_literals(PACKAGE / "kernel" / "models.py") >= BLOCK_KIND_LITERALS
