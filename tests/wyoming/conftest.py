"""The Wyoming tests' server: the real app (its lifespan starts the Wyoming server beside the
HTTP one) with fake models, driven by the `wyoming` library's own client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.config.wyoming import WyomingConfig
from tests.e2e.server import free_port
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS

HEARD = "What time is it now?"
READ_TIMEOUT_S = 30


@dataclass
class Served:
    http: TestClient
    port: int
    chat: FakeChat
    stt: FakeSTT
    tts: FakeTTS

    def run(self, talk: Any) -> Any:
        """`talk(client)` on a new connection, in an event loop of its own."""

        async def connected() -> Any:
            client = AsyncTcpClient("127.0.0.1", self.port)
            client.read_timeout = READ_TIMEOUT_S
            async with client:
                return await talk(client)

        return asyncio.run(connected())


def wyoming_settings(settings: Settings, port: int) -> Settings:
    return replace(settings, wyoming=WyomingConfig(port=port, zeroconf=False))


@pytest.fixture
def served(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> Iterator[Served]:
    stt, tts, port = FakeSTT(HEARD), FakeTTS(), free_port()
    backends = Backends(fake_chat, fake_embedder, stt, tts)
    with TestClient(create_app(wyoming_settings(settings, port), backends)) as http:
        yield Served(http, port, fake_chat, stt, tts)


async def read_until(client: AsyncTcpClient, *kinds: str) -> list[Event]:
    """Events up to and including the first of `kinds`."""
    events = []
    while True:
        event = await client.read_event()
        assert event is not None, ("closed", [e.type for e in events])
        events.append(event)
        if event.type in kinds:
            return events


async def closed(client: AsyncTcpClient) -> list[Event]:
    """Events until the server closes the connection."""
    events = []
    while (event := await client.read_event()) is not None:
        events.append(event)
    return events
