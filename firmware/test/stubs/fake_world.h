// The world the host build of the device code runs in: what the stubs of Arduino, M5Unified,
// WiFi, HTTPClient and Preferences read and record. Tests set it up and look at it afterwards.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fake {

struct Request {
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // chunked transfer undone
  // A request the device wrote itself with chunked transfer: the body as sent, framing
  // included, and when each write of it arrived.
  std::string wire_body;
  std::vector<uint32_t> body_write_ms;

  std::string header(const std::string& name) const;
};

struct Response {
  int status = 200;
  std::map<std::string, std::string> headers;
  std::string body;  // as sent on the wire (chunked framing included when so declared)
};

// One WebSocket message either way.
struct WsMessage {
  bool binary = false;
  std::string data;
};

// The WebSocket server the device's WebSocketsClient talks to. Tests script it: `on_message`
// sees each message the device sends and may queue answers in `to_device`, which the device
// receives from its next WebSocketsClient::loop().
struct WsServer {
  bool accepts = true;
  std::string host;
  uint16_t port = 0;
  std::string path;
  std::string extra_headers;  // as the device set them, "Name: value\r\n..."
  int connects = 0;
  bool connected = false;
  bool drop = false;  // close the connection at the device's next loop()
  std::vector<WsMessage> received;
  std::vector<uint32_t> received_ms;
  std::deque<WsMessage> to_device;
  std::function<void(const WsMessage&)> on_message;
};

struct World {
  uint32_t now_ms = 0;
  bool wifi_up = false;
  // The server: a canned response per path; requests to other paths get a 404.
  std::map<std::string, Response> routes;
  std::vector<Request> requests;
  // Requests the device wrote itself and closed before their body ended.
  std::vector<Request> abandoned;
  // The microphone: the level of the sound at a time since recording began (a sine of that
  // amplitude), so a script says when the person speaks.
  std::function<int16_t(uint32_t ms)> voice = [](uint32_t) { return int16_t(0); };
  uint32_t mic_samples = 0;  // handed out since the mic began
  // The speaker and the screen.
  std::vector<int16_t> played;
  uint32_t played_rate = 0;
  std::vector<std::string> drawn;
  std::string serial_out;
  std::string serial_in;
  std::map<std::string, std::string> preferences;
  WsServer ws;
  // Speaker.stop() calls (a barge-in drops what is queued).
  int speaker_stops = 0;
  // Off: the speaker plays at once. On: each playRaw takes its real time on the fake clock,
  // isPlaying() counts the blocks still playing or queued (at most 2, as in M5Unified), and a
  // playRaw with both taken waits for the first to end.
  bool speaker_real_time = false;
  std::vector<uint32_t> speaker_queue_end_ms;
  std::vector<size_t> played_blocks;  // the size of each playRaw, in samples
};

World& world();
void reset();
// A press of button A, seen by the next M5.BtnA.wasPressed().
void press();

}  // namespace fake
