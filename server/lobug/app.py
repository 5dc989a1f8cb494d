"""create_app(settings) -> FastAPI, and create_memory_app(settings) for the memory API alone.
Nothing is read from the environment here."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from lobug import __version__
from lobug.api import device, memory, openai_proxy, voice
from lobug.api.errors import install_error_handlers
from lobug.backends import Backends
from lobug.config import Settings, check_exposure
from lobug.services import open_memory_services, open_services

log = logging.getLogger(__name__)


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
        try:
            yield
        finally:
            await speech_loading
            await asyncio.to_thread(services.close)

    app = FastAPI(title="Lo-Bug", version=__version__, lifespan=lifespan)
    app.state.settings = settings
    install_error_handlers(app)
    app.include_router(device.public)
    app.include_router(device.router)
    app.include_router(voice.router)
    app.include_router(openai_proxy.router)
    app.include_router(memory.public, prefix="/memory")
    app.include_router(memory.router, prefix="/memory")
    return app


def create_memory_app(settings: Settings, backends: Backends | None = None) -> FastAPI:
    """Only the memory API, at the root paths (`lobug memory-server`). Loads the embedder
    alone: no chat or speech model. From `backends` only the embedder is used.

    Raises ConfigError when the server would be exposed without authentication."""
    warning = check_exposure(settings)
    if warning:
        log.warning("%s", warning)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        embedder = backends.embedder if backends else None
        services = await asyncio.to_thread(open_memory_services, settings, embedder)
        app.state.memory = services
        try:
            yield
        finally:
            await asyncio.to_thread(services.close)

    app = FastAPI(title="Lo-Bug memory", version=__version__, lifespan=lifespan)
    app.state.settings = settings
    install_error_handlers(app)
    app.include_router(memory.public)
    app.include_router(memory.router)
    return app
