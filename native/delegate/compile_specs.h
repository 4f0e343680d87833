// Reads the compile specs that python/executorch_openvino/contract/compile_specs.py wrote.
//
// The keys, their defaults and allowed values have one definition,
// python/executorch_openvino/contract/compile_specs.json, from which the build writes
// compile_spec_keys.h (the keys the runtime reads: device, inference_precision,
// performance_hint and program_state; what each means: compile_specs.py). A key given
// twice: the last value wins, as on the Python side. Unknown keys are ignored so that
// a newer lowering stays loadable; unknown values are an error.
#pragma once

#include "compile_spec_keys.h"

#include <executorch/runtime/backend/interface.h>

#include <string>

namespace executorch_openvino {

struct RuntimeOptions {
  std::string device = kDeviceDefault;
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
