"""``channel-memory rules test``: what a candidate rule set would change on stored messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from channel_memory.kernel.models import MessageKey, SourceVersion
from channel_memory.store import Store, sources
from channel_memory.worker.classify import parent_rule
from channel_memory.worker.derive import parent_id
from channel_memory.worker.render import KEY_LINE_CHARS
from channel_memory.worker.rules import Decision, HardEventRule, ModelDecision, RuleSet


def _typed(decision: Decision | None) -> str:
    """A decision's event type as the report shows it ("" for none); one only the rule
    set's decision model found is marked ``(model)``."""
    if decision is None:
        return ""
    return (
        f"{decision.event_type} (model)"
        if isinstance(decision, ModelDecision)
        else decision.event_type
    )


def _named(decision: Decision | None) -> str:
    """A decision as a report line names it: its event type and the rule that found it
    ("stop_or_target_change (rule stop_or_target)"), or ``(model)``."""
    if decision is None or isinstance(decision, ModelDecision):
        return _typed(decision)
    return f"{decision.event_type} (rule {decision.name})"


def _verdict(
    rules: RuleSet, version: SourceVersion, parent: SourceVersion | None
) -> Decision | None:
    """What the worker decides for ``version``: on its own, else as a reply to ``parent``
    (read, as the worker reads it, with its bridge tags and author)."""
    args = (version.content, version.tags, version.author_id, version.author_name)
    found = rules.decide(*args)
    if found is None and parent is not None:
        found = rules.decide(*args, parent=parent.content, parent_rule=parent_rule(parent, rules))
    return found


Change = tuple[SourceVersion, str, str]
"""A message with its event type and rule under the current and the candidate rules ("" for
none)."""


@dataclass(slots=True)
class RulesReport:
    """What ``candidate`` matches and how that differs from ``current`` (same rules: just
    what they match, with examples)."""

    current: RuleSet
    candidate: RuleSet
    limit: int
    scanned: int = 0
    matched: dict[str, int] = field(default_factory=dict)
    changes: dict[str, list[Change]] = field(
        default_factory=lambda: {"gained": [], "lost": [], "retyped": []}
    )
    counts: dict[str, int] = field(default_factory=lambda: {"gained": 0, "lost": 0, "retyped": 0})
    examples: list[Change] = field(default_factory=list)
    held: int = 0
    """Messages a rule of the candidate's own (one the current rules have no rule of that
    name for) matches only in clauses a guard makes ordinary, with nothing decided."""
    held_examples: list[tuple[SourceVersion, str]] = field(default_factory=list)
    taken: int = 0
    """Messages a rule of the candidate's own matches where another rule decides first (a
    shipped rule takes a clause both match, the first clause a rule matches decides)."""
    taken_examples: list[tuple[SourceVersion, str]] = field(default_factory=list)
    unmatched: bool = False
    """Also list messages the candidate decides nothing in (``--unmatched``): where a
    decision the rules miss would be, to write a rule for."""
    unmatched_count: int = 0
    unmatched_examples: list[SourceVersion] = field(default_factory=list)
    own_rules: frozenset[str] = field(init=False)
    """The candidate's rules the current rules have no rule of the same name for."""

    @property
    def same_rules(self) -> bool:
        return self.current is self.candidate

    def __post_init__(self) -> None:
        current = {rule.name for rule in self.current.rules}
        self.own_rules = frozenset(r.name for r in self.candidate.rules if r.name not in current)

    def add(self, version: SourceVersion, parent: SourceVersion | None = None) -> None:
        """Count one message; ``parent`` is the message it replies to (as the worker
        reads it: see ``derive.parent_id``), if any."""
        self.scanned += 1
        found = _verdict(self.candidate, version, parent)
        new = _typed(found)
        if new:
            self.matched[new] = self.matched.get(new, 0) + 1
        elif self.unmatched:
            self.unmatched_count += 1
            if len(self.unmatched_examples) < self.limit:
                self.unmatched_examples.append(version)
        if self.same_rules:
            if new and len(self.examples) < self.limit:
                self.examples.append((version, _named(found), _named(found)))
            return
        if not new and self.own_rules:
            held = self.candidate.held_back(version.content, self.own_rules)
            if held:
                self.held += 1
                if len(self.held_examples) < self.limit:
                    why = "; ".join(f"rule {rule} (guard {guard})" for rule, guard in held)
                    self.held_examples.append((version, why))
        elif (
            isinstance(found, HardEventRule) and found.name not in self.own_rules and self.own_rules
        ):
            mine = self.candidate.matching(version.content, self.own_rules)
            if mine:
                self.taken += 1
                if len(self.taken_examples) < self.limit:
                    why = f"rule {', '.join(mine)} (taken by {_named(found)})"
                    self.taken_examples.append((version, why))
        before = _verdict(self.current, version, parent)
        old = _typed(before)
        if old == new:
            return
        kind = "gained" if not old else "lost" if not new else "retyped"
        self.counts[kind] += 1
        if len(self.changes[kind]) < self.limit:
            self.changes[kind].append((version, _named(before), _named(found)))

    def render(self) -> str:
        matched = ", ".join(f"{k} {v}" for k, v in sorted(self.matched.items())) or "nothing"
        if self.same_rules:
            lines = [
                f"rules test: {self.candidate.source} (the current rules)",
                f"messages scanned: {self.scanned}",
                f"matches: {matched}",
                f"matched messages (first {self.limit}):",
            ]
            lines += [
                f"  * {v.key.handle} {new}: {_line(v, self.candidate)}"
                for v, _, new in self.examples
            ]
            return "\n".join(lines + self._unmatched_lines())
        lines = [
            f"rules test: {self.candidate.source} against {self.current.source}",
            f"messages scanned: {self.scanned}",
            f"would match: {matched}",
        ]
        for kind, title, mark in (
            ("gained", "would start matching", "+"),
            ("lost", "would stop matching", "-"),
            ("retyped", "would change event type", "~"),
        ):
            lines.append(f"{title}: {self.counts[kind]}")
            for version, old, new in self.changes[kind]:
                types = " -> ".join(t for t in (old, new) if t)
                rules = self.current if kind == "lost" else self.candidate
                lines.append(f"  {mark} {version.key.handle} {types}: {_line(version, rules)}")
        if self.taken:
            # the first rule of the set to match decides: a rule added after the shipped
            # ones never retypes a message they already read
            lines.append(f"taken by another rule first: {self.taken}")
            lines += [
                f"  ~ {version.key.handle} {why}: {_line(version)}"
                for version, why in self.taken_examples
            ]
        if self.held:
            # a rule written for a message that a shipped guard makes ordinary (a question,
            # a condition, a plan …) otherwise shows as nothing gained, with no reason
            lines.append(f"held back by a guard (the clause reads as ordinary): {self.held}")
            lines += [
                f"  ! {version.key.handle} {why}: {_line(version)}"
                for version, why in self.held_examples
            ]
        return "\n".join(lines + self._unmatched_lines())

    def _unmatched_lines(self) -> list[str]:
        """With ``unmatched``: how many messages the rules decide nothing in, and the
        first ``limit`` of them, in the order they were stored, from their start (``.``
        marks each)."""
        if not self.unmatched:
            return []
        which = "the current rules" if self.same_rules else "the file's rules"
        lines = [f"matched by nothing in {which}: {self.unmatched_count}"]
        if self.unmatched_examples:
            lines.append(f"unmatched messages (first {len(self.unmatched_examples)}):")
            lines += [f"  . {v.key.handle}: {_line(v)}" for v in self.unmatched_examples]
        return lines


