"""Lo-Bug's memory as an MCP server (the official `mcp` SDK): the agent tools of
`lobug.engine_tools` plus `get_context`, and the base memory and memory blocks as resources.

Two transports: stdio for desktop clients (`run_stdio`, `python -m lobug.mcp_server`, which the
CLI's `lobug mcp` calls), and streamable HTTP at `/mcp` on the device server and on `lobug
memory-server` (`install_mcp`), behind the same bearer tokens as the rest of the API. The
tools work on one agent: `LOBUG_AGENT` (or `--agent`), the server's default agent over HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from lobug import __version__
from lobug.config import Settings, is_loopback
from lobug.engine import MemoryEngine
from lobug.engine_tools import ToolError
from lobug.memory.assembly import DEFAULT_CONTEXT_TOKENS

PATH = "/mcp"
INSTRUCTIONS = (
    "Long-term memory about the user. Search it before answering questions about the user; "
    "save what the user tells you about themselves; correct or forget facts that are wrong."
)

EngineOf = Callable[[], MemoryEngine]


def build_mcp(engine_of: EngineOf) -> MCPServer:
    """The MCP server over the engine `engine_of()` returns (looked up per call, so an app
    can build the server before its services are open)."""
    server = MCPServer("lobug-memory", instructions=INSTRUCTIONS, version=__version__)
    for tool in memory_tools(engine_of):
        server.add_tool(tool)
    add_resources(server, engine_of)
    return server


def memory_tools(engine_of: EngineOf) -> list[Callable[..., Any]]:
    """The MCP tools: `engine_tools` plus `get_context`, with signatures the SDK reads."""

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        """The engine's tool; its errors reach the client as the tool's error text."""
        try:
            return await asyncio.to_thread(engine_of().call_tool, name, arguments)
        except ToolError as exc:
            raise McpToolError(str(exc)) from None

    async def search_memory(query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Search long-term memory for facts about the user, best match first."""
        return await call("search_memory", {"query": query, "limit": limit})

    async def save_memory(content: str) -> dict[str, Any]:
        """Save one new fact about the user to long-term memory."""
        return await call("save_memory", {"content": content})

    async def update_memory(id: int, content: str) -> dict[str, Any]:
        """Correct a saved fact (by its id from search_memory): it gets a new version."""
        return await call("update_memory", {"id": id, "content": content})

    async def forget_memory(id: int) -> dict[str, Any]:
        """Forget a saved fact (by its id from search_memory)."""
        return await call("forget_memory", {"id": id})

    async def read_block(label: str) -> dict[str, Any]:
        """Read one memory block (always-in-context notes such as 'human')."""
        return await call("read_block", {"label": label})

    async def update_block(label: str, value: str) -> dict[str, Any]:
        """Rewrite one memory block (created if it does not exist)."""
        return await call("update_block", {"label": label, "value": value})

    async def get_context(query: str, max_tokens: int = DEFAULT_CONTEXT_TOKENS) -> str:
        """Everything memory holds for `query`, within `max_tokens`, ready for a prompt."""
        return await asyncio.to_thread(engine_of().format_for_injection, query, max_tokens)

    return [
        search_memory,
        save_memory,
        update_memory,
        forget_memory,
        read_block,
        update_block,
        get_context,
    ]


def add_resources(server: MCPServer, engine_of: EngineOf) -> None:
    @server.resource("memory://base-memory", mime_type="text/plain")
    async def base_memory() -> str:
        """The agent's base memory: what it knows about the user, distilled."""
        engine = engine_of()
        return await asyncio.to_thread(engine.services.store.base_memory, engine.agent)

    @server.resource("memory://blocks", mime_type="application/json")
    async def blocks() -> str:
        """The agent's memory blocks, label and value."""
        engine = engine_of()
        found = await asyncio.to_thread(engine.services.store.blocks, engine.agent)
        return json.dumps([{"label": b.label, "value": b.value} for b in found])


def install_mcp(app: FastAPI, settings: Settings) -> Callable[[], Any]:
    """Serve MCP over streamable HTTP at `/mcp` on `app` (inside its token gate). Returns the
    lifespan part to run while the app runs: `async with running(): ...`, once
    `app.state.memory` (the memory services) is set."""

    def engine_of() -> MemoryEngine:
        engine: MemoryEngine = app.state.mcp_engine
        return engine

    server = build_mcp(engine_of)
    # DNS-rebinding protection (Host and Origin checked) when served on loopback only.
    http = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        host=settings.host if is_loopback(settings.host) else "0.0.0.0",
    )
    app.router.routes.extend(http.routes)

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        app.state.mcp_engine = MemoryEngine.attached(app.state.memory, settings.agent)
        async with server.session_manager.run():
            yield

    return running


def run_stdio(argv: Sequence[str] | None = None, engine: MemoryEngine | None = None) -> None:
    """Serve MCP on stdin/stdout until the client closes them (`lobug mcp`). Without
    `engine`, one is opened from the configuration (`--db`, `--agent` override it)."""
    parser = argparse.ArgumentParser(prog="lobug mcp", description="Lo-Bug memory over MCP stdio")
    parser.add_argument("--db", help="the database file (default LOBUG_DB_PATH)")
    parser.add_argument("--agent", help="the agent whose memory to serve (default LOBUG_AGENT)")
    args = parser.parse_args(argv)
    if engine is None:
        engine = MemoryEngine(args.db, agent=args.agent)
    opened = engine
    try:
        build_mcp(lambda: opened).run("stdio")
    finally:
        opened.close()


if __name__ == "__main__":
    run_stdio()
