#include "lobug/wire.h"

#include <cstdio>
#include <cstring>

namespace lobug {

std::vector<Header> device_headers(std::string_view token, std::string_view device_id) {
  std::vector<Header> headers;
  if (!token.empty()) headers.emplace_back(kHeaderAuthorization, "Bearer " + std::string(token));
  if (!device_id.empty()) headers.emplace_back(kHeaderDeviceId, std::string(device_id));
  return headers;
}

std::string make_boundary(uint32_t random_high, uint32_t random_low) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "lobug-%08lx%08lx", static_cast<unsigned long>(random_high),
                static_cast<unsigned long>(random_low));
  return buffer;
}

std::string multipart_content_type(std::string_view boundary) {
  return "multipart/form-data; boundary=" + std::string(boundary);
}

std::string multipart_head(std::string_view boundary) {
  std::string head = "--" + std::string(boundary) + "\r\n";
  head += "Content-Disposition: form-data; name=\"";
  head += kAudioField;
  head += "\"; filename=\"";
  head += kAudioFilename;
  head += "\"\r\nContent-Type: ";
  head += kAudioContentType;
  head += "\r\n\r\n";
  return head;
}

std::string multipart_tail(std::string_view boundary) {
  return "\r\n--" + std::string(boundary) + "--\r\n";
}

UploadBody finish_upload(uint8_t* buffer, size_t samples, std::string_view boundary) {
  std::string head = multipart_head(boundary);
  std::string tail = multipart_tail(boundary);
  if (head.size() > UploadLayout::kHeadReserve || tail.size() > UploadLayout::kTailReserve) {
    return {};
  }
  size_t pcm_bytes = samples * sizeof(int16_t);
  uint8_t* wav = buffer + UploadLayout::kHeadReserve;
  wav_write_header(wav, WavFormat{kRecordRate, 1, 16}, static_cast<uint32_t>(pcm_bytes));
  uint8_t* start = wav - head.size();
  std::memcpy(start, head.data(), head.size());
  std::memcpy(wav + kWavHeaderSize + pcm_bytes, tail.data(), tail.size());
  return {start, head.size() + kWavHeaderSize + pcm_bytes + tail.size()};
}

}  // namespace lobug
