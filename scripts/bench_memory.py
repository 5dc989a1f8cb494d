"""Latency benchmarks for Lo-Bug: memory retrieval, the embedded chat model, one /chat/text turn.

Figures are printed, never asserted. Run with `make bench`, or quickly with
`python scripts/bench_memory.py --sizes 1000 --queries 20 --skip-server`.

1. Memory overhead of one turn at several store sizes (random unit vectors, 384 dims): query
   embedding, KNN through the in-memory numpy index and through sqlite-vec side by side, the
   fast path's recall@5 against sqlite-vec, whole `retrieve_context` and its stages (its
   `timings_ms`), and index load on reopen. `--save` writes the retrieval figures to a JSON
   file, `--baseline` prints such a file's figures beside this run's.
2. The embedded chat model (llama.cpp): prompt and generation speed, stream pieces per second.
3. One real `/chat/text` turn per stage, from the `Server-Timing` header of a server subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import httpx
import numpy as np
import numpy.typing as npt

from lobug.backends.base import AbandonCheck, ChatBackend, ChatMessage, JsonSchema
from lobug.backends.embedded import EmbeddedChat, LocalEmbedder
from lobug.config import MemoryConfig
from lobug.memory.manager import MemoryManager
from lobug.store.models import NewFact
from lobug.store.sqlite.engine import SQLiteStore

Vector = npt.NDArray[np.float32]
T = TypeVar("T")

SEED = 1234
DIM = 384
TOP_K = 5
AGENT = "bench"
FILL_CHUNK = 5000
WARMUP = 5
TARGET_SIZE = 100_000
KNN_P95_TARGET_MS = 10.0
# Issue 14: retrieve_context p95, the query embedding included, by stored facts.
RETRIEVE_P95_TARGETS_MS = {100_000: 5.0, 1_000_000: 25.0}
CHAT_RUNS = 3
CHAT_MAX_TOKENS = 128
SERVER_TURNS = 5
SERVER_START_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 180.0

QUERY_SENTENCES = (
    "What did I tell you about my sister's birthday?",
    "Remind me where I parked the car this morning.",
    "Do you remember which coffee I like?",
    "What's the name of my dentist?",
    "When is my next football training?",
    "Which book was I reading last week?",
    "What time does the bakery on the corner open?",
    "How old is my nephew now?",
    "What did we talk about yesterday evening?",
    "Where did I say I wanted to travel this summer?",
    "Is my mother allergic to anything?",
    "What's the wifi password at the cabin?",
    "Which plants need watering on Sundays?",
    "Remind me what my boss asked for on Friday.",
    "Who recommended that podcast to me?",
    "What's my cat's favourite food?",
)

QUERY_LEADS = ("", "Hey, ", "Quick question: ", "Tell me, ", "Sorry, ", "So ", "Hmm, ", "Wait, ")

SERVER_TURN_TEXTS = (
    "Hi, my name is Sam and I live in Lyon.",
    "My sister Clara has her birthday on the third of May.",
    "What would be a good name for a pet tortoise?",
    "I prefer tea over coffee in the mornings.",
    "Remind me, where do I live?",
)

STORY_PROMPTS = (
    "Tell me a short story about a robot bug who lives in a kitchen.",
    "Describe a rainy afternoon in a small mountain village.",
    "Explain to a child why the sky is blue, in a few sentences.",
)

_NAMES = ("Alex", "Clara", "Sam", "Noor", "Jonas", "Mia", "Theo", "Lina", "Omar", "Yuki")
_RELATIONS = ("likes", "dislikes", "owns", "visited", "is learning", "recommended", "bought")
_THINGS = (
    "green tea",
    "the blue bicycle",
    "Italian cooking",
    "jazz records",
    "a sourdough starter",
    "the city library",
    "chess openings",
    "hiking boots",
    "a small garden",
    "old maps",
)


# ---------------------------------------------------------------------- small helpers


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def timed_ms(call: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = call()
    return result, ms_since(started)


def fmt(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}"


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    line = "  ".join("-" * w for w in widths)
    print(f"\n{title}")
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    print(line)
    for row in rows:
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))


def random_unit_vectors(rng: np.random.Generator, count: int, dim: int = DIM) -> Vector:
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def cycled(items: Sequence[str], count: int) -> list[str]:
    return [items[i % len(items)] for i in range(count)]


def distinct_queries(count: int) -> list[str]:
    """`count` different questions: the query sentences behind lead-ins, numbered past the
    combinations, so no query repeats (nothing a repeat could cache helps)."""
    combined = [f"{lead}{sentence}" for lead in QUERY_LEADS for sentence in QUERY_SENTENCES]
    return [
        combined[i % len(combined)] + (f" ({i // len(combined)})" if i >= len(combined) else "")
        for i in range(count)
    ]


class UnusedChat(ChatBackend):
    """`retrieve_context` never calls the chat model; this stand-in fails loudly if it does."""

    name = "unused"

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.7,
        json_schema: JsonSchema | None = None,
        background: bool = False,
        abandoned: AbandonCheck | None = None,
    ) -> str:
        raise RuntimeError("the benchmark's chat stand-in was called")

    def is_available(self) -> bool:
        return False


# ---------------------------------------------------------------------- 1. memory retrieval


@dataclass
class SizeResult:
    size: int
    fill_s: float
    reopen_s: float
    embed_ms: list[float]
    knn_fast_ms: list[float]
    knn_index_ms: list[float]
    knn_sqlite_ms: list[float]
    recall_at_k: float
    retrieve_ms: list[float]
    stages_ms: dict[str, list[float]]


@dataclass
class KnnTimes:
    fast_ms: list[float]
    index_ms: list[float]
    sqlite_ms: list[float]
    recall_at_k: float


def synthetic_fact(i: int) -> NewFact:
    name = _NAMES[i % len(_NAMES)]
    relation = _RELATIONS[(i // len(_NAMES)) % len(_RELATIONS)]
    thing = _THINGS[(i // 7) % len(_THINGS)]
    return NewFact(content=f"{name} {relation} {thing} (note {i})", fact_type="knowledge")


def fill_store(store: SQLiteStore, size: int, rng: np.random.Generator) -> float:
    """Insert `size` synthetic facts with random unit vectors; return seconds taken."""
    started = time.perf_counter()
    for start in range(0, size, FILL_CHUNK):
        count = min(FILL_CHUNK, size - start)
        vectors = random_unit_vectors(rng, count)
        rows = [(synthetic_fact(start + i), vectors[i]) for i in range(count)]
        store.add_facts_bulk(AGENT, rows)
    return time.perf_counter() - started


def open_bound_store(path: Path) -> tuple[SQLiteStore, float]:
    """Open the store and load its index the way the server does; return it and the seconds."""
    started = time.perf_counter()
    store = SQLiteStore(path)
    store.bind_embedding("bench", DIM)
    return store, time.perf_counter() - started


def time_embedding(embedder: LocalEmbedder, sentences: Sequence[str]) -> list[float]:
    for sentence in sentences[:WARMUP]:
        embedder.embed(sentence)
    return [timed_ms(partial(embedder.embed, sentence))[1] for sentence in sentences]


def index_search_ms(store: SQLiteStore, agent_id: int, query: Vector) -> float:
    index = store.index
    if index is None:
        raise RuntimeError("store has no index: bind_embedding() was not called")
    return timed_ms(lambda: index.search(agent_id, query, TOP_K))[1]


def time_knn(store: SQLiteStore, queries: Vector) -> KnnTimes:
    """Fast path and sqlite-vec on the same queries, interleaved, plus the fast path's recall."""
    agent_id = store.agent_id(AGENT)
    for query in queries[:WARMUP]:
        store.search_facts(AGENT, query, TOP_K)
        store.search_facts_sqlite(AGENT, query, TOP_K)
    times = KnnTimes([], [], [], 0.0)
    found = expected = 0
    for query in queries:
        fast, fast_ms = timed_ms(partial(store.search_facts, AGENT, query, TOP_K))
        exact, sqlite_ms = timed_ms(partial(store.search_facts_sqlite, AGENT, query, TOP_K))
        times.fast_ms.append(fast_ms)
        times.sqlite_ms.append(sqlite_ms)
        times.index_ms.append(index_search_ms(store, agent_id, query))
        exact_ids = {hit.fact.id for hit in exact}
        found += len(exact_ids & {hit.fact.id for hit in fast})
        expected += len(exact_ids)
    times.recall_at_k = found / expected if expected else float("nan")
    return times


