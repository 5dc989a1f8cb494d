"""Which decoding settings keep the default embedded model out of repetition loops (issue 18)?

The scripted conversation of `bench_quality.py` is answered by the bundled model once per
setting (repeat penalty only, DRY only, both, neither), with the device's real prompt and
its own earlier replies as history, and every first answer is judged before any guard
steps in: the share that is degenerate (a loop) and the share in another language.

    .venv/bin/python scripts/bench_decoding.py              # all 32 turns, each setting once
    .venv/bin/python scripts/bench_decoding.py --rounds 3   # more answers, steadier shares

A refused answer enters the history as the fallback, as it would on the device. Memory is
left out (no facts or summaries in the prompt), so the settings alone are compared.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "server")]

from scripts.bench_quality import SCRIPT  # noqa: E402

from lobug.backends.base import ChatBackend, ChatMessage  # noqa: E402
from lobug.backends.embedded import ANTI_LOOP_SAMPLING, EmbeddedChat  # noqa: E402
from lobug.config import Settings  # noqa: E402
from lobug.language.quality import degeneracy, off_language  # noqa: E402
from lobug.memory.context import MemoryContext  # noqa: E402
from lobug.turn.conversation import turn_messages  # noqa: E402
from lobug.turn.decision import parse_reply  # noqa: E402
from lobug.turn.reply_guard import FALLBACK_REPLY  # noqa: E402

PENALTY = {k: v for k, v in ANTI_LOOP_SAMPLING.items() if k.startswith("repeat_")}
DRY = {k: v for k, v in ANTI_LOOP_SAMPLING.items() if k.startswith("dry_")}
SETTINGS: dict[str, Mapping[str, float]] = {
    "neither": {},
    "repeat penalty only": PENALTY,
    "DRY only": DRY,
    "both (the default)": ANTI_LOOP_SAMPLING,
}
HISTORY_MESSAGES = 20  # the device's working memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=len(SCRIPT))
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    said = [text for text, _ in SCRIPT[: args.turns]]
    settings = Settings()
    chat = EmbeddedChat(n_ctx=settings.llm_context_tokens)
    results = {name: [0, 0, 0] for name in SETTINGS}  # answers, loops, off-language
    for round_number in range(1, args.rounds + 1):
        for name, sampling in SETTINGS.items():
            chat.sampling = dict(sampling)
            counts = converse(chat, said, settings)
            results[name] = [a + b for a, b in zip(results[name], counts, strict=True)]
            print(f"round {round_number}, {name}: {counts[1]} loops, {counts[2]} off-language")
    print_table(results)


def converse(chat: ChatBackend, said: Sequence[str], settings: Settings) -> list[int]:
    """Answer each of `said` in one conversation: [answers, loops, off-language]."""
    history: list[ChatMessage] = []
    loops = others = 0
    tokens, temperature = settings.reply_limits(chat.reply_tokens, chat.reply_temperature)
    for text in said:
        history.append({"role": "user", "content": text})
        messages = turn_messages(
            MemoryContext(),
            None,
            history[-HISTORY_MESSAGES:],
            agency=False,
            context_tokens=settings.llm_context_tokens,
            reply_tokens=tokens,
            notes_last=chat.caches_prompt_prefix,
        )
        raw = chat.complete(
            messages,
            max_tokens=tokens,
            temperature=temperature,
        )
        reply = parse_reply(raw).text
        loop, other = degeneracy(reply), off_language(reply, "en")
        loops += loop is not None
        others += loop is None and other is not None
        if loop or other:
            print(f"  refused ({loop or other}): {reply[:100]!r}", flush=True)
        history.append({"role": "assistant", "content": FALLBACK_REPLY if loop or other else reply})
    return [len(said), loops, others]


def print_table(results: Mapping[str, list[int]]) -> None:
    print("\n| decoding | answers | degenerate | off-language |")
    print("|---|---|---|---|")
    for name, (answers, loops, others) in results.items():
        print(
            f"| {name} | {answers} | {loops} ({loops / answers:.0%}) "
            f"| {others} ({others / answers:.0%}) |"
        )


if __name__ == "__main__":
    main()
