"""The client side of Lo-Bug: `learning()` and the HTTP memory client it uses.

Imports nothing of the server (no web framework, no model runtime): a program that uses
`learning()` talks to a memory server over HTTP only.
"""

from lobug.client.http import MemoryServerUnavailable
from lobug.client.interceptor import learning

__all__ = ["MemoryServerUnavailable", "learning"]
