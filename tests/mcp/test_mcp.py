"""The MCP server through the official SDK's own client: over stdio (a subprocess) and over
streamable HTTP at /mcp on both servers, behind the token gate."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import httpx2
import pytest
from fastapi.testclient import TestClient

import lobug.app
from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.engine import MemoryEngine
from lobug.memory.limits import MAX_CONTENT_CHARS, MAX_FACT_CHARS
from lobug.services.engine_tools import ToolError
from tests.fakes import FakeChat, FakeEmbedder
from tests.live import LiveServer

if TYPE_CHECKING:
    from mcp import Client

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "mcp-admin-Vq83LxT2pw"
DEVICE_TOKEN = "mcp-device-Hs42NkZ7rb"
TOOLS = [
    "search_memory",
    "save_memory",
    "update_memory",
    "forget_memory",
    "read_block",
    "update_block",
    "get_context",
]


def structured(result: Any) -> Any:
    """A tool result's value: the structured content, else its text as JSON."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        value = result.structured_content
        return value.get("result", value) if isinstance(value, dict) else value
    return json.loads(result.content[0].text)


async def exercise(client: Client) -> None:
    """List and call every tool and read both resources, including the error paths."""
    listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == TOOLS
    search_tool = next(t for t in listed.tools if t.name == "search_memory")
    assert search_tool.input_schema["required"] == ["query"]

    saved = structured(await client.call_tool("save_memory", {"content": "The user likes jazz"}))
    found = structured(await client.call_tool("search_memory", {"query": "jazz", "limit": 3}))
    assert found[0]["id"] == saved["id"]
    updated = structured(
        await client.call_tool(
            "update_memory", {"id": saved["id"], "content": "The user loves jazz"}
        )
    )
    assert updated["content"] == "The user loves jazz"
    structured(await client.call_tool("update_block", {"label": "human", "value": "Jazz fan"}))
    assert structured(await client.call_tool("read_block", {"label": "human"}))["value"] == (
        "Jazz fan"
    )
    context = await client.call_tool("get_context", {"query": "jazz", "max_tokens": 200})
    assert "The user loves jazz" in context.content[0].text
    assert (
        structured(await client.call_tool("forget_memory", {"id": updated["id"]}))["current"]
        is False
    )

    missing = await client.call_tool("read_block", {"label": "nothing"})
    assert missing.is_error and "no memory block 'nothing'" in missing.content[0].text
    stale = await client.call_tool("update_memory", {"id": saved["id"], "content": "x"})
    assert stale.is_error
    bad = await client.call_tool("search_memory", {"limit": 2})
    assert bad.is_error

    resources = await client.list_resources()
    assert {str(r.uri) for r in resources.resources} == {"memory://base-memory", "memory://blocks"}
    blocks = await client.read_resource("memory://blocks")
    assert json.loads(blocks.contents[0].text) == [{"label": "human", "value": "Jazz fan"}]


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 60))


# The SDK's client is imported by the tests that use it: a worker of `make test` that collects
# this module without running it does not import the SDK (about 2 s of CPU).
def over_http(server: str, http: httpx2.AsyncClient) -> Client:
    """An MCP client of `server`'s `/mcp`, through `http`."""
    from mcp.client.streamable_http import streamable_http_client

    from mcp import Client

    return Client(streamable_http_client(f"{server}/mcp", http_client=http))


def test_stdio_serves_every_tool(tmp_path: Path) -> None:
    from mcp.client.stdio import StdioServerParameters

    from mcp import Client

    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.mcp.stdio_server", str(tmp_path / "desk.db")],
        env={"PYTHONPATH": f"{ROOT / 'server'}{os.pathsep}{ROOT}"},
        cwd=ROOT,
    )

    async def session() -> None:
        async with Client(parameters) as client:
            await exercise(client)

    run(session)


