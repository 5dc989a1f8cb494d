#include "lobug/json_lite.h"

#include <cstdlib>

namespace lobug {

size_t encode_utf8(uint32_t cp, char* out) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

// Recursive descent over a message already in memory; depth is capped, so the recursion is.
class JsonParser {
 public:
  JsonParser(std::string_view text, const JsonLimits& limits, JsonFields& out)
      : text_(text), limits_(limits), out_(out) {}

  bool run() {
    skip_space();
    if (!object("", 1)) return false;
    skip_space();
    return pos_ == text_.size();
  }

 private:
  // `keep`: store what is read (false inside arrays: they are checked and skipped).
  bool object(const std::string& prefix, size_t depth, bool keep = true) {
    if (depth > limits_.max_depth || !take('{')) return false;
    if (keep && !prefix.empty()) out_.objects_.push_back(prefix);
    skip_space();
    if (take('}')) return true;
    for (;;) {
      std::string key;
      skip_space();
      if (!string(&key)) return false;
      skip_space();
      if (!take(':')) return false;
      skip_space();
      if (!value(prefix.empty() ? key : prefix + "." + key, depth, keep)) return false;
      skip_space();
      if (take('}')) return true;
      if (!take(',')) return false;
    }
  }

  bool array(size_t depth) {
    if (depth > limits_.max_depth || !take('[')) return false;
    skip_space();
    if (take(']')) return true;
    for (;;) {
      skip_space();
      if (!value("", depth, false)) return false;
      skip_space();
      if (take(']')) return true;
      if (!take(',')) return false;
    }
  }

  bool value(const std::string& path, size_t depth, bool keep) {
    char c = peek();
    if (c == '{') return object(path, depth + 1, keep);
    if (c == '[') return array(depth + 1);
    JsonField field;
    field.path = path;
    if (!scalar(&field)) return false;
    if (!keep) return true;
    if (out_.fields_.size() >= limits_.max_fields) return false;
    out_.fields_.push_back(std::move(field));
    return true;
  }

  bool scalar(JsonField* field) {
    if (peek() == '"') {
      field->kind = JsonKind::String;
      return string(&field->value);
    }
    for (const char* word : {"true", "false", "null"}) {
      if (!literal(word)) continue;
      field->kind = word[0] == 'n' ? JsonKind::Null : JsonKind::Bool;
      field->value = word[0] == 'n' ? "" : word;
      return true;
    }
    field->kind = JsonKind::Number;
    return number(&field->value);
  }

  bool number(std::string* out) {
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (!digits()) return false;
    if (peek() == '.') {
      ++pos_;
      if (!digits()) return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!digits()) return false;
    }
    *out = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  bool digits() {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }

  bool string(std::string* out) {
    if (!take('"')) return false;
    out->clear();
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return false;
      char e = text_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out->push_back(e); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': if (!unicode(out)) return false; break;
        default: return false;
      }
    }
    return false;
  }

  bool hex4(uint32_t* value) {
    if (pos_ + 4 > text_.size()) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return false;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    *value = v;
    return true;
  }

  // \uXXXX, with a surrogate pair joined; a lone surrogate becomes U+FFFD.
  bool unicode(std::string* out) {
    uint32_t cp = 0;
    if (!hex4(&cp)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
      size_t mark = pos_;
      pos_ += 2;
      uint32_t low = 0;
      if (!hex4(&low)) return false;
      if (low >= 0xDC00 && low <= 0xDFFF) cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      else pos_ = mark;  // not a pair: the next escape is read on its own
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
    char bytes[4];
    out->append(bytes, encode_utf8(cp, bytes));
    return true;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool take(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  std::string_view text_;
  JsonLimits limits_;
  JsonFields& out_;
  size_t pos_ = 0;
};

bool JsonFields::parse(std::string_view text, const JsonLimits& limits) {
  fields_.clear();
  objects_.clear();
  bool ok = text.size() <= limits.max_bytes && JsonParser(text, limits, *this).run();
  if (!ok) {
    fields_.clear();
    objects_.clear();
  }
  return ok;
}

const JsonField* JsonFields::find(std::string_view path) const {
  for (const JsonField& field : fields_) {
    if (field.path == path) return &field;
  }
  return nullptr;
}

std::string JsonFields::string(std::string_view path, std::string_view fallback) const {
  const JsonField* field = find(path);
  return field != nullptr && field->kind == JsonKind::String ? field->value
                                                             : std::string(fallback);
}

long long JsonFields::integer(std::string_view path, long long fallback, long long min,
                              long long max) const {
  const JsonField* field = find(path);
  if (field == nullptr || field->kind != JsonKind::Number) return fallback;
  char* end = nullptr;
  double value = std::strtod(field->value.c_str(), &end);
  if (end == field->value.c_str() || value < double(min) || value > double(max)) return fallback;
  long long whole = static_cast<long long>(value);
  return double(whole) == value ? whole : fallback;
}

bool JsonFields::boolean(std::string_view path, bool fallback) const {
  const JsonField* field = find(path);
  return field != nullptr && field->kind == JsonKind::Bool ? field->value == "true" : fallback;
}

bool JsonFields::has_object(std::string_view path) const {
  for (const std::string& object : objects_) {
    if (object == path) return true;
  }
  return false;
}

std::string json_quote(std::string_view text) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 15];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace lobug
