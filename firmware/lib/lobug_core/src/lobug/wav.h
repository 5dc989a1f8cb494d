// WAV headers: the canonical 44-byte header the device uploads, and a parser for what the
// server sends back that walks RIFF chunks instead of assuming 44 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lobug {

constexpr size_t kWavHeaderSize = 44;
// A parser gives up looking for the data chunk after this many bytes: a header this large is
// not something a speech server sends, and the streamed reader must buffer the whole header.
constexpr size_t kWavMaxHeaderBytes = 1024;
// The data size of a WAV whose length is not known when its header is sent (the recording sent
// while it is made): the server's own "unknown length" (its RIFF size is then 0xFFFFFFFF). Its
// parser keeps whatever data arrives before the body ends.
constexpr uint32_t kWavUnknownDataBytes = 0xFFFFFFFFu - 36u;

struct WavFormat {
  uint32_t sample_rate = 0;
  uint16_t channels = 0;
  uint16_t bits_per_sample = 0;

  uint32_t frame_bytes() const { return static_cast<uint32_t>(channels) * (bits_per_sample / 8u); }
};

// Writes a PCM header for `data_bytes` of samples into out[0..44).
void wav_write_header(uint8_t* out, const WavFormat& format, uint32_t data_bytes);

enum class WavError {
  None,
  NeedMoreData,  // the data chunk has not been reached yet
  NotWav,        // no RIFF/WAVE signature
  NoFormat,      // data chunk before any fmt chunk, or a fmt chunk too short
  Unsupported,   // not 16-bit PCM, 1-2 channels, 8-48 kHz: nothing M5.Speaker.playRaw can play
  HeaderTooLarge,
};

struct WavInfo {
  WavFormat format;
  size_t data_offset = 0;     // first sample byte
  uint32_t declared_bytes = 0;  // the data chunk's size field, as written (may be "unknown")
};

struct WavHeader {
  WavError error = WavError::NeedMoreData;
  WavInfo info;
};

// Parses the header at the start of `data`. Accepts what the server's own parser accepts:
// 16-bit PCM (plain or WAVE_FORMAT_EXTENSIBLE), mono or stereo, 8-48 kHz.
WavHeader wav_parse_header(const uint8_t* data, size_t size);

// Bytes of whole sample frames that can be played from a complete WAV of `total_size` bytes:
// the declared size, cut to what is actually there (servers that stream leave it "unknown").
size_t wav_playable_bytes(const WavInfo& info, size_t total_size);

const char* wav_error_name(WavError error);

}  // namespace lobug
