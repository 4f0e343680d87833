// What the delegate library exports to the pybindings (and to C++ programs).
#pragma once

#include <executorch/runtime/core/error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace executorch_openvino {

// The backend id this delegate registers under. It differs from the
// "OpenvinoBackend" that the executorch wheel registers itself (docs/design.md), so
// both live in one process and a .pte names the delegate that made it.
constexpr const char* kBackendId = "ExecutorchOpenvinoBackend";

// The backend option (ExecuTorch's set_option / get_option, or a runtime spec
// of one load) naming OpenVINO's model cache directory: a string, "" for none.
// With it, an init whose model and properties were compiled before imports
// the compiled model from the cache instead of compiling it.
constexpr const char kCacheDirOption[] = "cache_dir";

// The result of registering with ExecuTorch's backend registry when this
// library was loaded.
executorch::runtime::Error registration_status();

// Whether a failed is_available() (OpenVINO's C library did not load) writes the places tried to ExecuTorch's
// log, once per distinct failure: on by default, since a C++ application sees only ExecuTorch's "not
// available" otherwise (last_error() keeps it either way). The pybindings turn it off: Python reports it
// with the exception.
void set_log_unavailability(bool on);

// Records an error for the user: logged through ExecuTorch's log and kept as
// the last error, which Python reports (ExecuTorch's own exceptions carry only
// an error code).
// Bytes outside printable ASCII are written as \xNN.
void report_error(const std::string& message);
// Stores `message` as last_error() without writing ExecuTorch's log (whose
// Python sink crashed when two threads wrote to it at once).
void record_error(const std::string& message);
// Logged the same way, but not kept as the last error: the call goes on.
void report_warning(const std::string& message);
std::string last_error();
void clear_last_error();
// The last error reported on the calling thread (report_error and
// record_error keep both): a caller's own failure, whatever other threads
// report meanwhile.
std::string thread_last_error();
void clear_thread_last_error();

// What the most recent successful init compiled: the device, the precision
// hint the delegate asked for ("" for none), the one the compiled model
// reports (OpenVINO falls back to f32 where the CPU lacks bf16/f16 units), and
// whether the compiled model came from the model cache.
struct CompileReport {
  std::string device;
  std::string requested_precision;
  std::string effective_precision;
  // Imported from OpenVINO's model cache (kCacheDirOption) instead of compiled.
  bool loaded_from_cache = false;
  // Why the model cache was not used although a folder was set ("" if it was, or none was set).
  std::string cache_problem;
  // The performance hint asked for ("" for none) and the compiled model's own
  // PERFORMANCE_HINT, NUM_STREAMS and OPTIMAL_NUMBER_OF_INFER_REQUESTS, as text.
  std::string requested_performance_hint;
  std::string performance_hint;
  std::string num_streams;
  std::string optimal_infer_requests;
  // The init reused a compiled model this process already held for the same
  // blob and options (shared_compiled_models.h): nothing was compiled or read
  // from the cache, and the fields above are those of the init that compiled it.
  bool shared = false;
  // Where OpenVINO reads the weights from (model_weights.h): "file mapping"
  // (the .pte's own file, mapped by the delegate), "copy" (a program loaded
  // from memory) or "model cache" (OpenVINO's mapping of the cache's files).
  std::string weights;
};
CompileReport last_compile_report();

// Bytes of partition weights the delegate holds now: mapped from .pte files
// (resident only as OpenVINO touches them), and copied.
struct WeightsBytes {
  uint64_t mapped = 0;
  uint64_t copied = 0;
};
WeightsBytes weights_bytes_alive();

// One successful init as start_init_capture records it: its compile report and
// the partition's "program_state" compile spec ("" when the program was
// lowered without it; see python/executorch_openvino/contract/compile_specs.py).
struct InitRecord {
  CompileReport report;
  std::string program_state;
};
// Records every successful init on the calling thread from now on (and drops
// what an earlier capture left); finish_init_capture returns them, in order, and stops.
// A program load is one thread's work, so this tells which inits were its own.
void start_init_capture();
std::vector<InitRecord> finish_init_capture();
// Whether the calling thread records its inits now: its caller (the Python
// package) then reports what they say itself, from the records, as data
// (a precision other than the one asked for), instead of reading the log.
bool init_capture_on();

// Outputs OpenVINO wrote straight into ExecuTorch's buffers, and outputs the
// delegate copied after inference (dynamic shapes), since the library loaded.
struct OutputCounters {
  uint64_t in_place = 0;
  uint64_t copied = 0;
};
OutputCounters output_counters();

// OpenVINO compiled models the delegate holds now: one per distinct blob and
// compile options, shared by every handle of it, freed with the last handle.
int live_compiled_models();
// Handles (initialised partitions) alive now, each with its own infer request,
// released by ExecuTorch's destroy() when its method is freed.
int live_infer_requests();

// OpenVINO inferences running now in execute, the most seen at once since reset_infer_peak(), and
// all finished since the library loaded.
struct InferCounters {
  int in_flight = 0;
  int peak = 0;
  uint64_t finished = 0;
};
InferCounters infer_counters();
void reset_infer_peak();

// The OpenVINO C library this process loaded, and how many times one was
// loaded (a Core created): 0 until OpenVINO is first needed (a delegated init,
// library_info(), ...), then 1, never more.
struct OpenVINOLoad {
  std::string path;
  int loads = 0;
};
OpenVINOLoad openvino_load();

}  // namespace executorch_openvino
