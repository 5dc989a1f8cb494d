"""What agents (memory namespaces) and devices may be called: one rule each, checked the same
way on every path that names one (memory API bodies and paths, the `/v1` proxy's `X-Agent` and
`user`, `X-Device-Id`, `LOBUG_AGENT` and `LOBUG_DEVICE_AGENTS`). Always with `fullmatch`: a
trailing newline is not part of a name."""

from __future__ import annotations

import re

AGENT_NAME = re.compile(r"[A-Za-z0-9._:@-]{1,64}")
AGENT_NAME_RULE = "An agent name is 1-64 of A-Z a-z 0-9 . _ : @ -"

DEVICE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
DEVICE_ID_RULE = "X-Device-Id must be 1-64 characters of A-Z a-z 0-9 . _ : -"
