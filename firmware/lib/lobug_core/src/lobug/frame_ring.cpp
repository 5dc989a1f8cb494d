#include "lobug/frame_ring.h"

namespace lobug {

int16_t* FrameRing::claim() {
  if (claimed_ - sent_ >= slots_) {  // the ring is full: make room
    if (sent_ == completed_) return nullptr;  // every slot is in the mic
    ++sent_;
    ++dropped_;
  }
  return slot(claimed_++);
}

void FrameRing::complete() {
  if (completed_ < claimed_) ++completed_;
}

const int16_t* FrameRing::take() {
  if (sent_ == completed_) return nullptr;
  return slot(sent_++);
}

void FrameRing::keep_newest(size_t keep) {
  if (unsent() > keep) sent_ = completed_ - keep;
}

const int16_t* FrameRing::recent(size_t back) const {
  // Slots not claimed again since: the newest `slots - in_mic` filled frames.
  if (back >= completed_ || back >= slots_ - in_mic()) return nullptr;
  return slot(completed_ - 1 - back);
}

}  // namespace lobug
