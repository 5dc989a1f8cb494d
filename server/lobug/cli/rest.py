"""`MemoryAccess`, what every memory command calls: the REST API of a running server (`--url`;
the memory API at `/memory` on a device server, `lobug serve`, or at the root of `lobug
memory-server`, found by asking for `/memory/health` first; changes need an admin token,
`--token` or `LOBUG_TOKEN`), or of the local database file (`local_access`: the memory API
app run in this process, admin without a token, changes audited as `cli`). Either way a
command meets the same routes, rules and answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from lobug.cli.output import AgentMissing, Json, Refused, by_score
from lobug.memory.search import SearchMode
from lobug.store.models import DEFAULT_FACT_TYPE, FactFlags, FactQuery
from lobug.web.roles import ADMIN_REQUIRED

if TYPE_CHECKING:
    from lobug.backends import Backends
    from lobug.config import Settings

AGENT_NOT_FOUND = "agent_not_found"  # the API's code (api/errors.py)
TIMEOUT_S = 60.0
# Work the server does whole before it answers (a topic rebuild, a dream, an import) may take
# minutes on a small model: waited for this long, not TIMEOUT_S.
WORK_TIMEOUT = httpx.Timeout(TIMEOUT_S, read=3600.0)


def iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()


def local_access(settings: Settings, backends: Backends | None = None) -> MemoryAccess:
    """The memory API of the local database (`settings`), run in this process
    (`lobug.app.create_local_app`); `backends` replaces the configured models (tests)."""
    from lobug.app import LOCAL_URL, create_local_app
    from lobug.cli.in_process import InProcess

    app = create_local_app(settings, backends)
    transport = InProcess(app, app.router.lifespan_context(app))
    return MemoryAccess(LOCAL_URL, None, transport=transport, where=str(settings.db_path))


class MemoryAccess:
    """`where` names the database of a local file (its path), else the server's URL."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        transport: httpx.BaseTransport | None = None,
        where: str | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(
            base_url=url.rstrip("/"), headers=headers, timeout=TIMEOUT_S, transport=transport
        )
        self.local_file = Path(where) if where else None
        self.where = where or str(self.http.base_url)
        self.prefix = "/memory" if self.answers("/memory/health") else ""
        self.default_agent = self.call("GET", "/health").get("agent", "lobug")

    def answers(self, path: str) -> bool:
        try:
            return self.http.get(path).status_code == 200
        except httpx.HTTPError as exc:
            raise Refused(f"cannot reach {self.http.base_url}: {exc}") from None

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer of `method path` under the memory API; an error answer becomes
        Refused with the server's detail."""
        try:
            answer = self.http.request(method, self.prefix + path, **kwargs)
        except httpx.HTTPError as exc:
            raise Refused(f"cannot reach {self.http.base_url}: {exc}") from None
        if answer.is_error:
            raise refusal(answer)
        return None if answer.status_code == 204 else answer.json()

    def close(self) -> None:
        self.http.close()

    # ------------------------------------------------------------------ people

    def people(self, agent: str) -> list[Json]:
        return self.call("GET", f"/people/{agent}")

    def add_person(self, agent: str, name: str, devices: list[str], move: bool = False) -> Json:
        body = {"name": name, "devices": devices, "move": move}
        return self.call("POST", f"/people/{agent}", json=body)

    def forget_person(self, agent: str, person_id: int, delete: bool) -> Json:
        path = f"/people/{agent}/{person_id}"
        return self.call("DELETE", path) if delete else self.call("POST", f"{path}/forget")

    def person_facts(self, agent: str, person_id: int) -> list[Json]:
        return self.call("GET", f"/people/{agent}/{person_id}/facts")

    def set_device_person(
        self, agent: str, device: str, person_id: int | None, move: bool = False
    ) -> list[Json]:
        body = {"person_id": person_id, "move": move}
        return self.call("PUT", f"/people/{agent}/devices/{device}", json=body)

    def move_fact(self, agent: str, fact_id: int, scope: str, shareable: bool) -> Json:
        body = {"scope": scope, "shareable": shareable}
        return self.call("PUT", f"/facts/{agent}/{fact_id}/scope", json=body)

    # ------------------------------------------------------------------ agents, facts

    def agents(self) -> list[Json]:
        return self.call("GET", "/agents")

    def create_agent(self, name: str) -> Json:
        return self.call("POST", "/agents", json={"name": name})

    def delete_agent(self, name: str) -> Json:
        return self.call("DELETE", f"/agents/{name}", params={"confirm": name})

    def facts(self, agent: str, query: FactQuery) -> Json:
        params: dict[str, Any] = {
            "limit": query.limit,
            "offset": query.offset,
            "include_history": query.include_history,
        }
        if query.fact_type:
            params["type"] = query.fact_type
        if query.pinned is not None:
            params["pinned"] = query.pinned
        return self.call("GET", f"/facts/{agent}", params=params)

    def fact(self, agent: str, fact_id: int) -> Json:
        return self.call("GET", f"/facts/{agent}/{fact_id}")

    def add_fact(self, agent: str, text: str, fact_type: str | None) -> Json:
        body = {"content": text, "type": fact_type or DEFAULT_FACT_TYPE}
        return self.call("POST", f"/facts/{agent}", json=body)

    def correct_fact(self, agent: str, fact_id: int, text: str) -> Json:
        return self.call("PUT", f"/facts/{agent}/{fact_id}", json={"content": text})

    def flag_fact(self, agent: str, fact_id: int, flags: FactFlags) -> Json:
        body: Json = {}
        if flags.pinned is not None:
            body["pinned"] = flags.pinned
        if flags.user_score is not None or flags.clear_score:
            body["user_score"] = flags.user_score
        return self.call("PATCH", f"/facts/{agent}/{fact_id}", json=body)

    def forget_fact(self, agent: str, fact_id: int, purge: bool) -> Json:
        return self.call("DELETE", f"/facts/{agent}/{fact_id}", params={"purge": purge})

    def search(self, agent: str, text: str, mode: SearchMode, limit: int) -> list[Json]:
        params = {"q": text, "mode": mode, "limit": limit}
        facts = self.call("GET", f"/facts/{agent}", params=params)
        body = {"agent_name": agent, "query": text, "mode": mode, "limit": limit}
        messages = self.call("POST", "/messages/search", json=body)
        return by_score(
            [
                *(
                    {"kind": "fact", "id": f["id"], "score": f.get("score"), "text": f["content"]}
                    for f in facts["facts"]
                ),
                *(
                    {
                        "kind": "message",
                        "id": m["id"],
                        "score": m["similarity"],
                        "text": m["content"],
                    }
                    for m in messages
                ),
            ]
        )

    # ------------------------------------------------------------------ messages

    def messages(self, agent: str, limit: int) -> list[Json]:
        return self.call("GET", f"/messages/{agent}", params={"limit": limit})

    def forget_span(
        self, agent: str, device: str | None, since: float | None, until: float | None
    ) -> Json:
        body = {
            "agent": agent,
            "device": device,
            "since": None if since is None else iso(since),
            "until": None if until is None else iso(until),
        }
        return self.call("POST", "/forget", json=body)

    # ------------------------------------------------------------------ blocks, base memory

    def blocks(self, agent: str) -> list[Json]:
        return self.call("GET", f"/memory-blocks/{agent}")

    def set_block(self, agent: str, label: str, value: str) -> Json:
        path = f"/memory-blocks/{agent}/{label}"
        exists = self.http.get(self.prefix + path).status_code == 200
        if exists:
            return self.call("PUT", path, json={"value": value, "changed_by": "cli"})
        body = {"agent_name": agent, "label": label, "value": value, "changed_by": "cli"}
        return self.call("POST", "/memory-blocks", json=body)

    def delete_block(self, agent: str, label: str, purge: bool) -> Json:
        self.call("DELETE", f"/memory-blocks/{agent}/{label}", params={"purge": purge})
        return {"agent": agent, "label": label, "purged": purge}

    def base_memory(self, agent: str) -> Json:
        return self.call("GET", f"/base-memory/{agent}")

    def write_base_memory(self, agent: str, content: str) -> Json:
        return self.call("PUT", f"/base-memory/{agent}", json={"content": content})

    def audit(self, agent: str, limit: int) -> Json:
        return self.call("GET", f"/audit/{agent}", params={"limit": limit})

    def dream(self, agent: str, dry_run: bool) -> Json:
        return self.call(
            "POST", f"/dream/{agent}", params={"dry_run": dry_run}, timeout=WORK_TIMEOUT
        )

    def dreams(self, agent: str, limit: int) -> list[Json]:
        return self.call("GET", f"/dreams/{agent}", params={"limit": limit})

    def undo_dream(self, agent: str, dream_id: int) -> Json:
        return self.call("POST", f"/dreams/{agent}/{dream_id}/undo")

    def topics(self, agent: str) -> list[Json]:
        return self.call("GET", f"/agents/{agent}/topics")

    def rebuild_topics(self, agent: str) -> list[Json]:
        return self.call("POST", f"/agents/{agent}/topics/rebuild", timeout=WORK_TIMEOUT)

    def global_memory(self, agent: str) -> Json:
        return self.call("GET", f"/agents/{agent}/global")

    # ------------------------------------------------------------------ whole database

    def stats(self) -> Json:
        health = self.call("GET", "/health")
        learning = self.learning(0)
        return {
            "database": health.get("database_path"),
            "size_bytes": self.file_size(),
            "embedding_model": health.get("embedding_model"),
            "chat_model": health.get("chat_model"),
            "learning_queue": learning["queued"],
            "learning_parked": learning["parked"],
            "agents": self.agents(),
        }

    def file_size(self) -> int | None:
        """The bytes of the local database file and its write-ahead log (None on a server)."""
        if self.local_file is None:
            return None
        files = [self.local_file, self.local_file.with_name(self.local_file.name + "-wal")]
        return sum(f.stat().st_size for f in files if f.exists())

    def learning(self, limit: int) -> Json:
        return self.call("GET", "/learning", params={"limit": limit})

    def retry_learning(self, ids: list[int] | None) -> Json:
        """On the local file, answered once done: its server ends with the command."""
        params = {"wait": self.local_file is not None}
        return self.call(
            "POST", "/learning/retry", params=params, json={"ids": ids}, timeout=WORK_TIMEOUT
        )

    def export(self, agent: str | None) -> Iterator[bytes]:
        path = self.prefix + (f"/export/{agent}" if agent else "/export")
        with self.http.stream("GET", path) as answer:
            if answer.is_error:
                answer.read()
                raise refusal(answer)
            yield from answer.iter_bytes()

    def import_document(self, document: Any, as_agent: str | None, merge: bool) -> Json:
        params: dict[str, Any] = {"merge": merge}
        if as_agent:
            params["as"] = as_agent
        return self.call("POST", "/import", params=params, json=document, timeout=WORK_TIMEOUT)


def refusal(answer: httpx.Response) -> Refused:
    """The error answer as the command's refusal."""
    try:
        missing = answer.json().get("error") == AGENT_NOT_FOUND
    except (ValueError, AttributeError):
        missing = False
    return (AgentMissing if missing else Refused)(error_text(answer))


def error_text(answer: httpx.Response) -> str:
    """The server's error code and detail, or the status; a refusal by the role rule
    (`lobug.web.roles`) says how to pass an admin token."""
    try:
        body = answer.json()
        detail = body["detail"]
        text = f"{body['error']}: {detail if isinstance(detail, str) else json.dumps(detail)}"
    except (ValueError, KeyError, TypeError):
        return f"the server answered {answer.status_code}"
    if body["error"] == ADMIN_REQUIRED:
        text += " (pass an admin token with --token or LOBUG_TOKEN)"
    if body["error"] == AGENT_NOT_FOUND:
        text += " (create it with `lobug agents create NAME`)"
    return text
