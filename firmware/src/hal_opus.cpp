#include "config.h"

#if LOBUG_WEBSOCKET
#include "hal_opus.h"

#include <opus.h>

namespace hal {

OpusMicEncoder::~OpusMicEncoder() {
  if (encoder_ != nullptr) opus_encoder_destroy(encoder_);
}

bool OpusMicEncoder::begin(uint32_t sample_rate, int complexity) {
  if (encoder_ != nullptr) return true;
  int error = OPUS_OK;
  encoder_ = opus_encoder_create(static_cast<opus_int32>(sample_rate), 1, OPUS_APPLICATION_VOIP,
                                 &error);
  if (error != OPUS_OK || encoder_ == nullptr) {
    encoder_ = nullptr;
    return false;
  }
  opus_encoder_ctl(encoder_, OPUS_SET_COMPLEXITY(complexity));
  return true;
}

size_t OpusMicEncoder::encode(const int16_t* pcm, size_t samples, uint8_t* out, size_t capacity) {
  if (encoder_ == nullptr) return 0;
  opus_int32 n = opus_encode(encoder_, pcm, static_cast<int>(samples), out,
                             static_cast<opus_int32>(capacity));
  return n > 0 ? static_cast<size_t>(n) : 0;
}

OpusReplyDecoder::~OpusReplyDecoder() {
  if (decoder_ != nullptr) opus_decoder_destroy(decoder_);
}

bool OpusReplyDecoder::begin(uint32_t sample_rate, uint32_t channels) {
  if (decoder_ != nullptr && rate_ == sample_rate && channels_ == channels) return true;
  if (decoder_ != nullptr) opus_decoder_destroy(decoder_);
  int error = OPUS_OK;
  decoder_ = opus_decoder_create(static_cast<opus_int32>(sample_rate), static_cast<int>(channels),
                                 &error);
  if (error != OPUS_OK || decoder_ == nullptr) {
    decoder_ = nullptr;
    rate_ = channels_ = 0;
    return false;
  }
  rate_ = sample_rate;
  channels_ = channels;
  return true;
}

size_t OpusReplyDecoder::decode(const uint8_t* packet, size_t size, int16_t* out,
                                size_t max_samples) {
  if (decoder_ == nullptr) return 0;
  int n = opus_decode(decoder_, packet, static_cast<opus_int32>(size), out,
                      static_cast<int>(max_samples), 0);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

}  // namespace hal
#endif  // LOBUG_WEBSOCKET
