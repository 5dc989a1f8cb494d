// A minimal test runner: TEST(name) registers a case, CHECK/CHECK_EQ record failures, and
// main() prints one line per failure and a closing "N passed, N failed".
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace mini {

struct Case {
  const char* name;
  void (*run)();
};

std::vector<Case>& registry();

struct Registrar {
  Registrar(const char* name, void (*run)()) { registry().push_back({name, run}); }
};

void fail(const char* file, int line, const std::string& message);

template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};

template <typename T>
std::string show(const T& value) {
  std::ostringstream out;
  if constexpr (is_vector<T>::value) {
    out << "[";
    for (size_t i = 0; i < value.size(); ++i) out << (i ? ", " : "") << show(value[i]);
    out << "]";
  } else if constexpr (std::is_enum_v<T>) {
    out << "enum(" << static_cast<long long>(value) << ")";
  } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
    out << static_cast<int>(value);
  } else if constexpr (std::is_convertible_v<T, std::string>) {
    out << '"' << std::string(value) << '"';
  } else {
    out << value;
  }
  return out.str();
}

// Deterministic pseudo-random numbers (xorshift32) for split-point and fuzz tests.
class Random {
 public:
  explicit Random(uint32_t seed) : state_(seed == 0 ? 1 : seed) {}
  uint32_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_;
  }
  size_t below(size_t bound) { return bound == 0 ? 0 : next() % bound; }

 private:
  uint32_t state_;
};

}  // namespace mini

#define TEST(name)                                          \
  static void name();                                       \
  static const ::mini::Registrar name##_registrar(#name, name); \
  static void name()

#define CHECK(condition)                                                          \
  do {                                                                            \
    if (!(condition)) ::mini::fail(__FILE__, __LINE__, "CHECK(" #condition ")"); \
  } while (0)

#define CHECK_EQ(actual, expected)                                                      \
  do {                                                                                  \
    const auto& mini_actual = (actual);                                                 \
    const auto& mini_expected = (expected);                                             \
    if (!(mini_actual == mini_expected)) {                                              \
      ::mini::fail(__FILE__, __LINE__,                                                  \
                   "CHECK_EQ(" #actual ", " #expected "): " + ::mini::show(mini_actual) + \
                       " != " + ::mini::show(mini_expected));                           \
    }                                                                                   \
  } while (0)
