"""A xiaozhi device's MCP tools called by the model (issue 30, item 5), through the real app
with the real OpenAI-compatible backend on a fake model server: the tools the device lists
are offered to the model of its turns, the call the model asks for goes to the device over
the WebSocket, its result back to the model, and the words after it are said; spoken rules
still come first, and the tools are withdrawn when the device leaves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lobug.config import Settings
from lobug.turn.request_tools import MEMORY_TOOLS
from tests.backends.test_remote import FakeOpenAI
from tests.fakes import FakeEmbedder, FakeSTT
from tests.polling import eventually
from tests.served_model import client_on
from tests.xiaozhi.test_session import MAC, greet, headers, until_tts_stop
from tests.xiaozhi.test_unasked import VOLUME_TOOLS, ask, device_answers, list_tools, said

OK = {"content": [{"type": "text", "text": "true"}], "isError": False}


@pytest.fixture
def client(
    settings: Settings, model: FakeOpenAI, fake_embedder: FakeEmbedder
) -> Iterator[TestClient]:
    with client_on(settings, model, fake_embedder, FakeSTT("What time is it now?")) as client:
        yield client


def turns(model: FakeOpenAI) -> list[dict[str, Any]]:
    """The streamed requests of the turns (not memory work)."""
    bodies: list[dict[str, Any]] = model.bodies("/v1/chat/completions")
    return [body for body in bodies if body.get("stream")]


def test_the_model_calls_the_devices_tool_and_says_what_follows(
    client: TestClient, model: FakeOpenAI
) -> None:
    model.ask_for_tools(("self_audio_speaker_set_volume", {"volume": 35}))
    model.say("The volume ", "is 35 now.")
    assistant = client.app.state.services.assistant  # type: ignore[attr-defined]
    with client.websocket_connect("/xiaozhi/v1/", headers=headers()) as ws:
        session = greet(ws)["session_id"]
        list_tools(ws, session, VOLUME_TOOLS)
        ask(ws, session, "Could you make it a little quieter, like 35")
        assert assistant.session(MAC.lower()).state().tools is not None
        assert device_answers(ws, session, OK) == {
            "name": "self.audio_speaker.set_volume",  # the device's own name
            "arguments": {"volume": 35},
        }
        assert said(until_tts_stop(ws, 1)[0]) == "The volume is 35 now."
    first, second = turns(model)
    offered = [tool["function"]["name"] for tool in first["tools"]]
    device_tools = [name for name in offered if name not in MEMORY_TOOLS]
    assert device_tools == ["self_get_device_status", "self_audio_speaker_set_volume"]
    assert set(offered) - set(device_tools) == MEMORY_TOOLS  # the memory's requests too
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call-0", "content": "true"}
    kitchen = assistant.session(MAC.lower())
    assert eventually(lambda: kitchen.state().tools is None)  # withdrawn: it left
    store = client.app.state.services.store  # type: ignore[attr-defined]

    def replies() -> list[Any]:
        return [m for m in store.recent_messages("lobug", MAC.lower(), 2) if m.role == "assistant"]

    def settled() -> bool:  # while it is said, the reply is a draft; kept once the turn closes
        return any(not m.metadata.get("draft") for m in replies())

    assert eventually(settled)
    (reply,) = replies()
    call = {"name": "self_audio_speaker_set_volume", "arguments": {"volume": 35}, "result": "true"}
    assert (reply.content, reply.metadata) == ("The volume is 35 now.", {"tools": [call]})


def test_spoken_rules_come_first_and_a_device_without_tools_offers_the_memorys_alone(
    client: TestClient, model: FakeOpenAI
) -> None:
    model.say("Hello there.")
    with client.websocket_connect("/xiaozhi/v1/", headers=headers()) as ws:
        session = greet(ws)["session_id"]
        list_tools(ws, session, VOLUME_TOOLS)
        ask(ws, session, "Volume 30")
        assert device_answers(ws, session, OK)["arguments"] == {"volume": 30}
        assert said(until_tts_stop(ws, 1)[0]) == "Volume 30."
    assert turns(model) == []  # no model asked
    with client.websocket_connect("/xiaozhi/v1/", headers=headers()) as ws:
        ask(ws, greet(ws)["session_id"], "Hello")  # it lists no tools
        assert said(until_tts_stop(ws, 1)[0]) == "Hello there."
    (turn,) = turns(model)
    assert {tool["function"]["name"] for tool in turn["tools"]} == MEMORY_TOOLS
