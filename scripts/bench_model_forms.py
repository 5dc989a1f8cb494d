"""The default chat model in the quantization it ships in and in the ones it could run in
(issue 45): how fast each reads a turn's prompt and writes a reply on this machine, in
llama.cpp batches of 64 and 128 tokens, and whether its greedy replies stay sound.

Forms: Q4_1 (the package's file, as published), Q8_0 (what Lo-Bug runs: `BundledModel.run_as`,
written by `requantize`) and Q4_0 (written into a temporary folder for the comparison).
A conversation of --turns turns is built like a device's (the standing prompt and the history
repeat, the turn's notes and the question are new), and for each turn the new part of the
prompt is read (`prefill`), then a reply of at most 40 tokens written from the cached prompt
(`complete`, greedy). Printed per form and batch: the medians of both, turn 1 (a cold prompt)
left out. Then each form answers 12 everyday requests greedily (with the server's anti-loop
penalties, as the device's replies are written): how many replies the reply
guard's text rules refuse (a loop, another language), and how many are word for word the
published file's.

    .venv/bin/python scripts/bench_model_forms.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server")]

from lobug.backends.base import ChatMessage  # noqa: E402
from lobug.backends.bundled_models import (  # noqa: E402
    DEFAULT_CHAT_MODEL,
    bundled_model,
    model_file,
    source_file,
)
from lobug.backends.embedded import EmbeddedChat  # noqa: E402
from lobug.backends.requantize import requantize  # noqa: E402
from lobug.language.quality import text_problem  # noqa: E402
from lobug.turn.conversation import PERSONALITY  # noqa: E402

REQUESTS = (
    "How long should I boil an egg for a soft yolk?",
    "Tell me something cheerful about autumn.",
    "Which houseplants are easy to keep alive?",
    "What should I cook tonight for dinner with two friends?",
    "Can you suggest a short walk near a river?",
    "Why is the sky blue?",
    "Tell me a short bedtime story about a dragon.",
    "What is a good way to remember birthdays?",
    "Give me a simple pancake recipe.",
    "How do I keep a dog busy on a rainy day?",
    "What is the capital of France?",
    "Explain what a cello is.",
)
REPLY_TOKENS = 40


def turn(history: list[ChatMessage], n: int) -> list[ChatMessage]:
    """Turn `n`'s messages: the standing prompt, the history, this turn's notes (eight facts,
    as recall finds them) and the question."""
    notes = " ".join(
        f"The user's friend P{i + 3 * n} likes item {7 * i + n} and lives in town {i % 13}."
        for i in range(8)
    )
    return [
        {"role": "system", "content": PERSONALITY},
        *history,
        {"role": "system", "content": f"[Relevant memories: {notes}]"},
        {"role": "user", "content": f"What do you think about topic {n}?"},
    ]


def speeds(chat: EmbeddedChat, turns: int) -> tuple[float, float]:
    """Median ms to read a turn's new prompt, and to write its reply, turn 1 left out."""
    history: list[ChatMessage] = []
    read, wrote = [], []
    for n in range(turns):
        messages = turn(history, n)
        started = time.perf_counter()
        chat.prefill(messages)
        prefilled = time.perf_counter()
        reply = chat.complete(messages, max_tokens=REPLY_TOKENS, temperature=0.0)
        if n:
            read.append(1000 * (prefilled - started))
            wrote.append(1000 * (time.perf_counter() - prefilled))
        history += [messages[-1], {"role": "assistant", "content": reply}]
    return statistics.median(read), statistics.median(wrote)


def greedy_replies(chat: EmbeddedChat) -> list[str]:
    system: ChatMessage = {"role": "system", "content": PERSONALITY}
    return [
        chat.complete([system, {"role": "user", "content": request}], max_tokens=48, temperature=0)
        for request in REQUESTS
    ]


def forms(scratch: Path) -> dict[str, Path]:
    model = bundled_model(DEFAULT_CHAT_MODEL)
    published = source_file(model)
    q4_0 = scratch / "q4_0.gguf"
    requantize(published, q4_0, "Q4_0")
    return {"Q4_1 (published)": published, "Q8_0 (run)": model_file(model), "Q4_0": q4_0}


def compare(paths: dict[str, Path], batches: Sequence[int], turns: int, threads: int) -> None:
    print(f"{'form':<18} {'batch':>5} {'prompt read ms':>14} {'reply ms':>8}", flush=True)
    replies: dict[str, list[str]] = {}
    for name, path in paths.items():
        for batch in batches:
            chat = EmbeddedChat(path, threads=threads, prompt_batch_tokens=batch)
            read, wrote = speeds(chat, turns)
            print(f"{name:<18} {batch:5d} {read:14.0f} {wrote:8.0f}", flush=True)
            if name not in replies:
                replies[name] = greedy_replies(chat)
            chat.close()
    published = next(iter(replies.values()))
    print(f"\ngreedy replies to {len(REQUESTS)} requests")
    for name, said in replies.items():
        refused = sum(text_problem(reply, "en") is not None for reply in said)
        same = sum(a == b for a, b in zip(said, published, strict=True))
        print(f"{name:<18} refused {refused:2d}, word for word the published file's {same:2d}")
        print(f"{'':<18} e.g. {said[REQUESTS.index('Why is the sky blue?')][:90]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", default="64,128")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        compare(forms(Path(scratch)), batches, args.turns, args.threads)


if __name__ == "__main__":
    main()
