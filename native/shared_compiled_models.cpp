#include "shared_compiled_models.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
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

ParsedBlob as_blob(const std::string& xml, const void* weights, size_t weights_size, uint32_t checksum) {
  ParsedBlob blob;
  blob.xml = xml.data();
  blob.xml_size = xml.size();
  blob.weights = static_cast<const uint8_t*>(weights);
  blob.weights_size = weights_size;
  blob.checksum = checksum;
  return blob;
}

}  // namespace

SharedCompiledModel::SharedCompiledModel(const RuntimeOptions& options, const ParsedBlob& blob, void* weights,
                                         ov_compiled_model_t* compiled, const CompileReport& report)
    : options_(options),
      xml_(blob.xml, blob.xml_size),
      weights_(weights),
      weights_size_(blob.weights_size),
      checksum_(blob.checksum),
      compiled_(compiled),
      report_(report) {
  alive.fetch_add(1);
}

SharedCompiledModel::~SharedCompiledModel() {
  alive.fetch_sub(1);
  if (compiled_) OpenVinoLibrary::instance().api().ov_compiled_model_free(compiled_);
  std::free(weights_);
}

bool SharedCompiledModel::compiled_from(const RuntimeOptions& options, const ParsedBlob& blob) const {
  // The checksum and sizes filter cheaply; equality is every byte (CRC-32 collides).
  return options.device == options_.device && options.inference_precision == options_.inference_precision &&
         options.performance_hint == options_.performance_hint && blob.checksum == checksum_ &&
         blob.xml_size == xml_.size() && blob.weights_size == weights_size_ &&
         std::memcmp(blob.xml, xml_.data(), xml_.size()) == 0 &&
         (weights_size_ == 0 || std::memcmp(blob.weights, weights_, weights_size_) == 0);
}

std::shared_ptr<SharedCompiledModel> find_compiled_model(const RuntimeOptions& options, const ParsedBlob& blob) {
  // Referenced under the lock, compared outside it: MiniLM's weights are 86 MiB.
  std::vector<std::shared_ptr<SharedCompiledModel>> models;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const auto& weak : r.models) {
      if (auto model = weak.lock()) models.push_back(std::move(model));
    }
  }
  for (auto& model : models) {
    if (model->compiled_from(options, blob)) return model;
  }
  return nullptr;
}

std::shared_ptr<SharedCompiledModel> publish_compiled_model(std::shared_ptr<SharedCompiledModel> model) {
  const ParsedBlob own = as_blob(model->xml_, model->weights_, model->weights_size_, model->checksum_);
  Registry& r = registry();
  std::shared_ptr<SharedCompiledModel> existing;
  {
    // Compared under the lock (only after a compile, which takes far longer), so
    // inits that compiled the same model at once end up sharing the first one.
    std::lock_guard<std::mutex> lock(r.mutex);
    for (size_t i = 0; i < r.models.size();) {
      auto other = r.models[i].lock();
      if (!other) {  // expired: its model is gone
        r.models[i] = std::move(r.models.back());
        r.models.pop_back();
        continue;
      }
      if (other->compiled_from(model->options_, own)) {
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
