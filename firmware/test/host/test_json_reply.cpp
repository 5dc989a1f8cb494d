#include <cstdio>
#include <string>
#include <vector>

#include "lobug/json_reply.h"
#include "runner.h"

using namespace lobug;

namespace {

struct Scanned {
  ReplyFields fields;
  std::string audio;
  bool ok = false;
  bool complete = false;
  bool overflowed = false;
};

// Feeds `json` in pieces of 1..max_piece bytes (0: all at once).
Scanned scan(const std::string& json, size_t max_piece = 0, uint32_t seed = 1,
             size_t audio_capacity = 256, size_t max_text = 1024) {
  std::vector<uint8_t> audio(audio_capacity);
  ByteBuffer buffer(audio.data(), audio.size());
  ReplyScanner scanner(buffer, max_text);
  mini::Random random(seed);
  bool ok = true;
  for (size_t at = 0; at < json.size() && ok;) {
    size_t piece = max_piece == 0 ? json.size() : 1 + random.below(max_piece);
    if (at + piece > json.size()) piece = json.size() - at;
    ok = scanner.feed(json.data() + at, piece);
    at += piece;
  }
  Scanned result;
  result.fields = scanner.fields();
  result.audio.assign(audio.begin(), audio.begin() + static_cast<long>(buffer.size()));
  result.ok = ok && !scanner.failed();
  result.complete = scanner.complete();
  result.overflowed = buffer.overflowed();
  return result;
}

// As the server sends it: Starlette's JSONResponse writes compact separators and raw UTF-8.
const std::string kReply =
    R"({"transcription":"What's the weather?","response":"Sunny, 22°C — enjoy!",)"
    R"("action":"respond","audio_b64":"UklGRg=="})";

}  // namespace

TEST(json_reply_reads_the_contract_fields) {
  Scanned s = scan(kReply);
  CHECK(s.ok);
  CHECK(s.complete);
  CHECK_EQ(s.fields.transcription, std::string("What's the weather?"));
  CHECK_EQ(s.fields.response, std::string("Sunny, 22°C — enjoy!"));
  CHECK_EQ(s.fields.action, std::string("respond"));
  CHECK(s.fields.has_audio);
  CHECK(s.fields.audio_valid);
  CHECK_EQ(s.audio, std::string("RIFF"));
}

TEST(json_reply_is_the_same_for_every_split) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    Scanned s = scan(kReply, 1 + seed % 7, seed);
    CHECK(s.ok && s.complete);
    CHECK_EQ(s.fields.response, std::string("Sunny, 22°C — enjoy!"));
    CHECK_EQ(s.audio, std::string("RIFF"));
  }
}

TEST(json_reply_decodes_escapes_and_unicode) {
  Scanned s = scan(
      R"({"response":"a\"b\\c\/d\ne\tf \u00e9 \u20ac \ud83d\ude00 \ud800x","action":"react"})");
  CHECK(s.ok && s.complete);
  CHECK_EQ(s.fields.response,
           std::string("a\"b\\c/d\ne\tf \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBDx"));
  CHECK_EQ(s.fields.action, std::string("react"));
  CHECK(!s.fields.has_audio);
}

TEST(json_reply_skips_unknown_fields_of_any_type) {
  Scanned s = scan(
      " {\n \"timings\": {\"stt\": [1, 2.5e3, {\"x\": \"}]\\\"\"}]},\n \"ok\": true,"
      " \"n\": -1.5E+2, \"none\": null, \"action\" : \"ignore\", \"audio_b64\": \"\","
      " \"later\": \"\\u0041\" } \n");
  CHECK(s.ok);
  CHECK(s.complete);
  CHECK_EQ(s.fields.action, std::string("ignore"));
  CHECK(!s.fields.has_audio);
  CHECK(s.fields.audio_valid);
}

TEST(json_reply_decodes_escaped_slashes_in_base64) {
  Scanned s = scan(R"({"audio_b64":"P\/8A"})");
  CHECK(s.ok && s.fields.has_audio && s.fields.audio_valid);
  CHECK_EQ(s.audio, std::string("\x3F\xFF\x00", 3));
}

TEST(json_reply_flags_bad_base64_but_keeps_reading) {
  Scanned s = scan(R"({"audio_b64":"Zm9v!!","response":"still here"})");
  CHECK(s.ok && s.complete);
  CHECK(s.fields.has_audio);
  CHECK(!s.fields.audio_valid);
  CHECK_EQ(s.fields.response, std::string("still here"));
}

TEST(json_reply_caps_text_at_a_character_boundary) {
  Scanned s = scan(R"({"response":"ab€€€"})", 0, 1, 16, 6);  // € is three bytes
  CHECK(s.ok && s.complete);
  CHECK_EQ(s.fields.response, std::string("ab€"));
  CHECK(s.fields.text_truncated);
}

TEST(json_reply_audio_larger_than_the_buffer_is_cut_not_fatal) {
  Scanned s = scan(R"({"audio_b64":"Zm9vYmFy","action":"respond"})", 0, 1, 4);
  CHECK(s.ok && s.complete);
  CHECK(s.overflowed);
  CHECK_EQ(s.audio, std::string("foob"));
  CHECK_EQ(s.fields.action, std::string("respond"));
}

TEST(json_reply_a_second_audio_field_is_ignored) {
  Scanned s = scan(R"({"audio_b64":"Zm9v","audio_b64":"YmFy"})");
  CHECK(s.ok && s.complete);
  CHECK_EQ(s.audio, std::string("foo"));
}

TEST(json_reply_rejects_what_is_not_a_json_object) {
  const char* bad[] = {
      "[1,2]",
      "<html>502 Bad Gateway</html>",
      R"({"action" "respond"})",
      R"({"action":"respond",})",
      R"({"action":"resp)" "\x01" R"(ond"})",
      R"({"response":"\q"})",
      R"({"response":"\u12G4"})",
      R"({"a":1}})",
      R"({,})",
  };
  for (const char* json : bad) {
    Scanned s = scan(json);
    CHECK(!s.ok || !s.complete);
    if (s.ok && s.complete) std::printf("  accepted: %s\n", json);
  }
}

TEST(json_reply_a_cut_body_is_not_complete) {
  std::string cut = kReply.substr(0, kReply.size() - 3);
  Scanned s = scan(cut);
  CHECK(s.ok);
  CHECK(!s.complete);
}

TEST(json_reply_trim_partial_utf8) {
  std::string text = "ok\xE2\x82";  // first two bytes of €
  trim_partial_utf8(text);
  CHECK_EQ(text, std::string("ok"));
  text = "ok\xF0\x9F\x98";
  trim_partial_utf8(text);
  CHECK_EQ(text, std::string("ok"));
  text = "ok\xC3\xA9";
  trim_partial_utf8(text);
  CHECK_EQ(text, std::string("ok\xC3\xA9"));
  text = "\x82";
  trim_partial_utf8(text);
  CHECK_EQ(text, std::string(""));
}
