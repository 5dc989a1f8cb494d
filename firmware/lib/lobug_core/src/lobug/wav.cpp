#include "lobug/wav.h"

#include <cstring>

#include "lobug/bytes.h"

namespace lobug {
namespace {

constexpr uint16_t kFormatPcm = 0x0001;
constexpr uint16_t kFormatExtensible = 0xFFFE;
constexpr uint32_t kMinRate = 8000;
constexpr uint32_t kMaxRate = 48000;

bool tag_is(const uint8_t* p, const char* tag) { return std::memcmp(p, tag, 4) == 0; }

// Returns None when the fmt chunk describes audio the speaker can play.
WavError read_format(const uint8_t* body, uint32_t size, WavFormat* format) {
  if (size < 16) return WavError::NoFormat;
  uint16_t tag = read_le16(body);
  if (tag == kFormatExtensible) {
    if (size < 26) return WavError::NoFormat;
    tag = read_le16(body + 24);  // the sub-format GUID starts with the real format tag
  }
  format->channels = read_le16(body + 2);
  format->sample_rate = read_le32(body + 4);
  format->bits_per_sample = read_le16(body + 14);
  bool playable = tag == kFormatPcm && format->bits_per_sample == 16 &&
                  (format->channels == 1 || format->channels == 2) &&
                  format->sample_rate >= kMinRate && format->sample_rate <= kMaxRate;
  return playable ? WavError::None : WavError::Unsupported;
}

}  // namespace

void wav_write_header(uint8_t* out, const WavFormat& format, uint32_t data_bytes) {
  uint32_t block_align = format.frame_bytes();
  uint32_t riff_size = data_bytes > 0xFFFFFFFFu - 36u ? 0xFFFFFFFFu : data_bytes + 36u;
  std::memcpy(out, "RIFF", 4);
  write_le32(out + 4, riff_size);
  std::memcpy(out + 8, "WAVEfmt ", 8);
  write_le32(out + 16, 16);  // size of the plain PCM fmt chunk
  write_le16(out + 20, kFormatPcm);
  write_le16(out + 22, format.channels);
  write_le32(out + 24, format.sample_rate);
  write_le32(out + 28, format.sample_rate * block_align);
  write_le16(out + 32, static_cast<uint16_t>(block_align));
  write_le16(out + 34, format.bits_per_sample);
  std::memcpy(out + 36, "data", 4);
  write_le32(out + 40, data_bytes);
}

WavHeader wav_parse_header(const uint8_t* data, size_t size) {
  WavHeader result;
  if (size < 12) {
    bool prefix_ok = std::memcmp(data, "RIFF", size < 4 ? size : 4) == 0;
    result.error = prefix_ok ? WavError::NeedMoreData : WavError::NotWav;
    return result;
  }
  if (!tag_is(data, "RIFF") || !tag_is(data + 8, "WAVE")) {
    result.error = WavError::NotWav;
    return result;
  }
  bool have_format = false;
  size_t position = 12;
  while (true) {
    if (position + 8 > size) {
      result.error = position + 8 > kWavMaxHeaderBytes ? WavError::HeaderTooLarge
                                                       : WavError::NeedMoreData;
      return result;
    }
    const uint8_t* chunk = data + position;
    uint32_t chunk_size = read_le32(chunk + 4);
    if (tag_is(chunk, "data")) {
      result.error = have_format ? WavError::None : WavError::NoFormat;
      result.info.data_offset = position + 8;
      result.info.declared_bytes = chunk_size;
      return result;
    }
    // Every chunk before the data chunk must fit in the header budget.
    size_t padded = static_cast<size_t>(chunk_size) + (chunk_size & 1u);
    if (padded > kWavMaxHeaderBytes) {
      result.error = WavError::HeaderTooLarge;
      return result;
    }
    size_t next = position + 8 + padded;
    if (next > size) {
      result.error = next > kWavMaxHeaderBytes ? WavError::HeaderTooLarge : WavError::NeedMoreData;
      return result;
    }
    if (tag_is(chunk, "fmt ")) {
      WavError format_error = read_format(chunk + 8, chunk_size, &result.info.format);
      if (format_error != WavError::None) {
        result.error = format_error;
        return result;
      }
      have_format = true;
    }
    position = next;
  }
}

size_t wav_playable_bytes(const WavInfo& info, size_t total_size) {
  if (total_size <= info.data_offset) return 0;
  size_t available = total_size - info.data_offset;
  size_t declared = info.declared_bytes;
  size_t usable = declared < available ? declared : available;
  uint32_t frame = info.format.frame_bytes();
  return frame == 0 ? 0 : usable - usable % frame;
}

const char* wav_error_name(WavError error) {
  switch (error) {
    case WavError::None: return "ok";
    case WavError::NeedMoreData: return "truncated";
    case WavError::NotWav: return "not a WAV";
    case WavError::NoFormat: return "no fmt chunk";
    case WavError::Unsupported: return "unsupported format";
    case WavError::HeaderTooLarge: return "header too large";
  }
  return "?";
}

}  // namespace lobug
