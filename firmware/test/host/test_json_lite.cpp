#include <string>

#include "lobug/json_lite.h"
#include "runner.h"

using namespace lobug;

TEST(json_lite_flattens_nested_objects_into_dotted_paths) {
  JsonFields json;
  CHECK(json.parse(R"({"type":"hello","transport":"websocket","session_id":"s-1",
      "audio_params":{"format":"opus","sample_rate":24000,"channels":1,"frame_duration":60},
      "features":{"mcp":true},"extra":null})"));
  CHECK_EQ(json.string("type"), std::string("hello"));
  CHECK_EQ(json.string("audio_params.format"), std::string("opus"));
  CHECK_EQ(json.integer("audio_params.sample_rate", 0), 24000LL);
  CHECK_EQ(json.integer("audio_params.frame_duration", 0), 60LL);
  CHECK(json.boolean("features.mcp", false));
  CHECK(json.has_object("audio_params"));
  CHECK(!json.has_object("type"));
  CHECK(json.find("extra") != nullptr && json.find("extra")->kind == JsonKind::Null);
  CHECK_EQ(json.string("missing", "x"), std::string("x"));
  CHECK_EQ(json.integer("type", 7), 7LL);  // a string is not a number
}

TEST(json_lite_decodes_escapes_and_surrogate_pairs) {
  JsonFields json;
  CHECK(json.parse(R"({"text":"a\"b\\c\/d\n\u00e9\ud83d\ude00","lone":"\ud800x"})"));
  CHECK_EQ(json.string("text"), std::string("a\"b\\c/d\n\xC3\xA9\xF0\x9F\x98\x80"));
  CHECK_EQ(json.string("lone"), std::string("\xEF\xBF\xBDx"));  // a lone half: U+FFFD
}

TEST(json_lite_skips_arrays_and_their_objects) {
  JsonFields json;
  CHECK(json.parse(R"({"a":[1,"two",{"b":3},[true,null]],"c":"kept","d":{}})"));
  CHECK_EQ(json.fields().size(), size_t(1));
  CHECK_EQ(json.string("c"), std::string("kept"));
  CHECK(json.has_object("d"));
  CHECK(json.find("a.b") == nullptr && json.find("b") == nullptr);
}

TEST(json_lite_numbers_are_checked_and_bounded) {
  JsonFields json;
  CHECK(json.parse(R"({"n":-12,"f":1.5,"e":2e3,"big":1e300,"rate":70000})"));
  CHECK_EQ(json.integer("n", 0), -12LL);
  CHECK_EQ(json.integer("f", 9), 9LL);  // not whole
  CHECK_EQ(json.integer("e", 0), 2000LL);
  CHECK_EQ(json.integer("big", 5), 5LL);
  CHECK_EQ(json.integer("rate", 16000, 8000, 48000), 16000LL);  // out of range: the fallback
}

TEST(json_lite_refuses_what_is_not_one_object) {
  const char* bad[] = {
      "",          "[]",           "\"text\"",      "{",           "{\"a\":}",
      "{\"a\" 1}", "{\"a\":1,}",   "{\"a\":1} x",   "{'a':1}",     "{\"a\":01x}",
      "{\"a\":tru}", "{\"a\":\"\\q\"}", "{\"a\":\"\x01\"}", "{\"a\":\"open}", "{\"a\":-}",
      "{\"a\":1.}", "{\"a\":\"\\u12\"}", "<html>502</html>",
  };
  for (const char* text : bad) {
    JsonFields json;
    bool parsed = json.parse(text);
    if (parsed) CHECK_EQ(std::string(text), std::string("refused"));
    CHECK(json.fields().empty());
  }
}

TEST(json_lite_limits_refuse_deep_wide_and_large_messages) {
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += "{\"a\":";
  deep += "1";
  for (int i = 0; i < 20; ++i) deep += "}";
  JsonFields json;
  CHECK(!json.parse(deep));
  std::string deep_array = "{\"a\":" + std::string(50, '[') + std::string(50, ']') + "}";
  CHECK(!json.parse(deep_array));
  std::string wide = "{";
  for (int i = 0; i < 200; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
  wide += "}";
  CHECK(!json.parse(wide));
  CHECK(json.parse(wide, JsonLimits{1 << 20, 8, 256}));
  std::string large = "{\"t\":\"" + std::string(20000, 'x') + "\"}";
  CHECK(!json.parse(large));
}

TEST(json_lite_every_truncation_of_a_message_is_refused) {
  std::string text = R"({"type":"tts","state":"sentence_start","text":"Hi \u00e9!","n":[1,{"x":2}]})";
  JsonFields json;
  CHECK(json.parse(text));
  for (size_t cut = 0; cut < text.size(); ++cut) {
    JsonFields partial;
    if (partial.parse(text.substr(0, cut))) CHECK_EQ(cut, text.size());
  }
}

TEST(json_quote_escapes_what_json_needs_and_reads_back) {
  std::string raw = std::string("say \"hi\"\\ now\n\t\x01 \xC3\xA9");
  std::string quoted = json_quote(raw);
  CHECK_EQ(quoted, std::string("\"say \\\"hi\\\"\\\\ now\\n\\t\\u0001 \xC3\xA9\""));
  JsonFields json;
  CHECK(json.parse("{\"t\":" + quoted + "}"));
  CHECK_EQ(json.string("t"), raw);
}