def time_retrieve(
    manager: MemoryManager, sentences: Sequence[str]
) -> tuple[list[float], dict[str, list[float]]]:
    """Whole `retrieve_context` per question, and each stage it times (`timings_ms`)."""
    for sentence in sentences[:WARMUP]:
        manager.retrieve_context(AGENT, sentence)
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    for sentence in sentences:
        context, total_ms = timed_ms(partial(manager.retrieve_context, AGENT, sentence))
        totals.append(total_ms)
        for stage, stage_ms in context.timings_ms.items():
            stages.setdefault(stage, []).append(stage_ms)
    return totals, stages


def bench_size(size: int, queries: int, embedder: LocalEmbedder, workdir: Path) -> SizeResult:
    rng = np.random.default_rng(SEED + size)
    path = workdir / f"facts-{size}.db"
    store, _ = open_bound_store(path)
    fill_s = fill_store(store, size, rng)
    store.close()
    del store  # drop the first index before the reopened one is built
    store, reopen_s = open_bound_store(path)
    try:
        sentences = distinct_queries(queries)
        knn = time_knn(store, random_unit_vectors(rng, queries))
        manager = MemoryManager(store, UnusedChat(), embedder, MemoryConfig())
        retrieve_ms, stages_ms = time_retrieve(manager, sentences)
        return SizeResult(
            size=size,
            fill_s=fill_s,
            reopen_s=reopen_s,
            embed_ms=time_embedding(embedder, sentences),
            knn_fast_ms=knn.fast_ms,
            knn_index_ms=knn.index_ms,
            knn_sqlite_ms=knn.sqlite_ms,
            recall_at_k=knn.recall_at_k,
            retrieve_ms=retrieve_ms,
            stages_ms=stages_ms,
        )
    finally:
        store.close()


