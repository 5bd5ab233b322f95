"""The final boundary of every MCP ``tools/call`` result, as pure functions.

The tools select within ``tools.result_budget_chars`` before they build a
result; this boundary is the fallback for anything that still exceeds it. It
takes a result in its wire shape and returns one that:

- keeps only the standard top-level fields (``content``, ``structuredContent``,
  ``isError``, ``_meta``);
- keeps ``content[].text`` within the budget in total (so each block too) and
  drops non-text blocks;
- bounds ``structuredContent``: list length, map key count, string length,
  nesting depth, and its compact JSON within the budget;
- says what it cut in ``_meta``: ``truncated``, ``budget_kind``,
  ``omitted_count`` and ``omitted_paths`` (field names and indexes only, never
  content).

Cutting keeps every value's JSON type (a list stays a list, a string a string,
a too-deep object becomes an empty object), so a cut result still matches the
tool's output schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from channel_memory.kernel.jsonfmt import compact

STANDARD_FIELDS = ("content", "structuredContent", "isError", "_meta")
TEXT_MARK = "\n[truncated: result budget]"
MAX_LIST_ITEMS = 500
MAX_KEYS = 100
MAX_DEPTH = 12
MAX_META_CHARS = 1_000
MAX_PATHS = 20
_KINDS = ("fields", "content_type", "chars", "list_length", "keys", "string_length", "depth")
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


@dataclass
class _Cuts:
    """What the boundary removed, for ``_meta``."""

    count: int = 0
    kinds: set[str] = field(default_factory=set)
    paths: list[str] = field(default_factory=list)

    def add(self, kind: str, path: str, count: int = 1) -> None:
        self.count += count
        self.kinds.add(kind)
        if len(self.paths) < MAX_PATHS and path not in self.paths:
            self.paths.append(path)


def _key(part: str) -> str:
    """A key fit for a path: a field name, or ``<key>`` (a key may be content)."""
    return part if _FIELD_NAME.match(part) else "<key>"


def _shape(value: Any, path: str, depth: int, budget: int, cuts: _Cuts) -> Any:
    """``value`` with list length, key count, string length and depth bounded."""
    if isinstance(value, str):
        if len(value) > budget:
            cuts.add("string_length", path)
            return value[:budget]
        return value
    if isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            cuts.add("depth", path)
            return []
        items = list(value)
        if len(items) > MAX_LIST_ITEMS:
            cuts.add("list_length", f"{path}[{MAX_LIST_ITEMS}:]", len(items) - MAX_LIST_ITEMS)
            items = items[:MAX_LIST_ITEMS]
        return [_shape(v, f"{path}[{i}]", depth + 1, budget, cuts) for i, v in enumerate(items)]
    if isinstance(value, Mapping):
        if depth >= MAX_DEPTH:
            cuts.add("depth", path)
            return {}
        pairs = list(value.items())
        if len(pairs) > MAX_KEYS:
            cuts.add("keys", path, len(pairs) - MAX_KEYS)
            pairs = pairs[:MAX_KEYS]
        return {
            str(k): _shape(v, f"{path}.{_key(str(k))}", depth + 1, budget, cuts) for k, v in pairs
        }
    return value


def _largest(value: Any, path: str) -> tuple[int, str, Any, Any] | None:
    """The cuttable node under ``value`` (a non-empty list or string) with the
    largest encoding: ``(size, path, parent, key)``."""
    best: tuple[int, str, Any, Any] | None = None
    children: list[tuple[Any, str, Any]] = []
    if isinstance(value, list):
        children = [(k, f"{path}[{k}]", v) for k, v in enumerate(value)]
    elif isinstance(value, dict):
        children = [(k, f"{path}.{_key(k)}" if path else _key(k), v) for k, v in value.items()]
    for key, child_path, child in children:
        if isinstance(child, list | str) and child:
            size = len(compact(child))
            if best is None or size > best[0]:
                best = (size, child_path, value, key)
        if isinstance(child, list | dict):
            inner = _largest(child, child_path)
            if inner is not None and (best is None or inner[0] > best[0]):
                best = inner
    return best


def _fit(data: Any, budget: int, cuts: _Cuts) -> Any:
    """``data`` (shaped already) cut until its compact JSON is within ``budget``;
    None when nothing is left to cut.

    Repeatedly shortens the largest list (from its end: lists are pages in the
    tool's order) or string; each step removes at least the excess or the whole
    node, so the loop ends.
    """
    holder = {"structuredContent": data}
    while (excess := len(compact(holder["structuredContent"])) - budget) > 0:
        found = _largest(holder, "")
        if found is None:
            return None
        _, path, parent, key = found
        node = parent[key]
        if isinstance(node, str):
            cuts.add("chars", path)
            parent[key] = node[: max(0, len(node) - excess)]
            continue
        removed = 0
        keep = len(node)
        while keep > 0 and removed < excess:
            keep -= 1
            removed += len(compact(node[keep])) + 1
        cuts.add("chars", f"{path}[{keep}:]", len(node) - keep)
        parent[key] = node[:keep]
    return holder["structuredContent"]


def _bound_text(content: list[Any], budget: int, cuts: _Cuts) -> list[dict[str, Any]]:
    """Text blocks whose texts total at most ``budget``; other blocks are dropped."""
    kept: list[dict[str, Any]] = []
    room = budget
    for index, block in enumerate(content):
        path = f"content[{index}]"
        if not isinstance(block, Mapping) or block.get("type") != "text":
            cuts.add("content_type", path)
            continue
        text = str(block.get("text", ""))
        if len(text) > room:
            cut = text[: max(0, room - len(TEXT_MARK))] + TEXT_MARK
            text = cut[:room]
            cuts.add("chars", f"{path}.text")
        room -= len(text)
        kept.append({"type": "text", "text": text})
    return kept


def bound_result(result: Mapping[str, Any], budget: int) -> dict[str, Any]:
    """``result`` (a ``tools/call`` result in wire shape) within ``budget``.

    A result already within every bound comes back unchanged, with no
    truncation metadata.
    """
    cuts = _Cuts()
    for name in result:
        if name not in STANDARD_FIELDS:
            cuts.add("fields", _key(str(name)))
    bounded: dict[str, Any] = {
        "content": _bound_text(list(result.get("content") or []), budget, cuts),
    }
    if result.get("isError"):
        bounded["isError"] = True
    if result.get("structuredContent") is not None:
        shaped = _shape(result["structuredContent"], "structuredContent", 0, budget, cuts)
        structured = _fit(shaped, budget, cuts)
        if structured is None:
            cuts.add("chars", "structuredContent")
        else:
            bounded["structuredContent"] = structured
    meta = result.get("_meta")
    if isinstance(meta, Mapping) and meta:
        if len(compact(meta)) <= MAX_META_CHARS:
            bounded["_meta"] = dict(meta)
        else:
            cuts.add("chars", "_meta")
    if cuts.count:
        bounded["_meta"] = {
            **bounded.get("_meta", {}),
            "truncated": True,
            "budget_kind": "+".join(k for k in _KINDS if k in cuts.kinds),
            "omitted_count": cuts.count,
            "omitted_paths": cuts.paths,
        }
    return bounded
