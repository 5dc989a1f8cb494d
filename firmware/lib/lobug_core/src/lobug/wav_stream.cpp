#include "lobug/wav_stream.h"

namespace lobug {

WavStream::WavStream(PcmBlockSink& sink, size_t block_samples)
    : sink_(sink), block_samples_(block_samples) {
  header_bytes_.reserve(kWavHeaderSize);
}

bool WavStream::write(const uint8_t* data, size_t size) {
  if (gave_up_) return false;
  if (!header_ready()) {
    size_t used = take_header(data, size);
    if (header_.error != WavError::None && header_.error != WavError::NeedMoreData) return false;
    if (gave_up_) return false;
    data += used;
    size -= used;
  }
  return size == 0 || take_samples(data, size);
}

// Collects bytes until the data chunk starts; returns how many of `data` were header.
size_t WavStream::take_header(const uint8_t* data, size_t size) {
  size_t before = header_bytes_.size();
  size_t room = kWavMaxHeaderBytes - before;
  size_t taken = size < room ? size : room;
  header_bytes_.insert(header_bytes_.end(), data, data + taken);
  header_ = wav_parse_header(header_bytes_.data(), header_bytes_.size());
  if (header_.error == WavError::NeedMoreData && header_bytes_.size() >= kWavMaxHeaderBytes) {
    header_.error = WavError::HeaderTooLarge;
  }
  if (header_.error != WavError::None) return taken;
  // Samples that arrived in the same read as the end of the header are played, not dropped.
  std::vector<uint8_t> collected;
  collected.swap(header_bytes_);
  size_t header_end = header_.info.data_offset;
  if (collected.size() > header_end &&
      !take_samples(collected.data() + header_end, collected.size() - header_end)) {
    gave_up_ = true;
  }
  return taken;
}

bool WavStream::take_samples(const uint8_t* data, size_t size) {
  size_t i = 0;
  if (has_carry_ && size > 0) {
    const uint8_t joined[2] = {carry_, data[0]};
    has_carry_ = false;
    if (!put_sample(static_cast<int16_t>(read_le16(joined)))) return false;
    i = 1;
  }
  for (; i + 1 < size; i += 2) {
    if (!put_sample(static_cast<int16_t>(read_le16(data + i)))) return false;
  }
  if (i < size) {
    carry_ = data[i];
    has_carry_ = true;
  }
  return true;
}

bool WavStream::put_sample(int16_t sample) {
  if (block_ == nullptr) {
    block_ = sink_.acquire();
    filled_ = 0;
    if (block_ == nullptr) {
      gave_up_ = true;
      return false;
    }
  }
  block_[filled_++] = sample;
  if (filled_ == block_samples_) flush();
  return true;
}

void WavStream::flush() {
  if (block_ == nullptr || filled_ == 0) return;
  size_t frame = header_.info.format.channels == 2 ? 2 : 1;
  size_t whole = filled_ - filled_ % frame;  // never split a stereo frame across blocks
  if (whole == 0) return;
  bool split_frame = whole < filled_;
  // The left sample of a stereo frame cut by the flush starts the next block.
  int16_t first_half = split_frame ? block_[whole] : 0;
  sink_.submit(block_, whole, header_.info.format);
  samples_submitted_ += whole;
  block_ = nullptr;
  filled_ = 0;
  if (split_frame) put_sample(first_half);
}

}  // namespace lobug
