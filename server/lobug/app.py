"""create_app(settings) -> FastAPI. Nothing is read from the environment here."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from lobug import __version__
from lobug.api import device, voice
from lobug.api.errors import install_error_handlers
from lobug.backends import Backends
from lobug.config import Settings, check_exposure
from lobug.services import open_services

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
    return app