def _line(version: SourceVersion, rules: RuleSet | None = None) -> str:
    """The message as a report line: from the first clause ``rules`` match (marked ``…``
    when it is not the message's start), so a decision in the middle of a long message is
    what the line shows; the message's start when no rule matched a clause (a reply's
    verdict, a decision only the model found) or no ``rules`` are given (a rule held back
    or taken by another: what it matched is not a decision clause)."""
    content = version.content
    spans = rules.decision_spans(content) if rules is not None else []
    start = spans[0][0] if spans else 0
    text = " ".join(content[start:].split())
    if start > 0 and content[:start].strip():
        text = "… " + text
    return text if len(text) <= KEY_LINE_CHARS else text[: KEY_LINE_CHARS - 1] + "…"


async def compare_rules(
    store: Store,
    current: RuleSet,
    candidate: RuleSet | None = None,
    *,
    limit: int = 20,
    unmatched: bool = False,
) -> RulesReport:
    """Classify every current message with both rule sets and collect the differences.

    Without a ``candidate``, report what the current rules match, with examples. With
    ``unmatched``, also the messages the candidate (or the current rules) decide nothing in.
    """
    report = RulesReport(
        current, candidate if candidate is not None else current, limit, unmatched=unmatched
    )
    after = 0
    while True:
        async with store.read() as conn:
            page = await sources.current_page(conn, after, 2000)
        if not page:
            return report
        parents = await _parents(store, page, (report.current, report.candidate))
        for version in page:
            report.add(version, parents.get(version.key))
        after = page[-1].id


async def _parents(
    store: Store, page: Sequence[SourceVersion], rule_sets: Sequence[RuleSet]
) -> dict[MessageKey, SourceVersion]:
    """The message each version of ``page`` replies to, when either rule set would read
    it (``derive.parent_id``) and it is current and not deleted."""
    wanted: dict[tuple[str, str], dict[MessageKey, str]] = {}
    for version in page:
        for rules in rule_sets:
            target = parent_id(version, rules)
            if target is not None:
                wanted.setdefault((version.key.source_kind, version.key.channel_id), {})[
                    version.key
                ] = target
                break
    out: dict[MessageKey, SourceVersion] = {}
    async with store.read() as conn:
        for (kind, channel), targets in sorted(wanted.items()):
            found = await sources.current_versions(conn, kind, channel, targets.values())
            for key, target in targets.items():
                parent = found.get(target)
                if parent is not None and not parent.deleted:
                    out[key] = parent
    return out
