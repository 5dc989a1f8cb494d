"""Deterministic fakes behind the real backend interfaces (unit tests only)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from lobug.backends.base import (
    AbandonCheck,
    Abandoned,
    BackendUnavailable,
    ChatBackend,
    ChatMessage,
    Embedder,
    JsonSchema,
    SpeechToText,
    TextToSpeech,
    Transcript,
    TranscriptSegment,
    Vector,
    raise_if_abandoned,
)
from lobug.memory import prompts

Responder = Callable[[Sequence[ChatMessage], JsonSchema | None], str]


class FakeClock:
    """A clock a test sets (`now`, epoch seconds)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FakeChat(ChatBackend):
    """Answers from a queue of scripted replies, then from `default`; records every request.

    `fail_with` makes every call raise (an unreachable backend). A request for the facts of
    several exchanges at once (`memory/batch_extraction.py`) is answered from
    `batch_replies` when one is scripted, else as the facts each exchange alone would get
    (the next scripted replies, or the responder's or default answer, each tagged with its
    exchange's number); a batch whose scripted replies hold no facts to read fails, using
    none of them, so each exchange is asked alone and gets its own."""

    name = "fake"
    model = "fake-chat"
    supports_json_schema = True

    def __init__(self, default: str = "Okay.", responder: Responder | None = None) -> None:
        self.default = default
        self.responder = responder
        self.replies: deque[str] = deque()
        self.batch_replies: deque[str] = deque()
        self.requests: list[tuple[list[ChatMessage], JsonSchema | None]] = []
        self.reply_token_limits: list[int] = []  # max_tokens of each request without a schema
        self.priorities: list[bool] = []  # `background` of each request
        self.fail_with: Exception | None = None
        self.streamed = 0
        self.abandoned_streams = 0
        self.piece_delay_s = 0.0  # a slow model: the time each streamed piece takes
        # Set `queue_gate` to hold replies (not background work) as if the model were busy;
        # each held request's abandon check is kept in `abandon_checks`.
        self.queue_gate: threading.Event | None = None
        self.abandon_checks: list[AbandonCheck | None] = []
        self.abandoned_requests = 0
        # Set `extraction_gate` to hold fact extraction (a slow model at work after a reply);
        # `extraction_started` says one is held.
        self.extraction_gate: threading.Event | None = None
        self.extraction_started = threading.Event()
        self.prefilled: list[list[ChatMessage]] = []  # prompts read ahead (`prefill`)
        self._lock = threading.Lock()

    def enqueue(self, *replies: str) -> None:
        self.replies.extend(replies)

    def prefill(self, messages: Sequence[ChatMessage]) -> None:
        with self._lock:
            self.prefilled.append(list(messages))

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
        if self.queue_gate is not None and not background:
            self.abandon_checks.append(abandoned)
            self.queue_gate.wait(30)  # a reply waiting for a busy model
        if self.extraction_gate is not None and json_schema is not None:
            self.extraction_started.set()
            self.extraction_gate.wait(30)
        try:
            raise_if_abandoned(abandoned)
        except Abandoned:
            self.abandoned_requests += 1
            raise
        with self._lock:
            self.requests.append((list(messages), json_schema))
            if json_schema is None:
                self.reply_token_limits.append(max_tokens)
            self.priorities.append(background)
            if self.fail_with is not None:
                raise self.fail_with
            if self.replies and not is_batch_schema(json_schema):
                return self.replies.popleft()
        if is_batch_schema(json_schema):
            return self._answer_batch(messages)
        if self.responder is not None:
            return self.responder(messages, json_schema)
        return '{"facts": []}' if json_schema is not None else self.default

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.7,
        abandoned: AbandonCheck | None = None,
    ) -> Iterator[str]:
        """The scripted reply in word-sized pieces, until `abandoned()` turns true; `streamed`
        counts pieces handed out, `abandoned_streams` the streams closed before their end."""
        reply = self.complete(
            messages, max_tokens=max_tokens, temperature=temperature, abandoned=abandoned
        )
        finished = False
        try:
            for piece in re.findall(r"\S+\s*|\s+", reply):
                time.sleep(self.piece_delay_s)
                if abandoned is not None and abandoned():
                    break  # a barge-in: the model stops at its next piece
                self.streamed += 1
                yield piece
            finished = True
        finally:
            if not finished:
                self.abandoned_streams += 1

    def is_available(self) -> bool:
        return self.fail_with is None

    def chat_requests(self) -> list[list[ChatMessage]]:
        """Requests for a reply to the user (not extraction, summaries or distillation)."""
        return [
            messages
            for messages, _ in self.requests
            if messages and messages[0]["content"].startswith("You are Lo-Bug")
        ]

    def extraction_requests(self) -> list[list[ChatMessage]]:
        return [messages for messages, schema in self.requests if schema is not None]

    def batch_extraction_requests(self) -> list[list[ChatMessage]]:
        """Extraction requests for several exchanges at once."""
        return [messages for messages, schema in self.requests if is_batch_schema(schema)]

    def _answer_batch(self, messages: Sequence[ChatMessage]) -> str:
        """See the class's docstring."""
        exchanges = BATCH_EXCHANGE.findall(messages[-1]["content"])
        with self._lock:
            if self.batch_replies:
                return self.batch_replies.popleft()
            scripted = list(self.replies)[: len(exchanges)]
            if not all(_fact_list(reply) is not None for reply in scripted):
                return "not a batch answer"
            for _ in scripted:
                self.replies.popleft()
        facts = []
        for position, said in enumerate(exchanges):
            alone = scripted[position] if position < len(scripted) else self._alone(said)
            facts += [{"exchange": position + 1, **fact} for fact in _fact_list(alone) or []]
        return json.dumps({"facts": facts})

    def _alone(self, said: str) -> str:
        """What one exchange's request alone would get, past the scripted replies."""
        if self.responder is None:
            return '{"facts": []}'
        user, _, assistant = said.removeprefix("User: ").partition("\nAssistant: ")
        single = prompts.fact_extraction_messages(user, assistant)
        return self.responder(single, prompts.fact_schema(5))


