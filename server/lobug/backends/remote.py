"""Backends that talk to a model server: Ollama (official `ollama` client) and any
OpenAI-compatible server such as vLLM, llama.cpp server or OpenAI (official `openai` client)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import closing, nullcontext
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import httpx

from lobug.backends.base import (
    AbandonCheck,
    BackendError,
    BackendUnavailable,
    ChatMessage,
    Embedder,
    JsonSchema,
    ToolBox,
    Vector,
    normalise,
    raise_if_abandoned,
)
from lobug.backends.sharing import Attempt, ModelTurns, gives_way, until_a_person_comes
from lobug.backends.tool_calls import (
    StreamedCalls,
    ToolCallingChat,
    ToolRequest,
    arguments_of,
    ollama_record,
    openai_record,
)

if TYPE_CHECKING:
    import ollama
    import openai

# Dimensions of common embedding models, so the store can be checked before the first call.
KNOWN_EMBED_DIMS = {
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
PROBE_TIMEOUT_S = 1.5
CUT_STREAM = "ended the stream before the reply was finished (the connection was closed)"
BROKEN_ANSWER = "sent a broken answer (cut when the connection was closed?)"


class StreamCut(BackendUnavailable):
    """A model server's stream ended without its last part (Ollama's `done`, an OpenAI
    `finish_reason`): the connection was closed mid-reply, so what came is not the reply."""


def _timeout(total_s: float, connect_s: float) -> httpx.Timeout:
    return httpx.Timeout(total_s, connect=connect_s)


# ---------------------------------------------------------------------------- Ollama


def ollama_client(host: str, timeout: httpx.Timeout) -> ollama.Client:
    import ollama

    return ollama.Client(host=host, timeout=timeout)


def _ollama_failure(exc: Exception, host: str) -> BackendError:
    import ollama

    if isinstance(exc, ollama.ResponseError):
        status = getattr(exc, "status_code", 0) or 0
        kind = BackendUnavailable if status in (404, 429) or status >= 500 else BackendError
        return kind(f"Ollama at {host} answered {status}: {exc}")
    if isinstance(exc, ValueError):
        return BackendUnavailable(f"Ollama at {host} {BROKEN_ANSWER}: {exc}")
    return BackendUnavailable(f"Ollama at {host} is unreachable: {exc}")


# ValueError: an answer that is not the JSON it should be (cut when the connection closed).
_OLLAMA_ERRORS: tuple[type[Exception], ...] = (
    httpx.HTTPError,
    ConnectionError,
    OSError,
    ValueError,
)


def _ollama_errors() -> tuple[type[Exception], ...]:
    import ollama

    return (*_OLLAMA_ERRORS, ollama.ResponseError)


def ollama_has_model(host: str, model: str) -> bool:
    """True when Ollama answers at `host` and has `model` pulled (tag optional)."""
    try:
        with ollama_client(host, _timeout(PROBE_TIMEOUT_S, PROBE_TIMEOUT_S)) as client:
            listing = client.list()
    except Exception:
        return False
    names = {m.model or "" for m in listing.models}
    wanted = model if ":" in model else f"{model}:latest"
    return wanted in names or model in names


class OllamaChat(ToolCallingChat):
    """Ollama's chat. A background call gives way to a person's (`until_a_person_comes`):
    Ollama answers one request at a time unless OLLAMA_NUM_PARALLEL says otherwise."""

    name = "ollama"
    supports_json_schema = True
    record = staticmethod(ollama_record)

    def __init__(self, host: str, model: str, *, timeout_s: float, connect_timeout_s: float):
        self.host = host
        self.model = model
        self._client = ollama_client(host, _timeout(timeout_s, connect_timeout_s))
        self._turns = ModelTurns()

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
        raise_if_abandoned(abandoned)
        options = {"num_predict": max_tokens, "temperature": temperature}
        if background:

            def run(_text: str, _tokens: int) -> Attempt:
                raise_if_abandoned(abandoned)
                pieces = self._pieces(messages, options=options, json_schema=json_schema)
                return until_a_person_comes(pieces, self._turns)

            return gives_way(self._turns, run, resumable=False, max_tokens=max_tokens)
        try:
            with self._turns.person():
                response = self._client.chat(
                    model=self.model, messages=list(messages), format=json_schema, options=options
                )
        except _ollama_errors() as exc:
            raise _ollama_failure(exc, self.host) from exc
        return response.message.content or ""

    def _round(
        self,
        max_tokens: int,
        temperature: float,
        messages: list[dict[str, Any]],
        tools: ToolBox | None,
    ) -> Generator[str, None, list[ToolRequest]]:
        options = {"num_predict": max_tokens, "temperature": temperature}
        return self._pieces(messages, tools, options=options)

    def _pieces(
        self,
        messages: Sequence[Any],
        tools: ToolBox | None = None,
        *,
        options: dict[str, Any],
        json_schema: JsonSchema | None = None,
    ) -> Generator[str, None, list[ToolRequest]]:
        """The streamed words, then the tool calls asked for (sent whole, in any part)."""
        cut = StreamCut(f"Ollama at {self.host} {CUT_STREAM}")
        started = finished = False
        calls: list[ToolRequest] = []
        try:
            parts = self._client.chat(
                model=self.model,
                messages=list(messages),
                tools=None if tools is None else list(tools.specs),
                stream=True,
                format=json_schema,
                options=options,
            )
            with closing(cast("Generator[Any, None, None]", parts)):  # closed: Ollama stops
                for part in parts:
                    started, finished = True, finished or bool(part.done)
                    calls += _ollama_calls(part.message.tool_calls or (), len(calls))
                    if part.message.content:
                        yield part.message.content
        except _OLLAMA_ERRORS as exc:
            raise (cut if started else _ollama_failure(exc, self.host)) from exc
        except _ollama_errors() as exc:
            raise _ollama_failure(exc, self.host) from exc
        if not finished:  # the body simply ended: no part said `done`
            raise cut
        return calls

    def is_available(self) -> bool:
        return ollama_has_model(self.host, self.model)

    def close(self) -> None:
        self._client.close()


def _ollama_calls(asked: Sequence[Any], before: int) -> list[ToolRequest]:
    """Ollama's calls (named, no ids: numbered after the `before` of the same answer)."""
    return [
        ToolRequest(f"call_{before + n}", call.function.name, arguments_of(call.function.arguments))
        for n, call in enumerate(asked)
    ]


