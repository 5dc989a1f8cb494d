"""Lo-Bug: a local-first voice assistant backend with tiered, persistent memory."""

__version__ = "0.1.0"
