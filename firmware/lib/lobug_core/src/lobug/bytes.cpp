#include "lobug/bytes.h"

#include <cstring>

namespace lobug {

bool ByteBuffer::write(const uint8_t* data, size_t size) {
  size_t room = capacity_ - size_;
  size_t taken = size < room ? size : room;
  if (taken > 0) std::memcpy(data_ + size_, data, taken);
  size_ += taken;
  if (taken < size) overflowed_ = true;
  return true;  // overflow is not malformed input: keep consuming so the parse can finish
}

}  // namespace lobug