def p50_p95(values: Sequence[float]) -> str:
    return f"{fmt(percentile(values, 50))} / {fmt(percentile(values, 95))}"


def print_memory_results(results: Sequence[SizeResult], queries: int) -> None:
    print_table(
        f"Memory store build and reopen ({DIM} dims, bulk insert {FILL_CHUNK} per call)",
        ["facts", "fill s", "reopen+load index s"],
        [[f"{r.size:,}", fmt(r.fill_s), fmt(r.reopen_s)] for r in results],
    )
    print_table(
        f"Per-turn memory latency, p50 / p95 in ms ({queries} queries, top-{TOP_K})",
        [
            "facts",
            "embed query",
            "KNN numpy (store)",
            "numpy index only",
            "KNN sqlite-vec",
            f"recall@{TOP_K}",
            "retrieve_context",
        ],
        [
            [
                f"{r.size:,}",
                p50_p95(r.embed_ms),
                p50_p95(r.knn_fast_ms),
                p50_p95(r.knn_index_ms),
                p50_p95(r.knn_sqlite_ms),
                fmt(r.recall_at_k, 3),
                p50_p95(r.retrieve_ms),
            ]
            for r in results
        ],
    )
    print(
        "  'KNN numpy (store)' is store.search_facts (index search + fact rows from SQLite);\n"
        "  'numpy index only' is store.index.search alone."
    )
    print_targets(results)


def target_row(label: str, target_ms: float, values: Sequence[float] | None) -> list[str]:
    if values is None:
        return [label, f"<= {fmt(target_ms, 0)} ms", "not measured", "-"]
    p95 = percentile(values, 95)
    verdict = "met" if p95 <= target_ms else "missed"
    return [label, f"<= {fmt(target_ms, 0)} ms", f"{fmt(p95)} ms", verdict]


def print_targets(results: Sequence[SizeResult]) -> None:
    by_size = {r.size: r for r in results}
    at_target = by_size.get(TARGET_SIZE)
    knn = at_target.knn_fast_ms if at_target else None
    rows = [target_row(f"KNN p95 at {TARGET_SIZE:,} (search_facts)", KNN_P95_TARGET_MS, knn)]
    for size, target_ms in RETRIEVE_P95_TARGETS_MS.items():
        measured = by_size.get(size)
        retrieve = measured.retrieve_ms if measured else None
        rows.append(target_row(f"retrieve_context p95 at {size:,}", target_ms, retrieve))
    print_table("Targets", ["measure", "target", "p95", "result"], rows)


STAGE_NAMES = {
    "embed_query": "embed query",
    "knn": "fact search (vector + keywords + rows)",
    "episodes": "episodes (and a named time's messages)",
}
Figures = dict[str, dict[str, list[float]]]  # size -> measure -> [p50, p95]


def retrieval_figures(results: Sequence[SizeResult]) -> Figures:
    """p50 and p95 of `retrieve_context` and its stages, by store size."""
    return {
        str(r.size): {
            name: [percentile(values, 50), percentile(values, 95)]
            for name, values in {"retrieve_context": r.retrieve_ms, **r.stages_ms}.items()
        }
        for r in results
    }


