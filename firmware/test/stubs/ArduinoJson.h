// ArduinoJson 7, host stub: JsonDocument, a filter and deserializeJson for the flat objects
// firmware/src reads ({"error": ...}, {"response": ...}); string members only, the rest skipped.
#pragma once

#include <map>
#include <set>
#include <string>

class JsonDocument;

class JsonVariant {
 public:
  JsonVariant(JsonDocument& doc, std::string key) : doc_(doc), key_(std::move(key)) {}
  JsonVariant& operator=(bool keep);  // in a filter: keep this member
  const char* operator|(const char* fallback) const;

 private:
  JsonDocument& doc_;
  std::string key_;
};

class JsonDocument {
 public:
  JsonVariant operator[](const char* key) { return JsonVariant(*this, key); }

  std::map<std::string, std::string> strings;
  std::set<std::string> kept;  // a filter's members
};

class DeserializationError {
 public:
  explicit DeserializationError(bool failed) : failed_(failed) {}
  explicit operator bool() const { return failed_; }

 private:
  bool failed_;
};

namespace DeserializationOption {
class Filter {
 public:
  explicit Filter(JsonDocument& filter) : filter_(filter) {}
  const JsonDocument& document() const { return filter_; }

 private:
  JsonDocument& filter_;
};
}  // namespace DeserializationOption

DeserializationError deserializeJson(JsonDocument& doc, const std::string& input,
                                     DeserializationOption::Filter filter);
