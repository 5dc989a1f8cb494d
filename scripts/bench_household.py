"""What the household's visibility rule costs a fact search: the same queries through
`MemorySearch.facts` (hybrid: nearest vectors and keywords, then the winners' rows) as the
household's curators read (`everyone`, the baseline, as before people) and as one person of
three (the household's facts and their own private ones), on one SQLite store. A restricted
viewer reads 4k+32 nearest vectors instead of k (`store/sql/visibility.py`), because the
vector index knows no owners; this prints what that costs, and how many of the k facts a
person is given are theirs or the household's (all of them must be: the rule). Figures are
printed, never asserted.

    python scripts/bench_household.py --facts 20000 --queries 200
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from tests.fakes import FakeEmbedder  # noqa: E402

from lobug.config import MemoryConfig  # noqa: E402
from lobug.memory.search import MemorySearch  # noqa: E402
from lobug.store.household import EVERYONE, HOUSEHOLD, PRIVATE, Viewer  # noqa: E402
from lobug.store.models import NewFact  # noqa: E402
from lobug.store.sqlite.engine import SQLiteStore  # noqa: E402

AGENT = "home"
TOP_K = 5
WORDS = "dog cat garden piano bike school train coffee tea doctor dentist car boat".split()


def stored(path: Path, facts: int, embedder: FakeEmbedder) -> tuple[SQLiteStore, list[int]]:
    """A store of `facts` facts: a tenth the household's, the rest private to three people."""
    store = SQLiteStore(path)
    store.bind_embedding(embedder.model, embedder.dimension)
    store.ensure_agent(AGENT)
    people = [store.add_person(AGENT, name, actor="bench").id for name in ("Ana", "Bo", "Cy")]
    rng = np.random.default_rng(7)
    new = []
    for n in range(facts):
        words = " ".join(rng.choice(WORDS, 3))
        owner = None if n % 10 == 0 else people[n % 3]
        scope = HOUSEHOLD if owner is None else PRIVATE
        text = f"Fact {n} about the {words}"
        new.append((NewFact(text, owner_person_id=owner, scope=scope), embedder.embed(text)))
    store.add_facts_bulk(AGENT, new)
    return store, people


def timed(run: Callable[[], object], times: list[float]) -> object:
    started = time.perf_counter()
    found = run()
    times.append((time.perf_counter() - started) * 1000)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    embedder = FakeEmbedder(dim=384)
    with tempfile.TemporaryDirectory() as folder:
        store, people = stored(Path(folder) / "memory.db", args.facts, embedder)
        search = MemorySearch(store, embedder, MemoryConfig())
        person = Viewer.person(people[0])
        rng = np.random.default_rng(11)
        queries = [" ".join(rng.choice(WORDS, 2)) for _ in range(args.queries)]
        vectors = [embedder.embed(q) for q in queries]
        results: dict[str, list[float]] = {"everyone (baseline)": [], "a person of three": []}
        shown, allowed = 0, 0
        for query, vector in zip(queries, vectors, strict=True):
            ask = partial(search.facts, AGENT, query, TOP_K, vector=vector)
            timed(partial(ask, viewer=EVERYONE), results["everyone (baseline)"])
            hits = timed(partial(ask, viewer=person), results["a person of three"])
            for hit in hits:  # type: ignore[attr-defined]
                shown += 1
                allowed += hit.fact.scope == HOUSEHOLD or hit.fact.owner_person_id == people[0]
        store.close()
    print(
        f"{args.facts:,} facts (10% the household's, the rest private to 3 people), "
        f"{args.queries} hybrid searches of k={TOP_K}, SQLite"
    )
    for name, times in results.items():
        print(
            f"  {name:22} p50 {np.percentile(times, 50):6.2f} ms   "
            f"p95 {np.percentile(times, 95):6.2f} ms"
        )
    print(f"  facts given to the person: {shown}, theirs or the household's: {allowed}")


if __name__ == "__main__":
    main()
