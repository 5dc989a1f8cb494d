"""The xiaozhi surface: the OTA answer and the WebSocket protocol the xiaozhi ESP32 firmware
(78/xiaozhi-esp32) speaks, over the same voice turn as the HTTP device routes.

`frames` (binary protocol versions 1-3) and `messages` (the JSON messages) are pure; `opus`
codes the audio; `session` runs one connection; `routes` is the thin FastAPI part."""
