// Copy to include/secrets.h (gitignored) and fill in. Every value can also be set, and
// changed later, over the serial console without rebuilding: type `help` there.
// Never commit secrets.h.
#pragma once

#define LOBUG_WIFI_SSID "your-wifi-name"
#define LOBUG_WIFI_PASSWORD "your-wifi-password"

// The machine running `lobug serve` (LOBUG_HOST=0.0.0.0 on it), as a host name or IP address.
#define LOBUG_SERVER_HOST "192.168.1.50"
#define LOBUG_SERVER_PORT 8321

// Names this device to the server (X-Device-Id): its own working memory and sensor state.
// 1-64 of A-Z a-z 0-9 . _ : -
#define LOBUG_DEVICE_ID "core2-desk"

// One of the server's LOBUG_DEVICE_TOKENS, sent as "Authorization: Bearer <token>".
// Leave empty only for a server on a trusted network started with LOBUG_ALLOW_UNAUTHENTICATED=1.
#define LOBUG_DEVICE_TOKEN ""

// A -ws build only: the xiaozhi WebSocket mode, from this OTA address (Lo-Bug's is
// /xiaozhi/ota/). Leave it out for the HTTP device contract. See README "WebSocket mode".
// #define LOBUG_OTA_URL "http://192.168.1.50:8321/xiaozhi/ota/"
