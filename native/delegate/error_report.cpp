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
// Concurrent calls of one program (OpenVINOMethod) each read their own failure.
thread_local std::string thread_error;

// Messages quote bytes from outside (blob contents, paths, device names). Two
// consumers need them clean: Python's str (invalid UTF-8 raised inside
// ExecuTorch's log callback and aborted the process), and ExecuTorch's log,
// which truncates and may split a multi-byte character.
// Non-ASCII bytes become \xNN: always valid, and safe to cut anywhere.
std::string ascii_escaped(const std::string& text) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c >= 0x80 || (c < 0x20 && c != '\n' && c != '\t')) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}
}  // namespace

namespace {
// ExecuTorch truncates one log message at a few hundred bytes: log line by line.
void log_lines(const std::string& message) {
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
}  // namespace

void record_error(const std::string& raw_message) {
  std::string message = ascii_escaped(raw_message);
  thread_error = message;
  std::lock_guard<std::mutex> lock(error_mutex());
  stored_error() = std::move(message);
}

void report_error(const std::string& raw_message) {
  record_error(raw_message);
  log_lines(ascii_escaped(raw_message));
}

// ExecuTorch's log has no warning level: Error, which is always compiled in.
void report_warning(const std::string& raw_message) { log_lines("warning: " + ascii_escaped(raw_message)); }

void clear_last_error() {
  std::lock_guard<std::mutex> lock(error_mutex());
  stored_error().clear();
}

std::string last_error() {
  std::lock_guard<std::mutex> lock(error_mutex());
  return stored_error();
}

std::string thread_last_error() { return thread_error; }

void clear_thread_last_error() { thread_error.clear(); }

}  // namespace executorch_openvino
