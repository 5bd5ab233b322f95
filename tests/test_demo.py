"""`channel-memory demo`: the whole path on the synthetic desk, as a newcomer runs it."""

from __future__ import annotations

import asyncio
import io
import re
import subprocess
import sys

import pytest

from channel_memory.demo.run import run_demo
from tests.fake_provider import FakeProvider


def test_the_demo_reports_what_it_measured_in_this_run() -> None:
    out = io.StringIO()
    assert asyncio.run(run_demo(out, feed_chars=3000)) == 0
    report = out.getvalue()
    steps = re.findall(r"^\[(\d)/7\] ", report, re.MULTILINE)
    assert steps == [str(n) for n in range(1, 8)]  # progress, in order
    found = re.search(r"raw 24h window: ([\d,]+) characters", report)
    assert found is not None
    raw = int(found[1].replace(",", ""))
    for budget in (8192, 12000):
        pattern = (
            rf"max_chars +{budget}: +([\d,]+) characters \(([\d.]+)x smaller\)"
            r"; hard events with every decision line verbatim (\d+)/(\d+)"
        )
        line = re.search(pattern, report)
        assert line is not None
        served = int(line[1].replace(",", ""))
        assert served <= budget and float(line[2]) == round(raw / served, 1)
        assert line[3] == line[4]  # every hard event kept verbatim at these budgets
    assert re.search(r"blocks by kind: .*hard_event \d+", report)
    assert re.search(r"GET /v1/blocks/[a-z2-7]+", report)
    assert re.search(r"^ +desk/m\d{4} @ sha256:", report, re.MULTILINE)  # exact sources
    assert "the feed shows the new text" in report
    assert "the feed shows a tombstone, never the content" in report
    assert re.search(r"served before: yes; in the feed now: no; retrievable: no; "
                     r"copies of its text in the database files: 0", report)  # fmt: skip
    feed = report.split("as the proxy receives it:", 1)[1].split("\n", 2)[2]
    assert feed.startswith("[channel-awareness] kind=raw_window+digest ")
    assert len(feed) <= 3000


def test_the_demo_runs_from_the_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "channel_memory.cli", "demo", "--feed-chars", "600"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "[7/7] the text feed at max_chars 600" in result.stdout


def test_the_demo_runs_an_llm_pass_with_a_configured_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeProvider() as provider:
        monkeypatch.setenv("CHANNEL_MEMORY_LLM__API_BASE", provider.api_base)
        monkeypatch.setenv("CHANNEL_MEMORY_LLM__API_KEY", "sk-local")
        out = io.StringIO()
        assert asyncio.run(run_demo(out, llm_model="openai/fake-summariser")) == 0
    report = out.getvalue()
    found = re.search(r"LLM pass with openai/fake-summariser: (\d+) calls, (\d+) rollups", report)
    assert found is not None and int(found[1]) == len(provider.requests) > 0
    assert int(found[2]) == int(found[1])
    assert "deterministic_only=false" in report
