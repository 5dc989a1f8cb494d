"""A WebSocket refused at its handshake, with its reason (issue 42): where the server offers
the WebSocket Denial Response extension (uvicorn does), an HTTP answer with the project's JSON
error (`{"error": ..., "detail": ...}`) and its status; elsewhere a close with the code and the
reason. Never a bare 403."""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

POLICY_VIOLATION = 1008  # the WebSocket close code of a refused connection
MAX_REASON_BYTES = 123  # a close frame's reason


async def refuse_handshake(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    error: str,
    detail: str,
    headers: dict[str, str] | None = None,
) -> None:
    """Refuse the WebSocket of `scope` before accepting it: `status` with the JSON error, or
    (no denial responses) a close whose reason is `detail`."""
    if "websocket.http.response" in scope.get("extensions", {}):
        answer = JSONResponse({"error": error, "detail": detail}, status, headers)
        await answer(scope, receive, send)
        return
    reason = detail.encode()[:MAX_REASON_BYTES].decode(errors="ignore")
    await send({"type": "websocket.close", "code": POLICY_VIOLATION, "reason": reason})
