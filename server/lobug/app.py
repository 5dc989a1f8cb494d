"""create_app(settings) -> FastAPI, and create_memory_app(settings) for the memory API alone:
one factory, `build_app`, with the device routes on or off. Nothing is read from the
environment here."""

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
    learning,
    memory,
    openai_proxy,
    people,
    topics,
    transfer,
    voice,
    voices,
)
from lobug.api.auth import TokenGate, role_without_tokens
from lobug.api.cross_site import CrossSiteGuard, SiteRule
from lobug.api.errors import install_error_handlers
from lobug.api.json_guard import JsonBodyGuard
from lobug.api.limits import BodySizeLimit
from lobug.api.voice import MULTIPART_OVERHEAD
from lobug.backends import Backends
from lobug.config import Settings, check_exposure
from lobug.maintenance import STOP_WAIT_S, Maintenance
from lobug.mcp_server import install_mcp
from lobug.services import MemoryServices, Services, open_memory_services, open_services
from lobug.speakers.profiles import MAX_UTTERANCES
from lobug.ui import install_ui
from lobug.web.roles import UI_PREFIX
from lobug.xiaozhi import routes as xiaozhi

log = logging.getLogger(__name__)

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


# The memory API's routes, served under /memory by the device server and at the root by the
# memory server; the device server adds the device, voice and /v1 routes.
MEMORY_ROUTERS = (
    memory.public,
    memory.router,
    context.router,
    facts.router,
    curation.router,
    dreams.router,
    topics.router,
    transfer.router,
    learning.router,
    people.router,
)
DEVICE_ROUTERS = (
    device.public,
    device.router,
    voice.router,
    voices.router,
    openai_proxy.router,
    xiaozhi.router,
)


def create_app(settings: Settings, backends: Backends | None = None) -> FastAPI:
    """The server. `backends` replaces the configured models (tests pass fakes here).

    Raises ConfigError when the server would be exposed without authentication."""
    return build_app(settings, backends, devices=True)


def create_memory_app(settings: Settings, backends: Backends | None = None) -> FastAPI:
    """Only the memory API, at the root paths (`lobug memory-server`): the same app with the
    device routes off. Loads the embedder and the chat model (it learns from the messages
    posted), no speech model; `backends` replaces them (tests pass fakes here).

    Raises ConfigError when the server would be exposed without authentication."""
    return build_app(settings, backends, devices=False)


def build_app(settings: Settings, backends: Backends | None, *, devices: bool) -> FastAPI:
    warning = check_exposure(settings)
    if warning:
        log.warning("%s", warning)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await asyncio.to_thread(open_app_services, app, settings, backends, devices)
        speech = services.speech if isinstance(services, Services) else None
        loading = asyncio.create_task(asyncio.to_thread(speech.load)) if speech else None
        maintenance = Maintenance(services.maintenance_tasks(), settings.maintenance_interval_s)
        app.state.maintenance = maintenance
        maintenance.start()
        try:
            async with mcp_running():
                yield
        finally:  # a stop waits STOP_WAIT_S at most for each part still at work
            await asyncio.to_thread(maintenance.stop, STOP_WAIT_S)
            if loading is not None:
                await asyncio.wait({loading}, timeout=STOP_WAIT_S)
            await asyncio.to_thread(services.close, STOP_WAIT_S)

    app = new_app("Lo-Bug" if devices else "Lo-Bug memory", settings, lifespan)
    prefix = "/memory" if devices else ""
    for router in DEVICE_ROUTERS if devices else ():
        app.include_router(router)
    for router in MEMORY_ROUTERS:
        app.include_router(router, prefix=prefix)
    install_ui(app)
    mcp_running = install_mcp(app, settings)
    return app


def open_app_services(
    app: FastAPI, settings: Settings, backends: Backends | None, devices: bool
) -> Services | MemoryServices:
    """The device server's services (with the memory API's inside) or the memory API's
    alone, put where the routes find them."""
    if devices:
        services = open_services(settings, backends)
        app.state.services = services
        app.state.memory = services.memory_api
        return services
    memory_services = open_memory_services(settings, backends)
    app.state.memory = memory_services
    return memory_services


def body_limits(settings: Settings) -> Callable[[str], int]:
    """The largest body each path accepts: a recording on the audio paths (up to
    `MAX_UTTERANCES` of them for a voice enrolment), else `max_body_bytes`."""

    def limit_for(path: str) -> int:
        if is_enrolment(path):
            return MAX_UTTERANCES * settings.max_audio_bytes + MULTIPART_OVERHEAD
        if path.startswith("/chat/audio"):
            return settings.max_audio_bytes + MULTIPART_OVERHEAD
        return settings.max_body_bytes

    return limit_for


def is_enrolment(path: str) -> bool:
    """Whether `path` takes a person's voice recordings (`api/voices.py`)."""
    return path.startswith("/memory/people/") and path.endswith("/voice")


def takes_json(path: str) -> bool:
    """Whether a body sent to `path` is JSON: everywhere but the audio uploads."""
    return not path.startswith("/chat/audio") and not is_enrolment(path)


def json_only(path: str) -> bool:
    """Whether `path` takes JSON bodies alone: not the audio uploads, not the dashboard's
    forms."""
    return takes_json(path) and path != UI_PREFIX and not path.startswith(UI_PREFIX + "/")


def new_app(title: str, settings: Settings, lifespan: Lifespan) -> FastAPI:
    """A FastAPI app with the JSON errors, body limits, token gate and cross-site guard
    (`lobug.api.cross_site`). The interactive docs and the OpenAPI schema are served only
    where no token is needed: with tokens set, nothing but `/health` answers without one."""
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
    app.add_middleware(
        TokenGate,
        device_tokens=settings.device_tokens,
        admin_tokens=settings.admin_tokens,
        open_role=role_without_tokens(settings),
    )
    # outermost: runs first (Host, Origin and cross-site bodies; `/mcp` included)
    app.add_middleware(CrossSiteGuard, rule=SiteRule.of(settings), json_route=json_only)
    return app
