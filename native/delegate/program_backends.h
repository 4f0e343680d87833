// Which backends a program's method was delegated to, and what to say when
// this process cannot run one of them. Read from the program's metadata
// (ExecuTorch's MethodMeta) before the method is loaded, so a program made
// for another backend is explained instead of failing with an error code.
#pragma once

#include <executorch/runtime/executor/method_meta.h>

#include <string>
#include <vector>

namespace executorch_openvino {

// The backend id executorch's own OpenVINO delegate registers
// (executorch.backends.openvino; libexecutorch_backend_openvino in the
// executorch wheel): another delegate, with blobs of its own.
constexpr const char* kExecutorchOwnOpenVINOBackendId = "OpenvinoBackend";

struct BackendUse {
  std::string id;
  bool registered = false;  // a library in this process registered it with ExecuTorch's runtime
};

// The backends `meta`'s method uses, each once, in the program's order.
std::vector<BackendUse> method_backends(const executorch::runtime::MethodMeta& meta);

// Why method `method` cannot load here: one sentence per backend it uses that
// no library in this process registered, naming the id and what to do; ""
// when every backend it uses is registered.
std::string unregistered_backends_message(const std::string& method, const std::vector<BackendUse>& backends);

}  // namespace executorch_openvino
