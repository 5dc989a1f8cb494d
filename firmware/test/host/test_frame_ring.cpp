#include <vector>

#include "lobug/frame_ring.h"
#include "runner.h"

using namespace lobug;

namespace {

// The mic: fills a claimed frame with its sequence number.
struct Mic {
  FrameRing& ring;
  std::vector<int16_t*> queued;
  int16_t next = 1;
  bool queue() {
    int16_t* slot = ring.claim();
    if (slot == nullptr) return false;
    queued.push_back(slot);
    return true;
  }
  void finish_one() {
    for (size_t i = 0; i < ring.frame_samples(); ++i) queued.front()[i] = next;
    ++next;
    queued.erase(queued.begin());
    ring.complete();
  }
};

}  // namespace

TEST(frame_ring_hands_frames_out_in_order_without_an_end) {
  std::vector<int16_t> storage(8 * 4);
  FrameRing ring(storage.data(), 4, 8);
  Mic mic{ring, {}};
  mic.queue();
  mic.queue();  // two in the mic, like M5.Mic
  std::vector<int16_t> sent;
  for (int i = 0; i < 1000; ++i) {  // far more frames than slots: a turn has no length cap
    mic.finish_one();
    mic.queue();
    while (const int16_t* frame = ring.take()) sent.push_back(frame[0]);
  }
  CHECK_EQ(sent.size(), size_t(1000));
  for (size_t i = 0; i < sent.size(); ++i) CHECK_EQ(sent[i], int16_t(i + 1));
  CHECK_EQ(ring.dropped(), size_t(0));
  CHECK_EQ(ring.in_mic(), size_t(2));
}

TEST(frame_ring_keeps_only_the_preroll_while_waiting) {
  std::vector<int16_t> storage(8 * 4);
  FrameRing ring(storage.data(), 4, 8);
  Mic mic{ring, {}};
  mic.queue();
  mic.queue();
  for (int i = 0; i < 20; ++i) {
    mic.finish_one();
    mic.queue();
    ring.keep_newest(5);
  }
  CHECK_EQ(ring.newest()[0], int16_t(20));
  CHECK_EQ(ring.recent(3)[0], int16_t(17));
  CHECK_EQ(ring.recent(5)[0], int16_t(15));  // forgotten, but its slot still holds it
  CHECK(ring.recent(6) == nullptr);          // 8 slots, 2 of them in the mic
  std::vector<int16_t> sent;
  while (const int16_t* frame = ring.take()) sent.push_back(frame[0]);
  CHECK_EQ(sent, (std::vector<int16_t>{16, 17, 18, 19, 20}));
  CHECK_EQ(ring.dropped(), size_t(0));  // forgetting the pre-roll is not a loss
}

TEST(frame_ring_a_slow_sender_loses_the_oldest_frames_never_the_mics) {
  std::vector<int16_t> storage(4 * 2);
  FrameRing ring(storage.data(), 2, 4);
  Mic mic{ring, {}};
  mic.queue();
  mic.queue();
  for (int i = 0; i < 10; ++i) {  // nobody sends
    mic.finish_one();
    CHECK(mic.queue());
  }
  CHECK_EQ(ring.in_mic(), size_t(2));
  CHECK_EQ(ring.unsent(), size_t(2));
  CHECK_EQ(ring.dropped(), size_t(8));
  CHECK_EQ(ring.take()[0], int16_t(9));
  CHECK_EQ(ring.take()[0], int16_t(10));
  CHECK(ring.take() == nullptr);
  // Every slot in the mic: nothing more can be claimed.
  FrameRing tiny(storage.data(), 2, 3);
  CHECK(tiny.claim() && tiny.claim() && tiny.claim());
  CHECK(tiny.claim() == nullptr);
  tiny.complete();
  CHECK(tiny.claim() != nullptr);  // the filled, unsent frame made room
  CHECK_EQ(tiny.dropped(), size_t(1));
  ring.reset();
  CHECK(ring.newest() == nullptr && ring.take() == nullptr);
}
