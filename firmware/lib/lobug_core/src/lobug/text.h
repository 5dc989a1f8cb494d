// Text for a small screen: the built-in fonts cover ASCII only, and lines must break at words.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lobug {

// Replaces typographic punctuation with its ASCII look-alike (’ “ ” – — …) and any other
// non-ASCII character with '?', so the font never draws garbage for UTF-8 bytes.
std::string to_display_ascii(std::string_view utf8);

// Breaks at spaces into lines of at most `width` characters (a longer word is cut); when more
// than `max_lines` are needed, the last line ends with "...".
std::vector<std::string> wrap_text(std::string_view text, size_t width, size_t max_lines);

}  // namespace lobug
