"""Compact JSON: the one encoding whose length the feed and the tools budget against."""

from __future__ import annotations

import json
from typing import Any


def compact(data: Any) -> str:
    """``data`` as JSON without spaces and with non-ASCII kept as is.

    The string is what a response carries, so its ``len`` is the size a
    character budget counts.
    """
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
