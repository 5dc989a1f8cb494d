"""Multipart bodies (the voice uploads): parsed within limits, a malformed one answered
400 `invalid_multipart`."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from starlette.datastructures import FormData, Headers
from starlette.formparsers import MultiPartException, MultiPartParser

from lobug.api.errors import ApiError

MAX_TEXT_PART_BYTES = 64 * 1024  # a field's text; files are spooled, their size checked apart


async def multipart_form(
    headers: Headers, stream: AsyncGenerator[bytes, None], *, max_files: int, max_fields: int
) -> FormData:
    """The form of a multipart body; close it when done (`form.close()`)."""
    try:
        return await MultiPartParser(
            headers,
            stream,
            max_files=max_files,
            max_fields=max_fields,
            max_part_size=MAX_TEXT_PART_BYTES,
        ).parse()
    except MultiPartException as exc:
        raise ApiError(
            400, "invalid_multipart", f"The multipart body is malformed: {exc}"
        ) from None
