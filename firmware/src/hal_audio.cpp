#include "hal_audio.h"

#include <M5Unified.h>
#include <esp_heap_caps.h>

#include <algorithm>

#include "lobug/vad.h"

namespace hal {
namespace {

constexpr int kChannel = 0;
constexpr uint32_t kAcquireTimeoutMs = 5000;  // a speaker stuck this long is not coming back

}  // namespace

void audio_begin(uint8_t volume) {
  M5.Speaker.setVolume(volume);
  M5.Mic.end();
  M5.Speaker.end();
}

void* alloc_psram(size_t bytes) {
  void* memory = heap_caps_malloc(bytes, MALLOC_CAP_SPIRAM | MALLOC_CAP_8BIT);
  return memory != nullptr ? memory : heap_caps_malloc(bytes, MALLOC_CAP_8BIT);
}

void MicInput::start(lobug::Recorder& recorder, lobug::VadMode mode, size_t frame_samples,
                     uint32_t sample_rate) {
  M5.Speaker.end();
  M5.Mic.begin();
  recorder_ = &recorder;
  frame_samples_ = frame_samples;
  sample_rate_ = sample_rate;
  in_flight_ = 0;
  recorder.arm(mode);
  while (in_flight_ < 2 && queue_next()) {
  }
}

bool MicInput::queue_next() {
  int16_t* slot = recorder_->claim_frame();
  if (slot == nullptr) return false;
  if (!M5.Mic.record(slot, frame_samples_, sample_rate_)) {
    recorder_->stop();  // the driver refused: end cleanly rather than wait for a frame forever
    return false;
  }
  ++in_flight_;
  return true;
}

lobug::VadState MicInput::pump() {
  if (recorder_ == nullptr) return lobug::VadState::Off;
  // isRecording(): 0 idle, 1 one buffer in the driver, 2 one recording and one queued.
  size_t still_in_driver = M5.Mic.isRecording();
  while (in_flight_ > still_in_driver) {
    --in_flight_;
    recorder_->complete_frame();
  }
  while (in_flight_ < 2 && queue_next()) {
  }
  return recorder_->state();
}

size_t MicInput::stop() {
  if (recorder_ == nullptr) return 0;
  recorder_->stop();
  while (M5.Mic.isRecording()) delay(1);  // the driver may still be writing into our buffer
  M5.Mic.end();
  size_t samples = recorder_->finish();
  recorder_ = nullptr;
  in_flight_ = 0;
  return samples;
}

void MicStream::start(lobug::FrameRing& ring, uint32_t sample_rate) {
  M5.Speaker.end();
  M5.Mic.begin();
  ring_ = &ring;
  sample_rate_ = sample_rate;
  in_flight_ = 0;
  ring.reset();
  while (in_flight_ < 2 && queue_next()) {
  }
}

bool MicStream::queue_next() {
  int16_t* slot = ring_->claim();
  if (slot == nullptr || !M5.Mic.record(slot, ring_->frame_samples(), sample_rate_)) return false;
  ++in_flight_;
  return true;
}

size_t MicStream::pump() {
  if (ring_ == nullptr) return 0;
  size_t still_in_driver = M5.Mic.isRecording();
  size_t finished = 0;
  while (in_flight_ > still_in_driver) {
    --in_flight_;
    ring_->complete();
    ++finished;
  }
  while (in_flight_ < 2 && queue_next()) {
  }
  return finished;
}

void MicStream::stop() {
  if (ring_ == nullptr) return;
  while (M5.Mic.isRecording()) delay(1);
  M5.Mic.end();
  ring_ = nullptr;
  in_flight_ = 0;
}

bool SpeakerBlocks::allocate(size_t block_samples) {
  block_samples_ = block_samples;
  for (auto& block : blocks_) {
    if (block == nullptr) block = static_cast<int16_t*>(alloc_psram(block_samples * 2));
    if (block == nullptr) return false;
  }
  return true;
}

int16_t* SpeakerBlocks::acquire() {
  uint32_t started = millis();
  while (M5.Speaker.isPlaying(kChannel) >= 2) {  // both queue slots taken
    if (millis() - started > kAcquireTimeoutMs) return nullptr;
    delay(2);
  }
  return blocks_[next_++ % 3];
}

void SpeakerBlocks::drop() {
  M5.Speaker.stop();
  level_ = 0;
}

void SpeakerBlocks::submit(int16_t* block, size_t samples, const lobug::WavFormat& format) {
  level_ = lobug::frame_level(block, samples);
  M5.Speaker.playRaw(block, samples, format.sample_rate, format.channels == 2, 1, kChannel);
}

void speaker_start() {
  M5.Mic.end();
  M5.Speaker.begin();
}

bool speaker_busy() { return M5.Speaker.isPlaying(kChannel) != 0; }

bool speaker_can_queue() { return M5.Speaker.isPlaying(kChannel) < 2; }

void speaker_stop() {
  M5.Speaker.stop();
  M5.Speaker.end();
}

void wait_for_speaker(const std::function<void(uint16_t level)>& on_wait, uint16_t level) {
  while (speaker_busy()) {
    if (on_wait) on_wait(level);
    delay(15);
  }
}

void play_pcm(const int16_t* samples, size_t count, const lobug::WavFormat& format,
              const std::function<void(uint16_t level)>& on_wait) {
  size_t frame = format.channels == 2 ? 2 : 1;
  M5.Speaker.playRaw(samples, count, format.sample_rate, frame == 2, 1, kChannel);
  uint32_t started = millis();
  while (speaker_busy()) {
    // Where playback is now, from the clock: the level of the next 30 ms moves the mouth.
    size_t at = size_t(uint64_t(millis() - started) * format.sample_rate / 1000) * frame;
    size_t window = format.sample_rate * 30 / 1000 * frame;
    uint16_t level = at < count ? lobug::frame_level(samples + at, std::min(window, count - at)) : 0;
    if (on_wait) on_wait(level);
    delay(15);
  }
}

}  // namespace hal