BATCH_EXCHANGE = re.compile(r"^Exchange \d+\n(.*?)(?=\n\nExchange \d+\n|\Z)", re.M | re.S)


def is_batch_schema(schema: JsonSchema | None) -> bool:
    """Whether `schema` asks for facts each naming its exchange."""
    if schema is None:
        return False
    items = schema.get("properties", {}).get("facts", {}).get("items", {})
    return "exchange" in items.get("properties", {})


def _fact_list(reply: str) -> list[dict[str, object]] | None:
    try:
        data = json.loads(reply)
    except ValueError:
        return None
    facts = data.get("facts") if isinstance(data, dict) else None
    return [f for f in facts if isinstance(f, dict)] if isinstance(facts, list) else None


LOOP_REPLY = "Oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo"
BABBLE_FACTS = (
    LOOP_REPLY,
    "Não pode ser mais difícil que estejo também já esta deixar com Joana!",
    "Há alguma mesa!",
    "The car is a luxury car",
    "The Ferrari 508",
    "Lo-Bug is a friendly assistant",
)


class LoopingChat(FakeChat):
    """A model that always loops (issue 18): every reply, summary and document is "Oo, oo,
    ...", and its facts are babble, inventions, facts about itself and the user's own words."""

    name = "looping"

    def __init__(self) -> None:
        super().__init__(default=LOOP_REPLY, responder=self._respond)

    @staticmethod
    def _respond(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
        if schema is None:
            return LOOP_REPLY
        said = messages[-1]["content"].removeprefix("User: ").split("\nAssistant:")[0]
        facts = [{"fact": fact, "type": "identity"} for fact in (*BABBLE_FACTS, said)]
        return json.dumps({"facts": facts})


class FakeEmbedder(Embedder):
    """Bag-of-words hashing embedder: texts sharing words have similar vectors."""

    name = "fake"
    model = "fake-embed"

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim
        self.calls = 0
        self.fail_with: Exception | None = None

    @property
    def dimension(self) -> int:
        return self._dim

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        self.calls += 1
        if self.fail_with is not None:
            raise self.fail_with
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> Vector:
        vector = np.zeros(self._dim, dtype=np.float32)
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            vector[int.from_bytes(digest[:4], "little") % self._dim] += 1.0
        if not vector.any():
            vector[0] = 1.0
        return vector / np.linalg.norm(vector)


def unreachable() -> BackendUnavailable:
    return BackendUnavailable("fake backend is down")


class FakeSTT(SpeechToText):
    """Hears what it is told to: `heard` is returned for every recording with sound in it."""

    name = "fake-stt"
    model = "fake-whisper"

    def __init__(self, heard: str = "hello there lo-bug") -> None:
        self.heard = heard
        self.no_speech_prob = 0.05
        self.calls = 0
        self.heard_samples: list[int] = []  # the length of each recording it was given
        self.called = threading.Event()

    def transcribe(self, samples: npt.NDArray[np.float32]) -> Transcript:
        self.calls += 1
        self.heard_samples.append(len(samples))
        self.called.set()
        if not len(samples) or float(np.abs(samples).max()) < 0.01:
            return Transcript("")
        segment = TranscriptSegment(self.heard, self.no_speech_prob, -0.2)
        return Transcript(self.heard, (segment,), "en")


class FakeTTS(TextToSpeech):
    """A 440 Hz tone, 0.1 s per word, one piece per sentence."""

    name = "fake-tts"
    model = "fake-voice"

    def __init__(self, rate: int = 22_050) -> None:
        self._rate = rate
        self.spoken: list[str] = []

    @property
    def sample_rate(self) -> int:
        return self._rate

    def synthesize(self, text: str) -> Iterator[npt.NDArray[np.int16]]:
        for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
            if not sentence:
                continue
            self.spoken.append(sentence)
            count = int(self._rate * 0.1 * max(1, len(sentence.split())))
            tone = np.sin(2 * np.pi * 440 * np.arange(count) / self._rate) * 8000
            yield tone.astype(np.int16)
