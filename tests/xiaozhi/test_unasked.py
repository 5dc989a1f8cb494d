"""What a xiaozhi device hears that no model wrote (issue 30, items 4 and 5), through the real
app with fake models: a reminder that came due while the device was away is said when it
connects, once, and kept in the log; "volume 30" and "louder" call the device's own MCP tools
and are answered without the model."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from fastapi.testclient import TestClient

from lobug.xiaozhi.unasked import REMINDER
from tests.fakes import FakeChat
from tests.xiaozhi.test_session import MAC, greet, headers, until_tts_stop

VOLUME_TOOLS = [
    {"name": "self.get_device_status", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "self.audio_speaker.set_volume",
        "inputSchema": {
            "type": "object",
            "properties": {"volume": {"type": "integer", "minimum": 0, "maximum": 100}},
        },
    },
]


def said(messages: list[dict[str, Any]]) -> str:
    return " ".join(m["text"] for m in messages if m.get("state") == "sentence_start")


def test_a_reminder_due_while_away_is_said_on_connecting_once(
    app_client: TestClient, fake_chat: FakeChat
) -> None:
    services = app_client.app.state.services  # type: ignore[attr-defined]
    zone = services.memory.zone  # noon where the person lives: "at 12:10", never "tomorrow at"
    noon = datetime(2026, 6, 1, 12, 0, tzinfo=zone).astimezone().timestamp()
    services.memory.clock = lambda: noon
    answer = app_client.post(
        "/chat/text",
        json={"text": "Remind me in 10 minutes to check the oven"},
        headers={"X-Device-Id": "kitchen"},
    ).json()["response"]
    assert answer.startswith("Okay, I'll remind you to check the oven at 12:10")
    later = noon + 11 * 60
    services.memory.clock = lambda: later
    with app_client.websocket_connect("/xiaozhi/v1/", headers=headers()) as ws:
        greet(ws)
        messages, audio = until_tts_stop(ws, 1)
    assert said(messages) == "You asked me to remind you to check the oven."
    assert audio and fake_chat.chat_requests() == []
    log = app_client.get("/memory/messages/lobug").json()
    (rung,) = [m for m in log if m["device_id"] == MAC.lower()]
    assert (rung["role"], rung["content"]) == ("assistant", said(messages))
    assert rung["metadata"] == REMINDER
    assert services.store.waiting_reminders("lobug") == []  # said once, never again


def list_tools(ws: Any, session: str, tools: list[dict[str, Any]]) -> None:
    """The device's answer to the server's tools/list."""
    listed = {"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}}
    ws.send_text(json.dumps({"session_id": session, "type": "mcp", "payload": listed}))


def ask(ws: Any, session: str, text: str) -> None:
    """`text` typed on the device (`listen detect`), heard back as `stt`."""
    detect = {"session_id": session, "type": "listen", "state": "detect", "text": text}
    ws.send_text(json.dumps(detect))
    assert ws.receive_json()["type"] == "stt"


def device_answers(ws: Any, session: str, result: dict[str, Any]) -> dict[str, Any]:
    """The next tools/call the server sends, answered with `result`."""
    call = ws.receive_json()
    assert call["type"] == "mcp" and call["payload"]["method"] == "tools/call"
    reply = {"jsonrpc": "2.0", "id": call["payload"]["id"], "result": result}
    ws.send_text(json.dumps({"session_id": session, "type": "mcp", "payload": reply}))
    params: dict[str, Any] = call["payload"]["params"]
    return params


def test_volume_said_calls_the_devices_tool_and_is_answered_without_the_model(
    app_client: TestClient, fake_chat: FakeChat
) -> None:
    with app_client.websocket_connect("/xiaozhi/v1/", headers=headers()) as ws:
        session = greet(ws)["session_id"]
        list_tools(ws, session, VOLUME_TOOLS)
        ask(ws, session, "Volume 30")
        ok = {"content": [{"type": "text", "text": "true"}], "isError": False}
        assert device_answers(ws, session, ok) == {
            "name": "self.audio_speaker.set_volume",
            "arguments": {"volume": 30},
        }
        assert said(until_tts_stop(ws, 1)[0]) == "Volume 30."
        ask(ws, session, "Louder, please")
        status = {"content": [{"type": "text", "text": '{"audio_speaker": {"volume": 30}}'}]}
        assert device_answers(ws, session, status)["name"] == "self.get_device_status"
        assert device_answers(ws, session, ok)["arguments"] == {"volume": 40}
        assert said(until_tts_stop(ws, 1)[0]) == "Volume 40."
        ask(ws, session, "Volume 70")
        device_answers(ws, session, {"content": [], "isError": True})
        assert said(until_tts_stop(ws, 1)[0]) == "I couldn't set the volume."
    assert fake_chat.chat_requests() == []
