"""Lo-Bug: a local-first voice assistant backend with tiered, persistent memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lobug.client import learning

__version__ = "0.1.0"
__all__ = ["__version__", "learning"]


def __getattr__(name: str) -> Any:
    # `from lobug import learning` without importing httpx for every `import lobug`.
    if name == "learning":
        from lobug.client import learning

        return learning
    raise AttributeError(f"module 'lobug' has no attribute {name!r}")
