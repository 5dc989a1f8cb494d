"""Should Lo-Bug answer? The model may choose by starting its reply with [IGNORE] or [REACT]."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from lobug.backends.base import Transcript
from lobug.language.fillers import only_hesitations
from lobug.language.text import words_of

Action = Literal["respond", "ignore", "react"]

_PREFIX = re.compile(r"^\s*\[(IGNORE|REACT)\]\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Decision:
    action: Action
    text: str
    # Set by the reply guard (`lobug.turn.reply_guard`) when the model's first words were refused.
    guard: str | None = None
    problem: str | None = None


def parse_reply(raw: str) -> Decision:
    """Split an action prefix off the model's reply; the prefix never reaches text or speech."""
    match = _PREFIX.match(raw)
    if match is None:
        text = raw.strip()
        return Decision("respond" if text else "ignore", text)
    action: Action = "ignore" if match.group(1).upper() == "IGNORE" else "react"
    rest = _PREFIX.sub("", raw[match.end() :]).strip()
    return Decision(action, rest if action == "react" else "")


MIN_AUDIO_SECONDS = 0.5
MAX_NO_SPEECH_PROB = 0.6
SHORT_AUDIO_SECONDS = 1.5
UNCERTAIN_NO_SPEECH_PROB = 0.3
UNCERTAIN_LOGPROB = -0.8
HALLUCINATIONS = (
    "thanks for watching",
    "thank you for watching",
    "please subscribe",
    "like and subscribe",
    "subscribe to my channel",
    "see you in the next video",
    "see you next time",
    "thank you for listening",
    "subtitles by",
    "transcribed by",
    "amara.org",
)


def ignore_reason(transcript: Transcript, audio_seconds: float) -> str | None:
    """Why a transcribed recording should be ignored before it reaches the LLM, or None."""
    text = transcript.text.strip()
    words = words_of(text)
    if audio_seconds < MIN_AUDIO_SECONDS:
        return "too_short"
    if not words:
        return "no_speech"
    if transcript.no_speech_prob > MAX_NO_SPEECH_PROB:
        return "no_speech"
    if is_hallucination(text):
        return "hallucination"
    if len(words) < 2:
        return "too_few_words"
    if _uncertain_short_clip(transcript, audio_seconds):
        return "uncertain"
    return None


def is_hallucination(text: str) -> bool:
    """Whisper's stock phrases on noise, and recordings that are nothing but fillers."""
    lowered = " ".join(words_of(text))
    if any(phrase in lowered for phrase in HALLUCINATIONS):
        return True
    return only_hesitations(words_of(text))


def _uncertain_short_clip(transcript: Transcript, audio_seconds: float) -> bool:
    if audio_seconds >= SHORT_AUDIO_SECONDS or len(transcript.segments) != 1:
        return False
    segment = transcript.segments[0]
    return (
        segment.no_speech_prob > UNCERTAIN_NO_SPEECH_PROB or segment.avg_logprob < UNCERTAIN_LOGPROB
    )


# Enough of a streamed reply to tell whether it opens with an action prefix.
PREFIX_PROBE_CHARS = len("[IGNORE]")


def read_action_prefix(stream: Iterator[str]) -> tuple[Action, str]:
    """Read just enough of a streamed reply to know its action.

    Returns the action and the text read so far: for `respond` the start of the answer, for
    `react` the reaction text (the rest of the stream), for `ignore` nothing."""
    head = ""
    for piece in stream:
        head += piece
        stripped = head.lstrip()
        if len(stripped) >= PREFIX_PROBE_CHARS or not _could_be_prefix(stripped):
            break
    decision = parse_reply(head)
    if decision.action == "respond":
        return "respond", head.lstrip()
    if decision.action == "react":
        rest = "".join(stream)
        return "react", parse_reply(head + rest).text
    for _ in stream:  # drain, so the model is free for the next request
        pass
    return "ignore", ""


def _could_be_prefix(text: str) -> bool:
    upper = text.upper()
    return any(p.startswith(upper) or upper.startswith(p) for p in ("[IGNORE]", "[REACT]"))
