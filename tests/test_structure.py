"""The package's shape: the root holds the entry points; group keys have one home."""

from __future__ import annotations

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
