#include <algorithm>
#include <vector>

#include "lobug/recorder.h"
#include "lobug/vad.h"
#include "runner.h"

using namespace lobug;

namespace {

constexpr uint16_t kQuiet = 100;
constexpr uint16_t kSpeech = 3000;

VadConfig config() {
  VadConfig c;
  c.frame_ms = 40;
  return c;
}

// Feeds `frames` frames at `level`; returns the state after the last one.
VadState feed(Vad& vad, uint16_t level, int frames) {
  VadState state = vad.state();
  for (int i = 0; i < frames; ++i) state = vad.on_frame(level);
  return state;
}

}  // namespace

TEST(vad_frame_level_is_mean_absolute_amplitude) {
  const int16_t samples[] = {100, -100, 300, -300, -32768};
  CHECK_EQ(frame_level(samples, 4), uint16_t{200});
  CHECK_EQ(frame_level(samples + 4, 1), uint16_t{32768});
  CHECK_EQ(frame_level(samples, 0), uint16_t{0});
}

TEST(vad_voice_trigger_needs_a_run_of_loud_frames) {
  Vad vad(config());
  vad.arm(VadMode::VoiceTrigger);
  CHECK_EQ(feed(vad, kQuiet, 50), VadState::Waiting);
  CHECK_EQ(feed(vad, kSpeech, 2), VadState::Waiting);  // 80 ms: a click, not speech
  CHECK_EQ(feed(vad, kQuiet, 1), VadState::Waiting);
  CHECK_EQ(feed(vad, kSpeech, 3), VadState::Recording);  // 120 ms
  CHECK(vad.heard_speech());
}

TEST(vad_learns_the_noise_floor_while_waiting) {
  Vad vad(config());
  vad.arm(VadMode::VoiceTrigger);
  CHECK_EQ(vad.threshold(), uint16_t{400});  // min_level until the room is heard
  feed(vad, 1000, 200);  // a noisy room: a fan at level 1000 from the start is no trigger
  CHECK_EQ(vad.state(), VadState::Waiting);
  CHECK(vad.noise_floor() > 900);
  CHECK(vad.threshold() > 2700);
  CHECK_EQ(feed(vad, 1500, 10), VadState::Waiting);  // louder fan, not speech
  CHECK_EQ(feed(vad, 6000, 3), VadState::Recording);
}

TEST(vad_floor_follows_a_quieter_room_quickly) {
  Vad vad(config());
  vad.arm(VadMode::VoiceTrigger);
  feed(vad, 2000, 20);  // loud at first...
  feed(vad, kQuiet, 12);  // ...then quiet: the floor comes down within half a second
  CHECK(vad.noise_floor() < 150);
  CHECK_EQ(feed(vad, kSpeech, 3), VadState::Recording);
}

TEST(vad_a_noise_that_never_stops_becomes_the_floor) {
  Vad vad(config());
  vad.arm(VadMode::VoiceTrigger);
  feed(vad, kQuiet, 20);
  CHECK_EQ(feed(vad, 1000, 50), VadState::Recording);  // a fan switched on sounds like speech
  vad.finish_full();                                    // ...until the buffer is full
  CHECK_EQ(vad.end_reason(), VadEnd::Full);
  vad.arm(VadMode::VoiceTrigger);
  CHECK_EQ(feed(vad, 1000, 100), VadState::Waiting);  // the fan is the room now
  CHECK_EQ(feed(vad, 5000, 3), VadState::Recording);  // speech over it still triggers
}

TEST(vad_speech_during_warmup_does_not_trigger) {
  Vad vad(config());
  vad.arm(VadMode::VoiceTrigger);
  CHECK_EQ(feed(vad, kSpeech, 10), VadState::Waiting);  // 400 ms of warm-up
  vad.set_noise_floor(kQuiet);  // a floor learned earlier: no warm-up on the next arm
  vad.arm(VadMode::VoiceTrigger);
  CHECK_EQ(feed(vad, kSpeech, 3), VadState::Recording);
}

