"""Storage engines side by side: SQLite (exact in-memory index) and PostgreSQL (pgvector HNSW).

For each engine and size: bulk insert rate, single-fact insert rate, KNN p50/p95 through the
store and its recall@5 against exact search (PostgreSQL: its exact scan, and HNSW at several
`ef_search`), and the p95 of a hybrid fact search over HTTP (`GET /facts/{agent}?q=`, a memory
server with the fake embedder at 384 dimensions, in this process). Figures are printed, never
asserted.

The vectors are clustered (facts about the same topic lie near each other, as real embeddings
do) and queries are drawn from the same topics as the facts. Within a topic a fact varies
along `--rank` directions of its own: what makes an index's job hard is the local intrinsic
dimension (LID) of the data, and real embeddings have a low one. The script prints the data's
LID (maximum-likelihood estimate over 20 neighbours); `--locomo` embeds the LoCoMo texts
(docs/benchmarks.md, "The LoCoMo data") with the bundled model and prints theirs beside it
(16 at 1k-4k texts).
`--rank 384` gives isotropic noise within a topic, the worst case: its LID grows with the
number of facts (33 at 100k, 55 at 1M), the 1st and 5th neighbours end up equally far,
and no graph index ranks them.

    python scripts/bench_store.py --sizes 100000 --queries 200
    python scripts/bench_store.py --engines postgres --database-url postgresql://...
    python scripts/bench_store.py --sizes 100000 --rank 384 --locomo

PostgreSQL comes from --database-url (an empty database) or a pgserver started in a temporary
folder (the test dependency).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from lobug.app import create_memory_app  # noqa: E402
from lobug.backends import Backends  # noqa: E402
from lobug.config import Settings  # noqa: E402
from lobug.store.engines import open_database  # noqa: E402
from lobug.store.models import NewFact  # noqa: E402
from lobug.store.protocol import Store  # noqa: E402

Matrix = npt.NDArray[np.float32]
DIM = 384
TOPICS = 2000
NOISE = 0.5  # length of the noise added to a topic's unit centre
RANK = 24  # directions a fact varies along within its topic: LID 10 at 100k, 15 at 1M
LID_NEIGHBOURS = 20
TOP_K = 5
AGENT = "bench"
CHUNK = 10_000
SINGLE_INSERTS = 200
EF_VALUES = (40, 100, 200, 400, 1000)
WORDS = "tea garden bicycle sister piano river dentist train coffee violin".split()
KEYWORDS = 500


@dataclass
class Result:
    engine: str
    size: int
    bulk_per_s: float
    single_per_s: float
    knn: dict[str, tuple[float, float, float]]  # label: p50 ms, p95 ms, recall@5
    hybrid_p95_ms: float


@dataclass
class TopicModel:
    """Topic centres on the unit sphere, each with `rank` directions of its own."""

    centres: Matrix
    directions: npt.NDArray[np.float32]  # topics x rank x DIM

    @classmethod
    def random(cls, rng: np.random.Generator, rank: int) -> TopicModel:
        centres = rng.standard_normal((TOPICS, DIM)).astype(np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        directions = rng.standard_normal((TOPICS, rank, DIM)).astype(np.float32)
        directions /= np.linalg.norm(directions, axis=2, keepdims=True)
        return cls(centres, directions)

    def draw(self, rng: np.random.Generator, count: int) -> Matrix:
        """`count` unit vectors: a random topic's centre plus noise of length about NOISE
        along that topic's directions."""
        rank = self.directions.shape[1]
        topics = rng.integers(0, TOPICS, count)
        weights = rng.standard_normal((count, rank)).astype(np.float32) * NOISE / np.sqrt(rank)
        vectors = self.centres[topics]
        order = np.argsort(topics, kind="stable")
        bounds = np.searchsorted(topics[order], np.arange(TOPICS + 1))
        for topic in range(TOPICS):
            rows = order[bounds[topic] : bounds[topic + 1]]
            vectors[rows] += weights[rows] @ self.directions[topic]
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors


