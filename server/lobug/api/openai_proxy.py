"""OpenAI-compatible endpoints: point any OpenAI client's base URL at `<server>/v1` and it gets
Lo-Bug's memory. The agent (memory namespace) is the `X-Agent` header, else the request's
`user` field, else the server's default agent. With `X-Agent`, `user` names the person of
that household who asks, where the caller's token may name them (`memory/evidence.py`: the
admin, or a device's own token of that person's device; anyone else naming them gets 403
`person_not_allowed`): memory is read as they may see it."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, BackgroundTasks, Header, Request
from fastapi.responses import JSONResponse
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from lobug.api.background import hand_over_exchange
from lobug.api.deps import CallerEvidence
from lobug.api.disconnect import watch_disconnect
from lobug.api.errors import ApiError, body_error, valid_or
from lobug.api.streaming import ClosingStreamingResponse, blocking_stream, started
from lobug.backends.base import BackendError, ChatMessage
from lobug.client.messages import content_text
from lobug.memory.evidence import Evidence
from lobug.memory.work_queue import StreamedExchange
from lobug.names import AGENT_NAME_RULE, is_agent_name
from lobug.turn.proxy import MemoryProxy, ProxyRequest, ProxyRequestError, user_query
from lobug.web.deps import ServicesDep

log = logging.getLogger(__name__)

router = APIRouter(prefix="/v1")

DEFAULT_TEMPERATURE = 0.7

Role = Literal["system", "developer", "user", "assistant", "tool"]
ROLES = get_args(Role)
Tokens = Annotated[StrictInt, Field(ge=1, le=8192)] | None
Temperature = Annotated[StrictFloat, Field(ge=0, le=2)] | None
Content = Annotated[
    str,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "object"}},
                {"type": "null"},
            ]
        }
    ),
]


class ChatMessageIn(BaseModel):
    """One OpenAI chat message; fields this server does not use are allowed and ignored."""

    model_config = ConfigDict(extra="allow")

    role: Role
    content: Content = ""

    @model_validator(mode="before")
    @classmethod
    def _has_role(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("role"), str):
            raise body_error("invalid_request", "each message needs a 'role' and a 'content'")
        if data["role"] not in ROLES:
            raise body_error("invalid_request", f"unknown message role {data['role']!r}")
        return data

    @field_validator("content", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        """Plain text: a string, or the text of a list of parts."""
        text = content_text(value)
        if text is None:
            raise body_error(
                "invalid_request", "message content must be a string or a list of parts"
            )
        return text

    def chat_message(self) -> ChatMessage:
        return {
            "role": "system" if self.role == "developer" else self.role,
            "content": self.content,
        }


class ChatCompletionIn(BaseModel):
    """An OpenAI chat completion request. Clients send many more fields than this server uses:
    they are allowed and ignored."""

    model_config = ConfigDict(extra="allow")

    messages: list[ChatMessageIn] = Field(min_length=1)
    model: str | None = None
    user: str | None = None
    stream: StrictBool | None = None
    max_tokens: Tokens = None
    max_completion_tokens: Tokens = None
    temperature: Temperature = None
    n: Any = None
    _query: str = PrivateAttr("")

    @model_validator(mode="before")
    @classmethod
    def _has_messages(cls, data: Any) -> Any:
        if isinstance(data, dict) and not (
            isinstance(data.get("messages"), list) and data["messages"]
        ):
            raise body_error("invalid_request", "'messages' must be a non-empty list")
        return data

    @field_validator("user", mode="before")
    @classmethod
    def _user(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, str):
            raise body_error("invalid_agent", AGENT_NAME_RULE)
        return value

    @field_validator("max_tokens", "max_completion_tokens", mode="wrap")
    @classmethod
    def _tokens(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        reason = "max_tokens must be an integer from 1 to 8192"
        return valid_or(value, handler, "invalid_request", reason)

    @field_validator("n", mode="before")
    @classmethod
    def _one_choice(cls, value: Any) -> Any:
        if value is not None and (type(value) is not int or value != 1):
            raise body_error("invalid_request", "'n' must be 1: this server answers one choice")
        return value

    @field_validator("temperature", mode="wrap")
    @classmethod
    def _temperature(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        reason = "temperature must be a number from 0 to 2"
        return valid_or(value, handler, "invalid_request", reason)

    @model_validator(mode="after")
    def _has_query(self) -> ChatCompletionIn:
        try:
            self._query = user_query(self.chat_messages())
        except ProxyRequestError as exc:
            raise body_error("invalid_request", str(exc)) from None
        return self

    def chat_messages(self) -> list[ChatMessage]:
        return [message.chat_message() for message in self.messages]

    def proxy_request(
        self, agent: str, default_max_tokens: int, person: str | None, evidence: Evidence
    ) -> ProxyRequest:
        tokens = self.max_completion_tokens or self.max_tokens
        temperature = self.temperature
        return ProxyRequest(
            person=person,
            evidence=evidence,
            agent=agent,
            messages=self.chat_messages(),
            query=self._query,
            max_tokens=tokens or default_max_tokens,
            temperature=DEFAULT_TEMPERATURE if temperature is None else temperature,
        )


def agent_of(header: str | None, user: str | None, default: str) -> str:
    """The memory namespace: the `X-Agent` header, else the request's `user`, else the
    server's default agent."""
    agent = header or user or default
    if not is_agent_name(agent):
        raise ApiError(422, "invalid_agent", AGENT_NAME_RULE)
    return agent


