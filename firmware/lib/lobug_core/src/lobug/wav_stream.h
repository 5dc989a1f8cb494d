// Playing a WAV while it downloads: the header is collected first, then samples are packed
// into fixed-size blocks for the speaker. Network reads split samples at any byte, so odd
// bytes are carried over between writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lobug/bytes.h"
#include "lobug/wav.h"

namespace lobug {

// Where full blocks go. On the device, acquire() waits until the speaker has finished with a
// buffer; a block handed to submit() must stay untouched until the speaker is done with it.
class PcmBlockSink {
 public:
  virtual ~PcmBlockSink() = default;
  virtual int16_t* acquire() = 0;  // nullptr: no buffer came free (playback stuck): give up
  virtual void submit(int16_t* block, size_t samples, const WavFormat& format) = 0;
};

class WavStream : public ByteSink {
 public:
  WavStream(PcmBlockSink& sink, size_t block_samples);

  bool write(const uint8_t* data, size_t size) override;
  // Sends a partly filled block now: on the device when the network has gone quiet between
  // sentences, so the end of a sentence is not held back until the next one arrives.
  void flush();
  // The body ended: plays what is left. The declared data size is ignored on purpose: the
  // server streams with an "unknown" size (0xFFFFFFFF - 36), so the body's end is the end.
  void finish() { flush(); }

  bool header_ready() const { return header_.error == WavError::None; }
  WavError error() const { return header_.error; }
  const WavFormat& format() const { return header_.info.format; }
  size_t samples_submitted() const { return samples_submitted_; }

 private:
  size_t take_header(const uint8_t* data, size_t size);
  bool take_samples(const uint8_t* data, size_t size);
  bool put_sample(int16_t sample);

  PcmBlockSink& sink_;
  size_t block_samples_;
  std::vector<uint8_t> header_bytes_;
  WavHeader header_;
  int16_t* block_ = nullptr;
  size_t filled_ = 0;
  size_t samples_submitted_ = 0;
  uint8_t carry_ = 0;
  bool has_carry_ = false;
  bool gave_up_ = false;
};

}  // namespace lobug
