// The HTTP wire format the device speaks (the device contract: docs/devices.md, "Device
// API"), in one place so scripts/device_sim.py can be checked against it
// byte for byte (firmware/test/golden/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lobug/wav.h"

namespace lobug {

constexpr const char* kPathHealth = "/health";
constexpr const char* kPathChatAudio = "/chat/audio";
constexpr const char* kPathChatAudioStream = "/chat/audio/stream";
constexpr const char* kPathChatTurns = "/chat/turns/";  // + the X-Lobug-Turn id
constexpr const char* kPathSensors = "/context/sensors";

constexpr const char* kHeaderAuthorization = "Authorization";
constexpr const char* kHeaderDeviceId = "X-Device-Id";
constexpr const char* kHeaderAction = "X-Lobug-Action";
constexpr const char* kHeaderTranscription = "X-Lobug-Transcription";
constexpr const char* kHeaderTurn = "X-Lobug-Turn";

constexpr const char* kAudioField = "audio";
constexpr const char* kAudioFilename = "recording.wav";
constexpr const char* kAudioContentType = "audio/wav";
constexpr uint32_t kRecordRate = 16000;

using Header = std::pair<std::string, std::string>;

// Authorization (when a token is set) and X-Device-Id (when an id is set), in that order.
std::vector<Header> device_headers(std::string_view token, std::string_view device_id);

// "lobug-" + 16 hex digits from two random words: fixed length, so the layout below is too.
std::string make_boundary(uint32_t random_high, uint32_t random_low);
std::string multipart_content_type(std::string_view boundary);
// Everything before the WAV bytes, and everything after them.
std::string multipart_head(std::string_view boundary);
std::string multipart_tail(std::string_view boundary);

// The upload is assembled in place: the recorder writes samples at `pcm_offset` of one buffer,
// and the multipart head and WAV header are written in front of them afterwards, so the
// recording is never copied. Total buffer size: pcm_offset + pcm capacity + kTailReserve.
struct UploadLayout {
  static constexpr size_t kHeadReserve = 256;  // > any multipart_head() (about 140 bytes)
  static constexpr size_t kTailReserve = 64;
  static constexpr size_t pcm_offset = kHeadReserve + kWavHeaderSize;  // 300: 4-byte aligned

  static size_t buffer_size(size_t max_samples) {
    return pcm_offset + max_samples * sizeof(int16_t) + kTailReserve;
  }
};

struct UploadBody {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Writes head, WAV header and tail around `samples` 16 kHz mono samples already at
// buffer[pcm_offset]. Returns the body to send (it starts inside `buffer`), or an empty body
// if the boundary is too long for the reserve.
UploadBody finish_upload(uint8_t* buffer, size_t samples, std::string_view boundary);

}  // namespace lobug
