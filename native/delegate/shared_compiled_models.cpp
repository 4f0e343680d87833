#include "shared_compiled_models.h"

#include "resident_pages.h"

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

namespace executorch_openvino {
namespace {

std::atomic<int> alive{0};

// Weak references: a model lives as long as its handles, not the registry.
// A model's destructor never takes this mutex, so the last reference may be
// dropped anywhere, here included.
struct Registry {
  std::mutex mutex;
  std::vector<std::weak_ptr<SharedCompiledModel>> models;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: handles may outlive static destructors
  return *r;
}

}  // namespace

SharedCompiledModel::SharedCompiledModel(const RuntimeOptions& options, const ParsedBlob& blob,
                                         std::unique_ptr<ModelWeights> weights, std::unique_ptr<WatchedFile> cache_file,
                                         ov_compiled_model_t* compiled, const CompileReport& report)
    : options_(options),
      digest_(blob.digest),
      file_key_(blob.file_key),
      xml_size_(blob.xml_size),
      weights_size_(blob.weights_size),
      compiled_(compiled),
      weights_(std::move(weights)),
      cache_file_(std::move(cache_file)),
      report_(report) {
  alive.fetch_add(1);
}

SharedCompiledModel::~SharedCompiledModel() {
  alive.fetch_sub(1);
  // The compiled model first: it may read constants from the weights.
  if (compiled_) OpenVINOLibrary::instance().api().ov_compiled_model_free(compiled_);
  weights_.reset();
}

// The first inference of each input shape repacks; a decoder's first few calls cover its prompt and step shapes.
constexpr int kPageDropInferences = 4;

FirstInferencePageDrop::FirstInferencePageDrop(SharedCompiledModel& model) {
  if (!model.weights_ || model.inferences_.fetch_add(1, std::memory_order_relaxed) >= kPageDropInferences) return;
  weights_ = model.weights_.get();
  ModelWeights* weights = weights_;
  dropping_ = std::make_unique<PeriodicDrop>([weights] { weights->release_resident_pages(); });
}

FirstInferencePageDrop::~FirstInferencePageDrop() {
  dropping_.reset();
  if (weights_) weights_->release_resident_pages();
}

bool SharedCompiledModel::compiled_from(const RuntimeOptions& options, const ParsedBlob& blob) const {
  // SHA-256 does not collide in practice; the sizes are a free second check.
  return options.device == options_.device && options.inference_precision == options_.inference_precision &&
         options.performance_hint == options_.performance_hint && blob.digest == digest_ &&
         blob.file_key == file_key_ && blob.xml_size == xml_size_ && blob.weights_size == weights_size_;
}

std::shared_ptr<SharedCompiledModel> find_compiled_model(const RuntimeOptions& options, const ParsedBlob& blob) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& weak : r.models) {
    auto model = weak.lock();
    std::string changed;  // a model whose .pte was written since reads other weights: not shared
    if (model && model->compiled_from(options, blob) && model->weights_unchanged(&changed)) return model;
  }
  return nullptr;
}

std::shared_ptr<SharedCompiledModel> publish_compiled_model(std::shared_ptr<SharedCompiledModel> model) {
  ParsedBlob own;
  own.digest = model->digest_;
  own.file_key = model->file_key_;
  own.xml_size = model->xml_size_;
  own.weights_size = model->weights_size_;
  Registry& r = registry();
  std::shared_ptr<SharedCompiledModel> existing;
  {
    // Under the lock, so inits that compiled the same model at once end up sharing the first one.
    std::lock_guard<std::mutex> lock(r.mutex);
    for (size_t i = 0; i < r.models.size();) {
      auto other = r.models[i].lock();
      if (!other) {  // expired: its model is gone
        r.models[i] = std::move(r.models.back());
        r.models.pop_back();
        continue;
      }
      std::string changed;
      if (other->compiled_from(model->options_, own) && other->weights_unchanged(&changed)) {
        existing = std::move(other);
        break;
      }
      ++i;
    }
    if (!existing) r.models.push_back(model);
  }
  return existing ? existing : model;
}

int shared_compiled_models_alive() { return alive.load(); }

}  // namespace executorch_openvino
