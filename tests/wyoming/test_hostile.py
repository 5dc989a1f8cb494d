"""Bad input closes that connection, with an `error` event saying why, and nothing else: the
server and the other connections go on (fake models)."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event, async_read_event
from wyoming.info import Describe
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.config.wyoming import WyomingConfig, parse_networks
from lobug.wyoming import connection, tts
from lobug.wyoming.limits import MAX_LINE_BYTES, MAX_PAYLOAD_BYTES
from lobug.wyoming.server import _advertised_address
from tests.e2e.server import free_port
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.polling import eventually
from tests.wyoming.conftest import Served, closed, read_until


def header(kind: str, **more: object) -> bytes:
    return json.dumps({"type": kind, **more}).encode() + b"\n"


def refused(served: Served, raw: bytes) -> Event:
    """What the server answers `raw` with before it closes the connection: one `error`."""

    async def talk() -> list[Event]:
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
        writer.write(raw)
        writer.write_eof()  # nothing more: what it sent is all there is
        await writer.drain()
        events = []
        while (event := await asyncio.wait_for(async_read_event(reader), 30)) is not None:
            events.append(event)
        writer.close()
        return events

    events = asyncio.run(talk())
    assert [e.type for e in events] == ["error"], events
    return events[0]


async def sending(client: AsyncTcpClient, events: list[Event]) -> None:
    """Send `events` until the server closes the connection."""
    try:
        for event in events:
            await client.write_event(event)
            await asyncio.sleep(0.005)
    except ConnectionError:
        pass


def still_serving(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> str:
        await client.write_event(Describe().event())
        return (await read_until(client, "info"))[-1].type

    assert served.run(talk) == "info"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"this is not json\n", "the event header is not JSON"),
        (b"[1, 2, 3]\n", "the event header is not a JSON object"),
        (header("launch-missiles"), "unknown event type 'launch-missiles'"),
        (header("describe", data=[1]), "the event's data is not an object"),
        (header("audio-chunk", payload_length=MAX_PAYLOAD_BYTES + 1), "payload_length"),
        (header("synthesize", data_length=10**9), "data_length 1000000000 is over"),
        (header("synthesize", data_length=-4), "data_length is not a size"),
        (header("synthesize", data_length=9) + b"not json!", "the event data is not JSON"),
        (b"{" + b" " * MAX_LINE_BYTES, "an event header is over"),
        (header("transcript", data={"text": 5}), "text must be a string"),
        (header("transcript", data={"text": "hi", "context": {"satellite_id": "a b"}}), "1-64"),
        (header("audio-start", data={"rate": 16000, "width": 1, "channels": 1}), "16-bit"),
        (header("audio-start", data={"rate": 4000, "width": 2, "channels": 1}), "8-48 kHz"),
        (header("audio-chunk", data={"rate": "x"}), "needs rate, width and channels"),
        (header("synthesize-chunk", data={"text": "hi"}), "outside a synthesize-start"),
        (header("synthesize-stop"), "without synthesize-start"),
        (header("synthesize", data={"text": "x" * 4001}), "over 4000 characters"),
        (header("synthesize", payload_length=10) + b"12345", "closed inside an event"),
    ],
)
def test_bad_input_closes_the_connection_with_its_reason(
    served: Served, raw: bytes, reason: str
) -> None:
    assert reason in refused(served, raw).data["text"]
    still_serving(served)


def test_a_recording_over_the_upload_limit_is_refused(served: Served) -> None:
    second = bytes(32_000)  # of 16 kHz 16-bit mono

    async def talk(client: AsyncTcpClient) -> list[Event]:
        start = AudioStart(rate=16_000, width=2, channels=1).event()
        chunks = [AudioChunk(16_000, 2, 1, second).event()] * 40  # past the 30 s limit
        await sending(client, [start, *chunks, AudioStop().event()])
        return await closed(client)

    events = served.run(talk)
    assert events[-1].type == "error" and "30 s" in events[-1].data["text"]
    still_serving(served)


def test_a_chunk_in_another_format_is_refused(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> list[Event]:
        await client.write_event(AudioStart(rate=16_000, width=2, channels=1).event())
        await client.write_event(AudioChunk(22_050, 2, 1, bytes(4410)).event())
        return await closed(client)

    events = served.run(talk)
    assert "format differs" in events[-1].data["text"]


def test_a_text_stream_that_never_stops_is_closed(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tts, "STREAM_TIMEOUT_S", 0.2)

    async def talk(client: AsyncTcpClient) -> list[Event]:
        chunks = [SynthesizeChunk("and on ").event()] * 100
        await sending(client, [SynthesizeStart().event(), *chunks])
        return await closed(client)

    events = served.run(talk)
    assert "text stream went on past 0.2 s" in events[-1].data["text"]


def test_a_silent_client_is_closed(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "IDLE_TIMEOUT_S", 0.2)

    async def talk(client: AsyncTcpClient) -> list[Event]:
        return await closed(client)

    events = served.run(talk)
    assert [e.type for e in events] == ["error"] and "nothing received" in events[0].data["text"]


def test_a_refused_connection_leaves_another_one_answered(served: Served) -> None:
    served.chat.enqueue("Hello to you.")

    async def both() -> tuple[list[Event], list[Event]]:
        good = AsyncTcpClient("127.0.0.1", served.port)
        bad = AsyncTcpClient("127.0.0.1", served.port)
        async with good, bad:
            await bad.write_event(Event("no-such-event"))
            refusal = await closed(bad)
            await good.write_event(Transcript("Hello", context={"satellite_id": "s1"}).event())
            return refusal, await read_until(good, "handled")

    refusal, answer = asyncio.run(both())
    assert refusal[-1].type == "error" and answer[-1].data["text"] == "Hello to you."


def test_protocol_events_it_does_not_serve_are_let_pass(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> str:
        await client.write_event(Event("select-program", {"name": "lobug"}))
        await client.write_event(Event("detect", {"names": ["ok_nabu"]}))
        await client.write_event(Describe().event())
        return (await read_until(client, "info"))[-1].type

    assert served.run(talk) == "info"


def test_a_client_gone_before_the_answer_leaves_the_device_free_and_the_model_unasked(
    served: Served,
) -> None:
    served.chat.enqueue("One. Two.")
    served.chat.queue_gate = busy = threading.Event()  # the model is busy with another turn

    async def leave(client: AsyncTcpClient) -> None:
        await client.write_event(Transcript("Count", context={"satellite_id": "s1"}).event())

    served.run(leave)  # gone while its turn waits for the model
    checks = served.chat.abandon_checks
    assert eventually(lambda: bool(checks) and checks[0] is not None and checks[0]())
    busy.set()
    served.chat.queue_gate = None

    async def again(client: AsyncTcpClient) -> str:
        await client.write_event(Transcript("Hello", context={"satellite_id": "s1"}).event())
        return str((await read_until(client, "handled"))[-1].data["text"])

    assert served.run(again) == "One. Two."  # the reply was not spent on the gone client


def test_speech_not_loaded_is_refused_with_its_reason(served: Served) -> None:
    served_speech = served.http.app.state.services.speech  # type: ignore[attr-defined]
    served_speech.tts = None

    async def talk(client: AsyncTcpClient) -> list[Event]:
        await client.write_event(Synthesize("Hello").event())
        return await closed(client)

    events = served.run(talk)
    assert events[-1].type == "error" and events[-1].data["code"] == "not_ready"


def test_an_address_off_the_allow_list_is_closed_at_once(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    own = _advertised_address("0.0.0.0")  # this machine's address on its network
    if own is None:
        pytest.skip("no network address besides loopback")
    port = free_port()
    wyoming = WyomingConfig(port=port, host="0.0.0.0", allow=parse_networks("203.0.113.0/24"))
    backends = Backends(fake_chat, fake_embedder, FakeSTT(), FakeTTS())
    with TestClient(create_app(replace(settings, wyoming=wyoming), backends)) as http:
        served = Served(http, port, fake_chat, FakeSTT(), FakeTTS())
        still_serving(served)  # loopback is always answered

        async def from_outside() -> list[Event]:
            client = AsyncTcpClient(own, port)
            async with client:
                return await closed(client)

        assert asyncio.run(from_outside()) == []  # closed as it connected, unanswered


def test_a_client_gone_mid_answer_stops_the_model_and_what_it_was_sent_is_stored(
    served: Served,
) -> None:
    served.chat.enqueue(" ".join(f"Sentence number {n} is here." for n in range(1, 13)))
    served.chat.piece_delay_s = 0.05  # a model writing while the client is gone

    async def leave_after_the_first(client: AsyncTcpClient) -> str:
        await client.write_event(Transcript("Talk", context={"satellite_id": "s9"}).event())
        return str((await read_until(client, "handled-chunk"))[-1].data["text"])

    first = served.run(leave_after_the_first).strip()

    def stored() -> dict[str, object] | None:
        log = served.http.get("/memory/messages/lobug").json()
        return next((m for m in log if m["role"] == "assistant"), None)

    assert eventually(lambda: stored() is not None)
    answer = stored()
    assert answer is not None and str(answer["content"]).startswith(first)
    assert "Sentence number 12" not in str(answer["content"])
    assert answer["metadata"] == {"guard": "cut", "problem": "interrupted"}
