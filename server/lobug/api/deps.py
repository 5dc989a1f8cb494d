"""What routes take besides their body: the running services (`lobug.web.deps`, shared with
the dashboard), the device, the agent, and the admin check.

Use the `Annotated` aliases in route signatures (`svc: MemoryDep`, `device: DeviceId`), and
`dependencies=[AdminOnly]` on a route only admins may call."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import Depends, Header, Request

from lobug.api.errors import ApiError
from lobug.memory.agents import require_agent
from lobug.names import AGENT_NAME_RULE, DEVICE_ID, DEVICE_ID_RULE, is_agent_name
from lobug.store.models import INTERNAL_SOURCES, Agent
from lobug.web.deps import MemoryDep
from lobug.web.roles import ADMIN, caller_role

DEFAULT_DEVICE = "default"


def device_id(
    x_device_id: Annotated[
        str, Header(description="The device's name: 1-64 of A-Z a-z 0-9 . _ : -")
    ] = DEFAULT_DEVICE,
) -> str:
    value = x_device_id.strip() or DEFAULT_DEVICE
    if not DEVICE_ID.fullmatch(value):
        raise ApiError(400, "invalid_device_id", DEVICE_ID_RULE)
    if value in INTERNAL_SOURCES:
        raise ApiError(
            400, "invalid_device_id", f"X-Device-Id {value!r} names an internal source of the log"
        )
    return value


def require_admin(request: Request) -> None:
    """403 admin_required unless the caller holds an admin token (or, with no token
    configured, calls on loopback): see `auth.TokenGate`."""
    if caller_role(request.scope) != ADMIN:
        raise ApiError(
            403,
            "admin_required",
            "This action needs an admin token: 'Authorization: Bearer <token>' with a token "
            "from LOBUG_ADMIN_TOKENS (a device token may chat, not erase or edit memory)",
        )


DeviceId = Annotated[str, Depends(device_id)]
AdminOnly = Depends(require_admin)  # `@router.delete(..., dependencies=[AdminOnly])`
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
