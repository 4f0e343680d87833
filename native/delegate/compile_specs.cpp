#include "compile_specs.h"

#include <cstring>

namespace executorch_openvino {
namespace {

template <size_t N>
bool allowed(const char* const (&values)[N], const std::string& value) {
  for (const char* v : values) {
    if (value == v) return true;
  }
  return false;
}

// "compile spec 'key' is 'x'; allowed values are 'a', 'b', or '' for <empty_means>", as compile_specs.py says it.
template <size_t N>
std::string refusal(const char* key, const std::string& value, const char* const (&values)[N],
                    const char* empty_means) {
  std::string listed;
  size_t shown = 0;
  for (const char* v : values) {
    if (*v == '\0') continue;
    if (shown++) listed += ", ";
    listed += std::string("'") + v + "'";
  }
  if (*empty_means) listed += std::string(", or '' for ") + empty_means;
  return std::string("compile spec '") + key + "' is '" + value + "'; allowed values are " + listed;
}

}  // namespace

bool may_run_on_cpu(const std::string& device) {
  return device.find(kDeviceCpuContaining) != std::string::npos || allowed(kDeviceCpuNamed, device);
}

bool parse_compile_specs(executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs, RuntimeOptions* out,
                         std::string* error) {
  RuntimeOptions options;
  options.inference_precision = kInferencePrecisionDefault;
  options.performance_hint = kPerformanceHintDefault;
  options.program_state = kProgramStateDefault;
  for (const auto& spec : specs) {
    if (spec.key == nullptr) continue;
    std::string value(static_cast<const char*>(spec.value.buffer), spec.value.buffer ? spec.value.nbytes : 0);
    if (std::strcmp(spec.key, kDeviceKey) == 0) {
      if (value.empty()) {
        *error = "compile spec 'device' is empty; give an OpenVINO device name such as CPU";
        return false;
      }
      options.device = value;
    } else if (std::strcmp(spec.key, kInferencePrecisionKey) == 0) {
      if (!allowed(kInferencePrecisionValues, value)) {
        *error = refusal(kInferencePrecisionKey, value, kInferencePrecisionValues, kInferencePrecisionEmptyMeans);
        return false;
      }
      options.inference_precision = value;
    } else if (std::strcmp(spec.key, kPerformanceHintKey) == 0) {
      if (!allowed(kPerformanceHintValues, value)) {
        *error = refusal(kPerformanceHintKey, value, kPerformanceHintValues, kPerformanceHintEmptyMeans);
        return false;
      }
      options.performance_hint = value;
    } else if (std::strcmp(spec.key, kProgramStateKey) == 0) {
      options.program_state = value;  // any value but "none" means state (or unknown)
    }
  }
  // On CPU OpenVINO would compute in bf16 (x86 with AMX/avx512_bf16) or f16
  // (ARM) by default; measured 0.099 max abs error on MiniLM (docs/design.md). The
  // delegate promises float32 results unless asked otherwise.
  if (may_run_on_cpu(options.device) && options.inference_precision.empty()) {
    options.inference_precision = kInferencePrecisionDefaultOnCpu;
  }
  *out = options;
  return true;
}

}  // namespace executorch_openvino
