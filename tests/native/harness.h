// What the C++ test and benchmark programs share: reading a blob file and
// finding the delegate in ExecuTorch's registry. Header-only; built by
// tests/support/exov_testing/compile_harness.py, which puts this folder on the include path.
#pragma once

#include "delegate_api.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

namespace harness {

inline std::vector<char> read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// ExecuTorch initialised and the delegate looked up; exits with status 1 when it is not registered.
inline executorch::runtime::BackendInterface* delegate_or_exit() {
  executorch::runtime::runtime_init();
  auto* backend = executorch::runtime::get_backend_class(executorch_openvino::kBackendId);
  if (backend == nullptr) {
    std::fprintf(stderr, "the delegate is not registered\n");
    std::exit(1);
  }
  return backend;
}

// The compile specs {device: CPU}.
struct CpuSpecs {
  char device[4] = "CPU";
  executorch::runtime::CompileSpec specs[1] = {{"device", {device, 3}}};
  executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> view() const {
    return executorch::runtime::ArrayRef<executorch::runtime::CompileSpec>(specs, 1);
  }
};

}  // namespace harness
