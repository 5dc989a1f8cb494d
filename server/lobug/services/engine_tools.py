"""The memory tools an agent calls to manage its own memory (`MemoryEngine.tools()` and
`call_tool`, and the MCP server's tools): their OpenAI definitions, with JSON Schemas made
from the argument models that check each call against the REST API's limits
(`memory.limits`). Each tool says whether it changes the memory (`Tool.changes_memory`); who
may call it is the surface's to ask (`lobug.web.roles` for MCP over HTTP)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from lobug.memory.limits import (
    BLOCK_LABEL_PATTERN,
    MAX_CONTENT_CHARS,
    MAX_FACT_CHARS,
    MAX_ID,
    MAX_NAME_CHARS,
)
from lobug.names import PERSON_NAME_MAX
from lobug.store.errors import StorageUnavailable, StoreError

# A fact as REST takes it (`POST /memory/facts`): stripped, 1-2000 characters.
FactText = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_FACT_CHARS)
]
FactId = Annotated[int, Field(ge=1, le=MAX_ID, description="The fact's id, from search_memory")]


class ToolError(ValueError):
    """A tool call that cannot run: unknown tool, bad arguments, or refused by the memory
    (no such fact, a read-only block); the message says which, for the model to read."""


class MemoryTools(Protocol):
    """What the tools call (`MemoryEngine`)."""

    def search_memory(
        self, query: str, limit: int = 5, *, person: str | None = None
    ) -> list[dict[str, Any]]: ...

    def save(self, content: str, type: str | None = None) -> dict[str, Any]: ...

    def manage_memory(
        self,
        content: str | None = None,
        action: str = "create",
        id: int | None = None,
    ) -> dict[str, Any]: ...

    def read_block(self, label: str) -> dict[str, Any]: ...

    def update_block(self, label: str, value: str) -> dict[str, Any]: ...


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SearchArgs(Arguments):
    query: str = Field(min_length=1, max_length=MAX_FACT_CHARS, description="What to look for")
    limit: int = Field(default=5, ge=1, le=20, description="How many facts at most")
    person: str | None = Field(
        default=None,
        min_length=1,
        max_length=PERSON_NAME_MAX,
        description="The person of the household who asks: only what they may see",
    )


class SaveArgs(Arguments):
    content: FactText = Field(description="The fact, one sentence")


class UpdateArgs(Arguments):
    id: FactId
    content: FactText = Field(description="The corrected fact")


class ForgetArgs(Arguments):
    id: FactId


class BlockArgs(Arguments):
    label: str = Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=BLOCK_LABEL_PATTERN)


class BlockWriteArgs(BlockArgs):
    value: str = Field(max_length=MAX_CONTENT_CHARS, description="The block's whole new text")


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[Arguments]
    run: Callable[[MemoryTools, Any], Any]
    changes_memory: bool  # a write: only for callers who may change memory


TOOLS = {
    tool.name: tool
    for tool in (
        Tool(
            "search_memory",
            "Search your long-term memory for facts about the user, best match first.",
            SearchArgs,
            lambda m, a: m.search_memory(a.query, a.limit, person=a.person),
            changes_memory=False,
        ),
        Tool(
            "save_memory",
            "Save one new fact about the user to long-term memory.",
            SaveArgs,
            lambda m, a: m.save(a.content),
            changes_memory=True,
        ),
        Tool(
            "update_memory",
            "Correct a saved fact: it gets a new version with this content.",
            UpdateArgs,
            lambda m, a: m.manage_memory(a.content, action="update", id=a.id),
            changes_memory=True,
        ),
        Tool(
            "forget_memory",
            "Forget a saved fact that is wrong or that the user wants gone.",
            ForgetArgs,
            lambda m, a: m.manage_memory(action="delete", id=a.id),
            changes_memory=True,
        ),
        Tool(
            "read_block",
            "Read one of your memory blocks (always-in-context notes such as 'human').",
            BlockArgs,
            lambda m, a: m.read_block(a.label),
            changes_memory=False,
        ),
        Tool(
            "update_block",
            "Rewrite one of your memory blocks (created if it does not exist).",
            BlockWriteArgs,
            lambda m, a: m.update_block(a.label, a.value),
            changes_memory=True,
        ),
    )
}


def parameters_schema(model: type[Arguments]) -> dict[str, Any]:
    """The model's JSON Schema without pydantic's titles (noise to a model)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for spec in schema.get("properties", {}).values():
        spec.pop("title", None)
    return schema


def tool_definitions() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": parameters_schema(tool.arguments),
            },
        }
        for tool in TOOLS.values()
    ]


def parsed_arguments(tool: Tool, arguments: Mapping[str, Any] | str) -> Arguments:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ToolError(f"{tool.name}: arguments are not JSON ({exc.msg})") from None
    if not isinstance(arguments, Mapping):
        raise ToolError(f"{tool.name}: arguments must be a JSON object")
    try:
        return tool.arguments.model_validate(dict(arguments))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        raise ToolError(f"{tool.name}: {problems}") from None


def call_tool(memory: MemoryTools, name: str, arguments: Mapping[str, Any] | str) -> Any:
    """Run tool `name` on `memory`; ToolError says what was wrong with the call."""
    tool = TOOLS.get(name)
    if tool is None:
        raise ToolError(f"unknown tool {name!r}; the tools are {', '.join(TOOLS)}")
    args = parsed_arguments(tool, arguments)
    try:
        return tool.run(memory, args)
    except StorageUnavailable:
        raise
    except (StoreError, ValueError) as exc:
        if isinstance(exc, ToolError):
            raise
        raise ToolError(f"{name}: {exc}") from exc
