from __future__ import annotations

from pathlib import Path

import pytest

from lobug.config import MemoryConfig
from lobug.memory.curation import Curation
from lobug.memory.search import USER_SCORE_WEIGHT, MemorySearch, fuse, keyword_scores
from lobug.store.models import FactFlags, NewFact
from lobug.store.protocol import Store
from lobug.store.sqlite.database import open_connection
from lobug.store.sqlite.engine import SQLiteStore
from lobug.store.sqlite.fulltext import common_message_rows, fts_query
from tests.fakes import FakeEmbedder, unreachable


def searcher(store: Store, embedder: FakeEmbedder, recency: float = 0.05) -> MemorySearch:
    """Memory search weighing cosine 0.6, keywords 0.4 and recency `recency`."""
    config = MemoryConfig(
        search_vector_weight=0.6, search_keyword_weight=0.4, search_recency_weight=recency
    )
    return MemorySearch(store, embedder, config)


def test_fusion_rewards_items_found_by_both_signals() -> None:
    fused = fuse([(0.6, {1: 0.9, 2: 0.5, 3: 0.6}), (0.4, {3: 1.0, 4: 0.9})], k=3)
    assert [item for item, _ in fused] == [3, 1, 4]
    assert fused[0][1] == pytest.approx(0.6 * 0.6 + 0.4)
    assert fuse([(0.0, {1: 1.0}), (1.0, {2: 0.5})], k=5)[0] == (2, 0.5)


def test_keyword_scores_are_relative_to_the_best_match() -> None:
    assert keyword_scores([(1, 4.0), (2, 1.0)]) == {1: 1.0, 2: 0.25}
    assert keyword_scores([]) == {}


def test_fts_query_quotes_every_word() -> None:
    assert fts_query('Where is "Rex" (my dog) -NEAR* AND?') == '"rex" OR "dog" OR "near"'
    assert fts_query("?!") == ""


def test_fts_query_leaves_out_function_words_unless_nothing_else_is_left() -> None:
    assert fts_query("What's the name of my dentist?") == '"name" OR "dentist"'
    assert fts_query("Who am I?") == '"who" OR "am"'


