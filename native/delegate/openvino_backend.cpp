// ExecuTorch's BackendInterface implemented on the OpenVINO C API, and its
// registration.
//
// init:    validate the compile specs and the processed blob, load OpenVINO,
//          take the compiled model this process already holds for the same
//          blob and options (shared_compiled_models.h) or compile it
//          (model_compilation.h); open the handle's partition with its own
//          infer request (partition_executor.h).
// execute: one inference of the partition (partition_executor.h).
// options: "cache_dir" (backend_options.h).
#include "backend_options.h"
#include "compile_report.h"
#include "compile_specs.h"
#include "concurrent_calls.h"
#include "delegate_api.h"
#include "model_compilation.h"
#include "model_weights.h"
#include "openvino_library.h"
#include "partition_executor.h"
#include "processed_blob.h"
#include "shared_compiled_models.h"
#include "spinning_threads.h"

#include <executorch/runtime/backend/interface.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace executorch_openvino {

using executorch::runtime::ArrayRef;
using executorch::runtime::Backend;
using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendInterface;
using executorch::runtime::BackendOption;
using executorch::runtime::BackendOptionContext;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Result;
using executorch::runtime::Span;

namespace {

// init, step 1: the compile specs and the processed blob.
Error read_partition(ArrayRef<CompileSpec> compile_specs, FreeableBuffer* processed, RuntimeOptions* options,
                     ParsedBlob* blob) {
  std::string error;
  if (!parse_compile_specs(compile_specs, options, &error)) {
    report_error("init: " + error);
    return Error::InvalidArgument;
  }
  // Before any byte past the header is read: a file cut short since it was mapped ends the process on the read.
  std::string cut_short;
  const std::string file_key = mapped_file_key(processed->data(), processed->size(), &cut_short);
  if (!cut_short.empty()) {
    report_error("init: " + cut_short);
    return Error::AccessFailed;
  }
  // The checksum over the weights is checked beside the compile (compile_blob) or before sharing.
  if (!parse_blob_layout(processed->data(), processed->size(), blob, &error)) {
    report_error("init: " + error);
    return Error::DelegateInvalidCompatibility;
  }
  blob->file_key = file_key;  // the blob's file: its weights lie in the same mapping
  return Error::Ok;
}

// init, step 2: OpenVINO loaded, with `device` among its devices.
Error open_openvino(const std::string& device) {
  std::string error;
  OpenVINOLibrary& library = OpenVINOLibrary::instance();
  if (!library.ensure_loaded(&error)) {
    report_error("init: " + error);
    return Error::NotFound;
  }
  // Asking the device itself loads its plugin only: listing every device loaded OpenVINO's GPU and NPU plugins
  // too (18 MiB of resident memory on a CPU-only machine, OpenVINO 2026.4.1). The list is for the error message.
  // Composite devices (AUTO:..., HETERO:...) are resolved by OpenVINO itself. A device id ("CPU.0") and the
  // meta plugins that need a list ("HETERO", "BATCH") are checked against the device list: their plugins
  // answer the property but cannot compile (OpenVINO 2026.4.1's CPU plugin takes no device id).
  bool composite = device.find(':') != std::string::npos || device == "AUTO" || device == "MULTI";
  if (composite) return Error::Ok;
  bool plain = device.find('.') == std::string::npos && device != "HETERO" && device != "BATCH";
  if (plain && !library.device_property(device, "FULL_DEVICE_NAME", &error).empty()) return Error::Ok;
  error.clear();
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
    if (d == device || d.rfind(device + ".", 0) == 0) device_found = true;
  }
  if (!device_found) {
    report_error("init: OpenVINO device '" + device + "' is not available on this machine (available: " + device_list +
                 "). Lower the model with compile spec device set to one of those.");
    return Error::NotSupported;
  }
  return Error::Ok;
}

