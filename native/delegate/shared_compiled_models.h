// OpenVINO compiled models shared by the delegate handles of one process.
//
// Each init used to compile its own model, so a program loaded twice (two
// methods, or the copies OpenVINOMethod loads for concurrent calls) compiled
// twice and held its weights twice. Inits whose processed blob (by the
// SHA-256 digest preprocess wrote into it, and its sizes) and compile options
// (device, precision, performance hint) are identical now share one compiled
// model, and each handle creates its own infer request from it: OpenVINO's
// compiled models serve concurrent infer requests, one per stream. The model
// and its weights (model_weights.h) are freed with the last handle; no copy of
// the blob is kept to compare with.
//
// The model cache (kCacheDirOption) is not consulted for a shared model: it
// exists already. Its CompileReport is that of the init that compiled it.
#pragma once

#include "compile_specs.h"
#include "delegate_api.h"
#include "internal_symbols.h"
#include "model_weights.h"
#include "openvino_library.h"
#include "processed_blob.h"
#include "watched_file.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

class SharedCompiledModel {
 public:
  // Takes `compiled`, `weights` and `cache_file`, which OpenVINO may read
  // constants from for as long as the compiled model lives (docs/design.md;
  // `weights` is kept through the model cache only to watch the .pte;
  // `cache_file` is the cache's file OpenVINO keeps mapped, nullptr without).
  SharedCompiledModel(const RuntimeOptions& options, const ParsedBlob& blob, std::unique_ptr<ModelWeights> weights,
                      std::unique_ptr<WatchedFile> cache_file, ov_compiled_model_t* compiled,
                      const CompileReport& report);
  ~SharedCompiledModel();
  SharedCompiledModel(const SharedCompiledModel&) = delete;
  SharedCompiledModel& operator=(const SharedCompiledModel&) = delete;

  ov_compiled_model_t* compiled() const { return compiled_; }
  // ModelWeights::file_unchanged of its weights, then WatchedFile::unchanged of its cache file.
  bool weights_unchanged(std::string* error) const {
    return (!weights_ || weights_->file_unchanged(error)) && (!cache_file_ || cache_file_->unchanged(error));
  }
  const CompileReport& report() const { return report_; }

  // Whether a partition of `blob` with `options` compiles to this model, and
  // lies in the same file (mapped_file_key; "" for programs in memory): a
  // model never reads weights from a file that another program was loaded
  // from, which could be written in place while no program of it is left (a
  // breaker's finding: SIGBUS in a program loaded from another file).
  bool compiled_from(const RuntimeOptions& options, const ParsedBlob& blob) const;

 private:
  friend std::shared_ptr<SharedCompiledModel> publish_compiled_model(std::shared_ptr<SharedCompiledModel>);
  RuntimeOptions options_;
  std::string digest_;
  std::string file_key_;
  size_t xml_size_;
  size_t weights_size_;
  ov_compiled_model_t* compiled_;
  std::unique_ptr<ModelWeights> weights_;
  std::unique_ptr<WatchedFile> cache_file_;
  CompileReport report_;
  std::atomic<int> inferences_{0};
  friend class FirstInferencePageDrop;
};

class PeriodicDrop;

// Around one inference of `model`: for its first inferences (counted over all its requests), drops its
// weights' file pages every 5 ms while it runs and once after (resident_pages.h); else nothing. OpenVINO's CPU
// plugin reads every constant again in a first inference (it repacks weights for the input shapes then):
// SmolLM2's Q4_1 partition brought 95 MiB of the .pte back into resident memory, the process's peak.
class FirstInferencePageDrop {
 public:
  explicit FirstInferencePageDrop(SharedCompiledModel& model);
  ~FirstInferencePageDrop();
  FirstInferencePageDrop(const FirstInferencePageDrop&) = delete;
  FirstInferencePageDrop& operator=(const FirstInferencePageDrop&) = delete;

 private:
  ModelWeights* weights_ = nullptr;
  std::unique_ptr<PeriodicDrop> dropping_;
};

// A compiled model this process holds for `blob` with `options`, or nullptr.
std::shared_ptr<SharedCompiledModel> find_compiled_model(const RuntimeOptions& options, const ParsedBlob& blob);

// Makes `model` findable by later inits and returns it; when another thread
// published the same model meanwhile (both compiled it), returns that one
// instead and `model` is freed with the caller's reference.
std::shared_ptr<SharedCompiledModel> publish_compiled_model(std::shared_ptr<SharedCompiledModel> model);

// SharedCompiledModel objects alive now.
int shared_compiled_models_alive();

EXOV_INTERNAL_END
}  // namespace executorch_openvino
