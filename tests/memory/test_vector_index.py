from __future__ import annotations

import numpy as np
import pytest

from lobug.memory.vector_index import VectorIndex


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
