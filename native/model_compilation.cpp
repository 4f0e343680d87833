#include "model_compilation.h"

#include "backend_options.h"
#include "compile_report.h"
#include "delegate_api.h"
#include "openvino_tensors.h"

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace executorch_openvino {

using executorch::runtime::Error;

namespace {

// ov_core_compile_model with up to 3 (key, value) properties: the C API is
// variadic. More is a programming error, refused rather than dropped.
ov_status_e compile_model(const OpenVinoApi& api, ov_core_t* core, const ov_model_t* model, const std::string& device,
                          const std::vector<std::pair<const char*, std::string>>& p, ov_compiled_model_t** out) {
  const char* d = device.c_str();
  switch (p.size()) {
    case 0:
      return api.ov_core_compile_model(core, model, d, 0, out);
    case 1:
      return api.ov_core_compile_model(core, model, d, 2, out, p[0].first, p[0].second.c_str());
    case 2:
      return api.ov_core_compile_model(core, model, d, 4, out, p[0].first, p[0].second.c_str(), p[1].first,
                                       p[1].second.c_str());
    case 3:
      return api.ov_core_compile_model(core, model, d, 6, out, p[0].first, p[0].second.c_str(), p[1].first,
                                       p[1].second.c_str(), p[2].first, p[2].second.c_str());
    default:
      return GENERAL_ERROR;
  }
}

// The IR could not be read although its checksum matched, so it is what
// lowering wrote: from another OpenVINO release, or written wrong.
void report_unreadable_ir(const ParsedBlob& blob) {
  std::string lowered_with = lowered_with_openvino(blob.xml, blob.xml_size);
  std::string loaded = OpenVinoLibrary::instance().info().version;
  auto release = [](const std::string& v) { return v.substr(0, v.find('-')); };  // "2026.4.1"
  std::string advice =
      lowered_with.empty() ? " It may come from another OpenVINO release: lower the model again with this one"
      : release(lowered_with) == release(loaded)
          ? " The same OpenVINO release wrote it, so the IR itself is wrong: lower the model again"
          : " Run it with OpenVINO " + release(lowered_with) + ", or lower the model again with this one";
  report_error(ov_message("init: OpenVINO " + loaded +
                          " could not read the model in the processed blob, which was lowered "
                          "with OpenVINO " +
                          (lowered_with.empty() ? std::string("(not recorded)") : lowered_with) + "." + advice));
}

}  // namespace

Error compile_blob(const RuntimeOptions& options, const ParsedBlob& blob, const std::string& cache_dir,
                   std::shared_ptr<SharedCompiledModel>* out) {
  OpenVinoLibrary& library = OpenVinoLibrary::instance();
  const OpenVinoApi& api = library.api();
  std::unique_ptr<void, decltype(&std::free)> weights(nullptr, &std::free);
  ov_tensor_t* weights_tensor = nullptr;
  if (blob.weights_size > 0) {
    size_t padded = (blob.weights_size + 63) / 64 * 64;
    weights.reset(std::aligned_alloc(64, padded));
    if (!weights) {
      report_error("init: could not allocate " + std::to_string(blob.weights_size) + " bytes for the model weights");
      return Error::MemoryAllocationFailed;
    }
    std::memcpy(weights.get(), blob.weights, blob.weights_size);
    std::vector<int64_t> dims{static_cast<int64_t>(blob.weights_size)};
    if (api.ov_tensor_create_from_host_ptr(U8, shape_view(dims), weights.get(), &weights_tensor) != OK) {
      report_error(ov_message("init: could not wrap the model weights in a tensor"));
      return Error::Internal;
    }
  }
  ov_model_t* model = nullptr;
  ov_status_e status =
      api.ov_core_read_model_from_memory_buffer(library.core(), blob.xml, blob.xml_size, weights_tensor, &model);
  if (weights_tensor) api.ov_tensor_free(weights_tensor);
  if (status != OK) {
    report_unreadable_ir(blob);
    return Error::InvalidProgram;
  }
  std::vector<std::pair<const char*, std::string>> properties;
  if (!options.inference_precision.empty()) {
    properties.emplace_back("INFERENCE_PRECISION_HINT", options.inference_precision);
  }
  if (!options.performance_hint.empty()) properties.emplace_back("PERFORMANCE_HINT", options.performance_hint);
  std::string cache_problem;
  if (!cache_dir.empty()) properties.emplace_back("CACHE_DIR", cache_entry_dir(cache_dir, options));
  ov_compiled_model_t* compiled = nullptr;
  status = compile_model(api, library.core(), model, options.device, properties, &compiled);
  if (status != OK && !cache_dir.empty()) {
    // The cache only saves time: an unusable folder must not stop the load.
    cache_problem = ov_message("OpenVINO could not use the model cache folder '" + properties.back().second +
                               "', so the model was compiled without it");
    report_warning("init: " + cache_problem + ". Fix the folder or call set_cache_dir again.");
    properties.pop_back();
    status = compile_model(api, library.core(), model, options.device, properties, &compiled);
  }
  api.ov_model_free(model);
  if (status != OK) {
    report_error(ov_message("init: OpenVINO could not compile the model for device '" + options.device + "'"));
    return Error::InvalidProgram;
  }
  CompileReport report = compile_report(options, compiled, cache_problem);
  if (!options.inference_precision.empty() && !report.effective_precision.empty() &&
      report.effective_precision != options.inference_precision) {
    // Measured: an AVX-512 bf16 CPU without float16 arithmetic takes "f16" as bf16 (OpenVINO 2026.4.1).
    report_warning("init: inference_precision '" + options.inference_precision + "' was asked for, but OpenVINO's " +
                   options.device + " plugin computes in '" + report.effective_precision +
                   "' on this machine (exov.last_compile_report() shows it); ask for that precision to silence this");
  }
  *out = std::make_shared<SharedCompiledModel>(options, blob, weights.release(), compiled, report);
  return Error::Ok;
}

}  // namespace executorch_openvino
