#include "backend_options.h"

#include "delegate_api.h"

#include <array>
#include <cstring>
#include <mutex>
#include <variant>

namespace executorch_openvino {

using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendOption;
using executorch::runtime::Error;
using executorch::runtime::kMaxOptionValueLength;
using executorch::runtime::Span;

namespace {
// OpenVINO's model cache directory for later inits ("" = no cache).
std::mutex cache_dir_mutex;
std::string cache_dir_setting;
}  // namespace

Error set_backend_options(const Span<BackendOption>& options) {
  std::string new_cache_dir;
  bool cache_dir_given = false;
  for (const BackendOption& option : options) {
    const std::string key(option.key, strnlen(option.key, sizeof(option.key)));
    if (key != kCacheDirOption) {
      report_error("set_option: unknown option '" + key + "'; this delegate takes '" + kCacheDirOption + "'");
      return Error::InvalidArgument;
    }
    const auto* text = std::get_if<std::array<char, kMaxOptionValueLength>>(&option.value);
    if (text == nullptr) {
      report_error(std::string("set_option: '") + kCacheDirOption +
                   "' takes a string: a directory "
                   "for OpenVINO's model cache, or \"\" for none");
      return Error::InvalidArgument;
    }
    new_cache_dir.assign(text->data(), strnlen(text->data(), text->size()));
    cache_dir_given = true;
  }
  if (cache_dir_given) {
    std::lock_guard<std::mutex> lock(cache_dir_mutex);
    cache_dir_setting = new_cache_dir;
  }
  return Error::Ok;
}

Error get_backend_options(Span<BackendOption>& options) {
  for (BackendOption& option : options) {
    if (std::strncmp(option.key, kCacheDirOption, sizeof(option.key)) != 0) {
      report_error("get_option: unknown option '" + std::string(option.key, strnlen(option.key, sizeof(option.key))) +
                   "'; this delegate has '" + kCacheDirOption + "'");
      return Error::InvalidArgument;
    }
    std::array<char, kMaxOptionValueLength> text{};
    std::lock_guard<std::mutex> lock(cache_dir_mutex);
    std::strncpy(text.data(), cache_dir_setting.c_str(), text.size() - 1);
    option.value = text;
  }
  return Error::Ok;
}

bool cache_dir_for(const BackendInitContext& context, std::string* dir, std::string* error) {
  auto per_load = context.get_runtime_spec<const char*>(kCacheDirOption);
  if (per_load.ok()) {
    const char* text = per_load.get();
    dir->assign(text, strnlen(text, kMaxOptionValueLength));
    return true;
  }
  if (per_load.error() == Error::InvalidArgument) {
    *error = std::string("the runtime spec '") + kCacheDirOption +
             "' is not a string; give a folder path, "
             "or \"\" for no model cache";
    return false;
  }
  std::lock_guard<std::mutex> lock(cache_dir_mutex);
  *dir = cache_dir_setting;
  return true;
}

}  // namespace executorch_openvino
