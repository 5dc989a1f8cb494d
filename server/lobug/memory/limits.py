"""How much a person or a program may hand the memory at once, and in what shape. Every
surface (the REST API and its JSON guard, the dashboard, the command line, `MemoryEngine`,
imports) checks these same numbers and rules; none writes its own.

- Text: no lone surrogate (`"\\ud800"` is not Unicode text: it could be stored but never
  written out again), within the character limits below.
- JSON (a request body, metadata, an audit row's detail): nested at most `MAX_JSON_DEPTH`
  levels; metadata also has only finite numbers and at most `MAX_METADATA_BYTES` as compact
  UTF-8 JSON.
- Times (Unix seconds): from 1970-01-01 to 2200-01-01 UTC (`clock.EARLIEST`..`clock.LATEST`).

The model's own writing has tighter limits of its own: an extracted fact
(`extraction.MAX_FACT_CHARS`), a base memory the cascade distills
(`quality.MAX_BASE_MEMORY_CHARS`)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from lobug.clock import EARLIEST, LATEST

MAX_CONTENT_CHARS = 100_000  # a message, a search query, a memory block's value
MAX_FACT_CHARS = 2000  # a fact a person writes or corrects, a fact search's text
MAX_BASE_MEMORY_CHARS = 20_000  # a base memory written by hand
MAX_DESCRIPTION_CHARS = 2000  # a memory block's description
MAX_NAME_CHARS = 100  # a block's label, who changed a block (`changed_by`)
MAX_ID = 2**63 - 1  # the largest id of a row (SQLite's largest integer)
MAX_JSON_DEPTH = 32  # levels of nesting of any JSON document or value
MAX_METADATA_BYTES = 16_384  # an agent's or a message's metadata, as compact UTF-8 JSON
MAX_DETAIL_BYTES = MAX_CONTENT_CHARS  # an imported audit row's detail, the same way

MESSAGE_ROLES = ("user", "assistant", "system")  # a message a program hands in
BLOCK_LABEL = re.compile(r"[A-Za-z0-9._-]+")
BLOCK_LABEL_PATTERN = f"^{BLOCK_LABEL.pattern}$"  # the same, for pydantic and JSON Schema
BLOCK_LABEL_RULE = f"a block label is 1-{MAX_NAME_CHARS} of A-Z a-z 0-9 . _ -"
TIME_RULE = "a time from 1970-01-01 to 2200-01-01 (Unix seconds 0 to 7258118400)"


def is_block_label(value: object) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= MAX_NAME_CHARS
        and BLOCK_LABEL.fullmatch(value) is not None
    )


def time_problem(value: object) -> str | None:
    """Why `value` is no time Lo-Bug keeps, or None."""
    problem = f"must be {TIME_RULE}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return problem
    return None if EARLIEST <= value <= LATEST else problem  # NaN is not


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored, or None: a lone surrogate has no UTF-8 form."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate (not valid Unicode text)"
    return None


def json_problem(document: Any, *, finite: bool = False) -> str | None:
    """Why a decoded JSON document is refused, or None: deeper than `MAX_JSON_DEPTH`, a lone
    surrogate in a string or a key, and with `finite` NaN or Infinity (which JSON cannot
    hold). Without recursion, so any depth is safe to check."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            problem = text_problem(value)
            if problem is not None:
                return f"a string {problem}"
        elif isinstance(value, float):
            if finite and not math.isfinite(value):
                return "holds NaN or Infinity"
        elif isinstance(value, dict | list):
            if depth > MAX_JSON_DEPTH:
                return f"is nested deeper than {MAX_JSON_DEPTH} levels"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                stack.append((key, depth))
                stack.append((item, depth + 1))
    return None


def object_problem(value: Any, max_bytes: int) -> str | None:
    """Why `value` is refused as a stored JSON object (metadata, a detail), or None: not an
    object, `json_problem` with finite numbers, or over `max_bytes` as compact UTF-8 JSON."""
    if not isinstance(value, dict):
        return "must be an object"
    problem = json_problem(value, finite=True)
    if problem is not None:
        return problem
    try:
        size = len(json_text(value).encode("utf-8"))
    except (TypeError, ValueError):
        return "must hold JSON values only (objects, lists, strings, numbers, booleans, null)"
    if size > max_bytes:
        return f"is {size} bytes as JSON; at most {max_bytes} are kept"
    return None


def metadata_problem(metadata: Any) -> str | None:
    """Why an agent's or a message's metadata is refused, or None (None itself is fine)."""
    return None if metadata is None else object_problem(metadata, MAX_METADATA_BYTES)


def message_problem(role: object, content: object, metadata: object) -> str | None:
    """Why a message a program hands in (`POST /messages`, `MemoryEngine.add_messages`) is
    refused, or None."""
    if role not in MESSAGE_ROLES:
        return f"role must be one of {', '.join(MESSAGE_ROLES)}, not {role!r}"
    if not isinstance(content, str) or not 1 <= len(content) <= MAX_CONTENT_CHARS:
        return f"content must be a string of 1 to {MAX_CONTENT_CHARS} characters"
    problem = text_problem(content)
    if problem is not None:
        return f"content {problem}"
    problem = metadata_problem(metadata)
    return None if problem is None else f"metadata {problem}"


def json_text(value: Any) -> str:
    """`value` as the compact JSON the sizes above count."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
