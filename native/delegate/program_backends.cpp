#include "program_backends.h"

#include <executorch/runtime/backend/interface.h>

#include <algorithm>

#include "delegate_api.h"

namespace executorch_openvino {

std::vector<BackendUse> method_backends(const executorch::runtime::MethodMeta& meta) {
  std::vector<BackendUse> uses;
  for (size_t i = 0; i < meta.num_backends(); ++i) {
    auto name = meta.get_backend_name(i);
    if (!name.ok()) continue;
    std::string id = name.get();
    if (std::any_of(uses.begin(), uses.end(), [&](const BackendUse& u) { return u.id == id; })) continue;
    uses.push_back({id, executorch::runtime::get_backend_class(id.c_str()) != nullptr});
  }
  return uses;
}

std::string unregistered_backends_message(const std::string& method, const std::vector<BackendUse>& backends) {
  std::string message;
  for (const BackendUse& use : backends) {
    if (use.registered) continue;
    if (!message.empty()) message += "\n";
    message += "method '" + method + "' was delegated to the backend '" + use.id +
               "', which no library in this process has registered with ExecuTorch's runtime";
    if (use.id == kBackendId) {
      message +=
          ": this delegate's library did not register (load libexecutorch_openvino_backend with the "
          "runtime, linked with --no-as-needed, or import executorch_openvino)";
    } else if (use.id == kExecutorchOwnOpenVINOBackendId) {
      message += std::string(". '") + use.id +
                 "' is executorch's own OpenVINO delegate (executorch.backends.openvino), not executorch-openvino "
                 "(backend id '" +
                 kBackendId +
                 "'): lower the model again with executorch-openvino's partitioner "
                 "(executorch_openvino.OpenVINOPartitioner, or exov.lower)";
    } else {
      message += std::string(
                     ". executorch-openvino runs the partitions lowered with its own partitioner "
                     "(backend id '") +
                 kBackendId + "'): lower the model again with executorch_openvino.OpenVINOPartitioner, or run it " +
                 "with a runtime that links the library registering '" + use.id + "'";
    }
  }
  return message;
}

}  // namespace executorch_openvino