def print_stage_table(figures: Figures, baseline: Figures | None) -> None:
    """Each size's retrieval stages, p50 / p95, beside the baseline's where one is given."""
    headers = ["facts", "stage", "p50 / p95"] + (["baseline p50 / p95"] if baseline else [])
    rows = []
    for size, measures in figures.items():
        for name, (p50, p95) in measures.items():
            row = [f"{int(size):,}", STAGE_NAMES.get(name, name), f"{fmt(p50)} / {fmt(p95)}"]
            if baseline is not None:
                before = baseline.get(size, {}).get(name)
                row.append(f"{fmt(before[0])} / {fmt(before[1])}" if before else "-")
            rows.append(row)
    print_table("retrieve_context by stage in ms (its timings_ms)", headers, rows)


def run_memory_section(
    sizes: Sequence[int], queries: int, save: Path | None, baseline: Path | None
) -> None:
    print("=" * 100)
    print("1. Memory overhead of one turn")
    embedder, load_ms = timed_ms(LocalEmbedder)
    print(f"LocalEmbedder ({embedder.model}) loaded in {fmt(load_ms, 0)} ms")
    results = []
    with tempfile.TemporaryDirectory(prefix="lobug-bench-") as workdir:
        for size in sizes:
            print(f"  measuring {size:,} facts ...", flush=True)
            results.append(bench_size(size, queries, embedder, Path(workdir)))
    embedder.close()
    print_memory_results(results, queries)
    figures = retrieval_figures(results)
    print_stage_table(figures, json.loads(baseline.read_text()) if baseline else None)
    if save is not None:
        save.write_text(json.dumps(figures, indent=1))
        print(f"  retrieval figures saved to {save}")


# ---------------------------------------------------------------------- 2. embedded chat


@dataclass
class ChatRun:
    complete_wall_ms: float
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    prompt_per_s: float
    generation_per_s: float
    stream_wall_ms: float
    first_piece_ms: float
    pieces: int

    @property
    def pieces_per_s(self) -> float:
        generating_s = (self.stream_wall_ms - self.first_piece_ms) / 1000.0
        return (self.pieces - 1) / generating_s if self.pieces > 1 and generating_s > 0 else 0.0


def story_messages(prompt: str) -> list[ChatMessage]:
    return [{"role": "user", "content": prompt}]


def raw_completion(chat: EmbeddedChat, messages: list[ChatMessage]) -> dict[str, Any]:
    """The llama.cpp server's full answer (usage and timings), which complete() drops.

    Reaches into EmbeddedChat's private server: a benchmark-only shortcut."""
    body = {"messages": messages, "max_tokens": CHAT_MAX_TOKENS, "temperature": 0.0}
    with chat._turns.person():
        result: dict[str, Any] = chat._server.handle_chat_completions(body)
    return result


def time_stream(chat: EmbeddedChat, messages: list[ChatMessage]) -> tuple[float, float, int]:
    """Wall ms, ms to the first piece, and the number of pieces of one stream() call."""
    started = time.perf_counter()
    first_ms = 0.0
    pieces = 0
    for _ in chat.stream(messages, max_tokens=CHAT_MAX_TOKENS, temperature=0.0):
        if pieces == 0:
            first_ms = ms_since(started)
        pieces += 1
    return ms_since(started), first_ms, pieces


