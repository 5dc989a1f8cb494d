// Byte sinks: how streaming decoders hand their output on without knowing where it goes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lobug {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Returns false when the sink refuses the bytes (malformed input further down the chain).
  virtual bool write(const uint8_t* data, size_t size) = 0;
};

// A fixed block of memory (PSRAM on the device) that fills up and then drops the rest,
// remembering that it did: a reply longer than the buffer is played as far as it fits.
class ByteBuffer : public ByteSink {
 public:
  ByteBuffer(uint8_t* data, size_t capacity) : data_(data), capacity_(capacity) {}

  bool write(const uint8_t* data, size_t size) override;
  void clear() {
    size_ = 0;
    overflowed_ = false;
  }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool overflowed() const { return overflowed_; }

 private:
  uint8_t* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool overflowed_ = false;
};

inline uint16_t read_le16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

inline uint32_t read_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

inline void write_le16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xFF);
  p[1] = static_cast<uint8_t>(v >> 8);
}

inline void write_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>((v >> (8 * i)) & 0xFF);
}

}  // namespace lobug
