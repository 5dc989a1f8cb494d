"""The recall section of `bench_quality.py` (issue 28): facts told on one device, asked on
another, through the real server on the default model.

A reply is **right** when it holds the fact's key word (endings aside). A reply **invents**
when it names a person, place or number about the person that nothing they said holds: a
capitalized word (or any number) that is in none of the told sentences and not in the
question, the first word of a sentence counted too unless it is a common word. Goals: at
least 90% right, 0 inventions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from lobug.language import claims
from lobug.language.text import FUNCTION_WORDS, word_tokens, words_of
from lobug.memory.extraction import same_word

TOLD_ON = "kitchen"
ASKED_ON = "bedroom"
# (what the person tells, the question asked later on another device, the answer's key words:
# "a|b" takes either).
FACTS: list[tuple[str, str, str]] = [
    ("My name is Jordan Reyes.", "What is my name?", "jordan"),
    ("I work as a nurse at St Mary's hospital.", "Where do I work?", "nurse|mary"),
    ("I have a dog called Biscuit.", "What is my dog called?", "biscuit"),
    ("My sister is called Sasha.", "What is my sister's name?", "sasha"),
    ("I was born in Bergen.", "Where was I born?", "bergen"),
    ("My daughter is called Ottilie.", "What's my daughter's name?", "ottilie"),
    ("I drive a green Skoda Octavia.", "Which car do I drive?", "skoda|octavia"),
    ("My favourite band is Radiohead.", "What is my favourite band?", "radiohead"),
    ("I am allergic to peanuts.", "What am I allergic to?", "peanut|peanuts"),
    ("On Friday I am hiking at Multnomah Falls.", "What am I doing on Friday?", "hiking|hike"),
]
# Sentence openers that name nothing: the reply guard's (`lobug.language.claims`),
# and the wake word.
COMMON_OPENERS = claims.COMMON_OPENERS | {"of", "course", "lo", "bug"}
SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Answer:
    question: str
    reply: str
    right: bool
    invented: list[str]


def run_recall(url: str) -> list[Answer]:
    """Tell every fact on one device, wait for the memory work, ask on another."""
    from tests.e2e.server import wait_for_learning

    told = [statement for statement, _, _ in FACTS]
    with httpx.Client(base_url=url, timeout=1800) as http:
        for statement in told:
            say(http, TOLD_ON, statement)
        wait_for_learning(http, timeout_s=1800)
        answers = []
        for _, question, keys in FACTS:
            reply = say(http, ASKED_ON, question)
            right = any(same_word(k, w) for k in keys.split("|") for w in words_of(reply))
            invented = invented_names(reply, [*told, question])
            answers.append(Answer(question, reply, right, invented))
            print(f"  {question}\n    -> {reply}", flush=True)
    return answers


def say(http: httpx.Client, device: str, text: str) -> str:
    answered = http.post("/chat/text", json={"text": text}, headers={"X-Device-Id": device})
    answered.raise_for_status()
    return str(answered.json()["response"])


def invented_names(reply: str, said: Sequence[str]) -> list[str]:
    """The names and numbers of `reply` that nothing in `said` holds."""
    known = {word for text in said for word in words_of(text)}
    found = []
    for sentence in SENTENCE.split(reply.strip()):
        for position, token in enumerate(word_tokens(sentence)):
            word = token.lower()
            named = token[:1].isupper() or any(c.isdigit() for c in token)
            plain = word.replace("'", "").replace("’", "")
            common = position == 0 and (plain in FUNCTION_WORDS or plain in COMMON_OPENERS)
            if named and not common and word not in known and word.removesuffix("'s") not in known:
                found.append(token)
    return found


def print_recall(answers: Sequence[Answer]) -> None:
    right = sum(a.right for a in answers)
    invented = [name for a in answers for name in a.invented]
    print(
        f"recall across devices: {right} of {len(answers)} answered right "
        f"({right / len(answers):.0%}, goal 90%); personal claims invented: {len(invented)} "
        f"(goal 0){': ' + ', '.join(invented) if invented else ''}"
    )
    for answer in answers:
        if not answer.right:
            print(f"  wrong: {answer.question!r} -> {answer.reply[:160]!r}")
