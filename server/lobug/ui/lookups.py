"""Search (the facts hybrid search finds for a query, each with its cosine, keyword, recency
and score parts, from `Curation.explain_search`) and the audit log, paged (admins only, as
`GET /memory/audit/{agent}`)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from lobug.memory.limits import MAX_FACT_CHARS
from lobug.memory.search import USER_SCORE_WEIGHT, Explained
from lobug.store.models import AuditEntry
from lobug.ui.access import ViewerDep, reads_of, require
from lobug.ui.render import AgentChoice, choose_agent, page
from lobug.web.deps import MemoryDep
from lobug.web.roles import Access

router = APIRouter(include_in_schema=False)
SEARCH_RESULTS = 20
AUDIT_PAGE = 50
MAX_PAGES = 100_000


@router.get("/ui/search")
async def search(
    request: Request,
    viewer: ViewerDep,
    svc: MemoryDep,
    agent: str | None = None,
    q: Annotated[str, Query(max_length=MAX_FACT_CHARS)] = "",
) -> HTMLResponse:
    def gather() -> tuple[AgentChoice, Explained]:
        choice = choose_agent(svc, agent)
        if choice.name is None or not q.strip():
            return choice, Explained([], True, svc.curation.searcher.weights)
        shown = reads_of(svc, viewer, choice.name)
        return choice, svc.curation.explain_search(choice.name, q.strip(), SEARCH_RESULTS, shown)

    choice, found = await asyncio.to_thread(gather)
    return page(
        request,
        "search.html",
        viewer,
        choice,
        q=q,
        matches=found.matches,
        embedded=found.embedded,
        weights=found.weights,
        user_weight=USER_SCORE_WEIGHT,
    )


@router.get("/ui/audit")
async def audit(
    request: Request,
    viewer: ViewerDep,
    svc: MemoryDep,
    agent: str | None = None,
    page_no: Annotated[int, Query(alias="page", ge=0, le=MAX_PAGES)] = 0,
) -> HTMLResponse:
    require(viewer, Access.EXPORT)

    def gather() -> tuple[AgentChoice, list[AuditEntry], int]:
        choice = choose_agent(svc, agent)
        if choice.name is None:
            return choice, [], 0
        entries = svc.store.audit_entries(choice.name, AUDIT_PAGE, page_no * AUDIT_PAGE)
        return choice, entries, svc.store.count_audit_entries(choice.name)

    choice, entries, total = await asyncio.to_thread(gather)
    return page(
        request,
        "audit.html",
        viewer,
        choice,
        entries=entries,
        total=total,
        page_no=page_no,
        page_size=AUDIT_PAGE,
    )
