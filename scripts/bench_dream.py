"""How long a dream takes on the default models (issue 14): an agent with 5,000 facts (real
MiniLM embeddings, some near-duplicates and contradictions planted) and a few episodes, one
dream with the embedded chat model (base memory rewritten, topics rebuilt and named), beside
its dry run (the plan alone, no model) in the same run.

    .venv/bin/python scripts/bench_dream.py [--facts 5000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from lobug.backends import build_chat, build_embedder  # noqa: E402
from lobug.backends.base import Embedder  # noqa: E402
from lobug.config import Settings  # noqa: E402
from lobug.memory.dream import Dreamer  # noqa: E402
from lobug.memory.topics import TopicBuilder  # noqa: E402
from lobug.store.models import NewFact, Topic  # noqa: E402
from lobug.store.sqlite.engine import SQLiteStore  # noqa: E402

AGENT = "bench"
FIRST_NAMES = (
    "Alex Clara Sam Noor Jonas Mia Theo Lina Omar Yuki Ana Ben Carla David Elif Farid Greta "
    "Hugo Ines Jakob Kemal Lea Marco Nadia Oskar Paula Quentin Rosa Stefan Tara Umut Vera "
    "Wim Xenia Yara Zoe Anton Bianca Cem Dora Emil Fiona Gustav Hana Igor Julia Karim Luisa "
    "Milan Nora"
).split()
# 100 family names: a first part and an ending ("Berger", "Novak", ...).
FAMILY_NAMES = [
    head + tail
    for head in ("Ber", "No", "Fal", "Kru", "Mar", "San", "Ols", "Pet", "Ros", "Vid")
    for tail in ("ger", "vak", "ko", "sen", "tin", "dez", "son", "rov", "ini", "al")
]
LIKES = (
    "green tea",
    "jazz records",
    "Italian cooking",
    "chess",
    "hiking in the Alps",
    "old maps",
    "sourdough bread",
    "the city library",
    "watercolour painting",
    "cycling to work",
    "science fiction novels",
    "board games",
    "gardening",
    "Japanese films",
    "rock climbing",
    "baking cakes",
    "the piano",
    "bird watching",
    "swimming in the lake",
    "vintage cameras",
)
PLACES = ("Berlin", "Porto", "Lyon", "Kyoto", "Oslo", "Vienna", "Seville", "Krakow")
JOBS = ("a nurse", "a teacher", "an engineer", "a baker", "a pilot", "a lawyer", "a chef")
DUPLICATE_EVERY = 25  # one fact in 25 is said again in other words
CONTRADICTION_EVERY = 100  # one in 100 says another city for someone's home
EPISODES = 20
CHUNK = 256


def fact(i: int) -> NewFact:
    """Fact `i`: one of a few shapes, about one of 5,000 people (a first and a family name)."""
    first = FIRST_NAMES[i % len(FIRST_NAMES)]
    person = f"{first} {FAMILY_NAMES[(i // len(FIRST_NAMES)) % len(FAMILY_NAMES)]}"
    shape = i % 4
    if shape == 0:
        like = LIKES[(i // 4) % len(LIKES)]
        return NewFact(f"The user's friend {person} likes {like}", "preference", person, "likes")
    if shape == 1:
        place = PLACES[(i // 4) % len(PLACES)]
        return NewFact(f"{person} lives in {place}", "identity", person, "lives in", place)
    if shape == 2:
        job = JOBS[(i // 4) % len(JOBS)]
        return NewFact(f"{person} works as {job}", "identity", person, "works as", job)
    return NewFact(f"The user met {person} at a party in spring", "event", person, "met")


def planted(i: int) -> NewFact | None:
    """A near-duplicate of fact `i`, or a contradiction of it, or nothing."""
    original = fact(i)
    if i % CONTRADICTION_EVERY == 1:  # a "lives in" fact (shape 1): the person moved
        moved = PLACES[(PLACES.index(original.object or PLACES[0]) + 1) % len(PLACES)]
        person = original.subject or ""
        return NewFact(f"{person} lives in {moved}", "identity", person, "lives in", moved)
    if i % DUPLICATE_EVERY == 0:
        return NewFact(f"{original.content} very much", original.fact_type, original.subject)
    return None


def fill(store: SQLiteStore, embedder: Embedder, count: int) -> tuple[int, int, float]:
    """The agent's facts (planted ones after their originals) and episodes; how many
    duplicates and contradictions were planted, and the seconds embedding took."""
    facts: list[NewFact] = []
    duplicates = contradictions = 0
    for i in range(count):
        facts.append(fact(i))
        extra = planted(i)
        if extra is not None and len(facts) < count:
            facts.append(extra)
            duplicates += extra.relation is None
            contradictions += extra.relation is not None
    facts = facts[:count]
    embedding = 0.0
    for start in range(0, len(facts), CHUNK):
        batch = facts[start : start + CHUNK]
        began = time.perf_counter()
        vectors = embedder.embed_batch([f.content for f in batch])
        embedding += time.perf_counter() - began
        for new, vector in zip(batch, vectors, strict=True):
            store.add_fact(AGENT, new, vector)  # with its subject, relation and object
    for n in range(EPISODES):
        said = store.append_message(AGENT, "desk", "user", f"We talked about plans, part {n}")
        text = f"The user talked about weekend plans with {FIRST_NAMES[n]}."
        store.add_summary(AGENT, text, [said], vector=embedder.embed(text))
    return duplicates, contradictions, embedding


class TimedTopics(TopicBuilder):
    """The topic builder, timed."""

    seconds = 0.0

    def rebuild(self, agent: str) -> list[Topic]:
        began = time.perf_counter()
        try:
            return super().rebuild(agent)
        finally:
            self.seconds = time.perf_counter() - began


def print_rows(rows: Sequence[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings.from_env({"LOBUG_DB_PATH": str(Path(folder) / "memory.db")})
        embedder = build_embedder(settings)
        store = SQLiteStore(settings.db_path)
        store.bind_embedding(embedder.model, embedder.dimension)
        duplicates, contradictions, embedding = fill(store, embedder, args.facts)
        max_facts = settings.memory.max_facts
        began = time.perf_counter()
        plan = Dreamer(store, None, max_facts=max_facts).dream(AGENT, dry_run=True).plan
        planned = time.perf_counter() - began

        chat = build_chat(settings)
        try:
            topics = TimedTopics(store, chat, language=settings.language)
            dreamer = Dreamer(store, chat, max_facts=max_facts, topics=topics)
            began = time.perf_counter()
            result = dreamer.dream(AGENT)
            whole = time.perf_counter() - began
        finally:
            chat.close()
        store.close()

    kinds = [c.action for c in plan.changes]
    written = sum(t.written_by == "model" for t in result.topics)
    print(f"\nA dream of {args.facts:,} facts and {EPISODES} episodes ({chat.name}, 2 cores)")
    print_rows(
        [
            ("planted", f"{duplicates} near-duplicates, {contradictions} contradictions"),
            ("found", ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))) or "none"),
            ("embedding the facts", f"{embedding:.1f} s (before the dream, not part of it)"),
            ("dry run (plan only, baseline)", f"{planned:.1f} s"),
            ("dream, in all", f"{whole:.1f} s"),
            (
                "  of which topics",
                f"{topics.seconds:.1f} s: {len(result.topics)} topics, "
                f"{written} named by the model",
            ),
            (
                "  of which the rest",
                f"{whole - topics.seconds:.1f} s: plan, base memory rewritten, changes applied",
            ),
        ]
    )


if __name__ == "__main__":
    main()
