"""A model that calls tools while it answers (a device's settings: issue 30, item 5), written
once for the backends that can (`remote.py`: Ollama, OpenAI-compatible servers).

The model's answer is streamed as always; where it asks for tools instead of (or after) words,
they are called, the call and its result are added to the messages in the backend's own form,
and the model is asked again, so the caller still sees only the words to say. The rounds are
bounded: after `MAX_TOOL_ROUNDS` the model is asked once more without tools and must answer in
words. A tool that fails, or that the model named wrongly, never costs the turn: the model is
told, and answers. Nor does a server that refuses tools (Ollama's models without tool support,
llama.cpp's server without `--jinja`, vLLM without a tool parser: a 400 naming them): it is
asked again without, and offered none again."""

from __future__ import annotations

import json
import logging
from abc import abstractmethod
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from lobug.backends.base import (
    AbandonCheck,
    BackendError,
    BackendUnavailable,
    ChatBackend,
    ChatMessage,
    ToolBox,
    raise_if_abandoned,
    until_abandoned,
)
from lobug.backends.sharing import ModelTurns

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 2  # rounds of calls in one answer; then words only
MAX_CALLS_A_ROUND = 4  # more asked at once are told they were not made
MAX_RESULT_CHARS = 1000  # of a tool's result, shown to the model


@dataclass(frozen=True)
class ToolRequest:
    """A call the model asked for: `arguments` None when they were not a JSON object."""

    id: str
    name: str
    arguments: dict[str, Any] | None


# One streamed request with these messages (tools offered when given): the words as they
# come, then the calls asked for (its generator's return value).
Round = Callable[[list[dict[str, Any]], ToolBox | None], Generator[str, None, list[ToolRequest]]]
# The messages that record a round (the assistant's words and calls, each call's result), in
# the backend's own form.
Recorded = Callable[[str, list[ToolRequest], list[str]], list[dict[str, Any]]]


