// Amplitude-based voice activity: when to start (voice trigger) and when to stop (silence,
// nothing said) a recording. Works on one level per audio frame, so it knows nothing of buffers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lobug {

struct VadConfig {
  uint32_t frame_ms = 40;
  // A frame is voiced when its level is above both min_level and noise_floor * trigger_ratio.
  uint16_t min_level = 400;    // mean |sample| of 16-bit audio; quieter is always silence
  float trigger_ratio = 3.0f;  // how far above the room's noise floor speech must be
  float release_ratio = 0.7f;  // once talking, a softer level still counts (no choppy endings)
  uint32_t trigger_ms = 120;   // voiced this long in a row to start (a click does not)
  uint32_t silence_ms = 800;   // quiet this long after speech ends the recording
  uint32_t no_speech_ms = 3000;  // push-to-talk with nothing said gives up after this
  uint32_t min_speech_ms = 240;  // less voiced audio than this is not worth an upload
  // Before the room has been heard, the trigger only listens this long: a fan that is on at
  // boot must not start a recording before it has become the noise floor.
  uint32_t warmup_ms = 400;
};

enum class VadMode { VoiceTrigger, PushToTalk };
enum class VadState { Off, Waiting, Recording, Done };
enum class VadEnd { None, Silence, NoSpeech, TooShort, Stopped, Full };

class Vad {
 public:
  explicit Vad(const VadConfig& config);

  // VoiceTrigger waits for speech; PushToTalk records from the first frame.
  void arm(VadMode mode);
  VadState on_frame(uint16_t level);
  void stop();         // the person ended it (button)
  void finish_full();  // the recording reached its maximum length

  VadState state() const { return state_; }
  VadEnd end_reason() const { return end_; }
  bool heard_speech() const { return heard_speech_; }
  uint16_t noise_floor() const { return static_cast<uint16_t>(noise_floor_); }
  uint16_t threshold() const;
  // The floor is learned while waiting for the voice trigger and kept across recordings;
  // push-to-talk uses it too when the trigger has been listening.
  void set_noise_floor(uint16_t level) {
    noise_floor_ = level;
    floor_known_ = true;
  }

 private:
  uint32_t frames(uint32_t ms) const;
  void end(VadEnd reason);
  void on_waiting_frame(uint16_t level);
  void learn_floor(uint16_t level);
  void on_recording_frame(uint16_t level);

  VadConfig config_;
  VadState state_ = VadState::Off;
  VadEnd end_ = VadEnd::None;
  float noise_floor_ = 0.0f;
  bool floor_known_ = false;
  bool heard_speech_ = false;
  uint32_t voiced_run_ = 0;
  uint32_t quiet_run_ = 0;
  uint32_t voiced_total_ = 0;
  uint32_t recorded_ = 0;
  uint32_t warmup_left_ = 0;
  uint16_t quietest_ = 0xFFFF;  // lowest level since the recording started
};

// Mean absolute amplitude: cheap, and good enough to tell speech from a quiet room.
uint16_t frame_level(const int16_t* samples, size_t count);

const char* vad_end_name(VadEnd end);

}  // namespace lobug
