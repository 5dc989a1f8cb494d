"""What routes take besides their body: the running services (`lobug.web.deps`, shared with
the dashboard), the device, the agent, and the admin check.

Use the `Annotated` aliases in route signatures (`svc: MemoryDep`, `device: DeviceId`), and
`dependencies=[AdminOnly]` on a route that changes the memory or takes it away whole (export,
audit): it asks the one role rule, `lobug.web.roles.may`."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import Depends, Header, Request

from lobug.api.errors import ApiError
from lobug.memory.agents import require_agent
from lobug.memory.evidence import Evidence, reader, require_summaries
from lobug.names import AGENT_NAME_RULE, is_agent_name
from lobug.store.household import Viewer
from lobug.store.models import Agent
from lobug.web.deps import MemoryDep
from lobug.web.device_ids import device_id_problem, token_device_problem
from lobug.web.roles import (
    ADMIN_REQUIRED,
    ADMIN_REQUIRED_DETAIL,
    Access,
    caller_device,
    caller_evidence,
    caller_role,
    may,
)

DEFAULT_DEVICE = "default"


def device_id(
    request: Request,
    x_device_id: Annotated[
        str | None, Header(description="The device's name: 1-64 of A-Z a-z 0-9 . _ : -")
    ] = None,
) -> str:
    """The calling device: `X-Device-Id`, else the device whose own token the request
    carries, else `default`. A device's own token may name no other device (403
    `device_mismatch`)."""
    value = (x_device_id or "").strip() or caller_device(request.scope) or DEFAULT_DEVICE
    problem = device_id_problem(value)
    if problem is not None:
        raise ApiError(400, "invalid_device_id", problem)
    mismatch = token_device_problem(request.scope, value)
    if mismatch is not None:
        raise ApiError(403, "device_mismatch", mismatch)
    return value


def allowed(access: Access) -> Any:
    """The dependency answering 403 admin_required to a caller whose role may not make a call
    that does `access` (`lobug.web.roles.may`; the role is `auth.TokenGate`'s)."""

    def check(request: Request) -> None:
        if not may(caller_role(request.scope), access):
            raise ApiError(403, ADMIN_REQUIRED, ADMIN_REQUIRED_DETAIL)

    check.__name__ = f"require_{access.value}"
    return Depends(check)


def evidence(request: Request) -> Evidence:
    """What the request's token proves of its caller (`memory.evidence`)."""
    return caller_evidence(request.scope)


DeviceId = Annotated[str, Depends(device_id)]
# What the caller proved: asked with `memory.evidence.reader` for what it may read.
CallerEvidence = Annotated[Evidence, Depends(evidence)]
# `@router.delete(..., dependencies=[AdminOnly])`: what a device may not do (`roles.ALLOWED`).
AdminOnly = allowed(Access.CHANGE)
# The 403 in the OpenAPI schema: `@router.delete(..., dependencies=[AdminOnly],
# responses=ADMIN_RESPONSES)`, or both once on an `APIRouter` of admin routes.
ADMIN_RESPONSES: dict[int | str, dict[str, Any]] = {
    403: {"description": "admin_required: the caller holds no admin token (LOBUG_ADMIN_TOKENS)"}
}


async def path_agent(agent_name: str, svc: MemoryDep) -> Agent:
    """The agent named by the `{agent_name}` path parameter."""
    if not is_agent_name(agent_name):
        raise ApiError(422, "invalid_agent", AGENT_NAME_RULE)
    return await asyncio.to_thread(require_agent, svc.store, agent_name)


PathAgent = Annotated[Agent, Depends(path_agent)]


async def path_viewer(agent: PathAgent, svc: MemoryDep, evidence: CallerEvidence) -> Viewer:
    """What the caller's token may read of the `{agent_name}` agent (`memory.evidence`)."""
    return await asyncio.to_thread(reader, svc.memory.household, agent.name, evidence)


async def summaries_reader(viewer: Annotated[Viewer, Depends(path_viewer)]) -> None:
    """403 `summaries_private` for a caller who may not read what every person's words made
    (summaries, episodes, base memory, topics, dreams)."""
    require_summaries(viewer)


# `viewer: PathViewer`: what the caller may read of the path's agent.
PathViewer = Annotated[Viewer, Depends(path_viewer)]
# `dependencies=[ReadsSummaries]` on a route that answers what every person's words made.
ReadsSummaries = Depends(summaries_reader)