TEST(vad_ends_after_the_configured_silence) {
  Vad vad(config());
  vad.arm(VadMode::VoiceTrigger);
  feed(vad, kQuiet, 20);
  feed(vad, kSpeech, 20);
  CHECK_EQ(feed(vad, kQuiet, 19), VadState::Recording);  // 760 ms
  CHECK_EQ(feed(vad, kQuiet, 1), VadState::Done);        // 800 ms
  CHECK_EQ(vad.end_reason(), VadEnd::Silence);
}

TEST(vad_softer_speech_keeps_the_recording_going) {
  Vad vad(config());
  vad.arm(VadMode::VoiceTrigger);
  feed(vad, kQuiet, 20);
  feed(vad, kSpeech, 5);
  // 300 is under the 400 trigger level but over 70 % of it: a quiet word, not silence.
  CHECK_EQ(feed(vad, 300, 40), VadState::Recording);
  CHECK_EQ(feed(vad, 200, 20), VadState::Done);
}

TEST(vad_push_to_talk_gives_up_when_nothing_is_said) {
  Vad vad(config());
  vad.arm(VadMode::PushToTalk);
  CHECK_EQ(vad.state(), VadState::Recording);
  CHECK_EQ(feed(vad, kQuiet, 74), VadState::Recording);
  CHECK_EQ(feed(vad, kQuiet, 1), VadState::Done);  // 3 s
  CHECK_EQ(vad.end_reason(), VadEnd::NoSpeech);
  CHECK(!vad.heard_speech());
}

TEST(vad_push_to_talk_silence_counts_only_after_speech) {
  Vad vad(config());
  vad.arm(VadMode::PushToTalk);
  CHECK_EQ(feed(vad, kQuiet, 30), VadState::Recording);  // 1.2 s before talking is fine
  feed(vad, kSpeech, 10);
  CHECK_EQ(feed(vad, kQuiet, 20), VadState::Done);
  CHECK_EQ(vad.end_reason(), VadEnd::Silence);
}

TEST(vad_too_little_speech_is_not_worth_uploading) {
  Vad vad(config());
  vad.arm(VadMode::VoiceTrigger);
  feed(vad, kQuiet, 20);
  feed(vad, kSpeech, 3);  // 120 ms triggers, but 240 ms of speech is the minimum
  CHECK_EQ(feed(vad, kQuiet, 20), VadState::Done);
  CHECK_EQ(vad.end_reason(), VadEnd::TooShort);
}

TEST(vad_stop_ends_a_recording) {
  Vad vad(config());
  vad.arm(VadMode::PushToTalk);
  feed(vad, kSpeech, 5);
  vad.stop();
  CHECK_EQ(vad.state(), VadState::Done);
  CHECK_EQ(vad.end_reason(), VadEnd::Stopped);
  vad.stop();  // idempotent
  CHECK_EQ(vad.end_reason(), VadEnd::Stopped);
}

// ---------------------------------------------------------------------------------- recorder

namespace {

RecorderConfig small_recorder(uint32_t max_ms = 2000) {
  RecorderConfig c;
  c.sample_rate = 1000;  // 40 samples a frame keeps the arithmetic readable
  c.frame_ms = 40;
  c.preroll_ms = 160;  // 4 frames
  c.max_ms = max_ms;
  return c;
}

// Plays the role of M5.Mic: one frame queued ahead of the one being analysed. Frame k is filled
// with value base + k (negated when quiet, to keep the level right), so the order is checkable.
struct FakeMic {
  Recorder& recorder;
  size_t frame_samples;
  std::vector<int16_t*> queued;
  int next_frame = 0;

  bool queue() {
    int16_t* slot = recorder.claim_frame();
    if (slot == nullptr) return false;
    queued.push_back(slot);
    return true;
  }