def local_intrinsic_dimension(data: Matrix, queries: Matrix) -> float:
    """Median maximum-likelihood LID (Levina and Bickel) of `queries` (rows of `data`)
    from their LID_NEIGHBOURS nearest other rows."""
    estimates = []
    for start in range(0, len(queries), 50):
        similarity = queries[start : start + 50] @ data.T
        nearest = -np.partition(-similarity, LID_NEIGHBOURS + 1, axis=1)[:, : LID_NEIGHBOURS + 1]
        nearest = -np.sort(-nearest, axis=1)[:, 1:]  # the row itself is the most similar
        distances = np.sqrt(np.maximum(2 - 2 * nearest, 1e-12))
        ratios = np.log(distances[:, :-1] / distances[:, -1:])
        estimates.extend(-1 / np.mean(ratios, axis=1))
    return float(np.median(estimates))


def locomo_lid() -> float:
    """The LID of the bundled embedding model's vectors of the LoCoMo texts (turns,
    observations, summaries of the conversations of the LoCoMo data, docs/benchmarks.md)."""
    import json

    from lobug.backends.embedded import LocalEmbedder

    texts: set[str] = set()

    def collect(value: object) -> None:
        if isinstance(value, str) and len(value.split()) >= 4:
            texts.add(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key in ("text", "clean_text") or not isinstance(item, str):
                    collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    for sample in json.loads((ROOT.parent / "shared/bench/locomo-dev.json").read_text()):
        for part in ("conversation", "observation", "event_summary", "session_summary"):
            collect(sample[part])
    data = np.asarray(LocalEmbedder().embed_batch(sorted(texts)), dtype=np.float32)
    return local_intrinsic_dimension(data, data[:: max(1, len(data) // 300)])


def fact_text(i: int) -> str:
    """About 20 facts per size of 100k share each keyword (`tea417`), as names do."""
    return f"note {i}: the user mentioned {keyword(i)}"


def keyword(i: int) -> str:
    return f"{WORDS[i % len(WORDS)]}{(i // len(WORDS)) % KEYWORDS}"


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


@contextlib.contextmanager
def postgres(url: str | None) -> Iterator[Callable[[], str]]:
    """A function returning the URL of a fresh database (a pgserver's, or `url` itself)."""
    if url:
        yield lambda: url
        return
    import psycopg

    folder = Path(tempfile.mkdtemp(prefix="lobug-bench-pg-"))
    folder.chmod(0o755)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        server = pgserver.get_server(folder, cleanup_mode="stop")

    def fresh() -> str:
        name = f"bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(server.get_uri(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return str(server.get_uri(name))

    try:
        yield fresh
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def bulk_fill(store: Store, vectors: Matrix) -> float:
    """Insert every vector as a fact (PostgreSQL: COPY, the HNSW index built afterwards, as
    `migrate-db` does); return facts per second."""
    started = time.perf_counter()
    with _without_hnsw(store):
        for start in range(0, len(vectors), CHUNK):
            rows = [
                (NewFact(fact_text(i)), vectors[i])
                for i in range(start, min(start + CHUNK, len(vectors)))
            ]
            store.add_facts_bulk(AGENT, rows)
    return len(vectors) / (time.perf_counter() - started)


@contextlib.contextmanager
def _without_hnsw(store: Store) -> Iterator[None]:
    url = getattr(store, "url", None)
    if url is None:
        yield
        return
    from lobug.store.postgres.database import connect
    from lobug.store.postgres.vectors import create_vector_indexes, drop_vector_indexes

    conn = connect(url)
    try:
        drop_vector_indexes(conn)
        started = time.perf_counter()
        yield
        print(f"  loaded in {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        create_vector_indexes(conn)
        conn.execute("ANALYZE")
        print(f"  HNSW index built in {time.perf_counter() - started:.0f} s", flush=True)
    finally:
        conn.close()


def single_inserts(store: Store, topics: TopicModel, rng: np.random.Generator) -> float:
    vectors = topics.draw(rng, SINGLE_INSERTS)
    started = time.perf_counter()
    for i, vector in enumerate(vectors):
        store.add_fact(AGENT, NewFact(f"single {i}"), vector)
    return SINGLE_INSERTS / (time.perf_counter() - started)


def knn(store: Store, vectors: Matrix, queries: Matrix) -> tuple[float, float, float]:
    """p50 and p95 ms of `search_facts`, and its recall@5 against exact search (fact ids
    are 1..n in the order of `vectors`)."""
    times, found = [], 0
    for query in queries:
        started = time.perf_counter()
        hits = store.search_facts(AGENT, query, TOP_K)
        times.append((time.perf_counter() - started) * 1000)
        exact = {int(i) + 1 for i in np.argpartition(-(vectors @ query), TOP_K)[:TOP_K]}
        found += len(exact & {hit.fact.id for hit in hits})
    return percentile(times, 50), percentile(times, 95), found / (TOP_K * len(queries))


def knn_results(
    store: Store, vectors: Matrix, queries: Matrix, ef_values: Sequence[int]
) -> dict[str, tuple[float, float, float]]:
    if getattr(store, "url", None) is None:
        return {"exact index": knn(store, vectors, queries)}
    results = {}
    store.exact_scan_rows = len(vectors)  # type: ignore[attr-defined]
    results["exact scan"] = knn(store, vectors, queries)
    store.exact_scan_rows = 0  # type: ignore[attr-defined]
    for ef in ef_values:
        store.ef_search = ef  # type: ignore[attr-defined]
        knn(store, vectors, queries[:10])  # warm the index pages
        results[f"hnsw ef_search={ef}"] = knn(store, vectors, queries)
        print(f"  ef_search {ef}: {results[f'hnsw ef_search={ef}']}", flush=True)
    return results


def hybrid_p95(url: str, queries: int) -> float:
    from tests.fakes import FakeChat, FakeEmbedder
    from tests.live import LiveServer

    # No nightly dream: over every bench fact it would share the CPU with the searches.
    unused = Path(tempfile.gettempdir()) / "unused.db"
    settings = Settings(database_url=url, db_path=unused, dream_at="")
    app = create_memory_app(settings, Backends(FakeChat(), FakeEmbedder(dim=DIM)))
    server = LiveServer(app, start_timeout_s=600)  # SQLite loads its index at start
    times = []
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            for i in range(queries + 5):
                words = f"what about {keyword(i * 7919)} or {keyword(i * 104729)}"
                started = time.perf_counter()
                response = client.get(f"/facts/{AGENT}", params={"q": words, "limit": 10})
                response.raise_for_status()
                if i >= 5:
                    times.append((time.perf_counter() - started) * 1000)
    finally:
        server.stop()
    return percentile(times, 95)


def bench(
    engine: str, url: str, size: int, queries: int, ef_values: Sequence[int], rank: int
) -> Result:
    rng = np.random.default_rng(1234)
    topics = TopicModel.random(rng, rank)
    vectors = topics.draw(rng, size)
    query_vectors = topics.draw(rng, queries)
    lid = local_intrinsic_dimension(vectors, vectors[: min(size, 300)])
    print(f"  the {size} vectors' local intrinsic dimension: {lid:.1f}", flush=True)
    store = open_database(url)
    store.bind_embedding("fake-embed", DIM)
    try:
        bulk = bulk_fill(store, vectors)
        results = knn_results(store, vectors, query_vectors, ef_values)
        single = single_inserts(store, topics, rng)
    finally:
        store.close()
    return Result(engine, size, bulk, single, results, hybrid_p95(url, queries))


def print_results(results: Sequence[Result]) -> None:
    print(
        "\nengine      size      bulk/s  single/s  search                p50 ms  p95 ms  "
        "recall@5  hybrid p95 ms (HTTP)"
    )
    for r in results:
        for label, (p50, p95, recall) in r.knn.items():
            print(
                f"{r.engine:10} {r.size:>8} {r.bulk_per_s:>9.0f} {r.single_per_s:>8.0f}  "
                f"{label:20} {p50:>7.2f} {p95:>7.2f} {recall:>8.3f}  {r.hybrid_p95_ms:>8.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--engines", nargs="+", default=["sqlite", "postgres"])
    parser.add_argument("--database-url", help="an empty PostgreSQL database (default: pgserver)")
    parser.add_argument("--ef", type=int, nargs="+", default=list(EF_VALUES), help="ef_search")
    parser.add_argument("--rank", type=int, default=RANK, help="directions within a topic")
    parser.add_argument("--locomo", action="store_true", help="print the LoCoMo texts' LID")
    args = parser.parse_args()
    if args.locomo:
        print(f"LoCoMo texts' local intrinsic dimension: {locomo_lid():.1f}", flush=True)
    results = []
    with postgres(args.database_url) as fresh, tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            for engine in args.engines:
                url = fresh() if engine == "postgres" else f"sqlite:///{folder}/{size}.db"
                print(f"{engine} at {size} facts ...", flush=True)
                results.append(bench(engine, url, size, args.queries, args.ef, args.rank))
                print_results(results[-1:])
    print_results(results)


if __name__ == "__main__":
    main()
