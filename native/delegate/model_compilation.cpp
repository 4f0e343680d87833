#include "model_compilation.h"

#include "background_task.h"
#include "backend_options.h"
#include "compile_report.h"
#include "delegate_api.h"
#include "file_system.h"
#include "model_cache.h"
#include "model_weights.h"
#include "openvino_tensors.h"
#include "resident_pages.h"

#include <algorithm>
#include <cstdio>
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

// The compile options as OpenVINO properties (compile_specs.json's openvino_property; compile_specs.py's
// openvino_properties does the same).
Properties compile_properties(const RuntimeOptions& options) {
  Properties properties;
  if (!options.inference_precision.empty()) {
    properties.emplace_back(kInferencePrecisionProperty, options.inference_precision);
  }
  if (!options.performance_hint.empty()) properties.emplace_back(kPerformanceHintProperty, options.performance_hint);
  return properties;
}

// The IR could not be read although its checksum matched, so it is what
// lowering wrote: from another OpenVINO release, or written wrong.
void report_unreadable_ir(const std::string& xml) {
  std::string lowered_with = lowered_with_openvino(xml.data(), xml.size());
  std::string loaded = OpenVINOLibrary::instance().info().version;
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
// the partition's IR file, or imports what it compiled from it before; either
// is checked (an imported entry against its record, an IR file compiled
// against the program's `xml` and `weights`) and done again once when wrong.
// False with `problem` set when the cache cannot be used (the caller compiles
// from memory). `watched`: the cache file the compiled model keeps mapped
// (watched_file.h), when there is one.
bool compile_through_cache(const RuntimeOptions& options, const ParsedBlob& blob, const std::string& xml,
                           const void* weights, const std::function<bool(uint32_t*)>& blob_intact,
                           const std::string& cache_dir, ov_compiled_model_t** compiled,
                           std::unique_ptr<WatchedFile>* watched, std::string* problem) {
  OpenVINOLibrary& library = OpenVINOLibrary::instance();
  const OpenVINOApi& api = library.api();
  bool rewritten = false;
  const std::string path = cached_ir_path(cache_dir, blob, xml, weights, blob_intact, &rewritten, problem);
  if (path.empty()) return false;
  if (rewritten) {
    report_warning("init: the model cache's IR files for this partition (" + path +
                   ") differed from the program's and were written again");
  }
  std::string release = library.info().version;
  release = release.substr(0, release.find('-'));  // "2026.4.1"
  const std::string entry_dir = cache_entry_dir(cache_dir, options, release);
  Properties properties = compile_properties(options);
  properties.emplace_back("CACHE_DIR", entry_dir);
  // OpenVINO maps the IR's weights and its entries itself, and
  // /proc/self/maps names them by absolute paths (resident_pages.h).
  const std::string mapped_ir = files::canonical(files::join(cache_dir, "ir"));
  // "" until OpenVINO first makes the folder: read again once the entry lock is held, since another process
  // may have made it meanwhile (a breaker's finding: the import was then taken for no entry at all).
  std::string mapped_under = files::canonical(entry_dir);
  auto drop = [&] {
    drop_file_pages_under(mapped_ir, ".bin");
    if (!mapped_under.empty()) drop_file_pages_under(mapped_under, ".blob");
  };
  auto compile = [&] {
    PeriodicDrop dropping(drop);
    return with_properties(properties, [&](size_t n, auto... key_values) {
      return api.ov_core_compile_model_from_file(library.core(), path.c_str(), options.device.c_str(), n, compiled,
                                                 key_values...);
    });
  };
  auto discard = [&] {
    api.ov_compiled_model_free(*compiled);
    *compiled = nullptr;
  };
  EntryLock locked(cache_dir, blob.digest);  // checks and records included
  for (int attempt = 0; attempt < 2; ++attempt) {
    mapped_under = files::canonical(entry_dir);
    const std::vector<std::string> entries_before = entry_files(entry_dir);
    const std::vector<std::string> mapped_before = mappings_under(mapped_under);
    // The folder's one entry (the usual case) is read beside OpenVINO's import of it (its CRC-32: 35 ms per
    // 86 MiB, docs/design.md); a different file, or one written or replaced since, is read again after.
    std::string early_name, early_crc;
    if (entries_before.size() == 1) early_name = entries_before[0].substr(0, entries_before[0].find(' '));
    BackgroundTask early_read([&] {
      if (!early_name.empty()) early_crc = entry_crc(files::join(entry_dir, early_name));
    });
    ov_status_e status = compile();
    if (status != OK) {
      *problem = ov_message("OpenVINO could not use the model cache folder '" + entry_dir + "'");
      return false;
    }
    if (loaded_from_cache(*compiled)) {
      // The entry OpenVINO mapped for this import: mapped once more than before (this process may hold the
      // same entry for another load already: a copy of the program in another file).
      std::vector<std::string> imported, before = mapped_before;
      for (const std::string& f : mappings_under(mapped_under)) {
        const auto seen = std::find(before.begin(), before.end(), f);
        if (seen != before.end()) {
          before.erase(seen);
        } else if (std::find(imported.begin(), imported.end(), f) == imported.end()) {
          imported.push_back(f);
        }
      }
      early_read.wait();
      const bool read_early = imported.size() == 1 && !early_crc.empty() &&
                              files::same_file(imported[0], files::join(entry_dir, early_name)) &&
                              entry_files(entry_dir) == entries_before;
      FileContent recorded;
      if (imported.size() == 1 && entry_matches_record(imported[0], read_early ? early_crc : "", &recorded)) {
        *watched = WatchedFile::open(imported[0], recorded, "the model cache entry");
        break;
      }
      discard();
      for (const std::string& f : imported) {
        if (!remove_entry(f, problem)) {  // OpenVINO would import it again: a read-only folder, say so
          *problem = "the model cache entry " + f + " has no record of its bytes or differs from it, and " + *problem;
          return false;
        }
      }
      report_warning("init: the model cache entry " + (imported.empty() ? std::string("(not found)") : imported[0]) +
                     " has no record of its bytes or differs from it, so it was compiled again");
      continue;
    }
    // Compiled from the IR file: it must have been the program's. Read again every time: the stamp's
    // times do not vouch for the bytes (a write through a shared mapping, a breaker's finding).
    if (!ir_files_hold(path, xml, weights, blob.weights_size)) {
      report_warning("init: the model cache's IR files (" + path +
                     ") changed while they were compiled; written "
                     "again and compiled again");
      discard();
      for (const std::string& e : entry_files(entry_dir)) {
        if (std::find(entries_before.begin(), entries_before.end(), e) == entries_before.end()) {
          remove_entry(files::join(entry_dir, e.substr(0, e.find(' '))));
        }
      }
      std::remove(path.c_str());  // written again from the program by the next cached_ir_path
      if (cached_ir_path(cache_dir, blob, xml, weights, blob_intact, &rewritten, problem).empty()) return false;
      continue;
    }
    for (const std::string& e : entry_files(entry_dir)) {
      if (std::find(entries_before.begin(), entries_before.end(), e) == entries_before.end()) {
        record_entry(files::join(entry_dir, e.substr(0, e.find(' '))));
      }
    }
    // OpenVINO's CPU plugin keeps the IR's weights file mapped when it reads some constants in place.
    const std::string bin = ir_weights_path(path);
    const std::vector<std::string> mapped = mappings_under(mapped_ir);
    uint32_t weights_crc = 0;
    if (std::find(mapped.begin(), mapped.end(), files::canonical(bin)) != mapped.end() && blob_intact(&weights_crc)) {
      *watched = WatchedFile::open(bin, {blob.weights_size, weights_crc}, "the model cache's IR weights file");
    }
    break;
  }
  drop();
  if (*compiled == nullptr) *problem = "the model cache folder '" + entry_dir + "' gave a wrong entry twice";
  return *compiled != nullptr;
}

// From memory: OpenVINO reads the IR `xml` with its weights in `weights`
// (model_weights.h), then compiles it.
// A failure is reported only for an intact blob: `blob_intact` false returns
// DelegateInvalidCompatibility for the caller to report the checksum.
Error compile_from_memory(const RuntimeOptions& options, const std::string& xml, ModelWeights& weights,
                          const std::function<bool()>& blob_intact, ov_compiled_model_t** compiled) {
  OpenVINOLibrary& library = OpenVINOLibrary::instance();
  const OpenVINOApi& api = library.api();
  ov_tensor_t* weights_tensor = nullptr;
  if (weights.size() > 0) {
    std::vector<int64_t> dims{static_cast<int64_t>(weights.size())};
    if (api.ov_tensor_create_from_host_ptr(U8, shape_view(dims), weights.data(), &weights_tensor) != OK) {
      report_error(ov_message("init: could not wrap the model weights in a tensor"));
      return Error::Internal;
    }
  }
  ov_model_t* model = nullptr;
  ov_status_e status =
      api.ov_core_read_model_from_memory_buffer(library.core(), xml.data(), xml.size(), weights_tensor, &model);
  if (weights_tensor) api.ov_tensor_free(weights_tensor);
  if (status != OK) {
    if (!blob_intact()) return Error::DelegateInvalidCompatibility;
    report_unreadable_ir(xml);
    return Error::InvalidProgram;
  }
  {
    PeriodicDrop dropping([&weights] { weights.release_resident_pages(); });
    status = with_properties(compile_properties(options), [&](size_t n, auto... key_values) {
      return api.ov_core_compile_model(library.core(), model, options.device.c_str(), n, compiled, key_values...);
    });
  }
  api.ov_model_free(model);
  if (status != OK) {
    if (!blob_intact()) return Error::DelegateInvalidCompatibility;
    report_error(ov_message("init: OpenVINO could not compile the model for device '" + options.device + "'"));
    return Error::InvalidProgram;
  }
  // Compiling read every constant (measured); what the compiled model still
  // reads in place comes back from the file page by page.
  weights.release_resident_pages();
  return Error::Ok;
}

}  // namespace