def test_a_question_of_function_words_and_one_name_finds_the_name(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    store_messages(store, fake_embedder, ["the cat is on the mat", "Rex is my dog"])
    hits = store.keyword_messages("a", "where is Rex?", 5)
    assert [m.content for m, _ in hits] == ["Rex is my dog"]


def store_messages(store: SQLiteStore, embedder: FakeEmbedder, texts: list[str]) -> None:
    for text in texts:
        store.append_embedded_message("a", "api", "user", text, embedder.embed(text))


def test_hybrid_finds_by_words_and_meaning(store: SQLiteStore, fake_embedder: FakeEmbedder) -> None:
    store_messages(
        store,
        fake_embedder,
        [
            "Caroline went to the LGBTQ support group",
            "The weather was lovely",
            "We painted a sunrise",
        ],
    )
    found = searcher(store, fake_embedder).messages("a", "support group", 2)
    assert found.mode == "hybrid"
    assert found.hits[0].message.content == "Caroline went to the LGBTQ support group"
    assert found.hits[0].similarity > 0


@pytest.mark.both_engines
def test_the_turn_after_a_matching_question_comes_with_it(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    turns = [
        ("api", "The weather was lovely"),
        ("api", "What did you paint last weekend?"),
        ("api", "A sunrise over the lake"),
        ("other", "Did you paint the fence?"),
        ("api", "Groceries are expensive"),
    ]
    for device, text in turns:
        store.append_embedded_message("a", device, "user", text, fake_embedder.embed(text))
    found = searcher(store, fake_embedder).messages("a", "what did you paint", 3)
    contents = [hit.message.content for hit in found.hits]
    assert contents[0] == "What did you paint last weekend?"
    assert "A sunrise over the lake" in contents
    assert "Groceries are expensive" not in contents  # beside a match, but another device's


def test_a_word_is_common_above_a_twentieth_of_the_messages_and_20_rows() -> None:
    assert common_message_rows(0) == 20
    assert common_message_rows(400) == 20
    assert common_message_rows(1000) == 50
    assert common_message_rows(20_000) == 1000


@pytest.mark.both_engines
def test_a_word_in_many_of_the_agents_messages_is_left_out_of_message_search(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    greetings = [f"Maria: hi John, talk soon {i}" for i in range(24)]
    for text in [*greetings, "Maria: I went hiking in Spain with my church friends"]:
        store.append_embedded_message("a", "api", "user", text, fake_embedder.embed(text))
    for i in range(30):  # another agent's messages do not make a word common for this one
        text = f"Spain again {i}"
        store.append_embedded_message("b", "api", "user", text, fake_embedder.embed(text))
    assert store.uncommon_message_words("a", "Where has Maria been, Spain?") == ["spain"]
    assert store.uncommon_message_words("b", "Where has Maria been, Spain?") == ["maria"]
    found = searcher(store, fake_embedder).messages("a", "Maria Spain", 3, mode="keyword")
    assert [hit.message.content for hit in found.hits] == [
        "Maria: I went hiking in Spain with my church friends"
    ]


def test_forgetting_a_topic_still_finds_every_message_naming_a_common_word(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    texts = [f"Maria called about the garden {i}" for i in range(30)]
    store_messages(store, fake_embedder, texts)
    assert store.uncommon_message_words("a", "Maria") == []
    curation = Curation(store, fake_embedder, MemoryConfig())
    assert len(curation.messages_about("a", "Maria")) == 30


@pytest.mark.both_engines
def test_a_word_in_many_facts_is_left_out_of_their_keyword_search(
    store: Store, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "common_word_rows", 2)
    for text in ("Ana likes tea", "Ana likes jazz", "Ana likes chess", "Emma is Ana's sister"):
        store.add_fact("a", NewFact(text), fake_embedder.embed(text))
    assert keyword_texts(store, "who likes Emma") == ["Emma is Ana's sister"]
    assert keyword_texts(store, "jazz") == ["Ana likes jazz"]
    assert keyword_texts(store, "Ana likes") == []


def keyword_texts(store: Store, words: str) -> list[str]:
    hits = store.keyword_fact_hits("a", words, 5)
    found = store.facts_by_ids([hit.id for hit in hits])
    return [found[hit.id].content for hit in hits]


def test_keyword_search_brings_no_neighbours(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    store_messages(store, fake_embedder, ["What did you paint?", "A sunrise"])
    found = searcher(store, fake_embedder).messages("a", "paint", 5, mode="keyword")
    assert [h.message.content for h in found.hits] == ["What did you paint?"]


def test_failing_embedder_degrades_to_keywords(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    store_messages(store, fake_embedder, ["I adopted a dog named Rex", "Nice weather"])
    fake_embedder.fail_with = unreachable()
    found = searcher(store, fake_embedder).messages("a", "dog", 5)
    assert found.mode == "keyword"
    assert [h.message.content for h in found.hits] == ["I adopted a dog named Rex"]


def test_fact_retrieval_adds_keyword_hits_below_the_floor(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    for text in ("The user's sister is called Emma", "The user likes green tea"):
        store.add_fact("a", NewFact(text), fake_embedder.embed(text))
    query = "is Emma coming over"
    search = searcher(store, fake_embedder)
    hits = search.facts("a", query, 5, vector=fake_embedder.embed(query), min_similarity=0.99)
    assert [h.fact.content for h in hits] == ["The user's sister is called Emma"]
    superseded = store.facts("a")[0]
    replacement = "The user's sister is called Emma Stone"
    added = store.add_fact_superseding_duplicate(
        "a", NewFact(replacement), fake_embedder.embed(replacement), duplicate_distance=2.0
    )
    assert added.superseded == (superseded.id,)
    hits = search.facts("a", query, 5, mode="keyword", min_similarity=0.3)
    assert [h.fact.content for h in hits] == [replacement]  # history is not retrieved


def test_damaged_full_text_index_is_rebuilt_when_the_store_opens(tmp_path: Path) -> None:
    path = tmp_path / "fts.db"
    store = SQLiteStore(path)
    store.append_message("a", "d", "user", "the lighthouse keeper")
    store.close()
    conn = open_connection(path)
    conn.execute("DELETE FROM messages_fts_data WHERE id > 1")  # corrupt the index's b-tree
    conn.commit()
    conn.close()
    reopened = SQLiteStore(path)
    assert reopened.repair_full_text_search() == []  # already repaired on open
    assert [m.content for m, _ in reopened.keyword_messages("a", "lighthouse", 5)] == [
        "the lighthouse keeper"
    ]
    reopened.close()


def test_a_persons_score_lifts_or_sinks_a_fact(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    texts = ("The user drinks coffee black", "The user drinks coffee sweet")
    ids = [store.add_fact("a", NewFact(t), fake_embedder.embed(t)).id for t in texts]

    def ranking() -> list[int]:
        query = "how does the user drink coffee"
        hits = searcher(store, fake_embedder, recency=0.0).facts("a", query, 2)
        return [h.fact.id for h in hits]

    first = ranking()
    store.set_fact_flags("a", first[0], FactFlags(user_score=0), actor="manual")
    store.set_fact_flags("a", first[1], FactFlags(user_score=10), actor="manual")
    assert ranking() == [first[1], first[0]]
    assert sorted(first) == sorted(ids)


def test_explained_search_ranks_as_search_does_and_its_parts_add_up(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    texts = ("The user drinks coffee black", "The user walks the dog", "Coffee beans from Peru")
    for text in texts:
        store.add_fact("a", NewFact(text), fake_embedder.embed(text))
    store.set_fact_flags("a", store.facts("a")[0].id, FactFlags(user_score=9), actor="manual")
    search = searcher(store, fake_embedder)
    found = search.explained("a", "coffee", 3)
    matches, weights = found.matches, found.weights
    assert found.embedded and (weights.vector, weights.keyword) == (0.6, 0.4)
    plain = search.facts("a", "coffee", 3)
    assert [m.fact.id for m in matches] == [h.fact.id for h in plain]
    for match in matches:
        parts = (
            weights.vector * (match.cosine or 0.0)
            + weights.keyword * (match.keyword or 0.0)
            + weights.recency * match.recency
            + USER_SCORE_WEIGHT * (match.user or 0.0)
        )
        assert match.score == pytest.approx(parts)
    assert {m.fact.content for m in matches if m.keyword} == {texts[0], texts[2]}
    assert [m.user for m in matches if m.user is not None] == [pytest.approx(0.8)]
