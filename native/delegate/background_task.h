// Work on a thread of its own, joined before its results are read.
//
// pthreads, not std::thread: the static libstdc++ calls pthread_create at glibc
// 2.34's symbol version, newer than manylinux_2_28 allows (glibc_2_28.h binds
// this file's calls to the old ones). Where no thread can be started (or off
// Linux), the work runs in wait().
#pragma once

#include "internal_symbols.h"

#include <functional>
#include <memory>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

class BackgroundTask {
 public:
  explicit BackgroundTask(std::function<void()> work);
  // Waits for the work if it runs; never starts it.
  ~BackgroundTask();
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;

  // Returns once the work has run (here, if no thread ran it).
  void wait();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

EXOV_INTERNAL_END
}  // namespace executorch_openvino