@pytest.mark.parametrize("command", [["-m", "lobug.mcp_server"], ["-m", "lobug", "mcp"]])
def test_the_stdio_entry_points_answer_help(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, *command, "--help"],
        env={**os.environ, "PYTHONPATH": str(ROOT / "server")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "--agent" in done.stdout and "--db" in done.stdout


@pytest.fixture(params=["device", "memory"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    settings = Settings(
        db_path=tmp_path / "m.db", admin_tokens=(TOKEN,), device_tokens=(DEVICE_TOKEN,)
    )
    backends = Backends(FakeChat(), FakeEmbedder())
    factory = create_app if request.param == "device" else create_memory_app
    live = LiveServer(factory(settings, backends))
    try:
        yield live.url
    finally:
        live.stop()


# A server imports the MCP SDK (about a second of CPU) at the first call to /mcp, not at start.
ON_DEMAND = """
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.fakes import FakeChat, FakeEmbedder

app = create_app(Settings(db_path=Path(sys.argv[1])), Backends(FakeChat(), FakeEmbedder()))
with TestClient(app, base_url="http://127.0.0.1") as client:
    print(client.get("/health").status_code, "mcp" in sys.modules)
    listed = client.post("/mcp", json=HELLO, headers=ACCEPT)
    print(listed.status_code, "mcp" in sys.modules, len(listed.json()["result"]["tools"]))
"""
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def test_a_server_loads_mcp_at_the_first_call_to_it(tmp_path: Path) -> None:
    script = f"HELLO = {HELLO!r}\nACCEPT = {ACCEPT!r}\n{ON_DEMAND}"
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "m.db")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split("\n")[:2] == ["200 False", f"200 True {len(TOOLS)}"], done.stderr


def test_first_calls_at_once_are_all_answered(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "m.db", admin_tokens=(TOKEN,))
    live = LiveServer(create_app(settings, Backends(FakeChat(), FakeEmbedder())))
    headers = {"Authorization": f"Bearer {TOKEN}", **ACCEPT}

    def call(_: int) -> httpx.Response:
        return httpx.post(f"{live.url}/mcp", json=HELLO, headers=headers, timeout=60)

    try:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(call, range(4)))
    finally:
        live.stop()
    assert [len(a.json()["result"]["tools"]) for a in answers] == [len(TOOLS)] * 4


def test_an_mcp_that_cannot_be_built_fails_its_calls_and_the_server_still_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_app: object) -> None:
        raise ImportError("no MCP here")

    monkeypatch.setattr(lobug.app, "mcp_over_http", broken)
    app = create_app(Settings(db_path=tmp_path / "m.db"), Backends(FakeChat(), FakeEmbedder()))
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.post("/mcp", json=HELLO, headers=ACCEPT).status_code == 500
        assert client.post("/mcp", json=HELLO, headers=ACCEPT).status_code == 500
        assert client.get("/health").status_code == 200


def test_http_serves_every_tool_with_a_token(server: str) -> None:
    async def session() -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            over_http(server, http) as client,
        ):
            await exercise(client)

    run(session)


def test_http_refuses_a_caller_without_a_token(server: str) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = httpx.post(f"{server}/mcp", json=hello, headers=headers, timeout=10)
        assert response.status_code == 401
        assert response.json()["error"] == "unauthorized"

    async def session() -> None:
        async with (
            httpx2.AsyncClient(timeout=10) as http,
            over_http(server, http),
        ):
            pass

    with pytest.raises(BaseException):  # noqa: B017 - the SDK's own error for a 401
        run(session)


async def mcp_session(server: str, token: str, test: Callable[[Client], Awaitable[None]]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        over_http(server, http) as client,
    ):
        await test(client)


def test_a_device_token_reads_but_never_changes_memory_over_http(server: str) -> None:
    saved: dict[str, Any] = {}

    async def as_admin(client: Client) -> None:
        saved.update(structured(await client.call_tool("save_memory", {"content": "Jazz"})))
        await client.call_tool("update_block", {"label": "human", "value": "Jazz fan"})

    async def as_device(client: Client) -> None:
        found = structured(await client.call_tool("search_memory", {"query": "jazz"}))
        assert [f["id"] for f in found] == [saved["id"]]
        block = structured(await client.call_tool("read_block", {"label": "human"}))
        assert block["value"] == "Jazz fan"
        context = await client.call_tool("get_context", {"query": "jazz"})
        assert "Jazz" in context.content[0].text
        writes = {
            "save_memory": {"content": "The user hates jazz"},
            "update_memory": {"id": saved["id"], "content": "The user hates jazz"},
            "forget_memory": {"id": saved["id"]},
            "update_block": {"label": "human", "value": "changed"},
        }
        for name, arguments in writes.items():
            refused = await client.call_tool(name, arguments)
            assert refused.is_error and "admin_required" in refused.content[0].text, name
        found = structured(await client.call_tool("search_memory", {"query": "jazz"}))
        assert [(f["id"], f["content"]) for f in found] == [(saved["id"], "Jazz")]
        block = structured(await client.call_tool("read_block", {"label": "human"}))
        assert block["value"] == "Jazz fan"

    run(lambda: mcp_session(server, TOKEN, as_admin))
    run(lambda: mcp_session(server, DEVICE_TOKEN, as_device))


def test_the_tools_hold_the_rest_limits(tmp_path: Path) -> None:
    """A fact of 2,001 characters is refused as `POST /memory/facts` refuses it."""
    engine = MemoryEngine(
        str(tmp_path / "m.db"),
        agent="desk",
        chat=FakeChat(),
        embedder=FakeEmbedder(),
        settings=Settings(db_path=tmp_path / "m.db"),
    )
    with engine:
        for name, arguments in (
            ("save_memory", {"content": "x" * (MAX_FACT_CHARS + 1)}),
            ("save_memory", {"content": "x" * 99_999}),
            ("save_memory", {"content": "   "}),
            ("update_memory", {"id": 1, "content": "x" * (MAX_FACT_CHARS + 1)}),
            ("forget_memory", {"id": 2**64}),
            ("forget_memory", {"id": 0}),
            ("search_memory", {"query": "x" * (MAX_FACT_CHARS + 1)}),
            ("update_block", {"label": "human", "value": "x" * (MAX_CONTENT_CHARS + 1)}),
        ):
            with pytest.raises(ToolError):
                engine.call_tool(name, arguments)
        assert engine.call_tool("save_memory", {"content": "x" * MAX_FACT_CHARS})["id"] >= 1
        assert engine.search_memory("x") != []
