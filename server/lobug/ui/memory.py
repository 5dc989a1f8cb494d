"""The base memory (its text, a hand-written new version, its history with two versions side
by side) and the memory blocks (each edited within its character limit; read-only ones
locked; deleted, or purged with their texts in the audit log), changed through `Curation` as
the REST routes change them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from lobug.memory.evidence import SummariesPrivate, require_summaries
from lobug.memory.limits import MAX_BASE_MEMORY_CHARS, MAX_CONTENT_CHARS
from lobug.services import MemoryServices
from lobug.store.models import MANUAL, BaseMemoryVersion, MemoryBlock
from lobug.ui.access import EditorDep, ViewerDep, reads_of
from lobug.ui.diff import DiffRow, side_by_side
from lobug.ui.render import AgentChoice, AgentField, act, choose_agent, message_page, page
from lobug.web.deps import MemoryDep

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True)
class BaseMemoryView:
    content: str
    stale: bool
    history: list[BaseMemoryVersion]  # newest first
    left: BaseMemoryVersion | None
    right: BaseMemoryVersion | None
    diff: list[DiffRow]


def base_memory_view(
    svc: MemoryServices, agent: str, left_id: int | None, right_id: int | None
) -> BaseMemoryView:
    """Blocking. The two versions compared: those asked for, else the two newest."""
    history = svc.store.base_memory_history(agent)
    by_id = {v.id: v for v in history}
    right = by_id.get(right_id or 0, history[0] if history else None)
    left = by_id.get(left_id or 0, history[1] if len(history) > 1 else None)
    diff = side_by_side(left.content, right.content) if left and right else []
    return BaseMemoryView(
        svc.store.base_memory(agent),
        svc.store.base_memory_is_stale(agent),
        history,
        left,
        right,
        diff,
    )


@router.get("/ui/base-memory")
async def base_memory(
    request: Request,
    viewer: ViewerDep,
    svc: MemoryDep,
    agent: str | None = None,
    left: int | None = None,
    right: int | None = None,
) -> HTMLResponse:
    def gather() -> tuple[AgentChoice, BaseMemoryView | None]:
        choice = choose_agent(svc, agent)
        if choice.name is None:
            return choice, None
        require_summaries(reads_of(svc, viewer, choice.name))
        return choice, base_memory_view(svc, choice.name, left, right)

    try:
        choice, view = await asyncio.to_thread(gather)
    except SummariesPrivate as exc:
        return message_page(request, "Not shown", str(exc), status=403)
    return page(request, "base_memory.html", viewer, choice, view=view)


@router.post("/ui/base-memory")
async def write_base_memory(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    agent: AgentField,
    content: Annotated[str, Form(max_length=MAX_BASE_MEMORY_CHARS)] = "",
) -> RedirectResponse:
    def write() -> str:
        svc.curation.write_base_memory(agent, content, actor=MANUAL)
        return "Base memory saved as a new version."

    return await act(request, viewer, svc, agent, write, "/ui/base-memory")


@router.get("/ui/blocks")
async def blocks(
    request: Request, viewer: ViewerDep, svc: MemoryDep, agent: str | None = None
) -> HTMLResponse:
    def gather() -> tuple[AgentChoice, list[MemoryBlock]]:
        choice = choose_agent(svc, agent)
        return choice, svc.store.blocks(choice.name) if choice.name else []

    choice, found = await asyncio.to_thread(gather)
    return page(request, "blocks.html", viewer, choice, blocks=found)


@router.post("/ui/blocks/{label}")
async def update_block(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    label: str,
    agent: AgentField,
    value: Annotated[str, Form(max_length=MAX_CONTENT_CHARS)] = "",
) -> RedirectResponse:
    def update() -> str:
        svc.curation.update_block(agent, label, value, actor=MANUAL)
        return f"Block {label!r} saved."

    return await act(request, viewer, svc, agent, update, "/ui/blocks")


@router.post("/ui/blocks/{label}/delete")
async def delete_block(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    label: str,
    agent: AgentField,
    purge: Annotated[bool, Form()] = False,
) -> RedirectResponse:
    def delete() -> str:
        svc.curation.delete_block(agent, label, actor=MANUAL, purge=purge)
        erased = " and its texts erased from the audit log" if purge else ""
        return f"Block {label!r} deleted with its history{erased}."

    return await act(request, viewer, svc, agent, delete, "/ui/blocks")