def chat_run(chat: EmbeddedChat, prompt: str) -> ChatRun:
    messages = story_messages(prompt)
    result, wall_ms = timed_ms(lambda: raw_completion(chat, messages))
    timings = result.get("timings", {})
    usage = result.get("usage", {})
    stream_ms, first_ms, pieces = time_stream(chat, story_messages(prompt + " Be creative."))
    return ChatRun(
        complete_wall_ms=wall_ms,
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        cached_tokens=int(timings.get("cache_n", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
        prompt_per_s=float(timings.get("prompt_per_second", 0.0)),
        generation_per_s=float(timings.get("predicted_per_second", 0.0)),
        stream_wall_ms=stream_ms,
        first_piece_ms=first_ms,
        pieces=pieces,
    )


ChatColumn = tuple[str, Callable[[ChatRun], float], int]

CHAT_COLUMNS: tuple[ChatColumn, ...] = (
    ("complete ms", lambda r: r.complete_wall_ms, 0),
    ("prompt tok", lambda r: r.prompt_tokens, 0),
    ("cached tok", lambda r: r.cached_tokens, 0),
    ("gen tok", lambda r: r.completion_tokens, 0),
    ("prompt tok/s", lambda r: r.prompt_per_s, 1),
    ("gen tok/s", lambda r: r.generation_per_s, 1),
    ("stream ms", lambda r: r.stream_wall_ms, 0),
    ("1st piece ms", lambda r: r.first_piece_ms, 0),
    ("pieces", lambda r: r.pieces, 0),
    ("pieces/s", lambda r: r.pieces_per_s, 1),
)


def print_chat_results(model: str, load_ms: float, runs: Sequence[ChatRun]) -> None:
    print(f"EmbeddedChat ({model}) loaded in {fmt(load_ms, 0)} ms; max_tokens={CHAT_MAX_TOKENS}")
    rows = [
        [str(i + 1), *(fmt(value(run), digits) for _, value, digits in CHAT_COLUMNS)]
        for i, run in enumerate(runs)
    ]
    medians = [statistics.median(value(run) for run in runs) for _, value, _ in CHAT_COLUMNS]
    rows.append(
        [
            "median",
            *(fmt(m, digits) for m, (_, _, digits) in zip(medians, CHAT_COLUMNS, strict=True)),
        ]
    )
    print_table(
        "Embedded chat model (complete: llama.cpp's own timings; stream: pieces as tokens)",
        ["run", *(header for header, _, _ in CHAT_COLUMNS)],
        rows,
    )


def warm_up_chat(chat: EmbeddedChat) -> None:
    """One short answer first, so the runs below do not pay for page faults in the weights."""
    chat.complete(story_messages("Say hello."), max_tokens=8, temperature=0.0)


def run_chat_section() -> None:
    print("=" * 100)
    print("2. Embedded chat model speed")
    chat, load_ms = timed_ms(EmbeddedChat)
    try:
        warm_up_chat(chat)
        runs = [chat_run(chat, STORY_PROMPTS[i % len(STORY_PROMPTS)]) for i in range(CHAT_RUNS)]
    finally:
        chat.close()
    print_chat_results(chat.model, load_ms, runs)


# ---------------------------------------------------------------------- 3. /chat/text turn


@dataclass
class TurnResult:
    status: int
    client_ms: float
    stages_ms: dict[str, float]


def parse_server_timing(header: str) -> dict[str, float]:
    """`name;dur=12.3, name2;dur=4.5` -> {"name": 12.3, "name2": 4.5}; entries without dur skip."""
    stages: dict[str, float] = {}
    for entry in header.split(","):
        name, *params = (part.strip() for part in entry.split(";"))
        for param in params:
            key, _, value = param.partition("=")
            if name and key.strip() == "dur":
                stages[name] = float(value.strip().strip('"'))
    return stages


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_env(db_path: Path) -> dict[str, str]:
    """The caller's environment without LOBUG_* settings (tokens, backends), plus ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOBUG_")}
    env.update(LOBUG_DB_PATH=str(db_path), LOBUG_LLM_BACKEND="embedded", LOBUG_HOST="127.0.0.1")
    return env


def start_server(workdir: Path, port: int, log_file: Any) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "lobug", "serve", "--port", str(port)]
    return subprocess.Popen(
        command,
        env=server_env(workdir / "bench.db"),
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )


def wait_until_healthy(client: httpx.Client, process: subprocess.Popen[bytes]) -> float:
    """Poll GET /health until it answers 200; return the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < SERVER_START_TIMEOUT_S:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode} while starting")
        try:
            if client.get("/health", timeout=2.0).status_code == 200:
                return time.perf_counter() - started
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"server not healthy after {SERVER_START_TIMEOUT_S:.0f} s")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def post_turn(client: httpx.Client, text: str) -> TurnResult:
    """One turn; a timed-out request comes back with status 0 and no stages."""
    started = time.perf_counter()
    try:
        response = client.post("/chat/text", json={"text": text}, headers={"X-Device-Id": "bench"})
    except httpx.TimeoutException:
        print(f"  /chat/text timed out after {REQUEST_TIMEOUT_S:.0f} s")
        return TurnResult(0, ms_since(started), {})
    client_ms = ms_since(started)
    if response.status_code != 200:
        print(f"  /chat/text answered {response.status_code}: {response.text[:200]}")
    stages = parse_server_timing(response.headers.get("server-timing", ""))
    return TurnResult(response.status_code, client_ms, stages)


