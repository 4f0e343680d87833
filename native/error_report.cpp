#include "delegate_api.h"

#include <executorch/runtime/platform/log.h>

#include <mutex>

namespace executorch_openvino {
namespace {
std::mutex& error_mutex() {
  static std::mutex m;
  return m;
}
std::string& stored_error() {
  static std::string* s = new std::string();
  return *s;
}
}  // namespace

void report_error(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(error_mutex());
    stored_error() = message;
  }
  // ExecuTorch truncates one log message at a few hundred bytes: log line by line.
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    std::string line = message.substr(start, end - start);
    for (size_t i = 0; i < line.size() || i == 0; i += 200) {
      ET_LOG(Error, "[%s] %s", kBackendId, line.substr(i, 200).c_str());
      if (line.empty()) break;
    }
    start = end + 1;
  }
}

std::string last_error() {
  std::lock_guard<std::mutex> lock(error_mutex());
  return stored_error();
}

}  // namespace executorch_openvino
