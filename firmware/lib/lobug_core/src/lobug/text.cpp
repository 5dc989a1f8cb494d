#include "lobug/text.h"

#include <cstdint>

namespace lobug {
namespace {

// Decodes one UTF-8 character at text[i]; returns its length (1 for a malformed byte).
size_t next_code_point(std::string_view text, size_t i, uint32_t* cp) {
  auto lead = static_cast<unsigned char>(text[i]);
  size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (length == 0 || i + length > text.size()) {
    *cp = 0xFFFD;
    return 1;
  }
  uint32_t value = length == 1 ? lead : lead & (0xFFu >> (length + 1));
  for (size_t k = 1; k < length; ++k) {
    auto c = static_cast<unsigned char>(text[i + k]);
    if ((c & 0xC0) != 0x80) {
      *cp = 0xFFFD;
      return 1;
    }
    value = (value << 6) | (c & 0x3Fu);
  }
  *cp = value;
  return length;
}

const char* ascii_for(uint32_t cp) {
  switch (cp) {
    case 0x2018: case 0x2019: case 0x201A: case 0x2032: return "'";
    case 0x201C: case 0x201D: case 0x201E: case 0x2033: return "\"";
    case 0x2013: case 0x2014: case 0x2212: return "-";
    case 0x2026: return "...";
    case 0x00A0: case 0x2009: case 0x202F: return " ";
    default: return "?";
  }
}

}  // namespace

std::string to_display_ascii(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    uint32_t cp = 0;
    i += next_code_point(utf8, i, &cp);
    if (cp == '\n' || cp == '\t') out += ' ';
    else if (cp >= 0x20 && cp < 0x7F) out += static_cast<char>(cp);
    else if (cp >= 0x80) out += ascii_for(cp);
  }
  return out;
}

std::vector<std::string> wrap_text(std::string_view text, size_t width, size_t max_lines) {
  std::vector<std::string> lines;
  if (width == 0 || max_lines == 0) return lines;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(i, end - i);
    i = end + 1;
    for (; word.size() > width; word.remove_prefix(width)) {  // a word longer than a line
      if (!line.empty()) lines.push_back(line);
      lines.emplace_back(word.substr(0, width));
      line.clear();
    }
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty()) lines.push_back(line);
  if (lines.size() > max_lines) {
    lines.resize(max_lines);
    std::string& last = lines.back();
    if (last.size() + 3 > width) last.resize(width > 3 ? width - 3 : 0);
    last += "...";
  }
  return lines;
}

}  // namespace lobug
