// Where each microphone frame goes, so that a voice-triggered recording keeps the speech that
// came just before the trigger fired ("pre-roll") without copying audio while the mic runs.
//
// Storage layout: [pre-roll ring: preroll_frames][linear: max_frames]. While waiting for
// speech, frames cycle through the ring; once recording, they go to the linear part. finish()
// rotates the ring into order and closes the gap, leaving one contiguous recording at the
// start of the storage. The mic may hold one frame ahead of the one being analysed (M5.Mic
// queues two buffers), which is why slots are decided when a frame is claimed, not completed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lobug/vad.h"

namespace lobug {

struct RecorderConfig {
  uint32_t sample_rate = 16000;
  uint32_t frame_ms = 40;
  uint32_t preroll_ms = 320;  // speech before the trigger that is kept
  uint32_t max_ms = 5000;     // the whole recording, pre-roll included

  size_t frame_samples() const { return sample_rate / 1000u * frame_ms; }
  size_t preroll_frames() const;  // at least 2: the trigger frame plus the one queued after it
  size_t max_frames() const { return (max_ms + frame_ms - 1) / frame_ms; }
  size_t storage_samples() const { return (preroll_frames() + max_frames()) * frame_samples(); }
};

class Recorder {
 public:
  Recorder(int16_t* storage, const RecorderConfig& config, const VadConfig& vad);

  void arm(VadMode mode);
  // Where the mic writes the next frame, or nullptr when no more frames are wanted.
  int16_t* claim_frame();
  // The oldest claimed frame has been filled: analyse it.
  VadState complete_frame();
  void stop() { vad_.stop(); }

  // Call once the mic is idle: moves the recording to storage[0..n) and returns n (samples).
  size_t finish();

  // The kept recording so far, in order, one frame at a time, while it is being made (and after
  // finish(), the same frames in place): the recording can be sent before it has ended.
  size_t kept_frames() const;
  const int16_t* kept_frame(size_t index);

  bool should_upload() const;
  size_t pending_frames() const { return claimed_ - completed_; }
  VadState state() const { return vad_.state(); }
  VadEnd end_reason() const { return vad_.end_reason(); }
  uint16_t last_level() const { return last_level_; }
  Vad& vad() { return vad_; }
  const int16_t* storage() const { return storage_; }

 private:
  int16_t* slot(size_t frame);
  size_t first_kept_frame() const;
  bool linear_full(size_t next_frame) const;

  int16_t* storage_;
  RecorderConfig config_;
  Vad vad_;
  size_t frame_samples_;
  size_t ring_frames_;
  size_t claimed_ = 0;     // frames handed to the mic
  size_t completed_ = 0;   // frames analysed
  size_t first_linear_ = 0;  // first frame claimed after the trigger
  bool triggered_ = false;
  bool finished_ = false;  // finish() has moved the recording to the start of the storage
  uint16_t last_level_ = 0;
};

}  // namespace lobug