@router.get("/models")
async def models(svc: ServicesDep) -> dict[str, Any]:
    chat = svc.chat
    return {
        "object": "list",
        "data": [{"id": chat.model, "object": "model", "created": 0, "owned_by": "lobug"}],
    }


@router.post("/chat/completions")
async def chat_completions(
    body: ChatCompletionIn,
    svc: ServicesDep,
    request: Request,
    background: BackgroundTasks,
    evidence: CallerEvidence,
    x_agent: Annotated[str | None, Header(description="The agent (memory namespace)")] = None,
) -> Any:
    # With X-Agent, `user` names a person of that household; without, the agent (as before).
    agent = agent_of(x_agent, None if x_agent else body.user, svc.settings.agent)
    person = body.user if x_agent else None
    proxy_request = body.proxy_request(agent, svc.assistant.reply_tokens, person, evidence)
    if len(proxy_request.query) > svc.settings.max_text_chars:
        raise ApiError(
            413,
            "text_too_long",
            f"the last user message is longer than {svc.settings.max_text_chars} characters",
        )
    proxy = MemoryProxy(
        svc.store,
        svc.memory,
        svc.chat,
        message_limit=svc.settings.max_context_messages,
        language=svc.settings.language,
    )
    model = body.model or svc.chat.model
    if body.stream is True:
        user, messages = await asyncio.to_thread(proxy.prepare, proxy_request)
        stored = StreamedExchange()
        generating = proxy.stream(proxy_request, user, messages, stored)
        pieces = await asyncio.to_thread(started, generating)  # a failure here is a 503
        hand_over_exchange(background, svc.memory_work, stored.wait)
        chunks = sse_chunks(pieces, model)
        events = blocking_stream(chunks, lambda: stored.settle(None))  # a stream never started
        return ClosingStreamingResponse(events, media_type="text/event-stream")
    async with watch_disconnect(request) as abandoned:
        reply, exchange = await asyncio.to_thread(proxy.complete, proxy_request, abandoned)
    hand_over_exchange(background, svc.memory_work, lambda: exchange)
    return JSONResponse(completion(reply, model))


def completion(reply: str, model: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def sse_chunks(pieces: Iterator[str], model: str) -> Iterator[str]:
    """OpenAI's streaming format: chat.completion.chunk events, then `data: [DONE]`.

    A failure mid-stream (the model's, its connection cut included) ends the stream with an
    error event and no `[DONE]` (the status was already sent)."""
    chunk_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())

    def event(delta: dict[str, str], finish: str | None) -> str:
        chunk = {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant", "content": ""}, None)
    try:
        for piece in pieces:
            yield event({"content": piece}, None)
    except Exception as exc:
        yield f"data: {json.dumps(stream_error(exc))}\n\n"
        return
    yield event({}, "stop")
    yield "data: [DONE]\n\n"


def stream_error(exc: Exception) -> dict[str, Any]:
    """OpenAI's error event for a stream that cannot go on (its last event: no
    `finish_reason`, no `[DONE]`): a model that failed or whose connection was cut."""
    if isinstance(exc, BackendError):
        message, code = f"The language model failed: {exc}", "llm_unavailable"
    else:
        log.exception("a /v1 stream failed")
        message, code = "The reply failed; it was not finished", "internal_error"
    return {"error": {"message": message, "type": "server_error", "param": None, "code": code}}
