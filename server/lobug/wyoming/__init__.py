"""The Wyoming surface: Lo-Bug as a Wyoming server for Home Assistant (`docs/home-assistant.md`).

Thin like the other surfaces: `framing` reads events within the limits, `connection` sends
each to its program (`programs`: info; `handle`: a Lo-Bug turn; `asr`; `tts`), and the turn,
hearing and speaking are the voice path's own (`lobug.voice.pipeline`); `server` listens, checks who
connects, and advertises itself by zeroconf."""
