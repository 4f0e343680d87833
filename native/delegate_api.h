// What the delegate library exports to the pybindings (and to C++ programs).
#pragma once

#include <executorch/runtime/core/error.h>

#include <string>

namespace executorch_openvino {

// The backend id this delegate registers under. It differs from the
// "OpenvinoBackend" that the executorch wheel registers itself (DESIGN.md), so
// both live in one process and a .pte names the delegate that made it.
constexpr const char* kBackendId = "ExecutorchOpenvinoBackend";

// The result of registering with ExecuTorch's backend registry when this
// library was loaded.
executorch::runtime::Error registration_status();

// Records an error for the user: logged through ExecuTorch's log and kept as
// the last error, which Python reports (ExecuTorch's own exceptions carry only
// an error code).
void report_error(const std::string& message);
std::string last_error();

}  // namespace executorch_openvino
