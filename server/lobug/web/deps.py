"""The running services a request reaches, as FastAPI dependencies for the REST API and the
dashboard alike: `svc: MemoryDep` (on the device server and on `lobug memory-server`),
`svc: ServicesDep` (the device server's)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from lobug.services import MemoryServices, Services


def services(request: Request) -> Services:
    """The device server's running services (opened by the app's lifespan)."""
    return request.app.state.services


def memory_services(request: Request) -> MemoryServices:
    """The memory API's services: on the device server and on `lobug memory-server`."""
    return request.app.state.memory


ServicesDep = Annotated[Services, Depends(services)]
MemoryDep = Annotated[MemoryServices, Depends(memory_services)]
