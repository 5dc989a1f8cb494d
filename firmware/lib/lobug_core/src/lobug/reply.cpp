#include "lobug/reply.h"

namespace lobug {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Action parse_action(std::string_view text) {
  if (text == "respond") return Action::Respond;
  if (text == "ignore") return Action::Ignore;
  if (text == "react") return Action::React;
  return Action::Unknown;
}

const char* action_name(Action action) {
  switch (action) {
    case Action::Respond: return "respond";
    case Action::Ignore: return "ignore";
    case Action::React: return "react";
    case Action::Unknown: return "unknown";
  }
  return "?";
}

ReplyPlan plan_reply(Action action, bool has_playable_audio, bool has_text) {
  switch (action) {
    case Action::Ignore:
      return ReplyPlan::Nothing;
    case Action::React:
      return ReplyPlan::Express;
    case Action::Respond:
    case Action::Unknown:
      if (has_playable_audio) return ReplyPlan::Speak;
      return has_text ? ReplyPlan::ShowText : ReplyPlan::Nothing;
  }
  return ReplyPlan::Nothing;
}

const char* plan_name(ReplyPlan plan) {
  switch (plan) {
    case ReplyPlan::Speak: return "speak";
    case ReplyPlan::ShowText: return "show text";
    case ReplyPlan::Express: return "express";
    case ReplyPlan::Nothing: return "nothing";
  }
  return "?";
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    bool escape = text[i] == '%' && i + 2 < text.size();
    int high = escape ? hex_digit(text[i + 1]) : -1;
    int low = high >= 0 ? hex_digit(text[i + 2]) : -1;
    if (low >= 0) {
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace lobug
