"""Lo-Bug's memory as an MCP server (the official `mcp` SDK): the agent tools of
`lobug.services.engine_tools` plus `get_context`, and the base memory and memory blocks as
resources.

Two transports: stdio for desktop clients (`run_stdio`, `python -m lobug.mcp_server`, which the
CLI's `lobug mcp` calls), and streamable HTTP at `/mcp` on the device server and on `lobug
memory-server` (`serve_http`, built at the first call), behind the same bearer tokens as the
rest of the API and the same role rule (`lobug.web.roles`): over HTTP a device token reads
and searches, the writing tools answer it `admin_required`; over stdio the caller is the
admin. The tools work on one agent: `LOBUG_AGENT` (or `--agent`), the server's default agent
over HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from lobug import __version__
from lobug.engine import MemoryEngine
from lobug.memory.assembly import DEFAULT_CONTEXT_TOKENS
from lobug.memory.evidence import (
    ADMIN_EVIDENCE,
    NO_EVIDENCE,
    Evidence,
    PersonNotAllowed,
    SummariesPrivate,
)
from lobug.services.engine_tools import TOOLS, ToolError
from lobug.web.roles import (
    ADMIN,
    ADMIN_REQUIRED,
    ADMIN_REQUIRED_DETAIL,
    Access,
    Role,
    caller_evidence,
    caller_role,
    may,
)

INSTRUCTIONS = (
    "Long-term memory about the user. Search it before answering questions about the user; "
    "save what the user tells you about themselves; correct or forget facts that are wrong."
)

EngineOf = Callable[[], MemoryEngine]
# The caller's role for one call: the token gate's over HTTP (`http_role`), the admin's over
# stdio (`local_role`: the user's own process, which could open the database file anyway).
RoleOf = Callable[[Context], Role | None]
# The engine as one call's caller may use it (`MemoryEngine.as_caller`).
CallerEngine = Callable[[Context | None], MemoryEngine]
# What the caller of one call proved (`memory.evidence`): whom it may name, what it reads.
EvidenceOf = Callable[[Context | None], Evidence]
# The call a resource is read for: the SDK hands a static resource no context.
_reading: ContextVar[Context | None] = ContextVar("lobug_mcp_reading", default=None)


def http_role(ctx: Context) -> Role | None:
    """The role `api.auth.TokenGate` recorded for the HTTP request carrying this call."""
    scope = request_scope(ctx)
    return None if scope is None else caller_role(scope)


def http_evidence(ctx: Context | None) -> Evidence:
    """What the HTTP request carrying this call proves of its caller (none: nothing)."""
    scope = None if ctx is None else request_scope(ctx)
    return NO_EVIDENCE if scope is None else caller_evidence(scope)


def request_scope(ctx: Context) -> Mapping[str, Any] | None:
    try:
        scope = getattr(ctx.request_context.request, "scope", None)
    except ValueError:  # no request in this context
        return None
    return scope if isinstance(scope, Mapping) else None


def local_role(_: Context) -> Role:
    return ADMIN


def local_evidence(_: Context | None) -> Evidence:
    return ADMIN_EVIDENCE


class _Server(MCPServer):
    """Keeps the call a resource is read for where the resource can ask (`_reading`)."""

    async def read_resource(self, uri: Any, context: Context | None = None) -> Any:
        token = _reading.set(context)
        try:
            return await super().read_resource(uri, context)
        finally:
            _reading.reset(token)


def build_mcp(
    engine_of: EngineOf, role_of: RoleOf, evidence_of: EvidenceOf = local_evidence
) -> MCPServer:
    """The MCP server over the engine `engine_of()` returns (looked up per call, so an app
    can build the server before its services are open); every tool and resource asks the role
    rule (`lobug.web.roles.may`) with the caller's role from `role_of`, and reads as the
    caller's evidence from `evidence_of` allows (`memory.evidence`)."""
    server = _Server("lobug-memory", instructions=INSTRUCTIONS, version=__version__)

    def caller_engine(ctx: Context | None) -> MemoryEngine:
        return engine_of().as_caller(evidence_of(ctx))

    for tool in memory_tools(caller_engine, role_of):
        server.add_tool(tool)
    add_resources(server, caller_engine)
    return server


def allow(role_of: RoleOf, ctx: Context, access: Access) -> None:
    """The tool error a device token gets for a write, as REST's 403 says it."""
    if not may(role_of(ctx), access):
        raise McpToolError(f"{ADMIN_REQUIRED}: {ADMIN_REQUIRED_DETAIL}")


