from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lobug.store.models import NewFact
from lobug.store.sqlite import int8_kernel, vector_index
from lobug.store.sqlite.database import vector_blob
from lobug.store.sqlite.engine import SQLiteStore
from lobug.store.sqlite.vector_index import VectorIndex


def random_unit(rng: np.random.Generator, dim: int) -> np.ndarray:
    vector = rng.normal(size=dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_search_matches_brute_force_after_adds_and_removes() -> None:
    rng = np.random.default_rng(1)
    index = VectorIndex(16)
    vectors = {i: random_unit(rng, 16) for i in range(100)}
    for fact_id, vector in vectors.items():
        index.add(agent_id=1, fact_id=fact_id, vector=vector)
    for removed in range(0, 100, 3):
        index.remove(removed)
        del vectors[removed]
    query = random_unit(rng, 16)
    expected = sorted(vectors, key=lambda i: -float(vectors[i] @ query))[:5]
    assert [fact_id for fact_id, _ in index.search(1, query, 5)] == expected
    assert len(index) == len(vectors)


def test_agents_do_not_see_each_other() -> None:
    index = VectorIndex(2)
    index.add(1, 10, np.array([1, 0], dtype=np.float32))
    index.add(2, 20, np.array([1, 0], dtype=np.float32))
    assert [i for i, _ in index.search(1, np.array([1, 0], dtype=np.float32), 5)] == [10]
    assert index.search(3, np.array([1, 0], dtype=np.float32), 5) == []


def test_wrong_dimension_is_rejected() -> None:
    index = VectorIndex(4)
    with pytest.raises(ValueError, match="dimensions"):
        index.add(1, 1, np.ones(3, dtype=np.float32))


def unit_rows(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    rows = rng.normal(size=(count, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def clustered_rows(rng: np.random.Generator, count: int, dim: int, spread: float) -> np.ndarray:
    centers = unit_rows(rng, 20, dim)
    rows = centers[rng.integers(0, len(centers), count)]
    rows = rows + spread * rng.normal(size=(count, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def brute_force(
    ids: np.ndarray, vectors: np.ndarray, query: np.ndarray, k: int
) -> list[tuple[int, float]]:
    scores = vectors @ query
    best = np.argsort(-scores, kind="stable")[:k]
    return [(int(ids[i]), float(scores[i])) for i in best]


def assert_same_hits(got: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)


@pytest.mark.parametrize("in_halves", [False, True])
@pytest.mark.parametrize("few_candidates", [False, True])
@pytest.mark.parametrize("kind", ["random", "clustered", "tight clusters"])
def test_prefilter_matches_brute_force(
    kind: str, few_candidates: bool, in_halves: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In halves: each half of the blocks scored and its best picked on a thread of its own,
    # the second half ending in the part-filled last block.
    monkeypatch.setattr(int8_kernel, "SPLIT_MIN_ROWS", 0 if in_halves else 10**9)
    if few_candidates:
        # Re-rank only k rows first: the error bound then nearly always calls for the wider
        # re-rank, which must still be exact.
        monkeypatch.setattr(vector_index, "candidate_count", lambda k: k)
    monkeypatch.setattr(vector_index, "BLOCK_ROWS", 1024)  # the rows span five blocks
    rng = np.random.default_rng(7)
    dim, count = 64, 5000
    if kind == "random":
        vectors = unit_rows(rng, count, dim)
        queries = unit_rows(rng, 100, dim)
    else:
        # Tight clusters leave the k-th score and the 64th int8 score closer than the
        # quantisation bound, so the wider re-rank is exercised without patching too.
        spread = 0.05 if kind == "clustered" else 0.01
        vectors = clustered_rows(np.random.default_rng(3), count, dim, spread)
        queries = clustered_rows(np.random.default_rng(4), 100, dim, spread)
    ids = np.arange(1000, 1000 + count)
    index = VectorIndex(dim, prefilter_min_rows=0)
    index.add_many(np.full(count, 1), ids, vectors)
    for query in queries:
        for k in (1, 5, 20):
            assert_same_hits(index.search(1, query, k), brute_force(ids, vectors, query, k))


@pytest.mark.parametrize("block_rows", [vector_index.BLOCK_ROWS, 1024])  # one block, many
def test_prefilter_stays_exact_through_adds_removals_and_replacements(
    block_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_index, "BLOCK_ROWS", block_rows)
    rng = np.random.default_rng(11)
    dim = 32
    index = VectorIndex(dim, prefilter_min_rows=0)
    current: dict[int, np.ndarray] = {}
    next_id = 0
    for round_ in range(4):  # int8 rows are made at a search, then moved by the removals
        if round_:
            for fact_id in rng.choice(sorted(current), size=150, replace=False).tolist():
                index.remove(fact_id)
                del current[fact_id]
        for vector in unit_rows(rng, 2500, dim):  # more than one refresh chunk
            index.add(1, next_id, vector)
            current[next_id] = vector
            next_id += 1
        replaced = rng.choice(sorted(current), size=50, replace=False).tolist()
        for fact_id, vector in zip(replaced, unit_rows(rng, 50, dim), strict=True):
            index.add(1, fact_id, vector)
            current[fact_id] = vector
        assert len(index) == len(current)
        ids = np.array(sorted(current))
        vectors = np.stack([current[i] for i in ids.tolist()])
        for query in unit_rows(rng, 20, dim):
            assert_same_hits(index.search(1, query, 5), brute_force(ids, vectors, query, 5))


def test_small_and_large_shards_agree() -> None:
    rng = np.random.default_rng(12)
    vectors = unit_rows(rng, 2000, 48)
    exact = VectorIndex(48, prefilter_min_rows=10**9)
    quantized = VectorIndex(48, prefilter_min_rows=0)
    for index in (exact, quantized):
        index.add_many(np.ones(2000), np.arange(2000), vectors)
    for query in unit_rows(rng, 20, 48):
        assert_same_hits(quantized.search(1, query, 8), exact.search(1, query, 8))


def test_adding_a_fact_under_another_agent_moves_it() -> None:
    index = VectorIndex(2)
    east, north = np.array([1, 0], dtype=np.float32), np.array([0, 1], dtype=np.float32)
    index.add(1, 10, east)
    index.add(1, 11, north)
    index.add(2, 10, east)
    assert [i for i, _ in index.search(1, east, 5)] == [11]
    assert [i for i, _ in index.search(2, east, 5)] == [10]
    assert len(index) == 2
    index.remove(10)
    assert index.search(2, east, 5) == []
    assert [i for i, _ in index.search(1, east, 5)] == [11]


def test_add_replaces_the_vector_of_an_existing_fact() -> None:
    index = VectorIndex(2)
    index.add(1, 10, np.array([1, 0], dtype=np.float32))
    index.add(1, 10, np.array([0, 1], dtype=np.float32))
    assert index.search(1, np.array([0, 1], dtype=np.float32), 5) == [(10, pytest.approx(1.0))]
    assert len(index) == 1


def test_add_many_equals_adding_one_by_one() -> None:
    rng = np.random.default_rng(13)
    dim, count = 24, 600
    vectors = unit_rows(rng, count, dim)
    agents = rng.integers(1, 4, count)
    # Ids repeat (the last row wins) and some already sit under another agent (they move).
    ids = rng.integers(0, 400, count)
    earlier = unit_rows(rng, 2, dim)
    one_by_one, bulk = VectorIndex(dim), VectorIndex(dim)
    for index in (one_by_one, bulk):
        index.add(9, int(ids[0]), earlier[0])
        index.add(1, 10_000, earlier[1])
    for agent_id, fact_id, vector in zip(agents, ids, vectors, strict=True):
        one_by_one.add(int(agent_id), int(fact_id), vector)
    bulk.add_many(agents, ids, vectors)
    assert len(bulk) == len(one_by_one)
    for query in unit_rows(rng, 10, dim):
        for agent_id in (1, 2, 3, 9):
            assert_same_hits(
                bulk.search(agent_id, query, 50), one_by_one.search(agent_id, query, 50)
            )


def test_add_many_checks_shapes() -> None:
    index = VectorIndex(4)
    with pytest.raises(ValueError, match="dimensions"):
        index.add_many([1], [1], np.ones((1, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="length"):
        index.add_many([1, 1], [1, 2], np.ones((1, 4), dtype=np.float32))
    index.add_many([], [], np.zeros((0, 4), dtype=np.float32))
    assert len(index) == 0


@pytest.mark.parametrize("blocks", [[3], [16_384, 16_384, 7_232]])  # the larger in two halves
def test_int8_kernel_is_an_exact_integer_product(blocks: list[int]) -> None:
    """Exact for every query the index makes: codes in +-127, the query shifted into 0..128,
    the extremes included (a kernel that adds pairs in saturating int16 must not clip)."""
    rng = np.random.default_rng(14)
    columns = [rng.integers(-127, 128, size=(24, width), dtype=np.int8) for width in blocks]
    columns[0][:, 0] = 127
    columns[-1][:, -1] = -127
    query = rng.integers(0, 2 * vector_index.QUERY_LEVELS + 1, size=24).astype(np.uint8)
    query[:2] = 2 * vector_index.QUERY_LEVELS
    codes = np.concatenate(columns, axis=1).astype(np.int64)
    expected = query.astype(np.int64) @ codes
    kernel, row = int8_kernel.int8_kernel(), query.reshape(1, -1)
    halves = kernel.in_halves(
        lambda lo, hi: kernel.run(columns[lo:hi], row), len(columns), sum(blocks)
    )
    assert np.array_equal(np.concatenate(halves), expected)


def test_reopened_store_loads_every_agent_in_bulk(tmp_path: Path) -> None:
    rng = np.random.default_rng(15)
    dim, per_agent = 8, 4700  # 9400 rows: more than one fetchmany chunk of 8192
    path = tmp_path / "bulk.db"
    store = SQLiteStore(path)
    store.bind_embedding("m", dim)
    written = {}
    for agent in ("ada", "bob"):
        vectors = unit_rows(rng, per_agent, dim)
        store.add_facts_bulk(agent, [(NewFact(f"{agent} {i}"), v) for i, v in enumerate(vectors)])
        written[agent] = vectors
    store.close()
    reopened = SQLiteStore(path)
    reopened.bind_embedding("m", dim)
    try:
        index = reopened.index
        assert index is not None and len(index) == 2 * per_agent
        for agent, vectors in written.items():
            ids = np.array([fact.id for fact in reopened.facts(agent)])
            for query in unit_rows(rng, 5, dim):
                hits = index.search(reopened.agent_id(agent), query, 5)
                assert_same_hits(hits, brute_force(ids, vectors, query, 5))
    finally:
        reopened.close()


def test_similarities_are_the_dot_products_of_the_held_rows() -> None:
    rng = np.random.default_rng(16)
    vectors = unit_rows(rng, 10, 8)
    index = VectorIndex(8)
    index.add_many([1] * 5 + [2] * 5, list(range(10)), vectors)
    query = unit_rows(rng, 1, 8)[0]
    found = index.similarities([0, 7, 42], query)
    assert found.keys() == {0, 7}
    assert found[0] == pytest.approx(float(vectors[0] @ query))
    assert found[7] == pytest.approx(float(vectors[7] @ query))


def vec0_message_hits(
    store: SQLiteStore, agent: str, query: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """(message id, cosine) of the same search done by sqlite-vec's vec0 scan (the store of
    record), best first; a zero vector has no cosine distance and matches nothing."""
    found = store._query(
        "SELECT message_id, distance FROM message_vectors "
        "WHERE embedding MATCH ? AND k = ? AND agent_id = ? ORDER BY distance",
        (vector_blob(query), k, store.agent_id(agent)),
    )
    return [
        (int(r["message_id"]), 1.0 - float(r["distance"]))
        for r in found
        if r["distance"] is not None
    ]


def assert_message_index_agrees_with_vec0(store: SQLiteStore, agent: str, dim: int) -> None:
    rng = np.random.default_rng(21)
    for query in unit_rows(rng, 10, dim):
        by_index = [(h.message.id, h.similarity) for h in store.search_messages(agent, query, 7)]
        assert_same_hits(by_index, vec0_message_hits(store, agent, query, 7))


def test_message_index_stays_in_step_with_vec0_through_every_write(tmp_path: Path) -> None:
    """Messages are searched in RAM: every way a message vector is written or deleted
    (logged with it, queued with it, embedded from the backlog, forgotten, the agent deleted,
    reindexed, the store reopened) leaves the same hits as sqlite-vec's scan."""
    rng = np.random.default_rng(20)
    dim = 8
    path = tmp_path / "messages.db"
    store = SQLiteStore(path)
    store.bind_embedding("m", dim)
    for i, vector in enumerate(unit_rows(rng, 40, dim)):
        store.append_embedded_message("ada", "api", "user", f"logged {i}", vector)
        store.append_message_to_learn("ada", "desk", "user", f"queued {i}", vector[::-1].copy())
        store.append_embedded_message("ada", "desk", "assistant", f"later {i}", None)
        store.append_embedded_message("bob", "api", "user", f"bob {i}", vector)
    backlog = store.messages_to_embed(100)
    store.add_message_vectors(list(zip(backlog, unit_rows(rng, len(backlog), dim), strict=True)))
    store.append_embedded_message("ada", "api", "user", "zero", np.zeros(dim, dtype=np.float32))
    assert_message_index_agrees_with_vec0(store, "ada", dim)
    ada = [m.id for m in store.agent_messages("ada", 200)]
    store.forget_messages("ada", ada[::3], actor="test")
    assert_message_index_agrees_with_vec0(store, "ada", dim)
    bob = store.agent_id("bob")
    store.delete_agent("bob", actor="test")
    assert store.message_index is not None
    assert store.message_index.search(bob, unit_rows(rng, 1, dim)[0], 5) == []
    store.reindex("m2", dim, lambda texts: list(unit_rows(rng, len(texts), dim)))
    assert_message_index_agrees_with_vec0(store, "ada", dim)
    store.close()
    reopened = SQLiteStore(path)
    reopened.bind_embedding("m2", dim)
    try:
        assert_message_index_agrees_with_vec0(reopened, "ada", dim)
    finally:
        reopened.close()
