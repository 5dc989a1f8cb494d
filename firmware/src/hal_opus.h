// Opus through libopus (the arduino-libopus library in the -ws envs; a stand-in on the host,
// test/stubs/opus.h). Only built with LOBUG_WEBSOCKET.
#pragma once

#include <cstddef>
#include <cstdint>

struct OpusEncoder;
struct OpusDecoder;

namespace hal {

class OpusMicEncoder {
 public:
  ~OpusMicEncoder();
  bool begin(uint32_t sample_rate, int complexity);
  // One frame of mono PCM into one packet; returns its size, 0 on failure.
  size_t encode(const int16_t* pcm, size_t samples, uint8_t* out, size_t capacity);

 private:
  OpusEncoder* encoder_ = nullptr;
};

class OpusReplyDecoder {
 public:
  ~OpusReplyDecoder();
  // (Re)creates the decoder when the rate or channel count changes (the server's hello).
  bool begin(uint32_t sample_rate, uint32_t channels);
  // One packet into PCM; returns the samples per channel, 0 for a packet that does not decode.
  size_t decode(const uint8_t* packet, size_t size, int16_t* out, size_t max_samples);
  uint32_t sample_rate() const { return rate_; }
  uint32_t channels() const { return channels_; }

 private:
  OpusDecoder* decoder_ = nullptr;
  uint32_t rate_ = 0;
  uint32_t channels_ = 0;
};

}  // namespace hal
