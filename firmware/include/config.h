// Build-time defaults. Credentials come from secrets.h when it exists (or are provisioned over
// serial into NVS); everything else can be overridden with -D flags in platformio.ini.
#pragma once

#if __has_include("secrets.h")
#include "secrets.h"
#endif

#ifndef LOBUG_WIFI_SSID
#define LOBUG_WIFI_SSID ""
#endif
#ifndef LOBUG_WIFI_PASSWORD
#define LOBUG_WIFI_PASSWORD ""
#endif
#ifndef LOBUG_SERVER_HOST
#define LOBUG_SERVER_HOST ""
#endif
#ifndef LOBUG_SERVER_PORT
#define LOBUG_SERVER_PORT 8321
#endif
#ifndef LOBUG_DEVICE_ID
#define LOBUG_DEVICE_ID ""
#endif
#ifndef LOBUG_DEVICE_TOKEN
#define LOBUG_DEVICE_TOKEN ""
#endif

// The xiaozhi WebSocket mode (Opus both ways, the server's endpointing, barge-in). 1: compiled
// in (the -ws envs, which add the WebSocket and Opus libraries); the mode is on when ota_url is
// set (here or over serial). 0, or ota_url empty: the HTTP device contract, as before.
#ifndef LOBUG_WEBSOCKET
#define LOBUG_WEBSOCKET 0
#endif
#ifndef LOBUG_OTA_URL
#define LOBUG_OTA_URL ""
#endif
// 0: auto (the server's endpointing ends a turn), 1: manual (the person ends it with a touch),
// 2: realtime (the mic stays open while the reply plays; needs a board that can do both).
#ifndef LOBUG_WS_LISTEN_MODE
#define LOBUG_WS_LISTEN_MODE 0
#endif
// 1: after a reply, listen again at once (a conversation); 0: back to the voice trigger.
#ifndef LOBUG_WS_CONTINUE
#define LOBUG_WS_CONTINUE 0
#endif
// Opus frame of the mic stream (the xiaozhi firmware's OPUS_FRAME_DURATION_MS).
#ifndef LOBUG_OPUS_FRAME_MS
#define LOBUG_OPUS_FRAME_MS 60
#endif
// 0-10; the ESP32-S3 encodes 60 ms of 16 kHz speech in real time at low complexity.
#ifndef LOBUG_OPUS_COMPLEXITY
#define LOBUG_OPUS_COMPLEXITY 3
#endif

// 1: play /chat/audio/stream as it arrives; 0: /chat/audio, whole reply.
#ifndef LOBUG_STREAM_REPLY
#define LOBUG_STREAM_REPLY 0
#endif
// 1: with LOBUG_STREAM_REPLY, send the recording to /chat/audio/stream while it is made, so the
// server transcribes as the person speaks; 0: send it once it has ended.
#ifndef LOBUG_STREAM_UPLOAD
#define LOBUG_STREAM_UPLOAD 1
#endif
// 1: listen all the time and start recording on speech; push-to-talk works either way.
#ifndef LOBUG_VOICE_TRIGGER
#define LOBUG_VOICE_TRIGGER 1
#endif

// Recording (see lobug/vad.h and lobug/recorder.h for what each one does).
#ifndef LOBUG_FRAME_MS
#define LOBUG_FRAME_MS 40
#endif
#ifndef LOBUG_SILENCE_MS
#define LOBUG_SILENCE_MS 800
#endif
#ifndef LOBUG_MAX_RECORD_MS
#define LOBUG_MAX_RECORD_MS 5000
#endif
#ifndef LOBUG_PREROLL_MS
#define LOBUG_PREROLL_MS 320
#endif
#ifndef LOBUG_NO_SPEECH_MS
#define LOBUG_NO_SPEECH_MS 3000
#endif
#ifndef LOBUG_VAD_MIN_LEVEL
#define LOBUG_VAD_MIN_LEVEL 400
#endif

// Network. The contract: the device gives up on a request after 30 s.
#ifndef LOBUG_HTTP_TIMEOUT_MS
#define LOBUG_HTTP_TIMEOUT_MS 30000
#endif
#ifndef LOBUG_CONNECT_TIMEOUT_MS
#define LOBUG_CONNECT_TIMEOUT_MS 5000
#endif
#ifndef LOBUG_HEALTH_TIMEOUT_MS
#define LOBUG_HEALTH_TIMEOUT_MS 5000
#endif
#ifndef LOBUG_SENSORS_EVERY_MS
#define LOBUG_SENSORS_EVERY_MS 5000
#endif

// Reply audio is decoded into PSRAM: 1.5 MB holds about 35 s at 22.05 kHz.
#ifndef LOBUG_REPLY_BUFFER_BYTES
#define LOBUG_REPLY_BUFFER_BYTES (1536 * 1024)
#endif
#ifndef LOBUG_SPEAKER_VOLUME
#define LOBUG_SPEAKER_VOLUME 160
#endif

// Maps the IMU onto lobug/imu.h's axes (+X right, +Y top, +Z out of the screen). Flip a sign
// if `show` over serial reports the wrong orientation on your board.
#ifndef LOBUG_IMU_SIGN_X
#define LOBUG_IMU_SIGN_X 1
#endif
#ifndef LOBUG_IMU_SIGN_Y
#define LOBUG_IMU_SIGN_Y 1
#endif
#ifndef LOBUG_IMU_SIGN_Z
#define LOBUG_IMU_SIGN_Z 1
#endif
