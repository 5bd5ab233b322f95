"""The version logic of ingest as pure functions: identity by the server's digest,
ordering by event time (deletion wins ties), labels, forgets, retention, and the row
changes a batch hands the store. No database: states in, states and changes out."""

from __future__ import annotations

from channel_memory.ingest.commands import (
    DeleteMessage,
    ForgetMessages,
    PutMessage,
    compute_content_hash,
)
from channel_memory.ingest.versions import (
    ForgetResult,
    MessageResult,
    apply_commands,
    choose_label,
)
from channel_memory.kernel.models import MessageKey, MessageState

KEY = MessageKey("discord", "floor", "m1")
T0 = 1_780_000_000_000_000
NOW = T0 + 3_600_000_000
S = 1_000_000


def put(
    content: str,
    created: int = T0,
    edited: int | None = None,
    *,
    key: MessageKey = KEY,
    label: str | None = None,
    author: str | None = "u-dana",
) -> PutMessage:
    return PutMessage(
        key=key,
        content=content,
        content_hash=label,
        deleted=False,
        author_id=author,
        author_name="Dana",
        author_kind="human",
        origin="human",
        created_us=created,
        edited_us=edited,
    )


def message(outcome_results: list[MessageResult | ForgetResult], n: int) -> MessageResult:
    result = outcome_results[n]
    assert isinstance(result, MessageResult)
    return result


def test_a_first_put_inserts_one_current_version() -> None:
    outcome = apply_commands({}, [put("buy 5 ES")], NOW, 10)
    (version,) = outcome.states[KEY].versions
    assert version.id == 10 and version.observed_seq == 1
    assert version.is_current and version.superseded_by is None
    assert version.content_hash == compute_content_hash(KEY, "buy 5 ES", False)
    assert version.observed_us == NOW and version.event_us == T0
    result = message(outcome.results, 0)
    assert result.inserted and result.current
    assert outcome.changes.inserted == [version] and outcome.changes.dirty == [KEY]
    assert outcome.changes.fts_added == [version]


def test_the_same_content_again_is_the_same_version_whatever_the_label() -> None:
    first = apply_commands({}, [put("buy 5 ES", label="c1")], NOW, 1)
    again = apply_commands(first.states, [put("buy 5 ES", label="other")], NOW + S, 2)
    assert len(again.states[KEY].versions) == 1
    result = message(again.results, 0)
    assert not result.inserted and result.content_hash == "c1"
    assert again.changes.inserted == [] and again.changes.dirty == []


def test_a_newer_edit_supersedes_and_an_older_one_arriving_late_does_not() -> None:
    outcome = apply_commands(
        {},
        [put("buy 5 ES"), put("buy 6 ES", edited=T0 + 20 * S), put("buy 7 ES", edited=T0 + 10 * S)],
        NOW,
        1,
    )
    by_content = {v.content: v for v in outcome.states[KEY].versions}
    assert by_content["buy 6 ES"].is_current
    assert not by_content["buy 7 ES"].is_current
    assert by_content["buy 5 ES"].superseded_by == by_content["buy 7 ES"].observed_seq
    assert by_content["buy 7 ES"].superseded_by == by_content["buy 6 ES"].observed_seq
    assert [message(outcome.results, n).current for n in range(3)] == [False, True, False]


def test_at_equal_times_a_deletion_wins() -> None:
    at = T0 + 30 * S
    outcome = apply_commands({}, [put("buy 5 ES", edited=at), DeleteMessage(KEY, at)], NOW, 1)
    current = outcome.states[KEY].current
    assert current is not None and current.deleted


def test_an_edit_back_revives_the_old_version_instead_of_a_new_one() -> None:
    outcome = apply_commands(
        {},
        [put("a"), put("b", edited=T0 + S), put("a", edited=T0 + 2 * S)],
        NOW,
        1,
    )
    versions = outcome.states[KEY].versions
    assert len(versions) == 2
    current = outcome.states[KEY].current
    assert current is not None and current.content == "a" and current.event_us == T0 + 2 * S
    assert not message(outcome.results, 2).inserted


