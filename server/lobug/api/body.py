"""Reading request bodies with a size limit and clear errors."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from lobug.api.errors import ApiError

MAX_JSON_BYTES = 64 * 1024


async def read_limited(request: Request, max_bytes: int) -> bytes:
    """The body, or 413 as soon as it grows past `max_bytes` (never buffers more)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(max_bytes)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(max_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json_object(request: Request, max_bytes: int = MAX_JSON_BYTES) -> dict[str, Any]:
    # Lenient on Content-Type: firmware in the field may label JSON loosely; the body decides.
    raw = await read_limited(request, max_bytes)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "invalid_json", "The body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ApiError(422, "invalid_request", "The body must be a JSON object")
    return data


def _too_large(max_bytes: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"The body is larger than {max_bytes} bytes")
