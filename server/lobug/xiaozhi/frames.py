"""Binary frames of the xiaozhi WebSocket protocol, versions 1-3 (the `Protocol-Version`
header and the hello's `version`), as the firmware's `websocket_protocol.cc` packs them, in
network byte order:

- 1: the frame is one Opus packet;
- 2: `u16 version, u16 type, u32 reserved, u32 timestamp (ms), u32 payload_size`, payload;
- 3: `u8 type, u8 reserved, u16 payload_size`, payload.

Type 0 is Opus audio, 1 JSON (the firmware sends JSON as text frames; a JSON payload in a
binary frame is read as text all the same)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from lobug.xiaozhi.limits import MAX_FRAME_BYTES, CloseCode, ProtocolError

VERSIONS = (1, 2, 3)
OPUS, JSON = 0, 1
V2_HEADER = struct.Struct(">HHIII")
V3_HEADER = struct.Struct(">BBH")


@dataclass(frozen=True)
class Frame:
    kind: int  # OPUS or JSON
    payload: bytes
    timestamp_ms: int = 0


def protocol_version(header: str | None) -> int:
    """The binary protocol version a `Protocol-Version` header names (1 when absent)."""
    if header is None or not header.strip():
        return 1
    try:
        version = int(header.strip())
    except ValueError:
        version = 0
    if version not in VERSIONS:
        raise ProtocolError(CloseCode.PROTOCOL_ERROR, f"unsupported Protocol-Version {header!r}")
    return version


def unpack(version: int, data: bytes) -> Frame:
    """One binary frame as the device sent it; ProtocolError for a malformed one."""
    if len(data) > MAX_FRAME_BYTES:
        raise ProtocolError(CloseCode.TOO_BIG, f"a binary frame of {len(data)} bytes")
    if version == 1:
        return Frame(OPUS, data)
    header = V2_HEADER if version == 2 else V3_HEADER
    if len(data) < header.size:
        raise ProtocolError(CloseCode.PROTOCOL_ERROR, f"a frame shorter than its v{version} header")
    if version == 2:
        _, kind, _, timestamp, size = V2_HEADER.unpack_from(data)
    else:
        kind, _, size = V3_HEADER.unpack_from(data)
        timestamp = 0
    payload = data[header.size :]
    if size != len(payload):
        raise ProtocolError(
            CloseCode.PROTOCOL_ERROR, f"payload_size {size} but {len(payload)} bytes follow"
        )
    if kind not in (OPUS, JSON):
        raise ProtocolError(CloseCode.UNSUPPORTED_DATA, f"unknown frame type {kind}")
    return Frame(kind, payload, timestamp)


def pack(version: int, payload: bytes, kind: int = OPUS, timestamp_ms: int = 0) -> bytes:
    """A frame to send in protocol `version`."""
    if version == 1:
        return payload
    if version == 2:
        return V2_HEADER.pack(2, kind, 0, timestamp_ms & 0xFFFFFFFF, len(payload)) + payload
    return V3_HEADER.pack(kind, 0, len(payload)) + payload
