"""The one input rule (memory/limits.py) and the import checks made from it
(memory/export_fields.py): text, JSON, metadata, times, and the links between records."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from lobug.clock import EARLIEST, LATEST, clamped
from lobug.memory import transfer
from lobug.memory.limits import (
    MAX_JSON_DEPTH,
    MAX_METADATA_BYTES,
    is_block_label,
    json_problem,
    message_problem,
    metadata_problem,
    time_problem,
)
from lobug.store.records import FORMAT, VERSION


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_json_is_refused_for_depth_and_lone_surrogates_only() -> None:
    assert json_problem({"k": [nested(MAX_JSON_DEPTH - 2)], "emoji": "\U0001f600"}) is None
    assert "nested deeper than 32" in str(json_problem(nested(MAX_JSON_DEPTH + 1)))
    assert "nested deeper" in str(json_problem(nested(100_000)))  # no recursion
    assert "lone surrogate" in str(json_problem({"k": ["ok", "\ud800"]}))
    assert "lone surrogate" in str(json_problem({"\udfff": 1}))
    assert json_problem({"k": float("nan")}) is None  # a field's business
    assert "NaN" in str(json_problem({"k": float("inf")}, finite=True))


def test_metadata_is_an_object_of_at_most_16_kb_of_json() -> None:
    assert metadata_problem(None) is None
    room = MAX_METADATA_BYTES - len('{"k":""}')
    assert metadata_problem({"k": "x" * room}) is None
    assert "16384" in str(metadata_problem({"k": "x" * (room + 1)}))
    assert "16384" in str(metadata_problem({"k": "é" * (room // 2 + 1)}))  # bytes, not chars
    assert metadata_problem(["a"]) == "must be an object"
    assert "JSON values" in str(metadata_problem({"when": object()}))
    assert "NaN" in str(metadata_problem({"k": [float("nan")]}))


@pytest.mark.parametrize("at", [0, 1.5, 1_790_000_000, LATEST])
def test_times_from_1970_to_2200_are_kept(at: float) -> None:
    assert time_problem(at) is None and clamped(at) == at


@pytest.mark.parametrize("at", [-1e12, -0.5, 1e300, LATEST + 1, float("nan"), True, "noon"])
def test_other_times_are_refused_and_read_back_clamped(at: Any) -> None:
    assert "1970-01-01 to 2200-01-01" in str(time_problem(at))
    if isinstance(at, float):
        assert EARLIEST <= clamped(at) <= LATEST


def test_a_message_follows_the_apis_rule() -> None:
    assert message_problem("user", "hi", {"k": 1}) is None
    assert "role" in str(message_problem("tool", "hi", None))
    assert "1 to 100000" in str(message_problem("user", "", None))
    assert "1 to 100000" in str(message_problem("user", "x" * 100_001, None))
    assert "surrogate" in str(message_problem("user", "\ud800", None))
    assert "16384" in str(message_problem("user", "hi", {"k": "x" * 20_000}))


@pytest.mark.parametrize(
    ("label", "ok"),
    [
        *[("human", True), ("a.b-c_1", True), ("x" * 100, True), ("x" * 101, False)],
        *[("../<x>", False), ("", False), ("human\n", False), ("a b", False)],
    ],
)
def test_one_block_label_rule(label: str, ok: bool) -> None:
    assert is_block_label(label) is ok


# ---------------------------------------------------------------------- an import's checks


def fact(fact_id: int, content: str, superseded_by: int | None = None) -> dict[str, Any]:
    return {
        "id": fact_id,
        "type": "trait",
        "content": content,
        "subject": None,
        "relation": None,
        "object": None,
        "time_span": None,
        "confidence": 1.0,
        "user_score": None,
        "pinned": False,
        "origin": "manual",
        "source_message_ids": [],
        "created_at": 1_790_000_000.0,
        "valid_from": 1_790_000_000.0,
        "invalidated_at": None if superseded_by is None else 1_790_000_001.0,
        "superseded_by": superseded_by,
        "forgotten_at": None,
        "purged_at": None,
        "due_at": None,
        "owner_person_id": None,
        "scope": "household",
        "shareable": False,
    }


def document(*facts: dict[str, Any], name: str = "alice") -> dict[str, Any]:
    agent = {
        "name": name,
        "created_at": 1_790_000_000.0,
        "metadata": None,
        "base_memory": {"content": "", "stale": False},
        "facts": list(facts),
    }
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": 1_790_000_000.0,
        "embedding_model": None,
        "agents": [agent],
    }


def refused(given: dict[str, Any]) -> transfer.InvalidExport:
    with pytest.raises(transfer.InvalidExport) as raised:
        transfer.read_document(given)
    return raised.value


def test_a_chain_of_versions_is_read() -> None:
    agents = transfer.read_document(document(fact(1, "a", 2), fact(2, "b", 3), fact(3, "c")))
    assert [f["id"] for f in agents[0].of("facts")] == [1, 2, 3]


def test_a_successor_must_exist_and_never_lead_back() -> None:
    missing = refused(document(fact(1, "a", 9)))
    assert missing.path == "$.agents[0].facts[0].superseded_by" and "id 9" in missing.problem
    itself = refused(document(fact(1, "a", 1)))
    assert itself.path == "$.agents[0].facts[0].superseded_by" and "cycle" in itself.problem
    loop = refused(document(fact(1, "a"), fact(2, "b", 3), fact(3, "c", 2)))
    assert loop.path == "$.agents[0].facts[1].superseded_by"
    # 3 says what 1 says: the import makes them one fact, superseded by itself through 2
    copy_of_itself = refused(document(fact(1, "a", 2), fact(2, "b", 3), fact(3, "a")))
    assert "cycle" in copy_of_itself.problem


def test_ids_labels_and_agent_names_do_not_repeat() -> None:
    assert refused(document(fact(1, "a"), fact(1, "b"))).path == "$.agents[0].facts[1].id"
    twice = document(fact(1, "a"))
    twice["agents"].append(copy.deepcopy(twice["agents"][0]))
    assert refused(twice).path == "$.agents[1].name"
    block = {
        "id": 1,
        "label": "human",
        "value": "Alex",
        "description": None,
        "char_limit": 4,
        "read_only": False,
        "created_at": 1.0,
        "updated_at": 1.0,
        "history": [],
    }
    labelled = document()
    labelled["agents"][0]["blocks"] = [block, {**block, "id": 2}]
    assert refused(labelled).path == "$.agents[0].blocks[1].label"
    labelled["agents"][0]["blocks"] = [{**block, "value": "Alexa"}]
    assert "char_limit is 4" in refused(labelled).problem


def test_text_and_lists_are_checked_item_by_item_with_their_path() -> None:
    surrogate = refused(document(fact(1, "a\ud800")))
    assert surrogate.path == "$.agents[0].facts[0].content" and "surrogate" in surrogate.problem
    sources = fact(1, "a")
    sources["source_message_ids"] = [1, True]
    assert refused(document(sources)).path == "$.agents[0].facts[0].source_message_ids"
    deep = document()
    deep["agents"][0]["metadata"] = {"k": nested(40)}
    assert "nested deeper" in refused(deep).problem


def test_a_document_is_loaded_within_the_json_rule() -> None:
    assert transfer.load_document(b'{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}
    for text, problem in [
        (b'{"a": "\\ud800"}', "lone surrogate"),
        (b"[" * 50_000 + b"]" * 50_000, "nested deeper"),
        (b"\xff{", "not JSON"),
        (b"{", "not JSON"),
    ]:
        with pytest.raises(transfer.InvalidExport, match=problem) as raised:
            transfer.load_document(text)
        assert raised.value.path == "$"
