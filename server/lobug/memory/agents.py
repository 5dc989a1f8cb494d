"""The one way every surface finds the agent a request names: `require_agent`, which
refuses a name never created (the REST API answers 404 `agent_not_found`, the dashboard
leaves the reason as its note)."""

from __future__ import annotations

from lobug.store.errors import StoreError
from lobug.store.models import Agent
from lobug.store.protocol import ConversationLog


class AgentNotFound(StoreError):
    """No agent has this name."""


def require_agent(store: ConversationLog, name: str) -> Agent:
    """Blocking: call in a worker thread."""
    agent = store.find_agent(name)
    if agent is None:
        raise AgentNotFound(f"No agent named {name!r}; POST /agents first")
    return agent
