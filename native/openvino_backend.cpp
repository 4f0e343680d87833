// ExecuTorch's BackendInterface implemented on the OpenVINO C API.
//
// init:    validate the compile specs and the processed blob, load OpenVINO,
//          take the compiled model this process already holds for the same
//          blob and options (shared_compiled_models.h) or read the IR and
//          compile it for the device; create the handle's own infer request.
// execute: bind ExecuTorch's input buffers to the request without copying;
//          outputs with a static shape are written by OpenVINO straight into
//          ExecuTorch's output buffers, others are copied after inference. A
//          buffer bound on the previous call with the same address and shape
//          is not bound again (ExecuTorch's planned buffers stay put). The
//          inference itself runs inside an InferScope (concurrent_calls.h).
// options: "cache_dir" (a string) switches OpenVINO's model cache on, set
//          for every later init through ExecuTorch's set_option, or for one
//          load as a runtime spec.
#include "compile_specs.h"
#include "concurrent_calls.h"
#include "delegate_api.h"
#include "openvino_library.h"
#include "processed_blob.h"
#include "shared_compiled_models.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <variant>
#include <vector>

namespace executorch_openvino {

using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::ArrayRef;
using executorch::runtime::Backend;
using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendOption;
using executorch::runtime::BackendOptionContext;
using executorch::runtime::BackendInterface;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Result;
using executorch::runtime::Span;

namespace {

bool to_ov_type(ScalarType t, ov_element_type_e* out) {
  switch (t) {
    case ScalarType::Float: *out = F32; return true;
    case ScalarType::Half: *out = F16; return true;
    case ScalarType::BFloat16: *out = BF16; return true;
    case ScalarType::Double: *out = F64; return true;
    case ScalarType::Char: *out = I8; return true;
    case ScalarType::Short: *out = I16; return true;
    case ScalarType::Int: *out = I32; return true;
    case ScalarType::Long: *out = I64; return true;
    case ScalarType::Byte: *out = U8; return true;
    case ScalarType::Bool: *out = BOOLEAN; return true;
    default: return false;
  }
}

const char* ov_type_name(ov_element_type_e t) {
  switch (t) {
    case F32: return "f32"; case F16: return "f16"; case BF16: return "bf16";
    case F64: return "f64"; case I8: return "i8"; case I16: return "i16";
    case I32: return "i32"; case I64: return "i64"; case U8: return "u8";
    case BOOLEAN: return "boolean"; default: return "an unsupported type";
  }
}

const char* scalar_type_name(ScalarType t) {
  return executorch::runtime::toString(t);
}

// One port of the compiled model: its element type and, when static, shape.
struct PortInfo {
  ov_element_type_e type = DYNAMIC;
  bool is_static = false;
  std::vector<int64_t> shape;
  size_t byte_size = 0;  // for static ports
  std::string name;      // a tensor name, "" when it has none
  // Per dimension, the sizes the compiled model takes: {min, max}, max < 0
  // for no bound (when the rank itself is known).
  bool rank_known = false;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  // An output that is one of the inputs (OpenVINO folds a clone into a
  // Parameter -> Result edge). Bound in place, OpenVINO's CPU plugin zeroes
  // it (measured, 2026.4.1), so it is always copied.
  bool aliases_input = false;
};

size_t element_size(ov_element_type_e t) {
  switch (t) {
    case F64: case I64: return 8;
    case F32: case I32: return 4;
    case F16: case BF16: case I16: return 2;
    default: return 1;
  }
}

// What an infer request port was last bound to. OpenVINO keeps the tensor
// set on the request, so the same address and shape need no new binding.
struct BoundBuffer {
  // The caller's buffer the request may hold (nullptr: its own), and whether
  // `data` and `dims` are known to be what it holds: after a failed binding
  // the request may hold the previous buffer, but with which shape is unknown.
  const void* data = nullptr;
  std::vector<int64_t> dims;
  bool known = false;
  int64_t scalar = 0;  // storage of an int (SymInt) input; its address is stable

