"""The xiaozhi surface's routes: the OTA call and the WebSocket. Thin: the headers are read
and checked here, the protocol is `session`'s, the rules the project's (`web.roles`,
`web.device_ids`)."""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from lobug.backends.vad import SileroVAD
from lobug.services import Services
from lobug.web.device_ids import device_id_problem, token_device_problem
from lobug.web.handshake import refuse_handshake
from lobug.web.roles import Access, bearer_token, caller_role, may
from lobug.xiaozhi.frames import protocol_version
from lobug.xiaozhi.limits import MAX_TEXT_BYTES, ProtocolError
from lobug.xiaozhi.ota import ota_answer, websocket_url
from lobug.xiaozhi.session import Session

log = logging.getLogger(__name__)

router = APIRouter(tags=["xiaozhi"])


def _device(value: str | None) -> str:
    return (value or "").strip().lower()


@router.post("/xiaozhi/ota/", operation_id="xiaozhi_ota")
@router.get("/xiaozhi/ota/", operation_id="xiaozhi_ota_get")
@router.api_route("/xiaozhi/ota", methods=["GET", "POST"], include_in_schema=False)
async def xiaozhi_ota(request: Request) -> JSONResponse:
    """The first call of a xiaozhi device: the WebSocket's address and token, the time."""
    body: Any = None
    raw = await request.body() if request.method == "POST" else b""
    if len(raw) > MAX_TEXT_BYTES:
        return JSONResponse({"error": "too_large", "detail": "the report is too large"}, 413)
    if raw:
        try:
            body = json.loads(raw)
        except ValueError:
            return JSONResponse({"error": "invalid_json", "detail": "the report is not JSON"}, 400)
    settings = request.app.state.settings
    local = request.scope.get("server")
    url = websocket_url(settings, request.url.scheme, request.headers.get("host"), local)
    return JSONResponse(ota_answer(settings, url, bearer_token(request.scope), body))


async def _refuse(websocket: WebSocket, status: int, error: str, reason: str) -> None:
    """Refused at the handshake, with the reason (`web.handshake`)."""
    log.info("xiaozhi connection refused: %s", reason)
    await refuse_handshake(
        websocket.scope, websocket.receive, websocket.send, status, error, reason
    )


@router.websocket("/xiaozhi/v1/")
@router.websocket("/xiaozhi/v1")
async def xiaozhi_websocket(websocket: WebSocket) -> None:
    """A xiaozhi device's voice channel (`lobug.xiaozhi.session`)."""
    if not may(caller_role(websocket.scope), Access.CONVERSE):
        await _refuse(websocket, 403, "forbidden", "this token may not converse")
        return
    device = _device(websocket.headers.get("device-id"))
    problem = device_id_problem(device, "Device-Id") if device else "Device-Id is required"
    mismatch = None if problem else token_device_problem(websocket.scope, device, "Device-Id")
    if mismatch is not None:
        await _refuse(websocket, 403, "device_mismatch", mismatch)
        return
    try:
        version = protocol_version(websocket.headers.get("protocol-version"))
    except ProtocolError as exc:
        problem = problem or exc.reason
    if problem is not None:
        await _refuse(websocket, 400, "invalid_request", problem)
        return
    services: Services = websocket.app.state.services
    await websocket.accept()
    session = Session(services, StarletteLink(websocket), device, version, SileroVAD)
    code, reason = await session.run()
    with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # the device closed first
        await websocket.close(code=code, reason=reason)


class StarletteLink:
    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket

    async def receive(self) -> str | bytes | None:
        try:
            message = await self.websocket.receive()
        except (WebSocketDisconnect, RuntimeError):
            return None
        if message["type"] == "websocket.disconnect":
            return None
        if message.get("bytes") is not None:
            data: bytes = message["bytes"]
            return data
        text: str = message.get("text") or ""
        return text

    async def send_text(self, text: str) -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):  # the device left
            await self.websocket.send_text(text)

    async def send_bytes(self, data: bytes) -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):  # the device left
            await self.websocket.send_bytes(data)