  // Fills the oldest queued frame with `level` and tags it with the frame number.
  VadState deliver(int16_t level) {
    int16_t* slot = queued.front();
    queued.erase(queued.begin());
    for (size_t i = 0; i < frame_samples; ++i) slot[i] = level;
    slot[0] = static_cast<int16_t>(next_frame++);
    return recorder.complete_frame();
  }

  // Runs the mic until the recorder is done, with levels from `level_of(frame)`.
  template <typename LevelOf>
  void run(LevelOf level_of, int limit = 10000) {
    queue();
    for (int i = 0; i < limit && !queued.empty(); ++i) {
      if (recorder.state() != VadState::Done) queue();
      if (deliver(level_of(next_frame)) == VadState::Done) {
        // The frame still in flight is filled by the hardware, but no longer analysed.
        while (!queued.empty()) {
          int16_t* slot = queued.front();
          queued.erase(queued.begin());
          for (size_t k = 0; k < frame_samples; ++k) slot[k] = -1;
        }
        break;
      }
    }
  }
};

std::vector<int> frame_tags(const std::vector<int16_t>& storage, size_t samples,
                            size_t frame_samples) {
  std::vector<int> tags;
  for (size_t i = 0; i < samples; i += frame_samples) tags.push_back(storage[i]);
  return tags;
}

std::vector<int> range(int first, int last) {
  std::vector<int> out;
  for (int i = first; i <= last; ++i) out.push_back(i);
  return out;
}

}  // namespace

TEST(recorder_keeps_preroll_before_the_trigger_in_order) {
  RecorderConfig rc = small_recorder();
  std::vector<int16_t> storage(rc.storage_samples());
  Recorder recorder(storage.data(), rc, config());
  recorder.arm(VadMode::VoiceTrigger);
  FakeMic mic{recorder, rc.frame_samples(), {}, 0};
  // Quiet for frames 0-9, speech 10-19, quiet after: trigger fires on frame 12.
  mic.run([](int f) { return static_cast<int16_t>(f >= 10 && f < 20 ? kSpeech : kQuiet); });
  CHECK_EQ(recorder.end_reason(), VadEnd::Silence);
  CHECK(recorder.should_upload());
  size_t samples = recorder.finish();
  // Trigger on frame 12 with frame 13 already queued: the ring holds 10-13 (4 frames of
  // pre-roll), then 14 up to the 20th quiet frame (39) end it.
  CHECK_EQ(frame_tags(storage, samples, rc.frame_samples()), range(10, 39));
}

TEST(recorder_hands_out_the_kept_frames_in_order_while_recording) {
  RecorderConfig rc = small_recorder();
  std::vector<int16_t> storage(rc.storage_samples());
  Recorder recorder(storage.data(), rc, config());
  recorder.arm(VadMode::VoiceTrigger);
  FakeMic mic{recorder, rc.frame_samples(), {}, 0};
  auto level_of = [](int f) { return static_cast<int16_t>(f >= 10 && f < 20 ? kSpeech : kQuiet); };
  std::vector<int> sent;  // what a live upload sends, frame by frame, as each is analysed
  mic.queue();
  while (recorder.state() != VadState::Done) {
    mic.queue();
    mic.deliver(level_of(mic.next_frame));
    for (size_t i = sent.size(); i < recorder.kept_frames(); ++i) {
      sent.push_back(recorder.kept_frame(i)[0]);
    }
  }
  for (int16_t* slot : mic.queued) std::fill(slot, slot + rc.frame_samples(), int16_t(-1));
  size_t kept = recorder.kept_frames();
  size_t samples = recorder.finish();
  CHECK_EQ(sent, range(10, 39));  // the same frames finish() keeps, in the same order
  CHECK_EQ(kept * rc.frame_samples(), samples);
  CHECK_EQ(frame_tags(storage, samples, rc.frame_samples()), range(10, 39));
  std::vector<int> after;  // and where finish() moved them
  for (size_t i = 0; i < recorder.kept_frames(); ++i) after.push_back(recorder.kept_frame(i)[0]);
  CHECK_EQ(after, range(10, 39));
}

