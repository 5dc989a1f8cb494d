"""What a Wyoming connection may send, how much and for how long. Every check of the surface
asks these numbers; a recording's own limits are the uploads' (LOBUG_MAX_AUDIO_SECONDS,
LOBUG_MAX_AUDIO_BYTES) and a text's LOBUG_MAX_TEXT_CHARS."""

from __future__ import annotations

MAX_LINE_BYTES = 16 * 1024  # one event's JSON header line
MAX_DATA_BYTES = 64 * 1024  # its JSON data (a text to speak is at most a few KiB of it)
MAX_PAYLOAD_BYTES = 256 * 1024  # one audio chunk (a second of 48 kHz stereo is 192 KiB)
IDLE_TIMEOUT_S = 60.0  # nothing received for this long: the connection is closed
STREAM_TIMEOUT_S = 120.0  # an audio or text stream begun must have stopped by then
MAX_CONNECTIONS = 32  # connections served at once; one more is closed as it arrives
DEFAULT_DEVICE = "home-assistant"  # the device of a request whose context names none


class Refused(Exception):
    """The client broke the protocol or a limit: its connection is closed, `reason` logged
    and sent to it first as an `error` event."""

    def __init__(self, reason: str, code: str = "bad_request") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
