"""The small interfaces every model backend implements. Nothing above them knows which runs."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt


class ChatMessage(TypedDict):
    role: str
    content: str


def with_rule(messages: Sequence[ChatMessage], rule: str) -> list[ChatMessage]:
    """`messages` with `rule` added to the first system message (or a new one first)."""
    copied: list[ChatMessage] = [{"role": m["role"], "content": m["content"]} for m in messages]
    first = next((m for m in copied if m["role"] == "system"), None)
    if first is None:
        return [{"role": "system", "content": rule}, *copied]
    first["content"] = f"{first['content']}\n{rule}"
    return copied


def with_closing_rule(messages: Sequence[ChatMessage], rule: str) -> list[ChatMessage]:
    """`messages` with `rule` after the person's last words: all before it is the prompt as
    it was, so a model that cached that prompt reads only the rule (a rule in the first
    system message makes it read the whole history again). When the messages do not end with
    the person's, `with_rule` (some servers' chat templates refuse a system message last)."""
    if not messages or messages[-1]["role"] != "user":
        return with_rule(messages, rule)
    copied: list[ChatMessage] = [{"role": m["role"], "content": m["content"]} for m in messages]
    copied[-1]["content"] = f"{copied[-1]['content']}\n\n({rule})"
    return copied


JsonSchema = dict[str, Any]
Vector = npt.NDArray[np.float32]


class BackendError(RuntimeError):
    """A backend failed to answer (bad response, model error)."""


class BackendUnavailable(BackendError):
    """A backend cannot be reached or is not ready; the caller may answer 503."""


class Abandoned(Exception):
    """The caller stopped waiting (its client hung up) before the model started on it."""


# "Has the caller stopped waiting?", asked when a request reaches the model, and by a stream
# at each token: once it is true the stream ends there (a barge-in stops the model at once).
AbandonCheck = Callable[[], bool]


def raise_if_abandoned(abandoned: AbandonCheck | None) -> None:
    if abandoned is not None and abandoned():
        raise Abandoned("the client stopped waiting before the model started on its request")


def until_abandoned(pieces: Iterator[str], abandoned: AbandonCheck | None) -> Iterator[str]:
    """`pieces` until `abandoned()` turns true (asked before each); closed then, so a
    remote server stops generating."""
    try:
        for piece in pieces:
            if abandoned is not None and abandoned():
                return
            yield piece
    finally:
        close = getattr(pieces, "close", None)
        if close is not None:
            close()


@dataclass(frozen=True)
class ToolBox:
    """Tools a chat model may call while it answers (a device's settings: issue 30).

    `specs`: each tool in function form (`{"type": "function", "function": {"name",
    "description", "parameters"}}`, which both OpenAI-compatible servers and Ollama read).
    `call(name, arguments)` runs one and returns its result as text for the model; it raises
    when the tool failed, and returns or raises within its own time bound."""

    specs: tuple[dict[str, Any], ...]
    call: Callable[[str, dict[str, Any]], str]

    def recording(self, uses: list[dict[str, Any]]) -> ToolBox:
        """These tools, each call made through them added to `uses` (the tool's name, its
        arguments, and its result or why it failed; arguments longer than `USE_CHARS` as
        JSON are kept as that text, cut, and so are results)."""

        def call(name: str, arguments: dict[str, Any]) -> str:
            written = json.dumps(arguments, ensure_ascii=False)
            kept = arguments if len(written) <= USE_CHARS else written[:USE_CHARS]
            use: dict[str, Any] = {"name": name, "arguments": kept}
            uses.append(use)
            try:
                result = self.call(name, arguments)
            except Exception as exc:
                use["failed"] = str(exc)[:USE_CHARS] or type(exc).__name__
                raise
            use["result"] = result[:USE_CHARS]
            return result

        return ToolBox(self.specs, call)


USE_CHARS = 200  # of a tool's result kept in the log


class SpeechNotReady(BackendUnavailable):
    """Speech models are still loading, failed to load, or are not configured."""


class ChatBackend(ABC):
    """A chat model: messages in, text out."""

    name: str = "chat"
    model: str = ""
    supports_json_schema: bool = False
    # Small models fill every optional JSON field with junk: ask them for less.
    prefers_simple_json: bool = False
    # Reuses the computed prefix of a prompt it saw before (llama.cpp): per-turn notes then go
    # after the history, so the prefix repeats. Off by default: some chat templates of other
    # servers refuse a system message that is not first.
    caches_prompt_prefix: bool = False
    # Calls the tools `stream_with_tools` offers (Ollama, OpenAI-compatible servers).
    supports_tools: bool = False
    # May begin a voice turn's answer in the person's pause, before the turn has ended, and
    # stop it at its next token if they speak on (`ahead.py`): a model of one's own.
    answers_ahead: bool = False
    # How long and how warm a reply is unless LOBUG_LLM_MAX_TOKENS / LOBUG_LLM_TEMPERATURE
    # say: a tiny model rambles and invents less in short, cool replies (`bundled_models`).
    reply_tokens: int = 256
    reply_temperature: float = 0.7
    # Asked what the person said, or told about them, it answers (else the memory's words do:
    # `memory/recall.py`); not the tiny bundled model, which made the person up.
    answers_about_the_person: bool = True

    @abstractmethod
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
        """Return the assistant's reply. With `json_schema`, ask for JSON of that shape
        where the backend supports it (the caller validates either way). `background` work
        (memory upkeep) yields to replies a person is waiting for where the backend can.
        When the request's turn comes and `abandoned()` is true, raise `Abandoned` instead
        of generating a reply nobody will read."""

    def prefill(self, messages: Sequence[ChatMessage]) -> None:
        """Read `messages` into the prompt cache without answering, so that a later request
        that starts with them only computes what follows (a turn's prompt prepared while the
        person is still speaking). Nothing where the backend keeps no prompt cache."""
        return None

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.7,
        abandoned: AbandonCheck | None = None,
    ) -> Iterator[str]:
        """Yield the reply in pieces as they are generated; one piece where not supported.
        `abandoned` as for `complete` (raised on the first step)."""
        yield self.complete(
            messages, max_tokens=max_tokens, temperature=temperature, abandoned=abandoned
        )

    def stream_with_tools(
        self,
        messages: Sequence[ChatMessage],
        tools: ToolBox | None,
        *,
        max_tokens: int,
        temperature: float = 0.7,
        abandoned: AbandonCheck | None = None,
    ) -> Iterator[str]:
        """`stream`, the model calling `tools` on the way where it can (`supports_tools`;
        other backends answer without them): only the words to say come out."""
        return self.stream(
            messages, max_tokens=max_tokens, temperature=temperature, abandoned=abandoned
        )

    @abstractmethod
    def is_available(self) -> bool:
        """Cheap reachability check (for /health); never raises."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources held by the backend."""


class Embedder(ABC):
    """A sentence-embedding model returning L2-normalised float32 vectors."""

    name: str = "embed"
    model: str = ""

    @property
    @abstractmethod
    def dimension(self) -> int: ...

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> list[Vector]: ...

    def embed(self, text: str) -> Vector:
        return self.embed_batch([text])[0]

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources held by the backend."""


def normalise(vector: npt.ArrayLike) -> Vector:
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array))
    if norm == 0.0 or not np.isfinite(norm):
        raise BackendError("embedding backend returned a zero or non-finite vector")
    return array / norm


def cpu_session(model: str | bytes, threads: int) -> Any:
    """An ONNX Runtime session of `model` (a path, or the model itself) on `threads` CPU
    threads whose idle workers do not spin: spinning, they would steal the cores from the
    vector search and the chat model that run right after (piper's own loader left them
    spinning, and on two cores a sentence took 2.4 times as long: 0.31 s instead of 0.13 s
    for "A cat is a cat!")."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


class SpeechToText(ABC):
    """Speech recognition on 16 kHz mono float32 samples."""

    name: str = "stt"
    model: str = ""

    @abstractmethod
    def transcribe(self, samples: npt.NDArray[np.float32]) -> Transcript: ...


class VoiceActivity(ABC):
    """Voice-activity detection on 16 kHz mono int16 PCM, a fixed chunk at a time. Keeps
    state from chunk to chunk: one instance per stream of audio."""

    name: str = "vad"
    chunk_samples: int = 512

    @abstractmethod
    def speech_probability(self, chunk: npt.NDArray[np.int16]) -> float:
        """The probability (0-1) that `chunk` (exactly `chunk_samples`) holds speech."""


class TurnEnd(ABC):
    """Whether a person has finished their turn, heard from the audio itself (how the voice
    falls, not the words): 16 kHz mono int16 PCM of the turn so far, its first silence at the
    end. Holds no state from call to call: one instance serves every stream, from any thread."""

    name: str = "turn-end"
    model: str = ""

    @abstractmethod
    def completion_probability(self, pcm: npt.NDArray[np.int16]) -> float:
        """The probability (0-1) that the turn is complete."""


class TextToSpeech(ABC):
    """Speech synthesis: int16 mono PCM, one piece per sentence, at `sample_rate`."""

    name: str = "tts"
    model: str = ""

    @property
    @abstractmethod
    def sample_rate(self) -> int: ...

    @abstractmethod
    def synthesize(self, text: str) -> Iterator[npt.NDArray[np.int16]]: ...


@dataclass(frozen=True)
class TranscriptSegment:
    text: str
    no_speech_prob: float
    avg_logprob: float


@dataclass(frozen=True)
class Transcript:
    text: str
    segments: tuple[TranscriptSegment, ...] = ()
    language: str = ""

    @property
    def no_speech_prob(self) -> float:
        """Mean no-speech probability over the segments (1.0 when there are none)."""
        if not self.segments:
            return 1.0
        return sum(s.no_speech_prob for s in self.segments) / len(self.segments)
