#include "compile_report.h"

#include "compile_spec_keys.h"

#include <mutex>

namespace executorch_openvino {
namespace {

std::mutex report_mutex;
CompileReport last_report;

std::string compiled_property(ov_compiled_model_t* compiled, const char* key) {
  const OpenVINOApi& api = OpenVINOLibrary::instance().api();
  std::string text;
  char* value = nullptr;
  if (api.ov_compiled_model_get_property(compiled, key, &value) == OK && value) {
    text = value;
    api.ov_free(value);
  }
  return text;
}

}  // namespace

bool loaded_from_cache(ov_compiled_model_t* compiled) {
  // A boolean property: "YES"/"NO" as text (2025.4.1 and 2026.4.1).
  const std::string cached = compiled_property(compiled, "LOADED_FROM_CACHE");
  return cached == "YES" || cached == "true" || cached == "1";
}

CompileReport compile_report(const RuntimeOptions& options, ov_compiled_model_t* compiled,
                             const std::string& cache_problem) {
  std::string effective = compiled_property(compiled, kInferencePrecisionProperty);  // compile_specs.json
  bool from_cache = loaded_from_cache(compiled);
  CompileReport report{options.device,
                       options.inference_precision,
                       effective,
                       from_cache,
                       cache_problem,
                       options.performance_hint,
                       compiled_property(compiled, kPerformanceHintProperty),
                       compiled_property(compiled, "NUM_STREAMS"),
                       compiled_property(compiled, "OPTIMAL_NUMBER_OF_INFER_REQUESTS")};
  return report;
}

void remember_compile_report(const CompileReport& report) {
  std::lock_guard<std::mutex> lock(report_mutex);
  last_report = report;
}

CompileReport last_compile_report() {
  std::lock_guard<std::mutex> lock(report_mutex);
  return last_report;
}

}  // namespace executorch_openvino
