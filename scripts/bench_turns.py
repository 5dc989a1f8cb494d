"""Reply time as a conversation grows, on the embedded model: the prompt layout that lets
llama.cpp reuse the computed prefix, beside the layout it replaced, in the same run.

One device talks for `--turns` turns; each turn retrieves a different fact (as real turns do)
and is followed by a fact-extraction call (as in the server). Baseline: facts in the first
system message, one llama.cpp slot, no chunk reuse. Lo-Bug now: facts and sensor state in a
system message after the history, two slots (replies / background work), chunk reuse 256.

    .venv/bin/python scripts/bench_turns.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from lobug.backends.base import ChatMessage
from lobug.backends.embedded import EmbeddedChat
from lobug.memory.context import MemoryContext
from lobug.store.models import Fact, ScoredFact
from lobug.turn.conversation import turn_messages

FACTS = [
    "The user works at NASA",
    "The user likes jazz",
    "The user has a dog named Rex",
    "The user lives in Ohio",
    "The user plays chess",
]
QUESTIONS = [
    "Tell me something interesting about space travel and rockets.",
    "What should I cook tonight for dinner with friends?",
    "Can you recommend a good book about history?",
    "How do I train my dog to sit?",
    "What is the best way to learn chess openings?",
]
REPLY_TOKENS = 128
EXTRACTION_SCHEMA = {"type": "object", "properties": {"facts": {"type": "array"}}}


def retrieved(turn: int) -> MemoryContext:
    fact = Fact(
        turn, "bench", FACTS[turn % 5], "personal", None, None, None, None, 0.5, None, (), 0, 0,
        None, None,
    )  # fmt: skip
    return MemoryContext(base_memory="User Profile:\n- Name: Alex", facts=(ScoredFact(fact, 0.9),))


def conversation(chat: EmbeddedChat, turns: int, *, notes_last: bool) -> list[float]:
    history: deque[ChatMessage] = deque(maxlen=20)
    times = []
    for turn in range(turns):
        question = f"{QUESTIONS[turn % 5]} (turn {turn})"
        history.append({"role": "user", "content": question})
        messages = turn_messages(
            retrieved(turn),
            None,
            list(history),
            agency=False,
            context_tokens=chat.context_tokens,
            reply_tokens=REPLY_TOKENS,
            notes_last=notes_last,
        )
        started = time.perf_counter()
        reply = chat.complete(messages, max_tokens=REPLY_TOKENS, temperature=0)
        times.append(time.perf_counter() - started)
        history.append({"role": "assistant", "content": reply})
        extraction: list[ChatMessage] = [
            {"role": "system", "content": "Extract facts about the user as JSON."},
            {"role": "user", "content": f"User: {question}\nAssistant: {reply}"},
        ]
        chat.complete(extraction, max_tokens=64, json_schema=EXTRACTION_SCHEMA, background=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=16)
    args = parser.parse_args()
    runs = {
        "baseline": conversation(
            EmbeddedChat(slots=1, cache_reuse_tokens=0), args.turns, notes_last=False
        ),
        "lo-bug": conversation(EmbeddedChat(), args.turns, notes_last=True),
    }
    print(f"Embedded reply time by turn, one device, {args.turns} turns (seconds)")
    print(f"{'turn':>5} {'baseline':>9} {'lo-bug':>9}")
    for turn in range(args.turns):
        print(f"{turn + 1:5d} {runs['baseline'][turn]:9.2f} {runs['lo-bug'][turn]:9.2f}")
    late = slice(args.turns // 2, None)
    base, now = (statistics.mean(runs[k][late]) for k in ("baseline", "lo-bug"))
    print(
        f"mean of the second half: baseline {base:.2f} s, lo-bug {now:.2f} s ({base / now:.1f}x)\n"
    )


if __name__ == "__main__":
    main()
