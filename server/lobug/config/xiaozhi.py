"""The settings of the xiaozhi surface (`lobug.xiaozhi`), read by `Settings.from_env` into
`Settings.xiaozhi`:

- `LOBUG_XIAOZHI_URL`: the WebSocket address the OTA answer hands out (`ws://` or `wss://`;
  empty: built from the host and scheme the device reached the server by);
- `LOBUG_XIAOZHI_OUTPUT_RATE`: the rate of the Opus audio sent to devices, 24000 or 16000."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

OUTPUT_RATES = (24_000, 16_000)


@dataclass(frozen=True)
class XiaozhiConfig:
    url: str = ""
    output_rate: int = 24_000

    def __post_init__(self) -> None:
        if self.output_rate not in OUTPUT_RATES:
            raise ValueError("LOBUG_XIAOZHI_OUTPUT_RATE must be 24000 or 16000")
        if self.url and not self.url.startswith(("ws://", "wss://")):
            raise ValueError("LOBUG_XIAOZHI_URL must start with ws:// or wss://")


XIAOZHI_ENV: dict[str, tuple[str, Callable[[str], Any]]] = {
    "url": ("LOBUG_XIAOZHI_URL", str.strip),
    "output_rate": ("LOBUG_XIAOZHI_OUTPUT_RATE", int),
}
