// ExecuTorch's log lines of one thread, held instead of printed while that
// thread runs a method for Python (python_method.h), so that Python can drop
// the lines its exception restates (python/executorch_openvino/runtime/native_log.py).
// Lines go through ExecuTorch's platform layer (PAL): this installs a log
// function that holds the lines of capturing threads and passes every other
// line, and every fatal one (an abort follows it), to the function installed
// before it (executorch's pybindings', or the default).
#pragma once

#include <string>

namespace executorch_openvino {

// Installs the log function if another one replaced it (or none was installed).
// Call with the interpreter held, after executorch's pybindings were imported.
void install_log_capture();

// While alive, ExecuTorch's lines on this thread are appended to held_log_lines()
// as "[file.cpp:line] message\n", the format of executorch's pybindings.
class ThreadLogCapture {
 public:
  ThreadLogCapture();
  ~ThreadLogCapture();
  ThreadLogCapture(const ThreadLogCapture&) = delete;
  ThreadLogCapture& operator=(const ThreadLogCapture&) = delete;

 private:
  bool outer_;
};

// This thread's held lines (cleared by the caller when taken).
std::string& held_log_lines();

}  // namespace executorch_openvino