// init, step 3: the compiled model, shared (`*shared`) or compiled now.
Error compiled_model_for(const BackendInitContext& context, const RuntimeOptions& options, const ParsedBlob& blob,
                         FreeableBuffer* processed, std::shared_ptr<SharedCompiledModel>* model, bool* shared) {
  std::string cache_dir, error;
  if (!cache_dir_for(context, &cache_dir, &error)) {  // checked even when nothing is compiled
    report_error("init: " + error);
    return Error::InvalidArgument;
  }
  *model = find_compiled_model(options, blob);
  *shared = *model != nullptr;
  uint32_t weights_crc = 0;
  if (*shared && !weights_match_checksum(blob, weights_in_memory(blob.weights), &weights_crc, &error)) {
    report_error("init: " + error);
    return Error::DelegateInvalidCompatibility;
  }
  if (!*shared) {
    Error e = compile_blob(options, blob, cache_dir, [processed] { processed->Free(); }, model);
    if (e != Error::Ok) return e;
    *model = publish_compiled_model(std::move(*model));
  }
  return Error::Ok;
}

// init, last step: the success recorded for last_compile_report and init captures.
void record_success(const SharedCompiledModel& model, bool shared, const std::string& program_state) {
  CompileReport report = model.report();
  report.shared = shared;
  record_init(report, program_state);
  remember_compile_report(report);
}

// A C++ application sees only ExecuTorch's "not available" unless the places tried are logged; a
// poll logs each distinct failure once. The pybindings turn it off (set_log_unavailability): Python
// puts the places tried into the exception, and ExecuTorch's Python log sink crashed with two writers.
std::atomic<bool> log_unavailability{true};

void report_unavailability(const std::string& message) {
  static std::mutex mutex;
  static std::string* last_logged = new std::string();
  if (!log_unavailability.load()) {
    record_error(message);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (*last_logged == message) {
    record_error(message);
    return;
  }
  *last_logged = message;
  report_error(message);
}

class OpenVINODelegate final : public BackendInterface {
 public:
  // Whether a partition can run here: OpenVINO's C library loads (the first
  // call opens it and creates the Core, as init would). A failure is not
  // cached, so each call searches again (library_search.h) and leaves the
  // places tried in last_error; ExecuTorch calls this before every init and
  // then refuses the method as "not available".
  bool is_available() const override {
    std::string error;
    if (OpenVINOLibrary::instance().ensure_loaded(&error)) return true;
    report_unavailability("is_available: " + error);
    return false;
  }

  Error set_option(BackendOptionContext& context, const Span<BackendOption>& options) override {
    (void)context;
    return set_backend_options(options);
  }

  Error get_option(BackendOptionContext& context, Span<BackendOption>& options) override {
    (void)context;
    return get_backend_options(options);
  }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> compile_specs) const override {
    RuntimeOptions options;
    ParsedBlob blob;
    Error e = read_partition(compile_specs, processed, &options, &blob);
    if (e == Error::Ok) e = open_openvino(options.device);
    std::shared_ptr<SharedCompiledModel> model;
    bool shared = false;
    if (e == Error::Ok) e = compiled_model_for(context, options, blob, processed, &model, &shared);
    std::unique_ptr<Partition> partition;
    if (e == Error::Ok) e = open_partition(model, &partition);
    if (e != Error::Ok) return e;
    record_success(*model, shared, options.program_state);
    // The shared model holds everything it needs (model_weights.h).
    processed->Free();
    return static_cast<DelegateHandle*>(partition.release());
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* handle, Span<EValue*> args) const override {
    (void)context;
    auto* partition = static_cast<Partition*>(handle);
    if (partition == nullptr) {
      report_error("execute: no compiled partition (init failed earlier)");
      return Error::DelegateInvalidHandle;
    }
    if (spinning_check_pending()) {  // once per process: torch copies only large outputs on its OpenMP threads
      size_t largest = 0;
      for (const EValue* value : args) {
        if (value != nullptr && value->isTensor())
          largest = std::max(largest, static_cast<size_t>(value->toTensor().numel()));
      }
      check_spinning_openmp_threads(largest);
    }
    return execute_partition(*partition, args);
  }

  void destroy(DelegateHandle* handle) const override { delete static_cast<Partition*>(handle); }
};

OpenVINODelegate& backend_instance() {
  static OpenVINODelegate* backend = new OpenVINODelegate();
  return *backend;
}

const Error kRegistration = executorch::runtime::register_backend(Backend{kBackendId, &backend_instance()});

}  // namespace

Error registration_status() { return kRegistration; }

void set_log_unavailability(bool on) { log_unavailability.store(on); }

int live_compiled_models() { return shared_compiled_models_alive(); }

OpenVINOLoad openvino_load() {
  LoadedLibraryInfo info = OpenVINOLibrary::instance().info();
  return {info.path, info.loads};
}

}  // namespace executorch_openvino
