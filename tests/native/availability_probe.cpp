// A C++ application asking whether the delegate can run where OpenVINO's C library is not found: the first
// failed check logs the places tried (ExecuTorch's log, stderr), the same failure again logs nothing.
// tests/native/test_availability_log.py runs it.
#include "harness.h"

#include <cstdio>
#include <string>

int main() {
  auto* backend = harness::delegate_or_exit();
  const bool first = backend->is_available();
  const bool again = backend->is_available();
  // last_error() keeps the reason either way (and names a symbol, so the linker keeps the delegate library).
  std::printf("available: %d %d\nlast error kept: %d\n", first, again,
              executorch_openvino::last_error().find("Places tried") != std::string::npos);
  return 0;
}
