"""A model that calls a device's tools while it answers (issue 30, item 5), on Ollama and
OpenAI-compatible servers: the official clients against fake model servers over HTTP. The
stream still yields only the words to say; what went over the wire shows the tools offered,
the call and its result given back, and the bound on the rounds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from lobug.backends.base import BackendError, ChatBackend, ToolBox
from lobug.backends.tool_calls import MAX_TOOL_ROUNDS, arguments_of
from tests.backends.test_remote import (
    HELLO,
    Closer,
    FakeOllama,
    FakeOpenAI,
    FakeServer,
    _ollama_chat,
    _openai_chat,
)

# Fixtures of test_remote, used here by name.
pytest_plugins = ("tests.backends.test_remote",)

VOLUME = {
    "type": "function",
    "function": {
        "name": "self_audio_speaker_set_volume",
        "description": "Set the volume of the speaker",
        "parameters": {"type": "object", "properties": {"volume": {"type": "integer"}}},
    },
}
KINDS = ["ollama", "openai"]


class Device:
    """A ToolBox whose one tool records its calls and answers `result` (or raises `fails`)."""

    def __init__(self, result: str = "true", fails: Exception | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.result, self.fails = result, fails
        self.box = ToolBox((VOLUME,), self.call)

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        self.calls.append((name, arguments))
        if self.fails is not None:
            raise self.fails
        return self.result


@pytest.fixture(params=KINDS)
def server(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    made = FakeOllama(["llama3.2:latest"]) if request.param == "ollama" else FakeOpenAI()
    yield made
    made.close()


@pytest.fixture
def served(server: FakeServer, closing: Closer) -> tuple[FakeServer, ChatBackend]:
    """The server and a backend on it (closed before the server stops)."""
    if isinstance(server, FakeOllama):
        return server, _ollama_chat(closing, server.url)
    assert isinstance(server, FakeOpenAI)
    return server, _openai_chat(closing, server.base_url)


def chat_path(server: FakeServer) -> str:
    return "/api/chat" if isinstance(server, FakeOllama) else "/v1/chat/completions"


def chat_bodies(server: FakeServer) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = server.bodies(chat_path(server))
    return bodies


def offered_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def answer(chat: ChatBackend, device: Device | None, **kwargs: Any) -> str:
    box = None if device is None else device.box
    return "".join(chat.stream_with_tools(HELLO, box, max_tokens=50, **kwargs))


def test_the_model_calls_a_tool_and_then_answers_in_words(
    served: tuple[FakeServer, ChatBackend],
) -> None:
    server, chat = served
    assert chat.supports_tools
    server.ask_for_tools(("self_audio_speaker_set_volume", {"volume": 30}), said=("Sure. ",))
    server.say("Volume ", "is 30.")
    device = Device()

    assert answer(chat, device) == "Sure. Volume is 30."
    assert device.calls == [("self_audio_speaker_set_volume", {"volume": 30})]
    first, second = chat_bodies(server)
    assert offered_names(first) == offered_names(second) == ["self_audio_speaker_set_volume"]
    assert first["tools"][0]["function"]["parameters"] == VOLUME["function"]["parameters"]
    assert second["messages"][: len(HELLO)] == HELLO
    asked, result = second["messages"][len(HELLO) :]
    assert asked["role"] == "assistant" and asked["content"] == "Sure. "
    (call,) = asked["tool_calls"]
    assert call["function"]["name"] == "self_audio_speaker_set_volume"
    assert result["role"] == "tool" and result["content"] == "true"
    if isinstance(server, FakeOpenAI):  # by id, the arguments as JSON text
        assert json.loads(call["function"]["arguments"]) == {"volume": 30}
        assert result["tool_call_id"] == call["id"] == "call-0"
    else:  # by name, the arguments as an object
        assert call["function"]["arguments"] == {"volume": 30}
        assert result["tool_name"] == "self_audio_speaker_set_volume"


def test_a_failed_tool_is_told_to_the_model_and_the_turn_goes_on(
    served: tuple[FakeServer, ChatBackend],
) -> None:
    server, chat = served
    server.ask_for_tools(("self_audio_speaker_set_volume", {"volume": 30}))
    server.say("I could not change the volume.")
    device = Device(fails=TimeoutError("the device did not answer"))

    assert answer(chat, device) == "I could not change the volume."
    asked, told = chat_bodies(server)[1]["messages"][-2:]
    assert not asked.get("content")  # no words before the call
    if isinstance(server, FakeOpenAI):  # and then no content (some servers refuse a null)
        assert "content" not in asked
    assert told["role"] == "tool"
    assert told["content"] == "Failed: the device did not answer"


def test_a_tool_the_device_does_not_offer_is_not_called(
    served: tuple[FakeServer, ChatBackend],
) -> None:
    server, chat = served
    server.ask_for_tools(("self.reboot", {}), ("self_audio_speaker_set_volume", {"volume": 5}))
    server.say("Done.")
    device = Device()

    assert answer(chat, device) == "Done."
    assert device.calls == [("self_audio_speaker_set_volume", {"volume": 5})]
    refused, done = chat_bodies(server)[1]["messages"][-2:]
    assert refused["content"] == "Not done: there is no tool named 'self.reboot'."
    assert done["content"] == "true"


def test_the_rounds_of_calls_are_bounded_then_the_model_answers_without_tools(
    served: tuple[FakeServer, ChatBackend],
) -> None:
    server, chat = served
    for _ in range(MAX_TOOL_ROUNDS + 1):  # a model that would call tools for ever
        server.ask_for_tools(("self_audio_speaker_set_volume", {"volume": 1}), said=("Hm. ",))
    device = Device()

    assert answer(chat, device) == "Hm. " * (MAX_TOOL_ROUNDS + 1)
    assert len(device.calls) == MAX_TOOL_ROUNDS  # the last round's call was not made
    bodies = chat_bodies(server)
    assert len(bodies) == MAX_TOOL_ROUNDS + 1
    assert [bool(offered_names(b)) for b in bodies] == [True] * MAX_TOOL_ROUNDS + [False]


def test_a_barge_in_during_the_words_before_a_call_makes_no_call(
    served: tuple[FakeServer, ChatBackend],
) -> None:
    server, chat = served
    server.ask_for_tools(("self_audio_speaker_set_volume", {"volume": 90}), said=("Sure. ",))
    device = Device()
    stopped = False
    pieces = chat.stream_with_tools(HELLO, device.box, max_tokens=50, abandoned=lambda: stopped)

    assert next(pieces) == "Sure. "
    stopped = True
    assert list(pieces) == []
    assert device.calls == [] and len(chat_bodies(server)) == 1


def test_without_tools_none_are_offered(served: tuple[FakeServer, ChatBackend]) -> None:
    server, chat = served
    server.say("Hello.")
    server.say("Hello again.")

    assert answer(chat, None) == "Hello."
    assert "".join(chat.stream(HELLO, max_tokens=50)) == "Hello again."
    assert [offered_names(b) for b in chat_bodies(server)] == [[], []]


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ('{"volume": 30}', {"volume": 30}),
        ({"volume": 30}, {"volume": 30}),
        ("", {}),
        (None, {}),
        ('{"volume": 3', None),
        ("[30]", None),
        ([30], None),
    ],
)
def test_a_calls_arguments_are_read_as_a_json_object_or_refused(raw: Any, read: Any) -> None:
    assert arguments_of(raw) == read


def test_a_server_that_refuses_tools_is_asked_again_without_and_offered_none_again(
    served: tuple[FakeServer, ChatBackend],
) -> None:
    server, chat = served
    server.fail_next(
        chat_path(server), 400, "registry.ollama.ai/library/gemma:2b does not support tools"
    )
    server.say("Hello.")
    server.say("Hello again.")
    device = Device()

    assert answer(chat, device) == "Hello."
    assert not chat.supports_tools
    assert answer(chat, device) == "Hello again."
    assert [offered_names(b) for b in chat_bodies(server)] == [
        ["self_audio_speaker_set_volume"],
        [],
        [],
    ]


def test_any_other_refusal_is_the_turns_failure(served: tuple[FakeServer, ChatBackend]) -> None:
    server, chat = served
    server.fail_next(chat_path(server), 400, "the context is too long")

    with pytest.raises(BackendError, match="too long"):
        answer(chat, Device())
    assert chat.supports_tools and len(chat_bodies(server)) == 1


def test_a_recording_toolbox_keeps_each_call_with_its_result_or_failure() -> None:
    uses: list[dict[str, Any]] = []
    box = Device(result="x" * 300).box.recording(uses)
    assert box.call("self_audio_speaker_set_volume", {"volume": 30}) == "x" * 300
    failing = Device(fails=TimeoutError("the device did not answer")).box.recording(uses)
    with pytest.raises(TimeoutError):
        failing.call("self_audio_speaker_set_volume", {"volume": 40})
    box.call("self_audio_speaker_set_volume", {"note": "y" * 300})
    assert uses[-1]["arguments"] == '{"note": "' + "y" * 190  # as JSON text, cut
    assert uses[:2] == [
        {"name": "self_audio_speaker_set_volume", "arguments": {"volume": 30}, "result": "x" * 200},
        {
            "name": "self_audio_speaker_set_volume",
            "arguments": {"volume": 40},
            "failed": "the device did not answer",
        },
    ]
