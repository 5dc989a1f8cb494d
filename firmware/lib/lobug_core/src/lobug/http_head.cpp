#include "lobug/http_head.h"

#include <cctype>

namespace lobug {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// "HTTP/1.x NNN reason": the status, or 0 when the line is not a status line.
int parse_status_line(std::string_view line) {
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || line[8] != ' ') return 0;
  int status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(line[i]))) return 0;
    status = status * 10 + (line[i] - '0');
  }
  return line.size() == 12 || line[12] == ' ' ? status : 0;
}

}  // namespace

std::string chunked_post_head(std::string_view host, uint16_t port, std::string_view path,
                              std::string_view content_type, const std::vector<Header>& headers) {
  std::string head = "POST " + std::string(path) + " HTTP/1.1\r\n";
  head += "Host: " + std::string(host) + ":" + std::to_string(port) + "\r\n";
  head += "Content-Type: " + std::string(content_type) + "\r\n";
  head += "Transfer-Encoding: chunked\r\n";
  head += "Connection: close\r\n";
  for (const Header& header : headers) head += header.first + ": " + header.second + "\r\n";
  head += "\r\n";
  return head;
}

size_t ResponseHead::feed(const uint8_t* data, size_t size) {
  size_t used = 0;
  while (used < size && (state_ == State::StatusLine || state_ == State::Headers)) {
    char c = static_cast<char>(data[used++]);
    if (++total_ > kMaxBytes) {
      state_ = State::Error;
    } else if (c == '\n') {
      on_line();
    } else if (c != '\r') {
      line_ += c;
    }
  }
  return used;
}

void ResponseHead::on_line() {
  std::string line;
  line.swap(line_);
  if (state_ == State::StatusLine) {
    status_ = parse_status_line(line);
    state_ = status_ >= 100 ? State::Headers : State::Error;
    return;
  }
  if (line.empty()) {
    state_ = State::Done;
    return;
  }
  size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) {
    state_ = State::Error;
    return;
  }
  std::string_view view(line);
  headers_.emplace_back(std::string(view.substr(0, colon)),
                        std::string(trimmed(view.substr(colon + 1))));
}

std::string ResponseHead::header(std::string_view name) const {
  for (const Header& header : headers_) {
    if (same_name(header.first, name)) return header.second;
  }
  return "";
}

}  // namespace lobug