def post_turns(client: httpx.Client) -> list[TurnResult]:
    """Post the turns back to back, stopping at the first timeout."""
    turns: list[TurnResult] = []
    for text in cycled(SERVER_TURN_TEXTS, SERVER_TURNS):
        turns.append(post_turn(client, text))
        if turns[-1].status == 0:
            break
    return turns


def stage_names(turns: Sequence[TurnResult]) -> list[str]:
    names: list[str] = []
    for turn in turns:
        names.extend(name for name in turn.stages_ms if name not in names)
    return names


def spread_row(name: str, values: Sequence[float]) -> list[str]:
    if not values:
        return [name, "-", "-", "-"]
    return [name, fmt(statistics.median(values), 1), fmt(min(values), 1), fmt(max(values), 1)]


def per_turn_row(number: int, turn: TurnResult) -> list[str]:
    def stage(name: str) -> str:
        return fmt(turn.stages_ms[name], 1) if name in turn.stages_ms else "-"

    status = str(turn.status) if turn.status else "timeout"
    return [str(number), status, fmt(turn.client_ms, 1), stage("retrieve"), stage("llm")]


def print_turn_results(turns: Sequence[TurnResult], startup_s: float) -> None:
    print(f"Server healthy after {fmt(startup_s)} s; {len(turns)} turns posted back to back")
    rows = [
        spread_row(name, [t.stages_ms[name] for t in turns if name in t.stages_ms])
        for name in stage_names(turns)
    ]
    rows.append(spread_row("client wall", [t.client_ms for t in turns]))
    print_table(
        "/chat/text by stage in ms (Server-Timing; retrieve_* are inside retrieve)",
        ["stage", "median", "min", "max"],
        rows,
    )
    print_table(
        "/chat/text per turn in ms",
        ["turn", "status", "client wall", "retrieve", "llm"],
        [per_turn_row(i + 1, t) for i, t in enumerate(turns)],
    )
    print(
        "  From turn 2 on, 'llm' includes waiting for the previous turn's background fact\n"
        "  extraction, which holds the same llama.cpp lock; turn 1 is the uncontended figure."
    )


def print_log_tail(log_path: Path, lines: int = 20) -> None:
    tail = log_path.read_text(errors="replace").splitlines()[-lines:]
    print("  server log tail:\n    " + "\n    ".join(tail))


def run_server_section() -> None:
    print("=" * 100)
    print("3. One /chat/text turn by stage (server subprocess, embedded backends)")
    with tempfile.TemporaryDirectory(prefix="lobug-bench-server-") as tmp:
        workdir = Path(tmp)
        log_path = workdir / "server.log"
        port = free_port()
        with log_path.open("wb") as log_file:
            process = start_server(workdir, port, log_file)
            try:
                turns, startup_s = drive_server(process, port)
            except RuntimeError as exc:
                print(f"  server benchmark failed: {exc}")
                print_log_tail(log_path)
                return
            finally:
                stop_server(process)
    print_turn_results(turns, startup_s)


def drive_server(process: subprocess.Popen[bytes], port: int) -> tuple[list[TurnResult], float]:
    base_url = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base_url, timeout=REQUEST_TIMEOUT_S) as client:
        startup_s = wait_until_healthy(client, process)
        turns = post_turns(client)
    return turns, startup_s


# ---------------------------------------------------------------------- entry point


def parse_sizes(raw: str) -> list[int]:
    try:
        sizes = [int(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes must be integers, got {raw!r}") from None
    if not sizes or any(size <= 0 for size in sizes):
        raise argparse.ArgumentTypeError("--sizes must be positive integers")
    return sizes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[1000, 10000, 100000],
        help="stored fact counts, comma-separated (default 1000,10000,100000)",
    )
    parser.add_argument("--queries", type=int, default=200, help="queries per size (default 200)")
    parser.add_argument(
        "--skip-chat", action="store_true", help="skip section 2 (the embedded chat model)"
    )
    parser.add_argument("--save", type=Path, help="write the retrieval figures to this JSON file")
    parser.add_argument(
        "--baseline", type=Path, help="print the retrieval figures of a --save file beside"
    )
    parser.add_argument(
        "--skip-server",
        action="store_true",
        help="skip section 3 (the /chat/text server subprocess)",
    )
    args = parser.parse_args(argv)
    if args.queries < 1:
        parser.error("--queries must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    run_memory_section(args.sizes, args.queries, args.save, args.baseline)
    if not args.skip_chat:
        run_chat_section()
    if not args.skip_server:
        run_server_section()
    print(f"\nTotal benchmark time: {fmt(time.perf_counter() - started, 1)} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
