// Reads the compile specs that python/executorch_openvino/compile_specs.py wrote.
//
// Keys: "device" (default "CPU"), "inference_precision" ("f32", "f16",
// "bf16", or "" for the device's default) and "performance_hint" ("LATENCY",
// "THROUGHPUT", "CUMULATIVE_THROUGHPUT", or "" for the device's default). A key given twice: the last value
// wins, as on the Python side. Unknown keys are ignored so that a newer
// lowering stays loadable; unknown values are an error.
#pragma once

#include <executorch/runtime/backend/interface.h>

#include <string>

namespace executorch_openvino {

struct RuntimeOptions {
  std::string device = "CPU";
  // The value passed as INFERENCE_PRECISION_HINT, or "" to pass none.
  std::string inference_precision;
  // The value passed as PERFORMANCE_HINT, or "" to pass none.
  std::string performance_hint;
};

// True for "CPU" and for devices that may pick it: "AUTO", "HETERO:GPU,CPU", "MULTI:CPU".
bool may_run_on_cpu(const std::string& device);

bool parse_compile_specs(
    executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs,
    RuntimeOptions* out, std::string* error);

}  // namespace executorch_openvino
