"""create_app(settings) -> FastAPI, create_memory_app(settings) for the memory API alone, and
create_local_app(settings) for the command line on the local database: one factory,
`build_app`, with the device routes on or off, and the local app beside it on the same
routes. Nothing is read from the environment here; what only the served apps use (the device
routes, the dashboard) is imported when one is built, so a command starts fast, and MCP at
its first request (`McpOnDemand`), so a server does."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from fastapi import APIRouter, FastAPI
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from lobug import __version__
from lobug.api import (
    context,
    curation,
    dreams,
    facts,
    learning,
    memory,
    people,
    topics,
    transfer,
)
from lobug.api.auth import TokenGate, role_without_tokens
from lobug.api.cross_site import CrossSiteGuard, SiteRule
from lobug.api.errors import install_error_handlers
from lobug.api.json_guard import JsonBodyGuard
from lobug.api.limits import BodySizeLimit
from lobug.backends import Backends
from lobug.config import Settings
from lobug.exposure import check_exposure, check_wyoming_exposure
from lobug.language import language_notices
from lobug.services import (
    MemoryServices,
    Services,
    open_local_services,
    open_memory_services,
    open_services,
)
from lobug.services.maintenance import STOP_WAIT_S, Maintenance
from lobug.web.roles import UI_PREFIX

if TYPE_CHECKING:
    from lobug.engine import MemoryEngine

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]

# The memory API's routes, served under /memory by the device server and at the root by the
# memory server; the device server adds the device, voice and /v1 routes (`device_routers`).
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
# The in-process client's host name, one the cross-site guard serves (`SiteRule.serves`).
LOCAL_URL = "http://localhost"
# The local app takes bodies of any size: its one caller is this process (an import of a
# whole export document is one body).
LOCAL_MAX_BODY_BYTES = 1 << 40


def device_routers() -> tuple[APIRouter, ...]:
    from lobug.api import device, openai_proxy, voice, voices
    from lobug.xiaozhi import routes as xiaozhi

    return (
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
    from lobug.ui import install_ui

    warning = check_exposure(settings)
    if warning:
        log.warning("%s", warning)
    if devices:
        check_wyoming_exposure(settings)
    own_voice = settings.tts_voice is not None
    for notice in language_notices(
        settings.language, own_voice=own_voice, speech=settings.speech_enabled
    ):
        log.warning("%s", notice)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await asyncio.to_thread(open_app_services, app, settings, backends, devices)
        speech = services.speech if isinstance(services, Services) else None
        loading = asyncio.create_task(asyncio.to_thread(speech.load)) if speech else None
        maintenance = Maintenance(services.maintenance_tasks(), settings.maintenance_interval_s)
        app.state.maintenance = maintenance
        maintenance.start()
        try:
            async with mcp_running(), wyoming_running(settings, services):
                yield
        finally:  # a stop waits STOP_WAIT_S at most for each part still at work
            maintenance.ask_to_stop()
            if loading is not None:
                await asyncio.wait({loading}, timeout=STOP_WAIT_S)
            await asyncio.to_thread(services.close, STOP_WAIT_S, maintenance)

    app = new_app("Lo-Bug" if devices else "Lo-Bug memory", settings, lifespan)
    prefix = "/memory" if devices else ""
    for router in device_routers() if devices else ():
        app.include_router(router)
    for router in MEMORY_ROUTERS:
        app.include_router(router, prefix=prefix)
    install_ui(app)
    mcp = McpOnDemand(app, settings)
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp))
    mcp_running = mcp.running
    return app


class McpOnDemand:
    """MCP over streamable HTTP at `/mcp` (`lobug.mcp_server.serve_http`), built at its first
    request: the MCP SDK takes about a second of CPU to import (0.9 s here), which every start
    of a server paid though most homes never call it. The first call waits for it."""

    def __init__(self, app: FastAPI, settings: Settings) -> None:
        self._app = app
        self._settings = settings
        self._start: tuple[asyncio.Event, asyncio.Future[Route]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._start is None:
            raise RuntimeError("MCP is served only while the app runs")
        wanted, route = self._start
        wanted.set()
        served = await asyncio.shield(route)  # a caller gone does not stop it for the next
        await served.handle(scope, receive, send)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The lifespan part, once `app.state.memory` is set: MCP served from the first
        request to the stop, its tools working on the server's default agent. The engine is
        attached here, at the start, not at the first call: attaching it makes the default
        agent exist, which the dashboard and the memory API have always shown on a fresh
        server."""
        from lobug.engine import MemoryEngine

        engine = MemoryEngine.attached(self._app.state.memory, self._settings.agent)
        wanted, route = asyncio.Event(), asyncio.get_running_loop().create_future()
        serving = asyncio.create_task(self._serve_when_wanted(wanted, route, engine))
        self._start = (wanted, route)
        try:
            yield
        finally:
            self._start = None
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving

    async def _serve_when_wanted(
        self, wanted: asyncio.Event, route: asyncio.Future[Route], engine: MemoryEngine
    ) -> None:
        await wanted.wait()
        try:
            served, session = await asyncio.to_thread(mcp_over_http, engine)
        except Exception as error:  # every call answers it (a 500): the install is broken
            route.set_exception(error)
            return
        async with session:
            route.set_result(served)
            await asyncio.Event().wait()  # until the stop cancels it


