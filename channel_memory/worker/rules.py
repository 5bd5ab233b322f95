"""Hard-event rules: data (a TOML file), compiled once, matched per message.

A rule set is a TOML file of ``[[rule]]`` tables (patterns are searched over the
whole message with ``^``/``$`` anchoring at each line); the shipped defaults
(``default_rules.toml``) describe a trading desk. See the README section
"Hard-event rules" for writing rules for another domain.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class RuleSpec(BaseModel):
    """One rule as written in the rules file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=64)]
    event_type: Annotated[str, Field(pattern=r"^[a-z0-9_]{1,64}$")]
    score: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0
    patterns: list[str] = Field(default_factory=list)
    unless: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list)
    keywords: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """Optional fast gate: the patterns are only tried on messages containing one of these
    (case-insensitive substrings). Every match of the patterns must contain one."""

    @field_validator("patterns", "unless")
    @classmethod
    def _compiles(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression: {exc}") from None
        return values


class RuleFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: list[RuleSpec] = Field(default_factory=list)


class RulesError(Exception):
    """A rules file is missing or invalid; the message says where."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled rule pattern, and whether it runs on the lower-cased message.

    A case-insensitive pattern without upper-case characters (no ``\\S``, no
    ``(?-i:…)``) matches the lower-cased text exactly as it matches the original
    case-insensitively, and runs about twice as fast there.
    """

    regex: re.Pattern[str]
    on_lowered: bool

    @classmethod
    def compile(cls, source: str) -> Pattern:
        body = source[4:] if source.startswith("(?i)") else None
        if body is not None and body == body.lower() and "(?" not in body:
            return cls(re.compile(body, re.MULTILINE), True)
        return cls(re.compile(source, re.MULTILINE), False)  # ^ and $ anchor at each line

    def search(self, content: str, lowered: str) -> bool:
        return self.regex.search(lowered if self.on_lowered else content) is not None


@dataclass(frozen=True, slots=True)
class HardEventRule:
    name: str
    event_type: str
    score: float
    patterns: tuple[Pattern, ...]
    unless: tuple[Pattern, ...]
    tags: frozenset[str]
    authors: frozenset[str]
    keywords: tuple[str, ...]
    gate: re.Pattern[str] | None
    """``keywords`` as one literal alternation, searched in the lower-cased message."""

    def matches(
        self,
        content: str,
        lowered: str,
        tags: Sequence[str],
        author_id: str | None,
        author_name: str | None,
    ) -> bool:
        """Whether the rule matches; ``lowered`` is ``content.lower()``, computed once."""
        if self.authors and not (
            (author_id or "").lower() in self.authors or (author_name or "").lower() in self.authors
        ):
            return False
        if self.tags.intersection(tags):
            return True
        if self.gate is not None and not self.gate.search(lowered):
            return False
        if not any(p.search(content, lowered) for p in self.patterns):
            return False
        return not any(u.search(content, lowered) for u in self.unless)

    def line_matches(self, line: str) -> bool:
        lowered = line.lower()
        return any(p.search(line, lowered) for p in self.patterns) and not any(
            u.search(line, lowered) for u in self.unless
        )


@dataclass(frozen=True, slots=True)
class RuleMatch:
    rule: HardEventRule

    @property
    def event_type(self) -> str:
        return self.rule.event_type


@dataclass(frozen=True, slots=True)
class RuleSet:
    rules: tuple[HardEventRule, ...]
    fingerprint: str
    source: str

    def first_match(
        self,
        content: str,
        tags: Sequence[str] = (),
        author_id: str | None = None,
        author_name: str | None = None,
    ) -> HardEventRule | None:
        """The first rule (in file order) the message matches, if any."""
        lowered = content.lower()
        for rule in self.rules:
            if rule.matches(content, lowered, tags, author_id, author_name):
                return rule
        return None

    def decision_lines(self, content: str) -> list[bool]:
        """For each line of ``content``, whether some rule's pattern matches it."""
        return [any(rule.line_matches(line) for rule in self.rules) for line in content.split("\n")]


def _compile(spec: RuleFile, source: str) -> RuleSet:
    canonical = json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    rules = tuple(
        HardEventRule(
            name=r.name,
            event_type=r.event_type,
            score=r.score,
            patterns=tuple(Pattern.compile(p) for p in r.patterns),
            unless=tuple(Pattern.compile(u) for u in r.unless),
            tags=frozenset(r.tags),
            authors=frozenset(a.lower() for a in r.authors),
            keywords=tuple(k.lower() for k in r.keywords),
            gate=re.compile("|".join(re.escape(k.lower()) for k in r.keywords))
            if r.keywords
            else None,
        )
        for r in spec.rule
    )
    return RuleSet(rules, hashlib.sha256(canonical.encode()).hexdigest()[:16], source)


def parse_rules(text: str, source: str) -> RuleSet:
    """Parse a rules file's text. Raises ``RulesError`` naming the rule and field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML: {exc}") from None
    try:
        spec = RuleFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_input=False, include_url=False)
        )
        raise RulesError(f"{source}: {problems}") from None
    return _compile(spec, source)


def default_rules() -> RuleSet:
    text = resources.files("channel_memory.worker").joinpath("default_rules.toml").read_text()
    return parse_rules(text, "default rules")


def load_rules(path: Path | str | None) -> RuleSet:
    """The rule set at ``path``, or the shipped defaults when ``path`` is None."""
    if path is None:
        return default_rules()
    file = Path(path)
    if not file.is_file():
        raise RulesError(f"rules file not found: {file}")
    return parse_rules(file.read_text(encoding="utf-8"), str(file))
