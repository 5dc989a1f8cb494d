"""Retrieval quality on LoCoMo (docs/benchmarks.md, "The LoCoMo data"): keyword-only (BM25),
vector-only and hybrid search, side by side in the same run, through the public memory API.

For each conversation an agent is created and every turn is posted as a message ("Speaker:
text", the turn's dia_id in metadata, not learned from); each question with evidence is then
searched and the evidence turns looked for in the results. Printed: recall@5, recall@10 and
hit@10 of categories 1-4 (the answerable questions), recall@10 per category with the
adversarial ones (5) apart, ingest rate and search latency.

The conversations are split by conversation, the same way every run: `dev` (the 1st, 3rd, 5th...
by sample id; tune on these only) and `test` (the others). `--db PATH` keeps the ingested
database to reuse in the next run (the ingest is most of the time).

    .venv/bin/python scripts/bench_locomo.py [--data PATH] [--split dev|test|all] [--db PATH]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server")]

from fastapi.testclient import TestClient  # noqa: E402

from lobug.app import create_memory_app  # noqa: E402
from lobug.config import Settings  # noqa: E402

MODES = ("keyword", "vector", "hybrid")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ANSWERABLE = (1, 2, 3, 4)
SPLITS = ("dev", "test", "all")
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "locomo-dev.json"


@dataclass
class Scores:
    recall5: list[float] = field(default_factory=list)
    recall10: list[float] = field(default_factory=list)
    hit10: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)

    def add(self, evidence: set[str], found: list[str], latency_ms: float) -> None:
        self.recall5.append(len(evidence & set(found[:5])) / len(evidence))
        self.recall10.append(len(evidence & set(found[:10])) / len(evidence))
        self.hit10.append(1.0 if evidence & set(found[:10]) else 0.0)
        self.latency_ms.append(latency_ms)


def turns(conversation: dict[str, Any]) -> list[dict[str, str]]:
    sessions = sorted(
        (key for key in conversation if key.startswith("session_") and key[8:].isdigit()),
        key=lambda key: int(key[8:]),
    )
    return [turn for key in sessions for turn in conversation[key]]


def split(data: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The conversations of a split: by position in sample-id order, even ones dev, odd test."""
    ordered = sorted(data, key=lambda conversation: conversation["sample_id"])
    if name == "all":
        return ordered
    return [c for i, c in enumerate(ordered) if (i % 2 == 0) == (name == "dev")]


def ingest(client: TestClient, agent: str, conversation: dict[str, Any]) -> int:
    created = client.post("/agents", json={"name": agent})
    assert created.status_code in (200, 201), created.text
    if client.get(f"/messages/{agent}", params={"limit": 1}).json():  # kept (--db)
        return 0
    count = 0
    for turn in turns(conversation):
        body = {
            "agent_name": agent,
            "role": "user",
            "content": f"{turn['speaker']}: {turn['text']}",
            "metadata": {"dia_id": turn["dia_id"]},
            "learn": False,
        }
        response = client.post("/messages", json=body)
        assert response.status_code in (200, 201), response.text
        count += 1
    return count


def search(client: TestClient, agent: str, question: str, mode: str) -> tuple[list[str], float]:
    started = time.perf_counter()
    response = client.post(
        "/messages/search",
        json={"agent_name": agent, "query": question, "limit": 10, "mode": mode},
    )
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, response.text
    return [(m.get("metadata") or {}).get("dia_id", "") for m in response.json()], elapsed


def evaluate(data: list[dict[str, Any]], db: Path) -> None:
    overall = {mode: Scores() for mode in MODES}
    per_category: dict[str, defaultdict[int, Scores]] = {m: defaultdict(Scores) for m in MODES}
    # No nightly dream: it would share the CPU with the searches being timed.
    settings = Settings(db_path=db, speech_enabled=False, dream_at="")
    with TestClient(create_memory_app(settings), base_url="http://localhost") as client:
        for client_log in ("httpx", "httpx2"):  # the test client's line per request
            logging.getLogger(client_log).setLevel(logging.WARNING)
        started = time.perf_counter()
        messages = sum(ingest(client, c["sample_id"], c["conversation"]) for c in data)
        ingest_s = time.perf_counter() - started
        for conversation in data:
            for qa in conversation["qa"]:
                if qa.get("category") not in CATEGORIES or not qa.get("evidence"):
                    continue
                evidence = set(qa["evidence"])
                for mode in MODES:
                    found, latency = search(client, conversation["sample_id"], qa["question"], mode)
                    if qa["category"] in ANSWERABLE:
                        overall[mode].add(evidence, found, latency)
                    per_category[mode][qa["category"]].add(evidence, found, latency)
    report(overall, per_category, messages, ingest_s)


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def report(
    overall: dict[str, Scores],
    per_category: dict[str, defaultdict[int, Scores]],
    messages: int,
    ingest_s: float,
) -> None:
    questions = len(overall["hybrid"].recall10)
    if messages:
        print(
            f"Ingested {messages} messages in {ingest_s:.1f} s ({messages / ingest_s:.0f} msg/s, "
            "each embedded, through POST /messages)"
        )
    print(f"{questions} questions (categories 1-4)\n")
    print(
        f"{'mode':>8} {'recall@5':>9} {'recall@10':>10} {'hit@10':>7} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for mode in MODES:
        s = overall[mode]
        print(
            f"{mode:>8} {mean(s.recall5):9.3f} {mean(s.recall10):10.3f} {mean(s.hit10):7.3f} "
            f"{percentile(s.latency_ms, 0.5):7.1f} {percentile(s.latency_ms, 0.95):7.1f}"
        )
    print("\nrecall@10 by category")
    print(f"{'category':>16} {'n':>4} " + " ".join(f"{mode:>8}" for mode in MODES))
    for category, name in CATEGORIES.items():
        n = len(per_category["hybrid"][category].recall10)
        cells = " ".join(f"{mean(per_category[m][category].recall10):8.3f}" for m in MODES)
        print(f"{name:>16} {n:4d} {cells}")
    best_baseline = max(mean(overall["keyword"].recall10), mean(overall["vector"].recall10))
    verdict = "above" if mean(overall["hybrid"].recall10) > best_baseline else "NOT above"
    print(f"\nhybrid recall@10 is {verdict} both baselines (target: above)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=0, help="0 = all")
    parser.add_argument("--split", choices=SPLITS, default="all")
    parser.add_argument("--db", type=Path, help="database to keep and reuse (default: temporary)")
    args = parser.parse_args()
    data = split(json.loads(args.data.read_text()), args.split)
    if args.conversations:
        data = data[: args.conversations]
    print(f"LoCoMo {args.split}: {', '.join(c['sample_id'] for c in data)}")
    if args.db:
        evaluate(data, args.db)
        return
    with tempfile.TemporaryDirectory() as folder:
        evaluate(data, Path(folder) / "locomo.db")


if __name__ == "__main__":
    main()
