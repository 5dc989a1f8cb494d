"""The agent tools of `MemoryEngine`: their definitions, each call, its errors, and a whole
tool-calling loop driven by a scripted fake model."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lobug import MemoryEngine
from lobug.config import Settings
from lobug.engine import ToolError
from tests.fakes import FakeChat, FakeEmbedder

Message = dict[str, Any]
Step = Callable[[list[Message]], Message]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[MemoryEngine]:
    settings = Settings(db_path=tmp_path / "engine.db")
    with MemoryEngine(
        agent="bot", chat=FakeChat(), embedder=FakeEmbedder(), settings=settings
    ) as opened:
        yield opened


def test_tools_are_openai_function_definitions(engine: MemoryEngine) -> None:
    tools = {t["function"]["name"]: t for t in engine.tools()}
    assert list(tools) == [
        "search_memory",
        "save_memory",
        "update_memory",
        "forget_memory",
        "read_block",
        "update_block",
    ]
    for tool in tools.values():
        assert tool["type"] == "function" and tool["function"]["description"]
        parameters = tool["function"]["parameters"]
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
    search = tools["search_memory"]["function"]["parameters"]
    assert search["required"] == ["query"]
    assert set(search["properties"]) == {"query", "limit", "person"}
    assert set(tools["update_memory"]["function"]["parameters"]["properties"]) == {"id", "content"}
    assert set(tools["update_block"]["function"]["parameters"]["properties"]) == {"label", "value"}
    json.dumps(engine.tools())


def test_each_tool_runs_and_returns_json(engine: MemoryEngine) -> None:
    saved = engine.call_tool("save_memory", {"content": "The user likes jazz"})
    found = engine.call_tool("search_memory", '{"query": "jazz", "limit": 1}')
    assert [hit["id"] for hit in found] == [saved["id"]]
    updated = engine.call_tool(
        "update_memory", {"id": saved["id"], "content": "The user loves jazz"}
    )
    assert updated["content"] == "The user loves jazz"
    forgotten = engine.call_tool("forget_memory", {"id": updated["id"]})
    assert forgotten["current"] is False
    assert engine.call_tool("update_block", {"label": "human", "value": "Jazz fan"})["value"] == (
        "Jazz fan"
    )
    assert engine.call_tool("read_block", {"label": "human"})["value"] == "Jazz fan"
    json.dumps([saved, found, updated, forgotten])


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("delete_everything", {}, "unknown tool 'delete_everything'"),
        ("search_memory", {}, "search_memory: query: Field required"),
        ("search_memory", {"query": "x", "limit": 0}, "limit: Input should be greater"),
        ("search_memory", {"query": "x", "colour": 1}, "colour: Extra inputs"),
        ("search_memory", "{not json", "arguments are not JSON"),
        ("search_memory", "[1]", "arguments must be a JSON object"),
        ("forget_memory", {"id": "7"}, "id: Input should be a valid integer"),
        ("forget_memory", {"id": 999}, "forget_memory:"),
        ("read_block", {"label": "nothing"}, "read_block: no memory block 'nothing'"),
    ],
)
def test_bad_calls_raise_a_clear_tool_error(
    engine: MemoryEngine, name: str, arguments: Any, message: str
) -> None:
    with pytest.raises(ToolError, match=message.replace("(", r"\(")):
        engine.call_tool(name, arguments)


class ScriptedModel:
    """A fake tool-calling model: each step reads the conversation so far and answers with
    an assistant message (tool calls or text)."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.seen_tools: list[list[dict[str, Any]]] = []

    def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Message:
        self.seen_tools.append(tools)
        return self.steps.pop(0)(messages)


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> Message:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def run_agent(engine: MemoryEngine, model: ScriptedModel, text: str) -> tuple[str, list[Message]]:
    """The usual loop: call the model with the tools; run each tool call it makes and give
    it the results (errors too, as text it can read), until it answers in words."""
    messages: list[Message] = [{"role": "user", "content": text}]
    while True:
        reply = model.respond(messages, engine.tools())
        messages.append(reply)
        if not reply.get("tool_calls"):
            return str(reply["content"]), messages
        for call in reply["tool_calls"]:
            try:
                result = engine.call_tool(call["function"]["name"], call["function"]["arguments"])
            except ToolError as exc:
                result = {"error": str(exc)}
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
            )


def last_tool_result(messages: list[Message]) -> Any:
    return json.loads(next(m for m in reversed(messages) if m["role"] == "tool")["content"])


def test_a_tool_calling_loop_manages_the_agents_own_memory(engine: MemoryEngine) -> None:
    engine.save("The user's favourite colour is green")
    model = ScriptedModel(
        [
            lambda _: tool_call("1", "search_memory", {"query": "favourite colour"}),
            lambda m: tool_call(
                "2",
                "update_memory",
                {
                    "id": last_tool_result(m)[0]["id"],
                    "content": "The user's favourite colour is blue",
                },
            ),
            lambda _: tool_call("3", "forget_memory", {"id": "not a number"}),
            lambda _: tool_call("4", "update_block", {"label": "human", "value": "Likes blue"}),
            lambda _: {"role": "assistant", "content": "Noted: blue it is."},
        ]
    )
    answer, messages = run_agent(engine, model, "Actually my favourite colour is blue now.")
    assert answer == "Noted: blue it is."
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    assert results[1]["content"] == "The user's favourite colour is blue"
    assert "id: Input should be a valid integer" in results[2]["error"]
    assert [hit["content"] for hit in engine.search_memory("favourite colour")] == [
        "The user's favourite colour is blue"
    ]
    assert engine.read_block("human")["value"] == "Likes blue"
    assert all(tools == engine.tools() for tools in model.seen_tools)
