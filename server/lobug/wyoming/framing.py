"""Wyoming events off the wire, within `limits`: a JSON header line, then `data_length` bytes
of JSON data and `payload_length` bytes of payload (the protocol library's framing, read here
so that a size is checked before its bytes are, and garbage is refused, not skipped)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from wyoming.event import Event, async_write_event

from lobug.wyoming.limits import MAX_DATA_BYTES, MAX_LINE_BYTES, MAX_PAYLOAD_BYTES, Refused

# Every event type of the protocol (wyoming 1.10): one that Lo-Bug does not serve is let pass,
# as the protocol asks; a type outside it is refused.
PROTOCOL_TYPES = frozenset(
    """describe info select-program ping pong error
    transcribe transcript transcript-start transcript-chunk transcript-stop
    audio-start audio-chunk audio-stop played
    synthesize synthesize-start synthesize-chunk synthesize-stop synthesize-stopped
    handled not-handled handled-start handled-chunk handled-stop
    recognize intent not-recognized intents-start intents-stop
    detect detection not-detected voice-started voice-stopped
    run-pipeline run-satellite pause-satellite streaming-started streaming-stopped
    satellite-connected satellite-disconnected
    timer-started timer-updated timer-cancelled timer-finished user-event""".split()
)


async def read_event(reader: asyncio.StreamReader, timeout_s: float) -> Event | None:
    """The next event, or None when the client closed between events. Raises Refused."""
    try:
        line = await asyncio.wait_for(reader.readuntil(b"\n"), timeout_s)
    except TimeoutError:
        raise Refused(f"nothing received for {timeout_s:g} s", "timeout") from None
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise Refused("the connection closed inside an event") from None
        return None
    except asyncio.LimitOverrunError:
        raise Refused(f"an event header is over {MAX_LINE_BYTES} bytes", "too_large") from None
    header = _json_object(line, "the event header")
    kind = header.get("type")
    if not isinstance(kind, str) or kind not in PROTOCOL_TYPES:
        raise Refused(f"unknown event type {str(kind)[:40]!r}", "unknown_event")
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise Refused("the event's data is not an object")
    more = _length(header, "data_length", MAX_DATA_BYTES)
    if more:
        data.update(_json_object(await _exactly(reader, more, timeout_s), "the event data"))
    size = _length(header, "payload_length", MAX_PAYLOAD_BYTES)
    payload = await _exactly(reader, size, timeout_s) if size else None
    return Event(type=kind, data=data, payload=payload)


async def write_event(event: Event, writer: asyncio.StreamWriter) -> None:
    await async_write_event(event, writer)


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        found = json.loads(raw)
    except (ValueError, RecursionError):
        raise Refused(f"{what} is not JSON") from None
    if not isinstance(found, dict):
        raise Refused(f"{what} is not a JSON object")
    return found


def _length(header: dict[str, Any], key: str, limit: int) -> int:
    value = header.get(key) or 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Refused(f"{key} is not a size")
    if value > limit:
        raise Refused(f"{key} {value} is over the limit of {limit} bytes", "too_large")
    return value


async def _exactly(reader: asyncio.StreamReader, size: int, timeout_s: float) -> bytes:
    try:
        return await asyncio.wait_for(reader.readexactly(size), timeout_s)
    except TimeoutError:
        raise Refused("an event's bytes stopped arriving", "timeout") from None
    except asyncio.IncompleteReadError:
        raise Refused("the connection closed inside an event") from None
