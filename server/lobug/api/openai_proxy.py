"""OpenAI-compatible endpoints: point any OpenAI client's base URL at `<server>/v1` and it gets
Lo-Bug's memory. The agent (memory namespace) is the `X-Agent` header, else the request's
`user` field, else the server's default agent."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import JSONResponse

from lobug.api.background import hand_over_exchange
from lobug.api.body import read_json_object
from lobug.api.device import services
from lobug.api.disconnect import watch_disconnect
from lobug.api.errors import ApiError
from lobug.api.streaming import ClosingStreamingResponse, blocking_stream
from lobug.backends.base import BackendError
from lobug.memory.work_queue import PendingExchange
from lobug.proxy import MemoryProxy, ProxyRequest, ProxyRequestError, last_user_text
from lobug.proxy import parse_messages as parse_chat_messages

router = APIRouter(prefix="/v1")

AGENT_NAME = re.compile(r"^[A-Za-z0-9._:@-]{1,64}$")


@router.get("/models")
async def models(request: Request) -> dict[str, Any]:
    chat = services(request).chat
    return {
        "object": "list",
        "data": [{"id": chat.model, "object": "model", "created": 0, "owned_by": "lobug"}],
    }


@router.post("/chat/completions")
async def chat_completions(request: Request, background: BackgroundTasks) -> Any:
    svc = services(request)
    body = await read_json_object(request, svc.settings.max_body_bytes)
    proxy_request = parse_request(body, request, svc.settings.agent, svc.settings.llm_max_tokens)
    proxy = MemoryProxy(svc.store, svc.memory, svc.chat)
    model = str(body.get("model") or svc.chat.model)
    if body.get("stream") is True:
        user, messages = await asyncio.to_thread(proxy.prepare, proxy_request)
        stored = PendingExchange()
        hand_over_exchange(background, svc.memory_work, stored.wait)
        chunks = sse_chunks(proxy.stream(proxy_request, user, messages, stored), model)
        pieces = blocking_stream(chunks, lambda: stored.settle(None))  # a stream never started
        return ClosingStreamingResponse(pieces, media_type="text/event-stream")
    async with watch_disconnect(request) as abandoned:
        reply, exchange = await asyncio.to_thread(proxy.complete, proxy_request, abandoned)
    hand_over_exchange(background, svc.memory_work, lambda: exchange)
    return JSONResponse(completion(reply, model))


def parse_request(
    body: dict[str, Any], request: Request, default_agent: str, default_max_tokens: int
) -> ProxyRequest:
    try:
        messages = parse_chat_messages(body.get("messages"))
        query = last_user_text(messages)
    except ProxyRequestError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    agent = request.headers.get("x-agent") or body.get("user") or default_agent
    if not isinstance(agent, str) or not AGENT_NAME.match(agent):
        raise ApiError(422, "invalid_agent", "The agent must be 1-64 of A-Z a-z 0-9 . _ : @ -")
    return ProxyRequest(
        agent=agent,
        messages=messages,
        query=query,
        max_tokens=_bounded_int(
            body, "max_completion_tokens", body.get("max_tokens"), default_max_tokens
        ),
        temperature=_temperature(body.get("temperature")),
    )


def _bounded_int(body: dict[str, Any], name: str, fallback: Any, default: int) -> int:
    value = body.get(name, fallback)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 8192:
        raise ApiError(422, "invalid_request", "max_tokens must be an integer from 1 to 8192")
    return value


def _temperature(value: Any) -> float:
    if value is None:
        return 0.7
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2:
        raise ApiError(422, "invalid_request", "temperature must be a number from 0 to 2")
    return float(value)


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

    A backend failure mid-stream ends the stream with an error event (the status is sent)."""
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
    except BackendError as exc:
        error = {"error": {"message": f"The language model failed: {exc}", "type": "server_error"}}
        yield f"data: {json.dumps(error)}\n\n"
        return
    yield event({}, "stop")
    yield "data: [DONE]\n\n"
