"""The `handle` program: a `transcript` with its `context` is a Lo-Bug turn, the turn a device
gets for words it sends (`Voice.answer_words`: the same memory, memory requests, reminders,
reply guard, spoken-length rules, log and memory work). The satellite (`satellite_id`, else
`device_id`) is the device: its working memory, its household's facts, its default person;
what it may read is what the domain's rules give a device whose speaker is not known by voice
(`memory/people.py`). Each sentence leaves as a `handled-chunk` as soon as it has passed the
reply guard; the closing `handled` (or `not-handled`, for a turn not answered in words) holds
the whole reply and the context as Home Assistant sent it, `conversation_id` included: Home
Assistant reads only that one."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from wyoming.asr import Transcript
from wyoming.event import Event
from wyoming.handle import Handled, HandledChunk, HandledStart, HandledStop, NotHandled

from lobug.services import Services
from lobug.voice.pipeline import StreamedVoice
from lobug.web.device_ids import device_id_problem
from lobug.wyoming.limits import DEFAULT_DEVICE, Refused
from lobug.wyoming.worker import walked

log = logging.getLogger(__name__)

Send = Callable[[Event], Awaitable[None]]
MAX_DEVICE_CHARS, DIGEST_CHARS = 64, 12  # `names.DEVICE_ID`; Home Assistant's may be longer
Left = Callable[[], bool]  # whether the client has gone (asked from worker threads too)


@dataclass(frozen=True)
class HandleRequest:
    text: str
    device: str
    context: dict[str, Any] | None


def handle_request(event: Event, max_chars: int) -> HandleRequest:
    """The turn a `transcript` asks for. Raises Refused."""
    try:
        transcript = Transcript.from_event(event)
    except KeyError:
        raise Refused("a transcript without text") from None
    context = transcript.context
    if not isinstance(transcript.text, str) or not isinstance(context, dict | None):
        raise Refused("a transcript's text must be a string and its context an object")
    if len(transcript.text) > max_chars:
        raise Refused(f"the text is over {max_chars} characters", "too_large")
    return HandleRequest(transcript.text.strip(), device_of(context), context)


def device_of(context: dict[str, Any] | None) -> str:
    """The Lo-Bug device a request comes from: its satellite, else its Home Assistant device,
    else `DEFAULT_DEVICE`. A satellite's entity id longer than a device name may be keeps its
    start and a digest of the whole. Raises Refused for a name no device may have."""
    context = context or {}
    named = context.get("satellite_id") or context.get("device_id") or DEFAULT_DEVICE
    device = str(named).strip().lower()
    if len(device) > MAX_DEVICE_CHARS:
        digest = hashlib.sha256(device.encode()).hexdigest()[:DIGEST_CHARS]
        device = f"{device[: MAX_DEVICE_CHARS - DIGEST_CHARS - 1]}-{digest}"
    problem = device_id_problem(device, "satellite_id")
    if problem is not None:
        raise Refused(problem.replace("X-Device-Id", "satellite_id / device_id"))
    return device


async def answer(svc: Services, request: HandleRequest, send: Send, left: Left) -> None:
    """Answer the turn: chunks as the sentences pass the guard, then the closing event. When
    the client `left` mid-answer, the model stops and what it was sent is stored, marked cut."""
    if not request.text:
        await send(NotHandled(context=request.context).event())
        return
    streamed = await asyncio.to_thread(
        svc.voice.answer_words, request.device, request.text, {}, left
    )
    said: list[str] = []
    cut = False
    try:
        if streamed.streaming is not None:
            await send(HandledStart(context=request.context).event())
            async with contextlib.aclosing(_sentences(svc, streamed, left)) as sentences:
                async for sentence in sentences:
                    said.append(sentence)
                    await send(HandledChunk(text=sentence + " ").event())
            cut = left()
            await send(HandledStop().event())
    except (OSError, asyncio.CancelledError):
        cut = True
        raise
    finally:
        await asyncio.to_thread(_finish, svc, streamed, said if cut else None)
    await send(_closing(" ".join(said), request.context))


def _sentences(svc: Services, streamed: StreamedVoice, left: Left) -> AsyncGenerator[str, None]:
    turn = streamed.streaming
    assert turn is not None
    return walked(lambda: svc.voice.checked_sentences(turn), left)


def _finish(svc: Services, streamed: StreamedVoice, cut: list[str] | None) -> None:
    """Store what was said (`cut`: only that, marked interrupted, when the client left
    before the end), free the device, hand the exchange to the memory work."""
    if cut is not None and streamed.streaming is not None:
        streamed.streaming.interrupt(" ".join(cut))
    svc.voice.finish_stream(streamed)
    exchange = streamed.stored.wait()
    if exchange is not None:
        svc.memory_work.submit(exchange)


def _closing(reply: str, context: dict[str, Any] | None) -> Event:
    if reply:
        return Handled(text=reply, context=context).event()
    return NotHandled(context=context).event()