class _ServedEmbedder(Embedder):
    """An embedder behind a server: the dimension is known for common models, else probed."""

    _dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self.embed("dimension probe"))
        return self._dimension


class OllamaEmbedder(_ServedEmbedder):
    name = "ollama"

    def __init__(self, host: str, model: str, *, dimension: int | None, timeout_s: float):
        self.host = host
        self.model = model
        self._client = ollama_client(host, _timeout(timeout_s, min(timeout_s, 3.0)))
        self._dimension = dimension or KNOWN_EMBED_DIMS.get(model.split(":")[0])

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        try:
            response = self._client.embed(model=self.model, input=list(texts))
        except _ollama_errors() as exc:
            raise _ollama_failure(exc, self.host) from exc
        return [normalise(v) for v in response.embeddings]

    def close(self) -> None:
        self._client.close()


# ---------------------------------------------------------------------------- OpenAI-compatible


def openai_client(
    base_url: str | None, api_key: str | None, total_s: float, connect_s: float
) -> openai.OpenAI:
    import openai

    timeout = openai.Timeout(total_s, connect=connect_s)
    # Local servers ignore the key, but the client insists on having one.
    return openai.OpenAI(
        base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0
    )


def _openai_failure(exc: Exception, where: str) -> BackendError:
    import openai

    if isinstance(exc, openai.APIStatusError):
        kind = (
            BackendUnavailable
            if exc.status_code in (404, 429) or exc.status_code >= 500
            else (BackendError)
        )
        return kind(f"OpenAI-compatible server at {where} answered {exc.status_code}: {exc}")
    if isinstance(exc, ValueError):
        return BackendUnavailable(f"OpenAI-compatible server at {where} {BROKEN_ANSWER}: {exc}")
    return BackendUnavailable(f"OpenAI-compatible server at {where} is unreachable: {exc}")


def _openai_errors() -> tuple[type[Exception], ...]:
    """What a call may raise about the server: the client's errors, and ValueError for an
    answer that is not the JSON it should be (cut when the connection closed)."""
    import openai

    return (openai.OpenAIError, ValueError)


# Words with which compatible servers (vLLM, llama.cpp, LM Studio, LiteLLM...) refuse
# `response_format`; any other 400 (context length, max_tokens...) is the request's fault.
STRUCTURED_OUTPUT_MARKERS = ("response_format", "json_schema", "structured output", "guided")


def rejects_structured_output(exc: Exception) -> bool:
    """Whether a 400 says the server does not support structured output."""
    text = f"{exc} {getattr(exc, 'body', '')}".lower()
    return any(marker in text for marker in STRUCTURED_OUTPUT_MARKERS)


