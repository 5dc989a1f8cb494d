"""Export and import of agents over HTTP (admin only): `GET /export/{agent}` streams the
export document (`docs/export.schema.json`), `GET /export` the document of every agent, and
`POST /import` writes one in a single transaction (`memory/transfer.py`).

Mounted beside the memory API (`/memory` on the device server, the root of `lobug
memory-server`). The import is audited as `manual`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, PathAgent
from lobug.api.errors import ApiError, documented
from lobug.memory import transfer
from lobug.names import AGENT_NAME_MAX, AGENT_NAME_RULE, AGENT_NAME_SCHEMA
from lobug.services import MemoryServices
from lobug.store.models import Agent
from lobug.store.records import Imported
from lobug.web.deps import MemoryDep

router = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


class ImportedOut(BaseModel):
    agent: str
    added: dict[str, int] = Field(description="records added, by kind (0: it was there)")


class ImportOut(BaseModel):
    imported: list[ImportedOut]


def export_response(svc: MemoryServices, agents: list[Agent]) -> StreamingResponse:
    """The document, streamed a record at a time (read in a worker thread by Starlette)."""
    chunks = transfer.export_chunks(svc.store, agents, svc.embedder.model, time.time())
    return StreamingResponse((c.encode() for c in chunks), media_type="application/json")


@router.get("/export/{agent_name}", responses=documented("agent_not_found"))
async def export_agent(agent: PathAgent, svc: MemoryDep) -> StreamingResponse:
    """Everything of the agent: log, facts with every version, summaries, base memory with
    its versions, blocks with their history, audit log, and the embedding model's name."""
    return export_response(svc, [agent])


@router.get("/export")
async def export_all(svc: MemoryDep) -> StreamingResponse:
    """The export document of every agent."""
    counted = await asyncio.to_thread(svc.store.agents_with_counts)
    return export_response(svc, [c.agent for c in counted])


@router.post("/import", responses=documented("invalid_export", "import_conflict"))
async def import_document(
    svc: MemoryDep,
    document: Annotated[dict[str, Any], Body(description="an export document")],
    as_agent: Annotated[
        str | None,
        Query(
            alias="as",
            pattern=AGENT_NAME_SCHEMA["pattern"],
            max_length=AGENT_NAME_MAX,
            description=AGENT_NAME_RULE,
        ),
    ] = None,
    merge: bool = False,
) -> ImportOut:
    """Import an export document: its agents (or its one agent renamed with `as`) get what
    they do not hold yet, with new ids and vectors from this server's embedding model; a
    second import of the same document adds nothing. An agent that holds other memory is
    merged into only with `merge=true` (else 409 `import_conflict`)."""

    def run() -> list[Imported]:
        try:
            agents = transfer.renamed(transfer.read_document(document), as_agent)
        except transfer.InvalidExport as exc:
            raise ApiError(422, "invalid_export", str(exc)) from None
        return transfer.import_agents(svc.store, svc.embedder, agents, merge=merge, actor=svc.actor)

    imported = await asyncio.to_thread(run)
    return ImportOut(imported=[ImportedOut(agent=i.agent, added=i.added) for i in imported])