def test_a_delete_before_its_message_takes_the_author_once_it_arrives() -> None:
    outcome = apply_commands({}, [DeleteMessage(KEY, T0 + 50 * S), put("buy 5 ES")], NOW, 1)
    tombstone = next(v for v in outcome.states[KEY].versions if v.deleted)
    assert tombstone.author_id == "u-dana" and tombstone.created_us == T0
    assert tombstone.is_current


def test_labels_are_the_clients_while_free_then_the_digest_then_suffixed() -> None:
    assert choose_label("c1", "d", set()) == "c1"
    assert choose_label(None, "d", set()) == "d"
    assert choose_label("c1", "d", {"c1"}) == "d"
    assert choose_label("c1", "d", {"c1", "d"}) == "d~2"
    assert choose_label("d", "d", {"d", "d~2"}) == "d~3"
    outcome = apply_commands({}, [put("a", label="x"), put("b", T0, T0 + S, label="x")], NOW, 1)
    labels = [v.content_hash for v in outcome.states[KEY].versions]
    assert labels[0] == "x" and labels[1] == compute_content_hash(KEY, "b", False)


def test_a_forgotten_message_stays_forgotten() -> None:
    first = apply_commands({}, [put("buy 5 ES"), put("buy 6 ES", edited=T0 + S)], NOW, 1)
    forget = ForgetMessages("discord", "floor", ("m1",), None, "asked")
    outcome = apply_commands(first.states, [forget, put("buy 9 ES", edited=T0 + 9 * S)], NOW, 3)
    state = outcome.states[KEY]
    assert state.forgotten and all(v.forgotten_us == NOW for v in state.versions)
    assert len(state.versions) == 2  # the later put added nothing
    result = outcome.results[0]
    assert isinstance(result, ForgetResult) and (result.messages, result.forgotten) == (1, 2)
    assert message(outcome.results, 1).forgotten
    assert outcome.changes.newly_forgotten == [KEY]
    assert [(e.message_id, e.reason, e.versions_forgotten) for e in outcome.changes.ledger] == [
        ("m1", "asked", 2)
    ]
    # only the current version was searchable: its index entry goes
    assert [v.id for v in outcome.changes.fts_removed] == [2]


def test_a_forget_by_author_takes_only_that_authors_messages_in_the_channel() -> None:
    other = MessageKey("discord", "floor", "m2")
    elsewhere = MessageKey("discord", "desk", "m3")
    first = apply_commands(
        {},
        [put("a"), put("b", key=other, author="u-lee"), put("c", key=elsewhere)],
        NOW,
        1,
    )
    forget = ForgetMessages("discord", "floor", (), "u-dana", None)
    outcome = apply_commands(first.states, [forget], NOW, 4)
    assert [k for k, s in outcome.states.items() if s.forgotten] == [KEY]
    assert [(e.message_id, e.author_id) for e in outcome.changes.ledger] == [(None, "u-dana")]


def test_an_event_past_retention_changes_nothing() -> None:
    outcome = apply_commands({}, [put("old news")], NOW, 1, expired_before_us=T0 + S)
    assert message(outcome.results, 0).expired
    assert outcome.states[KEY].versions == [] and outcome.changes.inserted == []


def test_the_stored_states_are_not_modified() -> None:
    first = apply_commands({}, [put("a")], NOW, 1)
    stored = {KEY: MessageState(KEY, list(first.states[KEY].versions))}
    snapshot = list(stored[KEY].versions)
    outcome = apply_commands(stored, [put("b", edited=T0 + S)], NOW, 2)
    assert stored[KEY].versions == snapshot and not stored[KEY].forgotten
    assert [v.id for v in outcome.changes.updated] == [1]  # now superseded
    assert [v.id for v in outcome.changes.inserted] == [2]
