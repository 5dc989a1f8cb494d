#include <string>

#include "lobug/reply.h"
#include "runner.h"

using namespace lobug;

TEST(reply_actions_parse_exactly) {
  CHECK_EQ(parse_action("respond"), Action::Respond);
  CHECK_EQ(parse_action("ignore"), Action::Ignore);
  CHECK_EQ(parse_action("react"), Action::React);
  CHECK_EQ(parse_action("RESPOND"), Action::Unknown);
  CHECK_EQ(parse_action(""), Action::Unknown);
  CHECK_EQ(std::string(action_name(Action::React)), std::string("react"));
}

TEST(reply_plan_follows_the_contract) {
  CHECK_EQ(plan_reply(Action::Respond, true, true), ReplyPlan::Speak);
  CHECK_EQ(plan_reply(Action::Respond, false, true), ReplyPlan::ShowText);
  CHECK_EQ(plan_reply(Action::Respond, false, false), ReplyPlan::Nothing);
  CHECK_EQ(plan_reply(Action::React, true, true), ReplyPlan::Express);  // never plays sound
  CHECK_EQ(plan_reply(Action::React, false, false), ReplyPlan::Express);
  CHECK_EQ(plan_reply(Action::Ignore, true, true), ReplyPlan::Nothing);  // never shows a thing
}

TEST(reply_unknown_action_from_a_newer_server_is_not_silenced) {
  CHECK_EQ(plan_reply(Action::Unknown, true, false), ReplyPlan::Speak);
  CHECK_EQ(plan_reply(Action::Unknown, false, true), ReplyPlan::ShowText);
  CHECK_EQ(plan_reply(Action::Unknown, false, false), ReplyPlan::Nothing);
}

TEST(reply_percent_decoding_of_headers) {
  // What Python's urllib.parse.quote(text, safe="") makes of "Où est-ce? 50% + more".
  CHECK_EQ(percent_decode("O%C3%B9%20est-ce%3F%2050%25%20%2B%20more"),
           std::string("O\xC3\xB9 est-ce? 50% + more"));
  CHECK_EQ(percent_decode("a+b"), std::string("a+b"));
  CHECK_EQ(percent_decode("100%"), std::string("100%"));
  CHECK_EQ(percent_decode("%4"), std::string("%4"));
  CHECK_EQ(percent_decode("%zz%41"), std::string("%zzA"));
  CHECK_EQ(percent_decode(""), std::string(""));
}
