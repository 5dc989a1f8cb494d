"""Lo-Bug: a local-first voice assistant backend with tiered, persistent memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lobug.client import learning
    from lobug.engine import AsyncMemoryEngine, MemoryEngine

__version__ = "0.2.0"
__all__ = ["AsyncMemoryEngine", "MemoryEngine", "__version__", "learning"]


def __getattr__(name: str) -> Any:
    # `from lobug import learning` without importing httpx for every `import lobug`, and
    # `MemoryEngine` without the server's modules.
    if name == "learning":
        from lobug.client import learning

        return learning
    if name in ("MemoryEngine", "AsyncMemoryEngine"):
        from lobug import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'lobug' has no attribute {name!r}")
