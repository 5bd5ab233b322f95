"""Block texts, rendered from their covered versions by the pure ``worker/render.py``."""

from __future__ import annotations

import pytest

from channel_memory.kernel.models import SourceVersion
from channel_memory.worker.render import BlockPlan, RenderSettings, counted, render
from channel_memory.worker.rules import default_rules
from tests.conftest import source_version

SETTINGS = RenderSettings(default_rules(), 600, "test")


def _version(
    message_id: str, content: str, author: str = "analyst", minute: int = 0
) -> SourceVersion:
    at = 1_779_379_200_000_000 + minute * 60_000_000
    return source_version(message_id, content, author=author, at_us=at, id=int(message_id))


def _text(kind: str, versions: list[SourceVersion]) -> str:
    plan = BlockPlan(kind, "g", tuple((v.key.message_id, v.content_hash) for v in versions))
    by_id = {v.key.message_id: v for v in versions}
    return render(plan, "b", "discord", "floor", by_id, SETTINGS, 0).text


@pytest.mark.parametrize(
    ("kind", "contents", "expected"),
    [
        ("low_value_ack", ["ok"], "1 short acknowledgement from 1 author 16:00 collapsed"),
        ("telemetry_count", ["heartbeat ok"], "1 runtime/status message 16:00 collapsed"),
        ("decision_repeat", ["no change"], "analyst repeated a no-change conclusion once 16:00"),
        ("sequence_rollup", ["watching the tape"], "sequence of 1 message 16:00 by analyst (1)"),
    ],
)
def test_counts_of_one_are_singular(kind: str, contents: list[str], expected: str) -> None:
    assert _text(kind, [_version("1", c) for c in contents]).startswith(expected)


def test_counts_of_several_are_plural() -> None:
    acks = [_version("1", "ok"), _version("2", "thx", author="trader", minute=5)]
    assert _text("low_value_ack", acks) == (
        "2 short acknowledgements from 2 authors 16:00-16:05 collapsed"
    )
    assert counted(0, "message") == "0 messages"
