"""What a xiaozhi connection may send, how fast and for how long, and the close codes that
say why a connection was closed. Every check of the surface asks these numbers."""

from __future__ import annotations

from enum import IntEnum

MAX_TEXT_BYTES = 16 * 1024  # one JSON message (an MCP tools/list answer is the largest)
MAX_FRAME_BYTES = 4000  # one binary frame: 60 ms of Opus is 100-300 bytes, never near this
# Frames a second, averaged over a window: a device sends 16.7 (60 ms frames); a burst after
# a stall is allowed, a flood is not.
MAX_FRAMES_PER_S = 100
RATE_WINDOW_S = 2.0
MAX_UTTERANCE_S = 30.0  # one turn's recording; past it the turn ends as if the person stopped
HELLO_TIMEOUT_S = 10.0  # from the connection to the device's hello
IDLE_TIMEOUT_S = 120.0  # nothing received for this long: the connection is closed
MAX_MCP_TOOLS = 64  # a device's tools kept per session
TOOL_CALL_S = 5.0  # how long a device has to answer a tools/call (a setting changed)
SAMPLE_RATE_IN = 16_000  # what the device records and sends (its hello says so)
FRAME_MS = 60  # the frame duration in both directions


class CloseCode(IntEnum):
    """WebSocket close codes (RFC 6455) this surface closes with."""

    NORMAL = 1000
    PROTOCOL_ERROR = 1002
    UNSUPPORTED_DATA = 1003
    POLICY_VIOLATION = 1008  # no valid token, too fast, idle
    TOO_BIG = 1009
    TRY_AGAIN_LATER = 1013  # the speech models are still loading


class ProtocolError(Exception):
    """The device broke the protocol: the connection closes with `code` and `reason`."""

    def __init__(self, code: CloseCode, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason[:120]  # a close reason is at most 123 bytes
