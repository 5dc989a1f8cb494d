#include "lobug/recorder.h"

#include <algorithm>
#include <cstring>

namespace lobug {

size_t RecorderConfig::preroll_frames() const {
  size_t frames = (preroll_ms + frame_ms - 1) / frame_ms;
  return frames < 2 ? 2 : frames;
}

Recorder::Recorder(int16_t* storage, const RecorderConfig& config, const VadConfig& vad)
    : storage_(storage),
      config_(config),
      vad_(vad),
      frame_samples_(config.frame_samples()),
      ring_frames_(config.preroll_frames()) {}

void Recorder::arm(VadMode mode) {
  vad_.arm(mode);
  claimed_ = completed_ = first_linear_ = 0;
  triggered_ = mode == VadMode::PushToTalk;
  finished_ = false;
  last_level_ = 0;
}

size_t Recorder::first_kept_frame() const {
  return first_linear_ > ring_frames_ ? first_linear_ - ring_frames_ : 0;
}

bool Recorder::linear_full(size_t next_frame) const {
  return next_frame - first_kept_frame() >= config_.max_frames();
}

int16_t* Recorder::slot(size_t frame) {
  if (frame < first_linear_ || !triggered_) {
    return storage_ + (frame % ring_frames_) * frame_samples_;
  }
  return storage_ + (ring_frames_ + frame - first_linear_) * frame_samples_;
}

int16_t* Recorder::claim_frame() {
  VadState state = vad_.state();
  if (state == VadState::Done || state == VadState::Off) return nullptr;
  if (triggered_ && linear_full(claimed_)) return nullptr;
  return slot(claimed_++);
}

VadState Recorder::complete_frame() {
  if (completed_ >= claimed_) return vad_.state();
  const int16_t* frame = slot(completed_++);
  last_level_ = frame_level(frame, frame_samples_);
  bool was_waiting = vad_.state() == VadState::Waiting;
  VadState state = vad_.on_frame(last_level_);
  if (was_waiting && state == VadState::Recording) {
    // Frames already claimed stay in the ring; everything claimed from now on is linear.
    triggered_ = true;
    first_linear_ = claimed_;
  }
  if (state == VadState::Recording && triggered_ && linear_full(completed_)) vad_.finish_full();
  return vad_.state();
}

size_t Recorder::kept_frames() const {
  if (!triggered_) return 0;
  size_t first = first_kept_frame();
  return completed_ > first ? completed_ - first : 0;
}

const int16_t* Recorder::kept_frame(size_t index) {
  if (finished_) return storage_ + index * frame_samples_;
  return slot(first_kept_frame() + index);
}

size_t Recorder::finish() {
  finished_ = true;
  if (!triggered_ || completed_ == 0) return 0;
  size_t first = first_kept_frame();
  size_t last = completed_;  // one past the last frame to keep
  if (last <= first) return 0;
  size_t ring_kept = std::min(first_linear_, last) - first;
  if (first_linear_ >= ring_frames_) {
    // The ring wrapped: its oldest kept frame sits at slot first_linear_ % ring.
    int16_t* ring = storage_;
    std::rotate(ring, ring + (first_linear_ % ring_frames_) * frame_samples_,
                ring + ring_frames_ * frame_samples_);
  }
  size_t linear_kept = last > first_linear_ ? last - first_linear_ : 0;
  if (linear_kept > 0 && ring_kept < ring_frames_) {
    std::memmove(storage_ + ring_kept * frame_samples_, storage_ + ring_frames_ * frame_samples_,
                 linear_kept * frame_samples_ * sizeof(int16_t));
  }
  return (ring_kept + linear_kept) * frame_samples_;
}

bool Recorder::should_upload() const {
  VadEnd end = vad_.end_reason();
  bool ended_well = end == VadEnd::Silence || end == VadEnd::Full || end == VadEnd::Stopped;
  return ended_well && vad_.heard_speech();
}

}  // namespace lobug