TEST(recorder_preroll_before_the_ring_filled) {
  RecorderConfig rc = small_recorder();
  std::vector<int16_t> storage(rc.storage_samples());
  Recorder recorder(storage.data(), rc, config());
  recorder.vad().set_noise_floor(kQuiet);  // heard before: speech may trigger at once
  recorder.arm(VadMode::VoiceTrigger);
  FakeMic mic{recorder, rc.frame_samples(), {}, 0};
  mic.run([](int f) { return static_cast<int16_t>(f < 8 ? kSpeech : kQuiet); });
  size_t samples = recorder.finish();
  CHECK_EQ(frame_tags(storage, samples, rc.frame_samples()), range(0, 27));
}

TEST(recorder_stops_at_max_length_counting_preroll) {
  RecorderConfig rc = small_recorder(800);  // 20 frames in all
  std::vector<int16_t> storage(rc.storage_samples());
  Recorder recorder(storage.data(), rc, config());
  recorder.arm(VadMode::VoiceTrigger);
  FakeMic mic{recorder, rc.frame_samples(), {}, 0};
  mic.run([](int f) { return static_cast<int16_t>(f >= 30 ? kSpeech : kQuiet); });
  CHECK_EQ(recorder.end_reason(), VadEnd::Full);
  CHECK(recorder.should_upload());
  size_t samples = recorder.finish();
  CHECK_EQ(samples, 20 * rc.frame_samples());
  CHECK_EQ(frame_tags(storage, samples, rc.frame_samples()), range(30, 49));
}

TEST(recorder_push_to_talk_records_from_the_first_frame) {
  RecorderConfig rc = small_recorder();
  std::vector<int16_t> storage(rc.storage_samples());
  Recorder recorder(storage.data(), rc, config());
  recorder.arm(VadMode::PushToTalk);
  FakeMic mic{recorder, rc.frame_samples(), {}, 0};
  mic.run([](int f) { return static_cast<int16_t>(f >= 3 && f < 12 ? kSpeech : kQuiet); });
  size_t samples = recorder.finish();
  CHECK_EQ(frame_tags(storage, samples, rc.frame_samples()), range(0, 31));
}

TEST(recorder_stopped_while_waiting_has_nothing) {
  RecorderConfig rc = small_recorder();
  std::vector<int16_t> storage(rc.storage_samples());
  Recorder recorder(storage.data(), rc, config());
  recorder.arm(VadMode::VoiceTrigger);
  FakeMic mic{recorder, rc.frame_samples(), {}, 0};
  mic.queue();
  mic.queue();
  mic.deliver(kQuiet);
  recorder.stop();
  CHECK(recorder.claim_frame() == nullptr);
  CHECK(!recorder.should_upload());
  CHECK_EQ(recorder.finish(), size_t{0});
}

TEST(recorder_push_to_talk_with_nothing_said_is_not_uploaded) {
  RecorderConfig rc = small_recorder(4000);  // longer than the 3 s allowed for saying nothing
  std::vector<int16_t> storage(rc.storage_samples());
  Recorder recorder(storage.data(), rc, config());
  recorder.arm(VadMode::PushToTalk);
  FakeMic mic{recorder, rc.frame_samples(), {}, 0};
  mic.run([](int) { return kQuiet; });
  CHECK_EQ(recorder.end_reason(), VadEnd::NoSpeech);
  CHECK(!recorder.should_upload());
}

TEST(recorder_config_sizes) {
  RecorderConfig rc;  // the device defaults: 16 kHz, 40 ms frames, 320 ms pre-roll, 5 s
  CHECK_EQ(rc.frame_samples(), size_t{640});
  CHECK_EQ(rc.preroll_frames(), size_t{8});
  CHECK_EQ(rc.max_frames(), size_t{125});
  CHECK_EQ(rc.storage_samples(), size_t{(8 + 125) * 640});
  rc.preroll_ms = 0;
  CHECK_EQ(rc.preroll_frames(), size_t{2});
}