async def run_tool(
    engine_of: CallerEngine, role_of: RoleOf, ctx: Context, name: str, arguments: dict[str, Any]
) -> Any:
    """The engine's tool, if the caller may; its errors reach the client as the tool's error
    text."""
    allow(role_of, ctx, Access.CHANGE if TOOLS[name].changes_memory else Access.READ)
    try:
        return await asyncio.to_thread(engine_of(ctx).call_tool, name, arguments)
    except (ToolError, PersonNotAllowed) as exc:
        raise McpToolError(str(exc)) from None


async def context_for(engine: MemoryEngine, query: str, max_tokens: int, person: str | None) -> str:
    """`get_context`'s text; naming a person the caller may not ask as is its error."""
    try:
        return await asyncio.to_thread(engine.format_for_injection, query, max_tokens, person)
    except PersonNotAllowed as exc:
        raise McpToolError(str(exc)) from None


def memory_tools(engine_of: CallerEngine, role_of: RoleOf) -> list[Callable[..., Any]]:
    """The MCP tools: `engine_tools` plus `get_context`, with signatures the SDK reads."""
    call = functools.partial(run_tool, engine_of, role_of)

    async def search_memory(
        query: str, ctx: Context, limit: int = 5, person: str | None = None
    ) -> list[dict[str, Any]]:
        """Search long-term memory for facts about `person` (who asks), best match first."""
        return await call(ctx, "search_memory", {"query": query, "limit": limit, "person": person})

    async def save_memory(content: str, ctx: Context) -> dict[str, Any]:
        """Save one new fact about the user to long-term memory (admin)."""
        return await call(ctx, "save_memory", {"content": content})

    async def update_memory(id: int, content: str, ctx: Context) -> dict[str, Any]:
        """Correct a saved fact (by its id from search_memory): it gets a new version
        (admin)."""
        return await call(ctx, "update_memory", {"id": id, "content": content})

    async def forget_memory(id: int, ctx: Context) -> dict[str, Any]:
        """Forget a saved fact (by its id from search_memory) (admin)."""
        return await call(ctx, "forget_memory", {"id": id})

    async def read_block(label: str, ctx: Context) -> dict[str, Any]:
        """Read one memory block (always-in-context notes such as 'human')."""
        return await call(ctx, "read_block", {"label": label})

    async def update_block(label: str, value: str, ctx: Context) -> dict[str, Any]:
        """Rewrite one memory block (created if it does not exist) (admin)."""
        return await call(ctx, "update_block", {"label": label, "value": value})

    async def get_context(
        query: str, ctx: Context, max_tokens: int = DEFAULT_CONTEXT_TOKENS, person: str = ""
    ) -> str:
        """What memory holds for `query` that `person` may see, within `max_tokens`."""
        allow(role_of, ctx, Access.READ)
        return await context_for(engine_of(ctx), query, max_tokens, person or None)

    return [
        search_memory,
        save_memory,
        update_memory,
        forget_memory,
        read_block,
        update_block,
        get_context,
    ]


def add_resources(server: MCPServer, engine_of: CallerEngine) -> None:
    """The resources, reads every role may make (`roles.ALLOWED`), as the caller's evidence
    allows (the call they are read for: `_reading`)."""

    @server.resource("memory://base-memory", mime_type="text/plain")
    async def base_memory() -> str:
        """The agent's base memory: what it knows about the user, distilled (made from every
        person's words: only for a caller who may read that)."""
        engine = engine_of(_reading.get())
        try:
            return await asyncio.to_thread(engine.base_memory)
        except SummariesPrivate as exc:
            raise ResourceError(f"summaries_private: {exc}") from None

    @server.resource("memory://blocks", mime_type="application/json")
    async def blocks() -> str:
        """The agent's memory blocks, label and value."""
        engine = engine_of(_reading.get())
        found = await asyncio.to_thread(engine.services.store.blocks, engine.agent)
        return json.dumps([{"label": b.label, "value": b.value} for b in found])


def serve_http(engine: MemoryEngine, path: str) -> tuple[Route, AbstractAsyncContextManager[None]]:
    """MCP over streamable HTTP at `path`, its tools working on `engine`, built at the first
    request to it (`lobug.app.McpOnDemand`, inside the app's token gate): the route that
    answers it, and the session manager's run, to hold while it serves."""
    server = build_mcp(lambda: engine, http_role, http_evidence)
    # Host and Origin are checked by the app's one rule for every path (lobug.api.cross_site),
    # not a second time here.
    http = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    route = next(r for r in http.routes if isinstance(r, Route) and r.path == path)
    return route, server.session_manager.run()


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
        build_mcp(lambda: opened, local_role).run("stdio")
    finally:
        opened.close()


if __name__ == "__main__":
    run_stdio()
