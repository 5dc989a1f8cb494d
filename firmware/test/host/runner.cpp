#include "runner.h"

#include <cstdio>
#include <cstring>

namespace mini {
namespace {

int failures_in_case = 0;

}  // namespace

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

void fail(const char* file, int line, const std::string& message) {
  ++failures_in_case;
  std::printf("  %s:%d: %s\n", file, line, message.c_str());
}

}  // namespace mini

// Usage: lobug_host_tests [substring]  (runs the cases whose name contains it)
int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : nullptr;
  int passed = 0, failed = 0;
  for (const mini::Case& test : mini::registry()) {
    if (filter != nullptr && std::strstr(test.name, filter) == nullptr) continue;
    mini::failures_in_case = 0;
    test.run();
    if (mini::failures_in_case == 0) {
      ++passed;
    } else {
      ++failed;
      std::printf("FAIL %s\n", test.name);
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
