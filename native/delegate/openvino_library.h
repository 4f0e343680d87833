// Finds, loads and holds the OpenVINO C library (libopenvino_c) at run time.
//
// The delegate never links OpenVINO (see docs/design.md: "the delegate never links
// OpenVINO"). The library is opened the first time a model is initialised, from
// the places and in the order library_search.h documents. A failed load is not
// cached: the next call tries again.
#pragma once

#include <openvino/c/openvino.h>

#include "library_search.h"

#include <mutex>
#include <string>
#include <vector>

namespace executorch_openvino {

// Every OpenVINO C function the delegate calls, resolved with dlsym/GetProcAddress.
struct OpenVINOApi {
#define EXOV_API_FUNCTIONS(X)                    \
  X(ov_get_openvino_version)                     \
  X(ov_version_free)                             \
  X(ov_get_last_err_msg)                         \
  X(ov_core_create)                              \
  X(ov_core_free)                                \
  X(ov_core_get_available_devices)               \
  X(ov_core_get_property)                        \
  X(ov_available_devices_free)                   \
  X(ov_core_read_model_from_memory_buffer)       \
  X(ov_core_compile_model)                       \
  X(ov_core_compile_model_from_file)             \
  X(ov_model_free)                               \
  X(ov_compiled_model_free)                      \
  X(ov_compiled_model_get_property)              \
  X(ov_free)                                     \
  X(ov_compiled_model_inputs_size)               \
  X(ov_compiled_model_outputs_size)              \
  X(ov_compiled_model_input_by_index)            \
  X(ov_compiled_model_output_by_index)           \
  X(ov_compiled_model_create_infer_request)      \
  X(ov_output_const_port_free)                   \
  X(ov_port_get_element_type)                    \
  X(ov_port_get_any_name)                        \
  X(ov_port_get_partial_shape)                   \
  X(ov_partial_shape_free)                       \
  X(ov_shape_free)                               \
  X(ov_tensor_create)                            \
  X(ov_tensor_create_from_host_ptr)              \
  X(ov_tensor_get_shape)                         \
  X(ov_tensor_get_element_type)                  \
  X(ov_tensor_get_byte_size)                     \
  X(ov_tensor_data)                              \
  X(ov_tensor_free)                              \
  X(ov_infer_request_set_input_tensor_by_index)  \
  X(ov_infer_request_set_output_tensor_by_index) \
  X(ov_infer_request_get_output_tensor_by_index) \
  X(ov_infer_request_infer)                      \
  X(ov_infer_request_free)
#define EXOV_DECLARE(name) decltype(&::name) name = nullptr;
  EXOV_API_FUNCTIONS(EXOV_DECLARE)
#undef EXOV_DECLARE
};

// What the last successful load found: reported to Python and in logs.
struct LoadedLibraryInfo {
  std::string path;                   // the file that was opened
  std::string source;                 // which place of the search order gave it
  std::string version;                // ov_get_openvino_version's build number
  std::vector<std::string> not_used;  // "source: path" of other OpenVINOs present, later in the order
  int loads = 0;                      // libraries opened and Cores created in this process: 1 once loaded, never more
};

class OpenVINOLibrary {
 public:
  static OpenVINOLibrary& instance();

  // Configuration; each takes effect at the next load attempt, and an empty
  // string clears it. Changing the explicit path after a successful load has no
  // effect on the already loaded library (a process holds one OpenVINO).
  void set_explicit_library_path(const std::string& path);
  void set_pip_library_dir(const std::string& dir);

  // Loads the library if it is not loaded yet. On failure returns false and
  // fills `error` with every place tried and each loader message.
  bool ensure_loaded(std::string* error);
  bool is_loaded();

  // Valid only after ensure_loaded() returned true.
  const OpenVINOApi& api() const { return api_; }
  ov_core_t* core() const { return core_; }
  LoadedLibraryInfo info();
  // Devices OpenVINO reports, e.g. {"CPU"}; empty with `error` set on failure.
  std::vector<std::string> available_devices(std::string* error);

  // A device property as text (e.g. "CPU", "INFERENCE_PRECISION_HINT"); empty with `error` set on failure.
  std::string device_property(const std::string& device, const std::string& key, std::string* error);

  // The search plan (library_search.h) for this process's settings, without loading anything.
  SearchPlan search_plan();

  // The message OpenVINO left for the failing call on this thread, if any.
  std::string last_openvino_message() const;

 private:
  OpenVINOLibrary() = default;
  SearchPlan plan_locked() const;  // the caller holds mutex_
  bool try_open(const LibraryCandidate& c, std::string* why);

  std::mutex mutex_;
  std::string explicit_path_;
  std::string pip_dir_;
  void* handle_ = nullptr;
  OpenVINOApi api_;
  ov_core_t* core_ = nullptr;
  LoadedLibraryInfo info_;
};

}  // namespace executorch_openvino