  template <typename Sizes>
  bool same(const void* address, const Sizes& sizes) const {
    return known && data == address && dims.size() == sizes.size() &&
           std::equal(dims.begin(), dims.end(), sizes.begin());
  }
};

std::atomic<int> live_partitions{0};

// Everything one delegated partition (one handle) needs at execute time. The
// compiled model may be shared with other handles; the infer request and the
// binding state are this handle's own.
struct Partition {
  std::shared_ptr<SharedCompiledModel> model;
  ov_infer_request_t* request = nullptr;
  std::vector<PortInfo> inputs;
  std::vector<PortInfo> outputs;
  std::mutex mutex;  // one infer request: one execute at a time
  // Per port, sized at init (addresses stay valid): see BoundBuffer.
  std::vector<BoundBuffer> bound_inputs;
  std::vector<BoundBuffer> bound_outputs;
  std::vector<char> copy_after;  // per output, this call: copied after inference

  Partition() { live_partitions.fetch_add(1); }
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;
  ~Partition() {
    live_partitions.fetch_sub(1);
    // The request before the model it came from (`model` is released after this body).
    if (request) OpenVinoLibrary::instance().api().ov_infer_request_free(request);
  }
};

std::string ov_message(const std::string& what) {
  std::string detail = OpenVinoLibrary::instance().last_openvino_message();
  return what + (detail.empty() ? std::string() : ": " + detail);
}

// RAII for the C objects created per binding (the request keeps its own reference).
struct TensorGuard {
  ov_tensor_t* t = nullptr;
  ~TensorGuard() { if (t) OpenVinoLibrary::instance().api().ov_tensor_free(t); }
};
struct ShapeGuard {
  ov_shape_t s{};
  ~ShapeGuard() { if (s.dims) OpenVinoLibrary::instance().api().ov_shape_free(&s); }
};

// A view of `dims` as the C API's shape struct (which it copies). Built by hand
// because ov_shape_create refuses rank 0, and 0-d tensors are legitimate.
ov_shape_t shape_view(std::vector<int64_t>& dims) {
  return ov_shape_t{static_cast<int64_t>(dims.size()), dims.empty() ? nullptr : dims.data()};
}

bool read_port(const OpenVinoApi& api, const ov_output_const_port_t* port, PortInfo* info,
               std::string* error) {
  if (api.ov_port_get_element_type(port, &info->type) != OK) {
    *error = ov_message("could not read a port's element type");
    return false;
  }
  ov_partial_shape_t partial{};
  if (api.ov_port_get_partial_shape(port, &partial) != OK) {
    *error = ov_message("could not read a port's shape");
    return false;
  }
  const bool rank_static = partial.rank.min == partial.rank.max && partial.rank.min >= 0;
  info->is_static = rank_static;
  info->rank_known = rank_static;
  info->shape.clear();
  info->ranges.clear();
  for (int64_t d = 0; rank_static && d < partial.rank.max; ++d) {
    const ov_dimension_t& dim = partial.dims[d];
    if (dim.min != dim.max || dim.min < 0) info->is_static = false;
    info->shape.push_back(dim.min);
    info->ranges.emplace_back(dim.min, dim.max);
  }
  if (info->is_static) {
    size_t n = 1;
    for (int64_t d : info->shape) n *= static_cast<size_t>(d);
    info->byte_size = n * element_size(info->type);
  } else {
    info->shape.clear();
  }
  api.ov_partial_shape_free(&partial);
  char* name = nullptr;
  if (api.ov_port_get_any_name(port, &name) == OK && name) {
    info->name = name;
    api.ov_free(name);
  }
  return true;
}

template <typename PortFn>
bool read_ports(const OpenVinoApi& api, ov_compiled_model_t* compiled, size_t count, PortFn get,
                std::vector<PortInfo>* out, std::string* error) {
  out->resize(count);
  for (size_t i = 0; i < count; ++i) {
    ov_output_const_port_t* port = nullptr;
    if (get(compiled, i, &port) != OK) {
      *error = ov_message("could not query port " + std::to_string(i));
      return false;
    }
    bool ok = read_port(api, port, &(*out)[i], error);
    api.ov_output_const_port_free(port);
    if (!ok) return false;
  }
  return true;
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

template <typename T>
std::string shape_text(ArrayRef<T> dims) {
  return shape_text(std::vector<int64_t>(dims.begin(), dims.end()));
}

bool unbounded(int64_t max) { return max < 0 || max == INT64_MAX; }

// The sizes a port takes, e.g. "(1..100, 3)" or "(2.., 3)".
std::string port_shape_text(const PortInfo& port) {
  if (!port.rank_known) return "any shape";
  std::string s = "(";
  for (size_t i = 0; i < port.ranges.size(); ++i) {
    const auto& [min, max] = port.ranges[i];
    s += i ? ", " : "";
    s += min == max ? std::to_string(min)
                    : std::to_string(min) + ".." + (unbounded(max) ? std::string() : std::to_string(max));
  }
  return s + (port.ranges.size() == 1 ? ",)" : ")");
}

// Whether `dims` fits the port: the same rank, and each size within its range.
// ExecuTorch checks a dynamic input only against its element count, so a
// wrong static size would otherwise reach OpenVINO and be read past its end.
template <typename Sizes>
bool shape_fits(const PortInfo& port, const Sizes& dims) {
  if (!port.rank_known) return true;
  if (dims.size() != port.ranges.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto& [min, max] = port.ranges[i];
    if (dims[i] < min || (!unbounded(max) && dims[i] > max)) return false;
  }
  return true;
}

// The latest successful init's report (last_compile_report).
std::mutex report_mutex;
CompileReport last_report;

std::string compiled_property(ov_compiled_model_t* compiled, const char* key) {
  const OpenVinoApi& api = OpenVinoLibrary::instance().api();
  std::string text;
  char* value = nullptr;
  if (api.ov_compiled_model_get_property(compiled, key, &value) == OK && value) {
    text = value;
    api.ov_free(value);
  }
  return text;
}

CompileReport compile_report(const RuntimeOptions& options, ov_compiled_model_t* compiled,
                             const std::string& cache_problem) {
  std::string effective = compiled_property(compiled, "INFERENCE_PRECISION_HINT");
  // A boolean property: "YES"/"NO" as text (2025.4.1 and 2026.4.1).
  std::string cached = compiled_property(compiled, "LOADED_FROM_CACHE");
  bool from_cache = cached == "YES" || cached == "true" || cached == "1";
  CompileReport report{options.device, options.inference_precision, effective, from_cache, cache_problem,
                       options.performance_hint, compiled_property(compiled, "PERFORMANCE_HINT"),
                       compiled_property(compiled, "NUM_STREAMS"),
                       compiled_property(compiled, "OPTIMAL_NUMBER_OF_INFER_REQUESTS")};
  return report;
}

// OpenVINO's model cache directory for later inits ("" = no cache): the
// backend option kCacheDirOption.
std::mutex cache_dir_mutex;
std::string cache_dir_setting;

// The folder for this load: its runtime spec, else the backend option. False
// (and `error`) for a runtime spec that is not a string.
bool cache_dir_for(const BackendInitContext& context, std::string* dir, std::string* error) {
  auto per_load = context.get_runtime_spec<const char*>(kCacheDirOption);
  if (per_load.ok()) {
    const char* text = per_load.get();
    dir->assign(text, strnlen(text, executorch::runtime::kMaxOptionValueLength));
    return true;
  }
  if (per_load.error() == Error::InvalidArgument) {
    *error = std::string("the runtime spec '") + kCacheDirOption + "' is not a string; give a folder path, "
             "or \"\" for no model cache";
    return false;
  }
  std::lock_guard<std::mutex> lock(cache_dir_mutex);
  *dir = cache_dir_setting;
  return true;
}

// OpenVINO keys its cache by the model and the properties its plugin lists as
// caching properties: 2026.4.1's CPU plugin served the model compiled for f32
// to f16 and bf16 requests (measured on a CPU without bf16 or f16 units, where
// all three compile to f32). Whether the hint is part of the key where it matters is not
// measured, so each device, precision and performance hint gets its own
// folder: "<dir>/CPU_f32", "<dir>/CPU_f32_THROUGHPUT".
// Characters outside [A-Za-z0-9._-] become '_'.
std::string cache_entry_dir(const std::string& dir, const RuntimeOptions& options) {
  std::string name = options.device + "_" + (options.inference_precision.empty() ? "default"
                                                                                  : options.inference_precision);
  if (!options.performance_hint.empty()) name += "_" + options.performance_hint;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return dir + (dir.back() == '/' || dir.back() == '\\' ? "" : "/") + name;
}

// ov_core_compile_model with up to 3 (key, value) properties: the C API is
// variadic. More is a programming error, refused rather than dropped.
ov_status_e compile_model(const OpenVinoApi& api, ov_core_t* core, const ov_model_t* model,
                          const std::string& device,
                          const std::vector<std::pair<const char*, std::string>>& p,
                          ov_compiled_model_t** out) {
  const char* d = device.c_str();
  switch (p.size()) {
    case 0: return api.ov_core_compile_model(core, model, d, 0, out);
    case 1: return api.ov_core_compile_model(core, model, d, 2, out, p[0].first, p[0].second.c_str());
    case 2: return api.ov_core_compile_model(core, model, d, 4, out, p[0].first, p[0].second.c_str(),
                                             p[1].first, p[1].second.c_str());
    case 3: return api.ov_core_compile_model(core, model, d, 6, out, p[0].first, p[0].second.c_str(),
                                             p[1].first, p[1].second.c_str(), p[2].first, p[2].second.c_str());
    default: return GENERAL_ERROR;
  }
}

// Compiles `blob` with `options` into `*out` (OpenVINO reads the IR, then
// compiles it, through the model cache when `cache_dir` is set). Reports
// and returns the error otherwise.
Error compile(const RuntimeOptions& options, const ParsedBlob& blob, const std::string& cache_dir,
              std::shared_ptr<SharedCompiledModel>* out) {
  OpenVinoLibrary& library = OpenVinoLibrary::instance();
  const OpenVinoApi& api = library.api();
  std::unique_ptr<void, decltype(&std::free)> weights(nullptr, &std::free);
  ov_tensor_t* weights_tensor = nullptr;
  if (blob.weights_size > 0) {
    size_t padded = (blob.weights_size + 63) / 64 * 64;
    weights.reset(std::aligned_alloc(64, padded));
    if (!weights) {
      report_error("init: could not allocate " + std::to_string(blob.weights_size) +
                   " bytes for the model weights");
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
  ov_status_e status = api.ov_core_read_model_from_memory_buffer(
      library.core(), blob.xml, blob.xml_size, weights_tensor, &model);
  if (weights_tensor) api.ov_tensor_free(weights_tensor);
  if (status != OK) {
    // The checksum matched, so the IR is what lowering wrote: from another
    // OpenVINO release (an operation set this one does not know), or written wrong.
    std::string lowered_with = lowered_with_openvino(blob.xml, blob.xml_size);
    std::string loaded = library.info().version;
    auto release = [](const std::string& v) { return v.substr(0, v.find('-')); };  // "2026.4.1"
    std::string advice =
        lowered_with.empty()
            ? " It may come from another OpenVINO release: lower the model again with this one"
        : release(lowered_with) == release(loaded)
            ? " The same OpenVINO release wrote it, so the IR itself is wrong: lower the model again"
            : " Run it with OpenVINO " + release(lowered_with) + ", or lower the model again with this one";
    report_error(ov_message(
        "init: OpenVINO " + loaded + " could not read the model in the processed blob, which was lowered "
        "with OpenVINO " + (lowered_with.empty() ? std::string("(not recorded)") : lowered_with) + "." +
        advice));
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
  *out = std::make_shared<SharedCompiledModel>(options, blob, weights.release(), compiled, report);
  return Error::Ok;
}

std::atomic<uint64_t> outputs_in_place{0};
std::atomic<uint64_t> outputs_copied{0};

class OpenVinoBackend final : public BackendInterface {
 public:
  // Whether a partition can run here: OpenVINO's C library loads (the first
  // call opens it and creates the Core, as init would). A failure is not
  // cached, so each call searches again (library_search.h) and leaves the
  // places tried in last_error; ExecuTorch calls this before every init and
  // then refuses the method as "not available".
  bool is_available() const override {
    std::string error;
    if (OpenVinoLibrary::instance().ensure_loaded(&error)) return true;
    // Not logged: callers poll this, from several threads too (ExecuTorch's
    // Python log sink crashed with two writers); a failed init logs it.
    record_error("is_available: " + error);
    return false;
  }

  // All options are checked before any is applied.
  Error set_option(BackendOptionContext& context, const Span<BackendOption>& options) override {
    (void)context;
    std::string new_cache_dir;
    bool cache_dir_given = false;
    for (const BackendOption& option : options) {
      const std::string key(option.key, strnlen(option.key, sizeof(option.key)));
      if (key != kCacheDirOption) {
        report_error("set_option: unknown option '" + key + "'; this delegate takes '" +
                     kCacheDirOption + "'");
        return Error::InvalidArgument;
      }
      const auto* text = std::get_if<std::array<char, executorch::runtime::kMaxOptionValueLength>>(&option.value);
      if (text == nullptr) {
        report_error(std::string("set_option: '") + kCacheDirOption + "' takes a string: a directory "
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

  Error get_option(BackendOptionContext& context, Span<BackendOption>& options) override {
    (void)context;
    for (BackendOption& option : options) {
      if (std::strncmp(option.key, kCacheDirOption, sizeof(option.key)) != 0) {
        report_error("get_option: unknown option '" + std::string(option.key, strnlen(option.key, sizeof(option.key))) +
                     "'; this delegate has '" + kCacheDirOption + "'");
        return Error::InvalidArgument;
      }
      std::array<char, executorch::runtime::kMaxOptionValueLength> text{};
      std::lock_guard<std::mutex> lock(cache_dir_mutex);
      std::strncpy(text.data(), cache_dir_setting.c_str(), text.size() - 1);
      option.value = text;
    }
    return Error::Ok;
  }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> compile_specs) const override {
    std::string error;
    RuntimeOptions options;
    if (!parse_compile_specs(compile_specs, &options, &error)) {
      report_error("init: " + error);
      return Error::InvalidArgument;
    }
    ParsedBlob blob;
    if (!parse_processed_blob(processed->data(), processed->size(), &blob, &error)) {
      report_error("init: " + error);
      return Error::DelegateInvalidCompatibility;
    }
    OpenVinoLibrary& library = OpenVinoLibrary::instance();
    if (!library.ensure_loaded(&error)) {
      report_error("init: " + error);
      return Error::NotFound;
    }
    const OpenVinoApi& api = library.api();
    std::vector<std::string> devices = library.available_devices(&error);
    if (!error.empty()) {
      report_error("init: " + error);
      return Error::Internal;
    }
    bool device_found = false;
    std::string device_list;
    for (const std::string& d : devices) {
      device_list += (device_list.empty() ? "" : ", ") + d;
      // "GPU" matches "GPU.0" as OpenVINO does.
      if (d == options.device || d.rfind(options.device + ".", 0) == 0) device_found = true;
    }
    // Composite devices (AUTO:..., HETERO:...) are resolved by OpenVINO itself.
    bool composite = options.device.find(':') != std::string::npos ||
                     options.device == "AUTO" || options.device == "MULTI";
    if (!device_found && !composite) {
      report_error("init: OpenVINO device '" + options.device +
                   "' is not available on this machine (available: " + device_list +
                   "). Lower the model with compile spec device set to one of those.");
      return Error::NotSupported;
    }

    std::string cache_dir;
    if (!cache_dir_for(context, &cache_dir, &error)) {  // checked even when nothing is compiled
      report_error("init: " + error);
      return Error::InvalidArgument;
    }
    std::shared_ptr<SharedCompiledModel> model = find_compiled_model(options, blob);
    const bool shared = model != nullptr;
    if (!shared) {
      Error e = compile(options, blob, cache_dir, &model);
      if (e != Error::Ok) return e;
      model = publish_compiled_model(std::move(model));
    }

    auto partition = std::make_unique<Partition>();
    partition->model = model;
    ov_compiled_model_t* compiled = model->compiled();
    size_t n_in = 0, n_out = 0;
    if (api.ov_compiled_model_inputs_size(compiled, &n_in) != OK ||
        api.ov_compiled_model_outputs_size(compiled, &n_out) != OK ||
        !read_ports(api, compiled, n_in, api.ov_compiled_model_input_by_index, &partition->inputs, &error) ||
        !read_ports(api, compiled, n_out, api.ov_compiled_model_output_by_index, &partition->outputs, &error)) {
      report_error("init: " + (error.empty() ? ov_message("could not query the compiled model") : error));
      return Error::Internal;
    }
    for (PortInfo& out : partition->outputs) {
      for (const PortInfo& in : partition->inputs) {
        if (!out.name.empty() && out.name == in.name) out.aliases_input = true;
      }
    }
    partition->bound_inputs.resize(n_in);
    partition->bound_outputs.resize(n_out);
    partition->copy_after.resize(n_out);
    if (api.ov_compiled_model_create_infer_request(compiled, &partition->request) != OK) {
      report_error(ov_message("init: could not create an infer request"));
      return Error::MemoryAllocationFailed;
    }
    CompileReport report = model->report();
    report.shared = shared;
    record_init(report, options.program_state);
    {
      std::lock_guard<std::mutex> lock(report_mutex);
      last_report = report;
    }
    // The shared model owns a copy of everything it needs.
    processed->Free();
    return static_cast<DelegateHandle*>(partition.release());
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* handle,
                Span<EValue*> args) const override {
    (void)context;
    auto* partition = static_cast<Partition*>(handle);
    if (partition == nullptr) {
      report_error("execute: no compiled partition (init failed earlier)");
      return Error::DelegateInvalidHandle;
    }
    std::lock_guard<std::mutex> lock(partition->mutex);
    const OpenVinoApi& api = OpenVinoLibrary::instance().api();
    const size_t n_in = partition->inputs.size(), n_out = partition->outputs.size();
    if (args.size() != n_in + n_out) {
      report_error("execute: the delegate call has " + std::to_string(args.size()) +
                   " arguments, the compiled model has " + std::to_string(n_in) + " inputs and " +
                   std::to_string(n_out) + " outputs; lower the model again");
      return Error::InvalidProgram;
    }
    for (size_t i = 0; i < n_in; ++i) {
      Error e = bind_input(*partition, i, *args[i]);
      if (e != Error::Ok) return e;
    }
    for (size_t i = 0; i < n_out; ++i) {
      Error e = bind_output(*partition, i, *args[n_in + i]);
      if (e != Error::Ok) return e;
    }
    ov_status_e status;
    {
      InferScope scope;  // other Python threads may run here: nothing else in this scope
      status = api.ov_infer_request_infer(partition->request);
    }
    if (status != OK) {
      report_error(ov_message("execute: OpenVINO inference failed"));
      return Error::Internal;
    }
    for (size_t i = 0; i < n_out; ++i) {
      if (!partition->copy_after[i]) {
        outputs_in_place.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      Error e = copy_output(*partition, i, args[n_in + i]->toTensor());
      if (e != Error::Ok) return e;
      outputs_copied.fetch_add(1, std::memory_order_relaxed);
    }
    return Error::Ok;
  }

  void destroy(DelegateHandle* handle) const override {
    delete static_cast<Partition*>(handle);
  }

 private:
  // Sets `data` with `dims` as port `i` of the request, unless `bound` already holds them.
  template <typename Sizes>
  static bool bind(Partition& partition, bool input, size_t i, ov_element_type_e type, void* data,
                   const Sizes& dims, BoundBuffer* bound) {
    if (bound->same(data, dims)) return true;
    const OpenVinoApi& api = OpenVinoLibrary::instance().api();
    bound->known = false;  // until the new binding succeeds; `data` keeps the old buffer
    bound->dims.assign(dims.begin(), dims.end());
    TensorGuard tensor;
    ov_status_e status = api.ov_tensor_create_from_host_ptr(type, shape_view(bound->dims), data, &tensor.t);
    if (status == OK) {
      status = input ? api.ov_infer_request_set_input_tensor_by_index(partition.request, i, tensor.t)
                     : api.ov_infer_request_set_output_tensor_by_index(partition.request, i, tensor.t);
    }
    if (status != OK) return false;
    bound->data = data;
    bound->known = true;
    return true;
  }

  static Error bind_input(Partition& partition, size_t i, EValue& value) {
    const PortInfo& port = partition.inputs[i];
    // Built only for a message: a string per input per call is measurable.
    auto which = [i] { return "execute: input " + std::to_string(i); };
    if (value.isInt()) return bind_int_input(partition, i, value.toInt());
    if (!value.isTensor()) {
      report_error(which() + " is not a tensor (tag " + std::to_string(int(value.tag)) +
                   "); only tensor inputs are delegated");
      return Error::InvalidArgument;
    }
    Tensor in = value.toTensor();
    ov_element_type_e type;
    if (!to_ov_type(in.scalar_type(), &type)) {
      report_error(which() + " has dtype " + scalar_type_name(in.scalar_type()) +
                   ", which OpenVINO cannot take");
      return Error::InvalidType;
    }
    if (type != port.type) {
      report_error(which() + " has dtype " + scalar_type_name(in.scalar_type()) +
                   " but the compiled model expects " + ov_type_name(port.type) +
                   "; pass the dtype the model was exported with");
      return Error::InvalidType;
    }
    if (!executorch::runtime::tensor_is_default_dim_order(in)) {
      report_error(which() + " is not in the default (contiguous) dim order; pass a "
                   "contiguous tensor (torch: x.contiguous())");
      return Error::InvalidArgument;
    }
    if (!shape_fits(port, in.sizes())) {
      report_error(which() + " has shape " + shape_text(in.sizes()) + " but the model was lowered for " +
                   port_shape_text(port) + "; pass such a shape, or export with dynamic shapes that "
                   "cover this one");
      return Error::InvalidArgument;
    }
    // OpenVINO's plugins compute int64 in int32 (measured, 2025.4.1 and
    // 2026.4.1 CPU: 2^40 + 3 arrives as 3), so a value outside int32 would be
    // silently wrong: refuse it.
    if (type == I64) {
      const int64_t* v = in.const_data_ptr<int64_t>();
      for (ssize_t k = 0; k < in.numel(); ++k) {
        if (v[k] < INT32_MIN || v[k] > INT32_MAX) {
          report_error(which() + " holds the int64 value " + std::to_string(v[k]) + " at flat index " +
                       std::to_string(k) + ", outside the int32 range: OpenVINO computes int64 "
                       "tensors in int32 and would return a wrong result. Keep such values out of "
                       "the delegated part of the program (compute them before or after it).");
          return Error::InvalidArgument;
        }
      }
    }
    // OpenVINO refuses a null host pointer even for zero elements.
    static uint64_t empty_storage = 0;
    void* data = in.numel() == 0 ? &empty_storage : in.mutable_data_ptr();
    if (!bind(partition, true, i, type, data, in.sizes(), &partition.bound_inputs[i])) {
      report_error(ov_message(which() + ": could not bind it to the infer request"));
      return Error::InvalidArgument;
    }
    return Error::Ok;
  }

  // An int (SymInt) argument of the partition: a one-element int64 parameter,
  // as conversion.py lowers it.
  static Error bind_int_input(Partition& partition, size_t i, int64_t value) {
    const PortInfo& port = partition.inputs[i];
    auto which = [i] { return "execute: input " + std::to_string(i); };
    // One element: shape () or (1,), whichever the conversion chose.
    if (port.type != I64 || !port.is_static || port.shape.size() > 1 ||
        (port.shape.size() == 1 && port.shape[0] != 1)) {
      report_error(which() + " is an int but the compiled model expects a " + ov_type_name(port.type) +
                   " tensor; lower the model again");
      return Error::InvalidType;
    }
    if (value < INT32_MIN || value > INT32_MAX) {
      report_error(which() + " is the int " + std::to_string(value) + ", outside the int32 range "
                   "that OpenVINO computes int64 in; its result would be wrong");
      return Error::InvalidArgument;
    }
    BoundBuffer& bound = partition.bound_inputs[i];
    bound.scalar = value;
    if (!bind(partition, true, i, I64, &bound.scalar, port.shape, &bound)) {
      report_error(ov_message(which() + ": could not bind it to the infer request"));
      return Error::InvalidArgument;
    }
    return Error::Ok;
  }

  // Zero copy: OpenVINO writes into ExecuTorch's buffer when the sizes agree;
  // otherwise the output is copied after inference (copy_output).
  static Error bind_output(Partition& partition, size_t i, EValue& value) {
    const OpenVinoApi& api = OpenVinoLibrary::instance().api();
    if (!value.isTensor()) {
      report_error("execute: output " + std::to_string(i) + " is not a tensor");
      return Error::InvalidArgument;
    }
    const PortInfo& port = partition.outputs[i];
    Tensor out = value.toTensor();
    ov_element_type_e et_type;
    if (!to_ov_type(out.scalar_type(), &et_type) || et_type != port.type) {
      report_error(std::string("execute: output ") + std::to_string(i) + " is " +
                   scalar_type_name(out.scalar_type()) + " in the program but " +
                   ov_type_name(port.type) + " in the compiled model; lower the model again");
      return Error::InvalidType;
    }
    if (out.nbytes() > 0 && out.const_data_ptr() == nullptr) {
      // A program output left out of memory planning (dynamic shapes) that the
      // caller gave no buffer: executorch.runtime gives one, a C++ caller must.
      report_error("execute: output " + std::to_string(i) + " has no memory: the program's outputs are not "
                   "memory planned, so give the method a buffer for it (Module::set_output, Method::set_output_data_ptr)");
      return Error::InvalidState;
    }
    BoundBuffer& bound = partition.bound_outputs[i];
    const bool in_place = port.is_static && !port.aliases_input && port.byte_size == out.nbytes() &&
                          port.byte_size > 0;
    partition.copy_after[i] = !in_place;
    if (in_place) {
      if (!bind(partition, false, i, port.type, out.mutable_data_ptr(), port.shape, &bound)) {
        report_error(ov_message("execute: could not bind output " + std::to_string(i)));
        return Error::Internal;
      }
    } else if (bound.data != nullptr) {
      // The request still writes into a buffer of an earlier call: give it its
      // own again, or OpenVINO would write where ExecuTorch no longer expects.
      TensorGuard own;
      std::vector<int64_t> dims = port.shape;
      if (api.ov_tensor_create(port.type, shape_view(dims), &own.t) != OK ||
          api.ov_infer_request_set_output_tensor_by_index(partition.request, i, own.t) != OK) {
        report_error(ov_message("execute: could not unbind output " + std::to_string(i)));
        return Error::Internal;
      }
      bound.data = nullptr;
      bound.known = false;
    }
    return Error::Ok;
  }

  static Error copy_output(Partition& partition, size_t i, Tensor out) {
    const OpenVinoApi& api = OpenVinoLibrary::instance().api();
    const PortInfo& port = partition.outputs[i];
    const std::string which = "execute: output " + std::to_string(i);
    TensorGuard result;
    void* data = nullptr;
    size_t bytes = 0;
    if (api.ov_infer_request_get_output_tensor_by_index(partition.request, i, &result.t) != OK ||
        api.ov_tensor_get_byte_size(result.t, &bytes) != OK ||
        api.ov_tensor_data(result.t, &data) != OK) {
      report_error(ov_message(which + ": could not read OpenVINO's result"));
      return Error::Internal;
    }
    std::vector<int64_t> dims = port.shape;
    if (!port.is_static) {
      ShapeGuard shape;
      if (api.ov_tensor_get_shape(result.t, &shape.s) != OK) {
        report_error(ov_message(which + ": could not read the shape of OpenVINO's result"));
        return Error::Internal;
      }
      dims.assign(shape.s.dims, shape.s.dims + shape.s.rank);
    }
    // A dynamic result takes OpenVINO's shape. A static one keeps ExecuTorch's
    // planned shape when the byte counts agree (a 0-d result and a (1,) output).
    if (!port.is_static || static_cast<size_t>(out.nbytes()) != bytes) {
      std::vector<SizesType> sizes(dims.begin(), dims.end());
      Error e = executorch::runtime::resize_tensor(out, ArrayRef<SizesType>(sizes.data(), sizes.size()));
      if (e != Error::Ok || static_cast<size_t>(out.nbytes()) != bytes) {
        report_error(which + " has shape " + shape_text(dims) +
                     ", which does not fit ExecuTorch's output of shape " + shape_text(out.sizes()));
        return Error::InvalidArgument;
      }
    }
    if (bytes) std::memcpy(out.mutable_data_ptr(), data, bytes);
    return Error::Ok;
  }
};

OpenVinoBackend& backend_instance() {
  static OpenVinoBackend* backend = new OpenVinoBackend();
  return *backend;
}

const Error kRegistration =
    executorch::runtime::register_backend(Backend{kBackendId, &backend_instance()});

}  // namespace

Error registration_status() { return kRegistration; }

OutputCounters output_counters() {
  return {outputs_in_place.load(), outputs_copied.load()};
}

int live_compiled_models() { return shared_compiled_models_alive(); }

int live_infer_requests() { return live_partitions.load(); }

OpenVinoLoad openvino_load() {
  LoadedLibraryInfo info = OpenVinoLibrary::instance().info();
  return {info.path, info.loads};
}

CompileReport last_compile_report() {
  std::lock_guard<std::mutex> lock(report_mutex);
  return last_report;
}

}  // namespace executorch_openvino
