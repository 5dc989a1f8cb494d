"""`POST /context/{agent}` over HTTP at 10k and 100k stored messages and facts: p50/p95.

    PYTHONPATH=server python scripts/bench_context.py [--sizes 10000 100000] [--queries 50]

The memory server runs in this process (uvicorn, a real socket). Its embedder is a hashing
stand-in (384 dimensions, microseconds per text), so the figures are the store, the searches
and the budgeted assembly; a real embedder adds its own time per query (the query is embedded
once, for facts, episodes and messages). Messages and facts are written in bulk, straight into the
store, before the server starts.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvicorn

from lobug.app import create_memory_app
from lobug.backends import Backends
from lobug.backends.base import ChatBackend, ChatMessage, Embedder, Vector
from lobug.config import Settings
from lobug.store.models import NewFact
from lobug.store.sqlite.database import vector_blob
from lobug.store.sqlite.engine import SQLiteStore

DIM = 384
AGENT = "bench"
CHUNK = 5000
WORDS = "cello lisbon sister dentist garden kayak coffee jazz marathon paris dog rex".split()


class HashingEmbedder(Embedder):
    name = "hashing"
    model = "bench-hashing"

    @property
    def dimension(self) -> int:
        return DIM

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> Vector:
        vector = np.zeros(DIM, dtype=np.float32)
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % DIM] += 1
        vector[0] += 0.01
        return vector / np.linalg.norm(vector)


class UnusedChat(ChatBackend):
    """Never asked: nothing is learned during the benchmark."""

    name = "unused"
    model = "unused"

    def complete(self, messages: Sequence[ChatMessage], **_: Any) -> str:
        raise RuntimeError("the benchmark's chat stand-in was called")

    def is_available(self) -> bool:
        return False


def text(i: int) -> str:
    first, second = WORDS[i % len(WORDS)], WORDS[(i // 7) % len(WORDS)]
    return f"note {i}: the user mentioned {first} and {second}"


def fill(path: Path, size: int, embedder: HashingEmbedder) -> float:
    started = time.perf_counter()
    store = SQLiteStore(path)
    store.bind_embedding(embedder.model, DIM)
    agent_id = store.ensure_agent(AGENT).id
    for start in range(0, size, CHUNK):
        batch = [text(i) for i in range(start, min(size, start + CHUNK))]
        vectors = embedder.embed_batch(batch)
        store.add_facts_bulk(
            AGENT, [(NewFact(t, "knowledge"), v) for t, v in zip(batch, vectors, strict=True)]
        )
        with store._transaction() as conn:  # bulk, for the benchmark only
            for n, (content, vector) in enumerate(zip(batch, vectors, strict=True)):
                cursor = conn.execute(
                    "INSERT INTO conversation_log(agent_id, device_id, role, content, created_at) "
                    "VALUES (?, 'api', ?, ?, ?)",
                    (agent_id, "user" if n % 2 == 0 else "assistant", content, time.time()),
                )
                conn.execute(
                    "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (?,?,?)",
                    (cursor.lastrowid, agent_id, vector_blob(vector)),
                )
    store.close()
    return time.perf_counter() - started


def serve(settings: Settings, embedder: HashingEmbedder) -> tuple[uvicorn.Server, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    app = create_memory_app(settings, Backends(UnusedChat(), embedder))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}"


def bench(size: int, queries: int, workdir: Path) -> None:
    embedder = HashingEmbedder()
    path = workdir / f"context-{size}.db"
    fill_s = fill(path, size, embedder)
    # No nightly dream: it would share the CPU with the requests being timed.
    settings = Settings(db_path=path, maintenance_interval_s=3600, dream_at="")
    server, url = serve(settings, embedder)
    times = []
    with httpx.Client(base_url=url, timeout=60) as http:
        for q in range(queries + 3):
            query = f"what about {WORDS[q % len(WORDS)]} and {WORDS[(q * 5) % len(WORDS)]}?"
            started = time.perf_counter()
            response = http.post(f"/context/{AGENT}", json={"query": query})
            elapsed = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            if q >= 3:  # the first calls warm the caches
                times.append(elapsed)
    server.should_exit = True
    body = response.json()
    p95 = statistics.quantiles(times, n=20)[18]
    print(
        f"{size:>7} messages + {size} facts  fill {fill_s:6.1f} s  "
        f"/context p50 {statistics.median(times):6.1f} ms  p95 {p95:6.1f} ms  "
        f"({body['tokens']} tokens, {len(body['facts'])} facts, "
        f"{len(body['relevant_messages'])} messages)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        for size in args.sizes:
            bench(size, args.queries, Path(workdir))


if __name__ == "__main__":
    main()
