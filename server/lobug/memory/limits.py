"""How much a person or a program may hand the memory at once. Every surface (the REST API,
the dashboard, the command line) checks these same numbers; none writes its own.

The model's own writing has tighter limits of its own: an extracted fact
(`extraction.MAX_FACT_CHARS`), a base memory the cascade distills
(`quality.MAX_BASE_MEMORY_CHARS`)."""

from __future__ import annotations

MAX_CONTENT_CHARS = 100_000  # a message, a search query, a memory block's value
MAX_FACT_CHARS = 2000  # a fact a person writes or corrects, a fact search's text
MAX_BASE_MEMORY_CHARS = 20_000  # a base memory written by hand
MAX_ID = 2**63 - 1  # the largest id of a row (SQLite's largest integer)
