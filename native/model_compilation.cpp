#include "model_compilation.h"

#include "backend_options.h"
#include "compile_report.h"
#include "delegate_api.h"
#include "file_system.h"
#include "model_cache.h"
#include "model_weights.h"
#include "openvino_tensors.h"
#include "resident_pages.h"

#include <functional>
#include <utility>
#include <vector>

namespace executorch_openvino {

using executorch::runtime::Error;

namespace {

using Properties = std::vector<std::pair<const char*, std::string>>;

// Calls `compile(n, key1, value1, ...)` with the (key, value) pairs of `p`, as
// OpenVINO's variadic C API takes them: n = 2 * pairs. Up to 4 pairs; more is
// a programming error, refused rather than dropped.
template <typename Compile>
ov_status_e with_properties(const Properties& p, Compile compile) {
  auto v = [&](size_t i) { return p[i].second.c_str(); };
  switch (p.size()) {
    case 0:
      return compile(0);
    case 1:
      return compile(2, p[0].first, v(0));
    case 2:
      return compile(4, p[0].first, v(0), p[1].first, v(1));
    case 3:
      return compile(6, p[0].first, v(0), p[1].first, v(1), p[2].first, v(2));
    case 4:
      return compile(8, p[0].first, v(0), p[1].first, v(1), p[2].first, v(2), p[3].first, v(3));
    default:
      return GENERAL_ERROR;
  }
}

// The compile options as OpenVINO properties.
Properties compile_properties(const RuntimeOptions& options) {
  Properties properties;
  if (!options.inference_precision.empty()) {
    properties.emplace_back("INFERENCE_PRECISION_HINT", options.inference_precision);
  }
  if (!options.performance_hint.empty()) properties.emplace_back("PERFORMANCE_HINT", options.performance_hint);
  return properties;
}

// The IR could not be read although its checksum matched, so it is what
// lowering wrote: from another OpenVINO release, or written wrong.
void report_unreadable_ir(const std::string& xml) {
  std::string lowered_with = lowered_with_openvino(xml.data(), xml.size());
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

// Through the model cache in `cache_dir` (model_cache.h): OpenVINO compiles
// the partition's IR file, or imports what it compiled from it before.
// Returns Error::NotFound with `problem` set, and the blob kept, when the IR
// files cannot be written (the caller compiles from memory). Once they are,
// the blob is released and a cache folder OpenVINO cannot use only costs the
// cache: the IR file is compiled without it.
Error compile_through_cache(const RuntimeOptions& options, const ParsedBlob& blob, const std::string& cache_dir,
                            const std::function<void()>& release_blob, ov_compiled_model_t** compiled,
                            std::string* problem) {
  OpenVinoLibrary& library = OpenVinoLibrary::instance();
  const OpenVinoApi& api = library.api();
  bool rewritten = false;
  const std::string path = cached_ir_path(cache_dir, blob, &rewritten, problem);
  if (path.empty()) return Error::NotFound;
  if (rewritten) {
    report_warning("init: the model cache's IR files for this partition (" + path +
                   ") differed from the program's and were written again");
  }
  const std::string xml(blob.xml, blob.xml_size);  // for report_unreadable_ir
  release_blob();                                  // the IR files hold the same bytes
  std::string release = library.info().version;
  release = release.substr(0, release.find('-'));  // "2026.4.1"
  Properties properties = compile_properties(options);
  properties.emplace_back("CACHE_DIR", cache_entry_dir(cache_dir, options, release));
  auto compile = [&] {
    return with_properties(properties, [&](size_t n, auto... key_values) {
      return api.ov_core_compile_model_from_file(library.core(), path.c_str(), options.device.c_str(), n, compiled,
                                                 key_values...);
    });
  };
  // OpenVINO maps the IR's weights and its cache entries itself, and
  // /proc/self/maps names them by absolute paths (resident_pages.h).
  const std::string mapped_under = files::canonical(cache_dir);
  auto dropped_compile = [&] {
    ov_status_e status;
    {
      EntryLock locked(cache_dir, blob.digest);
      PeriodicDrop dropping([&mapped_under] { drop_file_pages_under(mapped_under); });
      status = compile();
    }
    drop_file_pages_under(mapped_under);
    return status;
  };
  if (dropped_compile() == OK) return Error::Ok;
  *problem = ov_message("OpenVINO could not use the model cache folder '" + properties.back().second + "'");
  properties.pop_back();
  if (dropped_compile() == OK) return Error::Ok;
  report_unreadable_ir(xml);
  return Error::InvalidProgram;
}

// From the blob in memory: OpenVINO reads the IR with its weights in `*weights`
// (model_weights.h), then compiles it. Calls `release_blob` once the blob is no
// longer needed, before OpenVINO reads anything.
Error compile_from_memory(const RuntimeOptions& options, const ParsedBlob& blob,
                          const std::function<void()>& release_blob, std::unique_ptr<ModelWeights>* weights,
                          ov_compiled_model_t** compiled) {
  OpenVinoLibrary& library = OpenVinoLibrary::instance();
  const OpenVinoApi& api = library.api();
  std::string error;
  *weights = ModelWeights::for_blob(blob, &error);
  if (!*weights) {
    report_error("init: " + error);
    return Error::MemoryAllocationFailed;
  }
  ov_tensor_t* weights_tensor = nullptr;
  if ((*weights)->size() > 0) {
    std::vector<int64_t> dims{static_cast<int64_t>((*weights)->size())};
    if (api.ov_tensor_create_from_host_ptr(U8, shape_view(dims), (*weights)->data(), &weights_tensor) != OK) {
      report_error(ov_message("init: could not wrap the model weights in a tensor"));
      return Error::Internal;
    }
  }
  // With the XML copied (a few hundred KiB) and OpenVINO reading constants from
  // `weights`, ExecuTorch's copy of the blob can go before OpenVINO's own
  // memory comes (docs/design.md, "Weights held once").
  const std::string xml(blob.xml, blob.xml_size);
  release_blob();
  ov_model_t* model = nullptr;
  ov_status_e status =
      api.ov_core_read_model_from_memory_buffer(library.core(), xml.data(), xml.size(), weights_tensor, &model);
  if (weights_tensor) api.ov_tensor_free(weights_tensor);
  if (status != OK) {
    report_unreadable_ir(xml);
    return Error::InvalidProgram;
  }
  {
    ModelWeights& w = **weights;
    PeriodicDrop dropping([&w] { w.release_resident_pages(); });
    status = with_properties(compile_properties(options), [&](size_t n, auto... key_values) {
      return api.ov_core_compile_model(library.core(), model, options.device.c_str(), n, compiled, key_values...);
    });
  }
  api.ov_model_free(model);
  if (status != OK) {
    report_error(ov_message("init: OpenVINO could not compile the model for device '" + options.device + "'"));
    return Error::InvalidProgram;
  }
  // Compiling read every constant (measured); what the compiled model still
  // reads in place comes back from the file page by page.
  (*weights)->release_resident_pages();
  return Error::Ok;
}

}  // namespace

Error compile_blob(const RuntimeOptions& options, const ParsedBlob& blob, const std::string& cache_dir,
                   const std::function<void()>& release_blob, std::shared_ptr<SharedCompiledModel>* out) {
  ov_compiled_model_t* compiled = nullptr;
  std::unique_ptr<ModelWeights> weights;
  std::string cache_problem;
  if (!cache_dir.empty()) {
    Error e = compile_through_cache(options, blob, cache_dir, release_blob, &compiled, &cache_problem);
    if (e != Error::Ok && e != Error::NotFound) return e;
    if (!cache_problem.empty()) {
      // The cache only saves time: an unusable folder must not stop the load.
      cache_problem += ", so the model was compiled without it";
      report_warning("init: " + cache_problem + ". Fix the folder or call set_cache_dir again.");
    }
  }
  if (compiled == nullptr) {
    Error e = compile_from_memory(options, blob, release_blob, &weights, &compiled);
    if (e != Error::Ok) return e;
  }
  release_blob();
  CompileReport report = compile_report(options, compiled, cache_problem);
  report.weights = weights ? weights->source_name() : "model cache";
  if (!options.inference_precision.empty() && !report.effective_precision.empty() &&
      report.effective_precision != options.inference_precision) {
    // Measured: an AVX-512 bf16 CPU without float16 arithmetic takes "f16" as bf16 (OpenVINO 2026.4.1).
    report_warning("init: inference_precision '" + options.inference_precision + "' was asked for, but OpenVINO's " +
                   options.device + " plugin computes in '" + report.effective_precision +
                   "' on this machine (exov.last_compile_report() shows it); ask for that precision to silence this");
  }
  *out = std::make_shared<SharedCompiledModel>(options, blob, std::move(weights), compiled, report);
  return Error::Ok;
}

}  // namespace executorch_openvino