class ToolCallingChat(ChatBackend):
    """A model behind a server that calls tools (`remote.py`): its streams are `_round`s of
    `answer_calling`, recorded in its own form (`record`), a person's request first on the
    server (`_turns`)."""

    supports_tools = True
    record: Recorded
    _turns: ModelTurns

    @abstractmethod
    def _round(
        self,
        max_tokens: int,
        temperature: float,
        messages: list[dict[str, Any]],
        tools: ToolBox | None,
    ) -> Generator[str, None, list[ToolRequest]]:
        """One streamed request (see `Round`)."""

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.7,
        abandoned: AbandonCheck | None = None,
    ) -> Iterator[str]:
        return self.stream_with_tools(
            messages, None, max_tokens=max_tokens, temperature=temperature, abandoned=abandoned
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
        raise_if_abandoned(abandoned)
        offered = tools if self.supports_tools else None
        with self._turns.person():
            ask = partial(self._unless_refused, max_tokens, temperature)
            answer = answer_calling(ask, messages, offered, self.record, abandoned)
            yield from until_abandoned(answer, abandoned)

    def _unless_refused(
        self,
        max_tokens: int,
        temperature: float,
        messages: list[dict[str, Any]],
        tools: ToolBox | None,
    ) -> Generator[str, None, list[ToolRequest]]:
        """A `_round`, asked again without tools when the server refuses them."""
        said: list[str] = []
        try:
            return (
                yield from _said_along(self._round(max_tokens, temperature, messages, tools), said)
            )
        except BackendError as exc:
            if tools is None or said or not refuses_tools(exc):
                raise
        log.warning("%s refuses tools: the model is offered none from now on", self.name)
        self.supports_tools = False
        return (yield from self._round(max_tokens, temperature, messages, None))


def refuses_tools(exc: BackendError) -> bool:
    """Whether a failed request was refused for its tools (a 400 naming them)."""
    if isinstance(exc, BackendUnavailable):
        return False
    return "tool" in str(exc.__cause__ or exc).lower()


def answer_calling(
    ask: Round,
    messages: Sequence[ChatMessage],
    tools: ToolBox | None,
    recorded: Recorded,
    abandoned: AbandonCheck | None = None,
) -> Generator[str, None, None]:
    """The model's words for `messages`, calling `tools` where it asks (none given: one
    plain request)."""
    history: list[dict[str, Any]] = [dict(m) for m in messages]
    for round_number in range(MAX_TOOL_ROUNDS + 1):
        offered = tools if round_number < MAX_TOOL_ROUNDS else None
        said: list[str] = []
        requests = yield from _said_along(ask(history, offered), said)
        if offered is None or not requests:
            return  # calls asked for when none were offered are not made
        if abandoned is not None and abandoned():
            return  # a barge-in: no call made for an answer nobody waits for
        results = [run_tool(offered, r, n) for n, r in enumerate(requests)]
        history += recorded("".join(said), requests, results)


def _said_along(
    pieces: Generator[str, None, list[ToolRequest]], said: list[str]
) -> Generator[str, None, list[ToolRequest]]:
    """`pieces` passed on, each also kept in `said`; their return value returned."""
    try:
        while True:
            piece = next(pieces)
            said.append(piece)
            yield piece
    except StopIteration as end:
        requests: list[ToolRequest] = end.value or []
        return requests
    finally:
        pieces.close()


def run_tool(tools: ToolBox, request: ToolRequest, rank: int = 0) -> str:
    """The result the model is shown for `request` (`rank`: its place in its round)."""
    offered = {spec["function"]["name"] for spec in tools.specs}
    if rank >= MAX_CALLS_A_ROUND:
        return "Not done: too many tools asked for at once."
    if request.name not in offered:
        return f"Not done: there is no tool named {request.name[:64]!r}."
    if request.arguments is None:
        return "Not done: the arguments were not a JSON object."
    try:
        result = tools.call(request.name, request.arguments)
    except Exception as exc:  # a tool's failure is the model's to tell, never the turn's end
        log.info("tool %s failed: %s", request.name, exc)
        return f"Failed: {str(exc)[:200] or type(exc).__name__}"
    return result[:MAX_RESULT_CHARS]


def arguments_of(raw: Any) -> dict[str, Any] | None:
    """A call's arguments as a model sent them (a JSON object, or its text), None when they
    are not one; no arguments at all are an empty object."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return dict(raw) if isinstance(raw, dict) else None


@dataclass
class StreamedCalls:
    """Calls an OpenAI-compatible stream sends in parts (by index: the id and the name
    first, the arguments' JSON text in fragments)."""

    parts: dict[int, list[str]] = field(default_factory=dict)  # index -> [id, name, arguments]

    def add(self, index: int, call_id: str | None, name: str | None, arguments: str | None) -> None:
        part = self.parts.setdefault(index, [f"call_{index}", "", ""])
        part[0] = call_id or part[0]
        part[1] += name or ""
        part[2] += arguments or ""

    def requests(self) -> list[ToolRequest]:
        return [
            ToolRequest(call_id, name, arguments_of(arguments))
            for _, (call_id, name, arguments) in sorted(self.parts.items())
        ]


def openai_record(
    said: str, requests: list[ToolRequest], results: list[str]
) -> list[dict[str, Any]]:
    """A round as an OpenAI-compatible server reads it back."""
    calls = [
        {
            "id": r.id,
            "type": "function",
            "function": {"name": r.name, "arguments": json.dumps(r.arguments or {})},
        }
        for r in requests
    ]
    answers = [
        {"role": "tool", "tool_call_id": r.id, "content": result}
        for r, result in zip(requests, results, strict=True)
    ]
    # Without words the content is left out: some compatible servers refuse it as null.
    asked = {"role": "assistant", "tool_calls": calls, **({"content": said} if said else {})}
    return [asked, *answers]


def ollama_record(
    said: str, requests: list[ToolRequest], results: list[str]
) -> list[dict[str, Any]]:
    """A round as Ollama reads it back (calls by name, arguments as an object)."""
    calls = [{"function": {"name": r.name, "arguments": r.arguments or {}}} for r in requests]
    answers = [
        {"role": "tool", "tool_name": r.name, "content": result}
        for r, result in zip(requests, results, strict=True)
    ]
    return [{"role": "assistant", "content": said, "tool_calls": calls}, *answers]