Error compile_blob(const RuntimeOptions& options, const ParsedBlob& blob, const std::string& cache_dir,
                   const std::function<void()>& release_blob, std::shared_ptr<SharedCompiledModel>* out) {
  // The XML copied (a few hundred KiB) and the weights mapped from the .pte,
  // ExecuTorch's copy of the blob can go before OpenVINO's own memory comes
  // (docs/design.md, "Weights held once"). A program loaded from memory keeps
  // it until its weights are copied (or the cache is filled from it).
  const std::string xml(blob.xml, blob.xml_size);
  std::string error;
  std::unique_ptr<ModelWeights> weights = ModelWeights::for_blob(blob, &error, /*copy=*/cache_dir.empty());
  if (!weights && cache_dir.empty()) {
    report_error("init: " + error);
    return Error::MemoryAllocationFailed;
  }
  // The blob's checksum is checked while OpenVINO compiles or imports, over
  // the bytes it reads; nothing is written from the blob and no model is
  // returned before it passed (declared after `weights`, so joined before
  // they go).
  const void* weight_bytes = weights ? weights->data() : blob.weights;
  ChecksumInBackground checksum(blob, weights ? weights->parts() : weights_in_memory(blob.weights));
  std::string checksum_error;
  auto blob_intact = [&] { return checksum.passed(&checksum_error); };
  auto blob_intact_crc = [&](uint32_t* weights_crc) {
    const bool intact = checksum.passed(&checksum_error);
    *weights_crc = checksum.weights_crc();
    return intact;
  };
  auto checksum_failed = [&](ov_compiled_model_t* compiled) {
    if (compiled) OpenVINOLibrary::instance().api().ov_compiled_model_free(compiled);
    report_error("init: " + checksum_error);
    return Error::DelegateInvalidCompatibility;
  };
  if (weights) release_blob();
  ov_compiled_model_t* compiled = nullptr;
  std::unique_ptr<WatchedFile> cache_file;
  std::string cache_problem;
  if (!cache_dir.empty() && !compile_through_cache(options, blob, xml, weight_bytes, blob_intact_crc, cache_dir,
                                                   &compiled, &cache_file, &cache_problem)) {
    cache_file.reset();
    if (!blob_intact()) return checksum_failed(compiled);
    // The cache only saves time: an unusable folder must not stop the load.
    cache_problem += ", so the model was compiled without it";
    report_warning("init: " + cache_problem + ". Fix the folder or call set_cache_dir again.");
  }
  const bool from_cache_folder = compiled != nullptr;
  if (!compiled) {
    if (!weights) {
      if (!blob_intact()) return checksum_failed(nullptr);  // it reads the blob, which goes next
      weights = ModelWeights::for_blob(blob, &error);       // a copy
    }
    if (!weights) {
      report_error("init: " + error);
      return Error::MemoryAllocationFailed;
    }
    release_blob();
    Error e = compile_from_memory(options, xml, *weights, blob_intact, &compiled);
    if (e == Error::DelegateInvalidCompatibility) return checksum_failed(nullptr);
    if (e != Error::Ok) return e;
  }
  if (!blob_intact()) return checksum_failed(compiled);
  if (weights) weights->set_weights_crc(checksum.weights_crc());
  release_blob();
  CompileReport report = compile_report(options, compiled, cache_problem);
  // Through the cache, a file mapping of the .pte is kept only to tell
  // whether the file was written since (ExecuTorch reads the rest of the
  // program from it), and OpenVINO reads the cache's files.
  report.weights = from_cache_folder ? "model cache" : weights->source_name();
  if (from_cache_folder && weights) weights->release_resident_pages();
  // A caller that captures inits warns from their records (python/executorch_openvino/runtime/loaded_method.py).
  if (!options.inference_precision.empty() && !report.effective_precision.empty() &&
      report.effective_precision != options.inference_precision && !init_capture_on()) {
    // Measured: an AVX-512 bf16 CPU without float16 arithmetic takes "f16" as bf16 (OpenVINO 2026.4.1).
    report_warning("init: inference_precision '" + options.inference_precision + "' was asked for, but OpenVINO's " +
                   options.device + " plugin computes in '" + report.effective_precision +
                   "' on this machine (exov.last_compile_report() shows it); ask for that precision to silence this");
  }
  *out =
      std::make_shared<SharedCompiledModel>(options, blob, std::move(weights), std::move(cache_file), compiled, report);
  return Error::Ok;
}

}  // namespace executorch_openvino
