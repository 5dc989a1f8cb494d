#include "lobug/vad.h"

#include <cstdlib>

namespace lobug {
namespace {

// Learned from frames that are not speech: it falls quickly when the room gets quieter and
// rises slowly as it gets louder. A noise loud enough to count as speech (a fan switched on)
// is learned from the recording it causes instead; see finish_full().
constexpr float kFloorFall = 0.3f;
constexpr float kFloorRise = 0.05f;

}  // namespace

Vad::Vad(const VadConfig& config) : config_(config) {}

uint32_t Vad::frames(uint32_t ms) const {
  uint32_t frame = config_.frame_ms == 0 ? 1 : config_.frame_ms;
  uint32_t count = (ms + frame - 1) / frame;
  return count == 0 ? 1 : count;
}

uint16_t Vad::threshold() const {
  float from_floor = noise_floor_ * config_.trigger_ratio;
  float level = from_floor > config_.min_level ? from_floor : config_.min_level;
  return level > 65535.0f ? 65535 : static_cast<uint16_t>(level);
}

void Vad::arm(VadMode mode) {
  state_ = mode == VadMode::PushToTalk ? VadState::Recording : VadState::Waiting;
  warmup_left_ = floor_known_ || mode == VadMode::PushToTalk ? 0 : frames(config_.warmup_ms);
  end_ = VadEnd::None;
  heard_speech_ = false;
  voiced_run_ = quiet_run_ = voiced_total_ = recorded_ = 0;
  quietest_ = 0xFFFF;
}

VadState Vad::on_frame(uint16_t level) {
  if (state_ == VadState::Waiting) {
    on_waiting_frame(level);
  } else if (state_ == VadState::Recording) {
    on_recording_frame(level);
  }
  return state_;
}

void Vad::learn_floor(uint16_t level) {
  auto value = static_cast<float>(level);
  if (!floor_known_) {
    noise_floor_ = value;
    floor_known_ = true;
    return;
  }
  noise_floor_ += (value - noise_floor_) * (value < noise_floor_ ? kFloorFall : kFloorRise);
}

void Vad::on_waiting_frame(uint16_t level) {
  if (warmup_left_ > 0) {
    --warmup_left_;
    learn_floor(level);
    return;
  }
  if (level < threshold()) {
    learn_floor(level);
    voiced_run_ = 0;
    return;
  }
  if (++voiced_run_ >= frames(config_.trigger_ms)) {
    state_ = VadState::Recording;
    heard_speech_ = true;
    voiced_total_ = recorded_ = voiced_run_;
    quiet_run_ = 0;
    quietest_ = level;
  }
}

void Vad::on_recording_frame(uint16_t level) {
  bool voiced = static_cast<float>(level) >= static_cast<float>(threshold()) * config_.release_ratio;
  if (level < quietest_) quietest_ = level;
  ++recorded_;
  if (voiced) {
    ++voiced_total_;
    quiet_run_ = 0;
    if (++voiced_run_ >= frames(config_.trigger_ms)) heard_speech_ = true;
  } else {
    voiced_run_ = 0;
    ++quiet_run_;
  }
  if (heard_speech_ && quiet_run_ >= frames(config_.silence_ms)) {
    end(voiced_total_ >= frames(config_.min_speech_ms) ? VadEnd::Silence : VadEnd::TooShort);
  } else if (!heard_speech_ && recorded_ >= frames(config_.no_speech_ms)) {
    end(VadEnd::NoSpeech);
  }
}

void Vad::end(VadEnd reason) {
  state_ = VadState::Done;
  end_ = reason;
}

void Vad::stop() {
  if (state_ == VadState::Waiting || state_ == VadState::Recording) end(VadEnd::Stopped);
}

void Vad::finish_full() {
  if (state_ != VadState::Recording) return;
  end(VadEnd::Full);
  // It never went quiet: the quietest frame of the recording is the room now, so a noise that
  // started a recording does not start the next one too.
  if (static_cast<float>(quietest_) > noise_floor_) noise_floor_ = quietest_;
  floor_known_ = true;
}

uint16_t frame_level(const int16_t* samples, size_t count) {
  if (count == 0) return 0;
  uint64_t sum = 0;
  for (size_t i = 0; i < count; ++i) sum += static_cast<uint64_t>(std::abs(int32_t{samples[i]}));
  return static_cast<uint16_t>(sum / count);
}

const char* vad_end_name(VadEnd end) {
  switch (end) {
    case VadEnd::None: return "none";
    case VadEnd::Silence: return "silence";
    case VadEnd::NoSpeech: return "no speech";
    case VadEnd::TooShort: return "too short";
    case VadEnd::Stopped: return "stopped";
    case VadEnd::Full: return "max length";
  }
  return "?";
}

}  // namespace lobug