def mcp_over_http(engine: MemoryEngine) -> tuple[Route, AbstractAsyncContextManager[None]]:
    """`lobug.mcp_server.serve_http` at `MCP_PATH`, imported here (off the event loop)."""
    from lobug.mcp_server import serve_http

    return serve_http(engine, MCP_PATH)


def wyoming_running(
    settings: Settings, services: Services | MemoryServices
) -> AbstractAsyncContextManager[object]:
    """The Wyoming server beside the HTTP one (`lobug.wyoming`), when LOBUG_WYOMING_PORT is set."""
    if settings.wyoming.port is None or not isinstance(services, Services):
        return contextlib.nullcontext()
    from lobug.wyoming.server import serving

    return serving(settings, services)


def create_local_app(settings: Settings, backends: Backends | None = None) -> FastAPI:
    """The memory server's routes on the local database, for the command line to call in its
    own process (`lobug facts`, `lobug dream`, ...: `lobug.cli.rest.local_access`), so a
    command meets the same routes, rules and answers as on a server. Its caller holds the
    database file, so it is admin without a token whatever tokens are configured; changes
    are audited as `cli`. No dashboard, no MCP, no background work (no maintenance, no
    nightly dream): only what a request asks for, the models built on first use
    (`services.open_local_services`); `backends` replaces them (tests pass fakes here)."""
    local = replace(
        settings,
        host="127.0.0.1",
        device_tokens=(),
        bound_device_tokens={},
        admin_tokens=(),
        max_body_bytes=LOCAL_MAX_BODY_BYTES,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await asyncio.to_thread(open_local_services, local, backends)
        app.state.memory = services
        try:
            yield
        finally:
            await asyncio.to_thread(services.close)

    app = new_app("Lo-Bug local memory", local, lifespan)
    for router in MEMORY_ROUTERS:
        app.include_router(router)
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
            from lobug.speakers.profiles import MAX_UTTERANCES

            return MAX_UTTERANCES * settings.max_audio_bytes + upload_overhead()
        if path.startswith("/chat/audio"):
            return settings.max_audio_bytes + upload_overhead()
        return settings.max_body_bytes

    return limit_for


def upload_overhead() -> int:
    """A multipart upload's bytes beside its recording (imported on the first upload: the
    local app has no audio routes)."""
    from lobug.api.voice import MULTIPART_OVERHEAD

    return MULTIPART_OVERHEAD


def is_enrolment(path: str) -> bool:
    """Whether `path` takes a person's voice recordings (`api/voices.py`, `ui/people.py`)."""
    return path.startswith(("/memory/people/", "/ui/people/")) and path.endswith("/voice")


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
        bound_device_tokens=settings.bound_device_tokens,
    )
    # outermost: runs first (Host, Origin and cross-site bodies; `/mcp` included)
    app.add_middleware(CrossSiteGuard, rule=SiteRule.of(settings), json_route=json_only)
    return app
