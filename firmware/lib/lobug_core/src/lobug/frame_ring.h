// Mic frames for a stream with no end of its own (the xiaozhi WebSocket mode): a ring of
// frame slots that the mic fills and the sender empties in order. While the device waits for
// speech only the newest `keep` frames are kept (the pre-roll); once it streams, every frame
// is sent. Unlike Recorder there is no maximum length: the server's endpointing ends a turn.
// The mic may hold frames it is still filling (M5.Mic queues two), so a slot is never handed
// out twice while claimed; when the sender falls behind, the oldest unsent frame is dropped
// and counted rather than overwritten under the reader.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lobug {

class FrameRing {
 public:
  // `storage` holds slots * frame_samples samples; slots >= 3.
  FrameRing(int16_t* storage, size_t frame_samples, size_t slots)
      : storage_(storage), frame_samples_(frame_samples), slots_(slots) {}

  void reset() { claimed_ = completed_ = sent_ = dropped_ = 0; }

  // Where the mic writes next; nullptr only when every slot is still in the mic's hands.
  int16_t* claim();
  // The oldest claimed frame has been filled.
  void complete();
  // Frames filled and not yet taken, oldest first.
  size_t unsent() const { return completed_ - sent_; }
  // The oldest unsent frame (and marks it sent), or nullptr when there is none.
  const int16_t* take();
  // Forgets unsent frames beyond the newest `keep` (the pre-roll while waiting for speech).
  void keep_newest(size_t keep);
  // A filled frame, `back` frames before the newest (0: the newest), while its slot still holds
  // it; nullptr otherwise. For the level meter and the voice trigger.
  const int16_t* recent(size_t back) const;
  const int16_t* newest() const { return recent(0); }

  size_t frame_samples() const { return frame_samples_; }
  size_t in_mic() const { return claimed_ - completed_; }
  size_t dropped() const { return dropped_; }  // lost because the sender fell behind

 private:
  int16_t* slot(size_t frame) const { return storage_ + (frame % slots_) * frame_samples_; }

  int16_t* storage_;
  size_t frame_samples_;
  size_t slots_;
  size_t claimed_ = 0;
  size_t completed_ = 0;
  size_t sent_ = 0;
  size_t dropped_ = 0;
};

}  // namespace lobug
