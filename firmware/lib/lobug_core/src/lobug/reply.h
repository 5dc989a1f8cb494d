// What the device does with a reply: the contract's three actions turned into one plan.
#pragma once

#include <string>
#include <string_view>

namespace lobug {

enum class Action { Respond, Ignore, React, Unknown };

Action parse_action(std::string_view text);
const char* action_name(Action action);

enum class ReplyPlan {
  Speak,     // play the audio and show the reply text
  ShowText,  // "respond" without playable audio (TTS failed): the text still helps
  Express,   // "react": an expression on the face, no sound
  Nothing,   // "ignore", or nothing usable came back
};

// An action this firmware does not know (from a newer server) is treated as "respond" when
// there is something to play or show, so a new action never silences an answer.
ReplyPlan plan_reply(Action action, bool has_playable_audio, bool has_text);
const char* plan_name(ReplyPlan plan);

// Percent-decoding of the X-Lobug-* headers (UTF-8). "+" stays "+": these are not form
// fields. A malformed escape is kept as it is rather than dropping the text.
std::string percent_decode(std::string_view text);

}  // namespace lobug
