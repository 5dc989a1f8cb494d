// Microphone and speaker through M5Unified. On the Core2 both share one I2S bus, so only one
// runs at a time: starting the mic ends the speaker and the other way round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "lobug/frame_ring.h"
#include "lobug/recorder.h"
#include "lobug/wav.h"
#include "lobug/wav_stream.h"

namespace hal {

void audio_begin(uint8_t volume);

// Feeds a lobug::Recorder from M5.Mic, keeping one frame queued in the driver while the
// previous one is analysed, so recording has no gaps.
class MicInput {
 public:
  void start(lobug::Recorder& recorder, lobug::VadMode mode, size_t frame_samples,
             uint32_t sample_rate);
  // Non-blocking: analyses the frames the driver has finished and queues new ones.
  lobug::VadState pump();
  // Waits for the driver to let go of the buffers, stops the mic; returns the samples kept.
  size_t stop();
  bool running() const { return recorder_ != nullptr; }

 private:
  bool queue_next();

  lobug::Recorder* recorder_ = nullptr;
  size_t frame_samples_ = 0;
  uint32_t sample_rate_ = 16000;
  size_t in_flight_ = 0;
};

// Feeds a lobug::FrameRing from M5.Mic for a stream with no end of its own (the WebSocket
// mode), two frames queued in the driver like MicInput.
class MicStream {
 public:
  void start(lobug::FrameRing& ring, uint32_t sample_rate);
  // Non-blocking: the number of frames the driver finished since the last call.
  size_t pump();
  void stop();  // waits for the driver to let go of the buffers
  bool running() const { return ring_ != nullptr; }

 private:
  bool queue_next();

  lobug::FrameRing* ring_ = nullptr;
  uint32_t sample_rate_ = 16000;
  size_t in_flight_ = 0;
};

// Streamed playback: three rotating blocks, at most two queued in M5.Speaker at a time, so the
// block being filled is never one the speaker is still reading.
class SpeakerBlocks : public lobug::PcmBlockSink {
 public:
  bool allocate(size_t block_samples);
  size_t block_samples() const { return block_samples_; }
  int16_t* acquire() override;
  void drop();  // stop at once, whatever is queued (a barge-in)
  // The next block without waiting. Safe when blocks are submitted only while
  // speaker_can_queue() (at most one playing, one queued): the third is then free.
  int16_t* take_free() { return blocks_[next_++ % 3]; }
  void submit(int16_t* block, size_t samples, const lobug::WavFormat& format) override;
  uint16_t level() const { return level_; }

 private:
  int16_t* blocks_[3] = {nullptr, nullptr, nullptr};
  size_t block_samples_ = 0;
  size_t next_ = 0;
  uint16_t level_ = 0;
};

void speaker_start();
bool speaker_busy();
bool speaker_can_queue();  // at most one block playing: another can be queued behind it
void speaker_stop();
// Plays a complete 16-bit PCM buffer; `on_wait(level)` runs while it plays (mouth animation).
void play_pcm(const int16_t* samples, size_t count, const lobug::WavFormat& format,
              const std::function<void(uint16_t level)>& on_wait);
// Waits for queued blocks to finish playing.
void wait_for_speaker(const std::function<void(uint16_t level)>& on_wait, uint16_t level);

// Large buffers go to PSRAM (the recording, the reply); nullptr if there is not enough.
void* alloc_psram(size_t bytes);

}  // namespace hal