class OpenAIChat(ToolCallingChat):
    """An OpenAI-compatible server's chat. On a server of one's own (`base_url` given:
    llama.cpp's server, vLLM, LM Studio... may answer one request at a time) a background
    call gives way to a person's (`until_a_person_comes`); OpenAI's own serves both at once,
    and a call stopped there would only be paid for twice."""

    name = "openai"
    supports_json_schema = True
    record = staticmethod(openai_record)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float,
        connect_timeout_s: float,
    ):
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self._client = openai_client(base_url, api_key, timeout_s, connect_timeout_s)
        self._probe = openai_client(base_url, api_key, PROBE_TIMEOUT_S, PROBE_TIMEOUT_S)
        self._turns = ModelTurns()
        self.background_gives_way = base_url is not None

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
        raise_if_abandoned(abandoned)
        # The request, asked again after a server refused structured output (without it).
        ask = partial(self._request, messages, max_tokens, temperature, json_schema)
        if background and self.background_gives_way:
            run = partial(self._background_try, ask, abandoned)
            return gives_way(self._turns, run, resumable=False, max_tokens=max_tokens)
        with nullcontext() if background else self._turns.person():
            return self._answer(ask, abandoned)

    def _request(
        self,
        messages: Sequence[Mapping[str, Any]],
        max_tokens: int,
        temperature: float,
        json_schema: JsonSchema | None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if json_schema is not None and self.supports_json_schema:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": json_schema},
            }
        return request

    def _answer(self, ask: Callable[[], dict[str, Any]], abandoned: AbandonCheck | None) -> str:
        import openai

        request = ask()
        try:
            response = self._client.chat.completions.create(**request)
        except openai.BadRequestError as exc:
            if "response_format" not in request or not rejects_structured_output(exc):
                raise _openai_failure(exc, self.base_url) from exc
            # Some compatible servers reject structured output; ask once more without it.
            self.supports_json_schema = False
            raise_if_abandoned(abandoned)
            return self._answer(ask, abandoned)
        except _openai_errors() as exc:
            raise _openai_failure(exc, self.base_url) from exc
        if not response.choices:
            raise BackendError(f"{self.base_url} returned no choices")
        return response.choices[0].message.content or ""

    def _background_try(
        self, ask: Callable[[], dict[str, Any]], abandoned: AbandonCheck | None, *_: object
    ) -> Attempt:
        """One streamed try of a background call (`gives_way` passes the text so far, not
        used: a remote call starts again)."""
        import openai

        raise_if_abandoned(abandoned)
        request = ask()
        try:
            return until_a_person_comes(self._pieces({**request, "stream": True}), self._turns)
        except BackendError as exc:
            refused = exc.__cause__
            if "response_format" not in request or not (
                isinstance(refused, openai.BadRequestError) and rejects_structured_output(refused)
            ):
                raise
        self.supports_json_schema = False  # as in `_answer`: once more without it
        return self._background_try(ask, abandoned)

    def _round(
        self,
        max_tokens: int,
        temperature: float,
        messages: list[dict[str, Any]],
        tools: ToolBox | None,
    ) -> Generator[str, None, list[ToolRequest]]:
        request = {**self._request(messages, max_tokens, temperature, None), "stream": True}
        offered = {} if tools is None else {"tools": list(tools.specs)}
        return self._pieces({**request, **offered})

    def _pieces(self, request: dict[str, Any]) -> Generator[str, None, list[ToolRequest]]:
        """The streamed words, then the tool calls asked for (sent in parts)."""
        import openai

        try:
            chunks = self._client.chat.completions.create(**request)
        except _openai_errors() as exc:
            raise _openai_failure(exc, self.base_url) from exc
        cut = StreamCut(f"OpenAI-compatible server at {self.base_url} {CUT_STREAM}")
        finished, calls = False, StreamedCalls()
        try:
            with chunks:  # an abandoned stream releases its connection at once
                for chunk in chunks:
                    choices = getattr(chunk, "choices", None)
                    if not choices:
                        continue
                    finished = finished or choices[0].finish_reason is not None
                    for part in choices[0].delta.tool_calls or ():
                        asked = part.function
                        calls.add(
                            part.index, part.id, asked and asked.name, asked and asked.arguments
                        )
                    if choices[0].delta.content:
                        yield choices[0].delta.content
        except (openai.APIConnectionError, ValueError) as exc:  # the connection broke midway
            raise cut from exc
        except openai.OpenAIError as exc:  # an error event in the stream
            raise _openai_failure(exc, self.base_url) from exc
        if not finished:  # the body simply ended: no finish_reason was sent
            raise cut
        return calls.requests()

    def is_available(self) -> bool:
        try:
            self._probe.models.list()
        except Exception:
            return False
        return True

    def close(self) -> None:
        self._client.close()
        self._probe.close()


class OpenAIEmbedder(_ServedEmbedder):
    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        dimension: int | None,
        timeout_s: float,
    ):
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self._client = openai_client(base_url, api_key, timeout_s, min(timeout_s, 3.0))
        self._dimension = dimension or KNOWN_EMBED_DIMS.get(model)

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:

        if not texts:
            return []
        try:
            response = self._client.embeddings.create(model=self.model, input=list(texts))
        except _openai_errors() as exc:
            raise _openai_failure(exc, self.base_url) from exc
        ordered = sorted(response.data, key=lambda item: item.index)
        return [normalise(item.embedding) for item in ordered]

    def close(self) -> None:
        self._client.close()
