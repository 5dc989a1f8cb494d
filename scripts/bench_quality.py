"""Reply and memory quality on the default model (issue 18): a scripted conversation through
the real server, then what was stored, judged against the facts a careful reader would take.

Printed: the share of stored replies that are degenerate or off-language (and how often the
reply guard stepped in), fact precision and recall against the gold list, and how many
stored summaries pass the cascade checks. Goals: 0 degenerate or off-language replies
stored, precision >= 0.95, recall >= 0.8, every stored summary valid.

    .venv/bin/python scripts/bench_quality.py                    # default embedded model
    .venv/bin/python scripts/bench_quality.py --model looping    # a fake model that loops
    .venv/bin/python scripts/bench_quality.py --turns 8          # a quicker look
    .venv/bin/python scripts/bench_quality.py --section recall   # facts told on one device,
                                                                 # asked on another

The cascades are set to run often (a summary every 12 messages, the base memory every 3
summaries) so that a short conversation exercises them.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "server"), str(ROOT / "scripts")]

from lobug.language.quality import text_problem  # noqa: E402
from lobug.memory.extraction import same_word  # noqa: E402
from lobug.memory.quality import (  # noqa: E402
    MAX_BASE_MEMORY_CHARS,
    MAX_SUMMARY_CHARS,
    output_problem,
)
from lobug.store.models import Message  # noqa: E402
from lobug.store.sqlite.engine import SQLiteStore  # noqa: E402

FACT_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’]*")
CASCADE_ENV = {
    "LOBUG_SHORT_TERM_THRESHOLD": "12",
    "LOBUG_SHORT_TERM_KEEP": "4",
    "LOBUG_LONG_TERM_THRESHOLD": "3",
    "LOBUG_LONG_TERM_KEEP": "1",
}

# (what the person says, the facts a careful reader would keep from it). Each fact is the
# words a stored fact must hold to count as it: the name or thing and what is said of it, so
# that a wrong claim about the same thing ("Leo is a chef") does not count. "a|b" takes
# either word; endings may differ ("cycles" is "cycle").
SCRIPT: list[tuple[str, list[tuple[str, ...]]]] = [
    ("Hi there! My name is Maya.", [("maya", "name|called|named")]),
    ("I live in Edinburgh, in a flat near the castle.", [("edinburgh", "live|lives|flat")]),
    ("I work as a software tester at a bank.", [("tester",)]),
    ("What is the best time of day for a walk?", []),
    (
        "I have two kids, Leo and Ava.",
        [("leo", "kids|children|child|son"), ("ava", "kids|children|child|daughter")],
    ),
    ("Leo is seven years old.", [("leo", "seven|7")]),
    ("I have been vegetarian for ten years.", [("vegetarian",)]),
    ("My favourite band is Radiohead.", [("radiohead",)]),
    ("Can you tell me a fun fact about octopuses?", []),
    ("I cycle to work every day.", [("cycle|bike|bicycle", "work")]),
    ("My husband Tom is a chef.", [("tom", "husband|chef")]),
    ("We are going to Norway in June.", [("norway",)]),
    ("I am learning to play the piano.", [("piano",)]),
    ("That is funny.", []),
    ("My mother lives in Glasgow.", [("glasgow", "mother|mum|mom")]),
    ("I am afraid of spiders.", [("spiders", "afraid|fear|scared")]),
    ("How do I make a good cup of tea?", []),
    ("I drink black coffee every morning.", [("coffee",)]),
    ("My birthday is on the twelfth of March.", [("birthday", "march")]),
    ("I grew up in a small village in Wales.", [("wales",)]),
    ("Thanks, that helps.", []),
    ("I have a dog called Biscuit.", [("biscuit", "dog")]),
    ("Biscuit is a golden retriever.", [("biscuit|dog", "retriever")]),
    ("I do not like horror films.", [("horror", "not|doesn't|dislike|dislikes|hate|hates")]),
    ("What is a good name for a goldfish?", []),
    ("I am training for a half marathon in October.", [("marathon",)]),
    ("My best friend Priya lives in London.", [("priya", "friend|london")]),
    ("I speak English and a little Spanish.", [("speak|speaks", "spanish|english")]),
    ("Tell me a short joke about cats.", []),
    ("I studied physics at university.", [("physics",)]),
    ("I go swimming on Saturdays.", [("swimming|swim|swims",)]),
    ("Good night, Lo-Bug.", []),
]


@dataclass
class Report:
    replies: int
    bad_replies: list[str]
    guarded: dict[str, int]
    precision: float
    recall: float
    wrong_facts: list[str]
    missed: list[tuple[str, ...]]
    summaries: int
    extractive: int
    invalid_summaries: list[str]
    base_memory: str
    seconds: float
    # How many facts got each type, and each confidence; unsupported sentences left out of
    # the summaries and the base memory.
    types: dict[str, int] = field(default_factory=dict)
    confidences: dict[float, int] = field(default_factory=dict)
    dropped_sentences: int = 0
    base_made_by: str | None = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("embedded", "looping"), default="embedded")
    parser.add_argument("--turns", type=int, default=len(SCRIPT))
    parser.add_argument("--keep", type=Path, help="a folder to keep the database and log in")
    parser.add_argument(
        "--judge-only", action="store_true", help="judge the first --turns of a --keep folder"
    )
    parser.add_argument(
        "--section",
        choices=("all", "conversation", "recall"),
        default="all",
        help="the scripted conversation, the recall across devices (quality_recall.py), or both",
    )
    parser.add_argument(
        "--server-code",
        type=Path,
        help="run the recall's server from another checkout (its server/ folder): a baseline",
    )
    args = parser.parse_args()
    if args.section in ("all", "recall"):
        recall_section(args.model, args.server_code)
    if args.section == "recall":
        return
    script = SCRIPT[: args.turns]
    if args.judge_only:
        print_report(args.model, judge(args.keep / "memory.db", script, 0.0))
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        db_path = folder / "memory.db"
        started = time.perf_counter()
        with serving(args.model, db_path, folder / "server.log") as url:
            converse(url, script)
        report = judge(db_path, script, time.perf_counter() - started)
    print_report(args.model, report)


def recall_section(model: str, server_code: Path | None) -> None:
    """Facts told on one device, asked on another, on a fresh database."""
    from quality_recall import print_recall, run_recall

    code = {"PYTHONPATH": str(server_code.resolve() / "server")} if server_code else {}
    print(f"== recall across devices on the {model} model {code or ''} ==", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        with serving(model, folder / "memory.db", folder / "server.log", code) as url:
            answers = run_recall(url)
    print_recall(answers)


@contextmanager
def serving(
    model: str, db_path: Path, log_path: Path, extra_env: dict[str, str] | None = None
) -> Iterator[str]:
    """The real server on `model`: a subprocess on the default model, or the app in this
    process on a looping fake model."""
    if model == "embedded":
        from tests.e2e.server import start_server

        env = {"LOBUG_SPEECH": "0", "LOBUG_LLM_TEMPERATURE": "0.7", **CASCADE_ENV}
        env.update(extra_env or {})
        server = start_server(db_path, log_path, env)
        try:
            yield server.url
        finally:
            server.stop()
        return
    with looping_server(db_path) as url:
        yield url


@contextmanager
def looping_server(db_path: Path) -> Iterator[str]:
    from tests.fakes import FakeEmbedder, LoopingChat
    from tests.live import LiveServer

    from lobug.app import create_app
    from lobug.backends import Backends
    from lobug.config import Settings

    environ = {"LOBUG_DB_PATH": str(db_path), **CASCADE_ENV}
    app = create_app(Settings.from_env(environ), Backends(LoopingChat(), FakeEmbedder()))
    live = LiveServer(app)
    try:
        yield live.url
    finally:
        live.stop()


def converse(url: str, script: Sequence[tuple[str, list[tuple[str, ...]]]]) -> None:
    from tests.e2e.server import wait_for_learning

    # Generous: on a busy 2-core machine a reply can wait behind a summary and its retry.
    with httpx.Client(base_url=url, timeout=1800) as http:
        for number, (text, _) in enumerate(script, 1):
            reply = http.post("/chat/text", json={"text": text}).json()["response"]
            print(f"{number:2d}. {text}\n    -> {reply}", flush=True)
        wait_for_learning(http, timeout_s=1800)


def judge(
    db_path: Path, script: Sequence[tuple[str, list[tuple[str, ...]]]], seconds: float
) -> Report:
    store = SQLiteStore(db_path)
    try:
        log = list(reversed(store.agent_messages("lobug", 10_000)))
        replies = [m for m in log if m.role == "assistant"]
        stored = store.facts("lobug")
        facts = [f.content for f in stored]
        summaries = store.summaries("lobug")
        base = store.base_memory("lobug")
        versions = store.base_memory_history("lobug")
        gold = [keys for _, fact_keys in script for keys in fact_keys]
        matched = [f for f in facts if any(matches(f, keys) for keys in gold)]
        invalid = [
            s.content
            for s in summaries
            if s.made_by != "extractive"
            and output_problem(
                s.content,
                span_words(log, s.source_from_id, s.source_to_id),
                language="en",
                max_chars=MAX_SUMMARY_CHARS,
            )
        ]
        return Report(
            replies=len(replies),
            bad_replies=[m.content for m in replies if text_problem(m.content, "en")],
            guarded=count_guarded(replies),
            precision=len(matched) / len(facts) if facts else 1.0,
            recall=sum(any(matches(f, keys) for f in facts) for keys in gold) / len(gold),
            wrong_facts=[f for f in facts if f not in matched],
            missed=[keys for keys in gold if not any(matches(f, keys) for f in facts)],
            summaries=len(summaries),
            extractive=sum(s.made_by == "extractive" for s in summaries),
            invalid_summaries=invalid
            + base_problems(base, versions[0].made_by if versions else None),
            base_memory=base,
            seconds=seconds,
            types=dict(Counter(f.fact_type for f in stored).most_common()),
            confidences=dict(sorted(Counter(f.confidence for f in stored).items())),
            dropped_sentences=sum(s.dropped_sentences for s in summaries)
            + sum(v.dropped_sentences for v in versions),
            base_made_by=versions[0].made_by if versions else None,
        )
    finally:
        store.close()


def matches(fact: str, keys: tuple[str, ...]) -> bool:
    """Whether `fact` holds every key (one of a key's "a|b" words), endings aside. All the
    fact's words count, "not" too: "likes horror films" is not "does not like" them."""
    words = [w.lower() for w in FACT_WORD.findall(fact)]
    return all(
        any(same_word(choice, word) for choice in key.split("|") for word in words) for key in keys
    )


def span_words(log: Sequence[Message], first: int, last: int) -> list[str]:
    return [m.content for m in log if first <= m.id <= last and m.role == "user"]


def base_problems(base: str, made_by: str | None) -> list[str]:
    if not base or made_by == "extractive":
        return []
    problem = text_problem(base, "en") or (
        "too long" if len(base) > MAX_BASE_MEMORY_CHARS else None
    )
    return [f"base memory: {problem}"] if problem else []


def count_guarded(replies: Sequence[Message]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for message in replies:
        guard = (message.metadata or {}).get("guard")
        if guard:
            counts[guard] = counts.get(guard, 0) + 1
    return counts


def print_report(model: str, report: Report) -> None:
    print(f"\n== quality on the {model} model ({report.seconds:.0f} s) ==")
    print(
        f"replies stored: {report.replies}; degenerate or off-language: "
        f"{len(report.bad_replies)} (goal 0); guard stepped in: {report.guarded or 'never'}"
    )
    print(f"facts: precision {report.precision:.2f} (goal 0.95), recall {report.recall:.2f}")
    print(f"facts by type: {report.types}; by confidence: {report.confidences}")
    print(
        f"summaries stored: {report.summaries} ({report.extractive} extractive); "
        f"unsupported sentences left out of summaries and base memory: {report.dropped_sentences}"
    )
    print(f"invalid summaries or base memory: {len(report.invalid_summaries)} (goal 0)")
    for label, items in (
        ("bad reply", report.bad_replies),
        ("fact not in the gold list", report.wrong_facts),
        ("gold fact missed", [" ".join(keys) for keys in report.missed]),
        ("invalid", report.invalid_summaries),
    ):
        for item in items:
            print(f"  {label}: {item[:160]!r}")
    print(f"base memory (made by {report.base_made_by}):\n{report.base_memory}")


if __name__ == "__main__":
    main()
