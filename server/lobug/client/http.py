"""The memory server's REST API (`lobug.api.memory`), as far as `learning()` uses it."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

import httpx

DEFAULT_URL = "http://127.0.0.1:8283"


class MemoryServerUnavailable(RuntimeError):
    """The memory server could not be reached (or refused us) when `learning()` began."""


class MemoryClient:
    """The few memory REST calls the interceptor needs. Blocking; raises httpx.HTTPError."""

    def __init__(self, base_url: str, *, token: str | None, timeout: float) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url
        self._http = httpx.Client(
            base_url=base_url, headers=headers, timeout=httpx.Timeout(timeout, connect=2.0)
        )

    def health(self) -> dict[str, Any]:
        return self._json(self._http.get("/health"))

    def ensure_agent(self, name: str) -> dict[str, Any]:
        return self._json(self._http.post("/agents", json={"name": name}))

    def context(self, agent: str, query: str, max_tokens: int) -> dict[str, Any]:
        path = f"/context/{quote(agent, safe='')}"
        return self._json(self._http.post(path, json={"query": query, "max_tokens": max_tokens}))

    def add_message(self, agent: str, role: str, content: str, metadata: dict[str, Any]) -> None:
        body = {"agent_name": agent, "role": role, "content": content, "metadata": metadata}
        self._http.post("/messages", json=body).raise_for_status()

    def close(self) -> None:
        self._http.close()

    @staticmethod
    def _json(response: httpx.Response) -> dict[str, Any]:
        response.raise_for_status()
        return response.json()


def memory_url(server_url: str | None, base_url: str | None = None) -> str:
    """The memory server to use, read when `learning()` begins, never at import.
    `base_url` is the older name of `server_url`."""
    if server_url and base_url and server_url.rstrip("/") != base_url.rstrip("/"):
        raise ValueError("server_url and base_url name the same thing: pass one of them")
    chosen = (
        server_url
        or base_url
        or os.environ.get("MEMORY_SERVER_URL")
        or os.environ.get("LOBUG_MEMORY_URL")
        or DEFAULT_URL
    )
    return chosen.rstrip("/")


def open_memory_client(
    base_url: str, agent: str, *, token: str | None, timeout: float
) -> MemoryClient:
    """A client for a reachable memory server on which `agent` exists."""
    client = MemoryClient(base_url, token=token, timeout=timeout)
    try:
        client.health()
        client.ensure_agent(agent)
    except httpx.HTTPStatusError as exc:
        client.close()
        status = exc.response.status_code
        hint = " (pass token=...)" if status == 401 else ""
        raise MemoryServerUnavailable(
            f"The Lo-Bug memory server at {base_url} answered {status}{hint}: {exc.response.text}"
        ) from exc
    except (httpx.HTTPError, ValueError) as exc:
        client.close()
        raise MemoryServerUnavailable(
            f"No Lo-Bug memory server at {base_url} ({exc}). Start one with "
            "`lobug memory-server` (port 8283), or run the full server with `make run` and "
            "use server_url='http://127.0.0.1:8321/memory'."
        ) from exc
    return client
