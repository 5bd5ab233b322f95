"""Message classes and the group keys of recall blocks: defined here once.

A derived message has a *class* (``derived_messages.class``); a recall block has a
*group key* (``recall_blocks.group_key``) naming what it stands for: one message's own
block, a collapse or rollup group of a class, a numbered run of a sequence, or a block
written by the model. The worker builds and reads keys only through these functions;
the store binds them as parameters (a prefix becomes a ``[low, high)`` range) and never
takes a key apart.
"""

from __future__ import annotations

from typing import Final, Literal

# --- message classes -----------------------------------------------------------------------

HARD_EVENT: Final = "hard_event"
TOMBSTONE: Final = "tombstone"
TELEMETRY: Final = "telemetry"
ACK: Final = "ack"
REPEAT: Final = "repeat"
TOPIC: Final = "topic"
SEQUENCE: Final = "sequence"
MessageClass = Literal["tombstone", "hard_event", "telemetry", "ack", "repeat", "topic", "sequence"]
"""Every class (the names above)."""
ORDINARY_CLASSES: Final = (SEQUENCE, TOPIC)
"""The classes of ordinary messages: what rollups (deterministic or model-written) cover."""
COLLAPSED_CLASSES: Final = (TELEMETRY, ACK)
"""Classes whose messages have no block of their own (a collapse block counts them)."""

# --- group keys ----------------------------------------------------------------------------

MESSAGE: Final = "m:"
"""A message's own block: ``m:<message_id>``."""
MODEL: Final = "l:"
"""A block the model wrote: ``l:`` and the window it stands for."""
DETECT: Final = "d:"
"""A window the model was asked to find decisions in."""
GROUP_PREFIX: Final = {TELEMETRY: "t:", ACK: "a:", REPEAT: "r:", TOPIC: "p:", SEQUENCE: "q:"}
"""The group of a class: ``<prefix><the class's group key>``."""
CLASS_OF_PREFIX: Final = {prefix: cls for cls, prefix in GROUP_PREFIX.items()}
RUN_SEPARATOR: Final = ":"
"""A sequence group is planned run by run: ``q:<bucket>:<run>``."""


def message_key(message_id: str) -> str:
    return MESSAGE + message_id


def message_of(key: str) -> str | None:
    """The message id of a message's own key, else None."""
    return key[len(MESSAGE) :] if key.startswith(MESSAGE) else None


def group_key(cls: str, key: str) -> str:
    """The group key of class ``cls``'s group ``key``."""
    return GROUP_PREFIX[cls] + key


def class_of(key: str) -> tuple[str, str] | None:
    """``(class, the class's group key)`` of a class group's key, else None."""
    cls = CLASS_OF_PREFIX.get(key[:2])
    return None if cls is None else (cls, key[2:])


def is_class(key: str, cls: str) -> bool:
    return key.startswith(GROUP_PREFIX[cls])


def run_key(sequence: str, run: int) -> str:
    """The key of run ``run`` of the sequence group ``sequence``."""
    return f"{sequence}{RUN_SEPARATOR}{run}"


def run_of(sequence: str, key: str) -> int | None:
    """The run number of ``key`` within the sequence group ``sequence``, else None."""
    prefix = sequence + RUN_SEPARATOR
    tail = key[len(prefix) :] if key.startswith(prefix) else ""
    return int(tail) if tail.isdigit() else None


def prefix_range(prefix: str) -> tuple[str, str]:
    """Every key starting with ``prefix`` lies in ``[low, high)``: bind these in SQL."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)
