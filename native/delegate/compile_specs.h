// Reads the compile specs that python/executorch_openvino/compile_specs.py wrote.
//
// Keys: "device" (default "CPU"), "inference_precision" ("f32", "f16",
// "bf16", or "" for the device's default) and "performance_hint" ("LATENCY",
// "THROUGHPUT", "CUMULATIVE_THROUGHPUT", or "" for the device's default) and "program_state" (what the
// partitioner found in the whole program: "none" when it keeps no state between calls; read by
// start_init_capture's callers, never by OpenVINO). A key given twice: the last value wins, as on the
// Python side. Unknown keys are ignored so that a newer
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
  // The "program_state" compile spec as written ("" when absent); not a compile option.
  std::string program_state;
};

// True for "CPU" and for devices that may pick it: "AUTO", "HETERO:GPU,CPU", "MULTI:CPU".
bool may_run_on_cpu(const std::string& device);

bool parse_compile_specs(executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs, RuntimeOptions* out,
                         std::string* error);

}  // namespace executorch_openvino
