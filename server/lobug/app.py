"""create_app(settings) -> FastAPI, and create_memory_app(settings) for the memory API alone.
Nothing is read from the environment here."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI

from lobug import __version__
from lobug.api import (
    context,
    curation,
    device,
    dreams,
    facts,
    memory,
    openai_proxy,
    topics,
    transfer,
    voice,
)
from lobug.api.auth import TokenGate, role_without_tokens
from lobug.api.errors import install_error_handlers
from lobug.api.json_guard import JsonBodyGuard
from lobug.api.limits import BodySizeLimit
from lobug.api.voice import MULTIPART_OVERHEAD
from lobug.backends import Backends
from lobug.config import Settings, check_exposure
from lobug.maintenance import Maintenance
from lobug.mcp_server import install_mcp
from lobug.services import open_memory_services, open_services
from lobug.ui import install_ui

log = logging.getLogger(__name__)

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def create_app(settings: Settings, backends: Backends | None = None) -> FastAPI:
    """The server. `backends` replaces the configured models (tests pass fakes here).

    Raises ConfigError when the server would be exposed without authentication."""
    warning = check_exposure(settings)
    if warning:
        log.warning("%s", warning)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await asyncio.to_thread(open_services, settings, backends)
        app.state.services = services
        app.state.memory = services.memory_api
        speech_loading = asyncio.create_task(asyncio.to_thread(services.speech.load))
        maintenance = Maintenance(services.maintenance_tasks(), settings.maintenance_interval_s)
        app.state.maintenance = maintenance
        maintenance.start()
        try:
            async with mcp_running():
                yield
        finally:
            await asyncio.to_thread(maintenance.stop)
            await speech_loading
            await asyncio.to_thread(services.close)

    app = new_app("Lo-Bug", settings, lifespan)
    app.include_router(device.public)
    app.include_router(device.router)
    app.include_router(voice.router)
    app.include_router(openai_proxy.router)
    app.include_router(memory.public, prefix="/memory")
    app.include_router(memory.router, prefix="/memory")
    app.include_router(context.router, prefix="/memory")
    app.include_router(facts.router, prefix="/memory")
    app.include_router(curation.router, prefix="/memory")
    app.include_router(dreams.router, prefix="/memory")
    app.include_router(topics.router, prefix="/memory")
    app.include_router(transfer.router, prefix="/memory")
    install_ui(app)
    mcp_running = install_mcp(app, settings)
    return app


def create_memory_app(settings: Settings, backends: Backends | None = None) -> FastAPI:
    """Only the memory API, at the root paths (`lobug memory-server`). Loads the embedder and
    the chat model (it learns from the messages posted), no speech model; `backends`
    replaces them (tests pass fakes here).

    Raises ConfigError when the server would be exposed without authentication."""
    warning = check_exposure(settings)
    if warning:
        log.warning("%s", warning)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await asyncio.to_thread(open_memory_services, settings, backends)
        app.state.memory = services
        maintenance = Maintenance(services.maintenance_tasks(), settings.maintenance_interval_s)
        app.state.maintenance = maintenance
        maintenance.start()
        try:
            async with mcp_running():
                yield
        finally:
            await asyncio.to_thread(maintenance.stop)
            await asyncio.to_thread(services.close)

    app = new_app("Lo-Bug memory", settings, lifespan)
    app.include_router(memory.public)
    app.include_router(memory.router)
    app.include_router(context.router)
    app.include_router(facts.router)
    app.include_router(curation.router)
    app.include_router(dreams.router)
    app.include_router(topics.router)
    app.include_router(transfer.router)
    install_ui(app)
    mcp_running = install_mcp(app, settings)
    return app


def body_limits(settings: Settings) -> Callable[[str], int]:
    """The largest body each path accepts: a recording on the audio paths, else
    `max_body_bytes`."""

    def limit_for(path: str) -> int:
        if path.startswith("/chat/audio"):
            return settings.max_audio_bytes + MULTIPART_OVERHEAD
        return settings.max_body_bytes

    return limit_for


def takes_json(path: str) -> bool:
    """Whether a body sent to `path` is JSON: everywhere but the audio uploads."""
    return not path.startswith("/chat/audio")


def new_app(title: str, settings: Settings, lifespan: Lifespan) -> FastAPI:
    """A FastAPI app with the JSON errors and body limits. The interactive docs and the
    OpenAPI schema are served only where no token is needed: with tokens set, nothing but
    `/health` answers without one."""
    docs = not settings.tokens_required
    app = FastAPI(
        title=title,
        version=__version__,
        lifespan=lifespan,
        docs_url="/docs" if docs else None,
        redoc_url="/redoc" if docs else None,
        openapi_url="/openapi.json" if docs else None,
        strict_content_type=False,  # a JSON body sent without a Content-Type is still read
        redirect_slashes=False,  # no redirect built from the Host header ("/health/" is 404)
    )
    app.state.settings = settings
    install_error_handlers(app)
    app.add_middleware(JsonBodyGuard, applies_to=takes_json)
    app.add_middleware(BodySizeLimit, limit_for=body_limits(settings))
    app.add_middleware(  # outermost: runs first
        TokenGate,
        device_tokens=settings.device_tokens,
        admin_tokens=settings.admin_tokens,
        open_role=role_without_tokens(settings),
    )
    return app
