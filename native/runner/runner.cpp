// executorch-openvino-run: loads a .pte, lists its methods, runs one on .npy
// (or deterministic random) inputs with this delegate and ExecuTorch's
// kernels, writes the outputs as .npy files and prints a summary. No Python.
//
// Exit status: 0 success, 1 the program failed to load or run, 2 bad arguments or input files.
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/platform/platform.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <new>
#include <optional>
#include <unistd.h>
#include <memory>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "delegate_api.h"
#include "openvino_library.h"
#include "program_backends.h"
#include "runner_options.h"
#include "runner_values.h"

using executorch::aten::ScalarType;
using executorch::extension::Module;
using executorch::extension::TensorPtr;
using executorch::runtime::EValue;
using executorch::runtime::MethodMeta;
using executorch::runtime::Tag;

namespace {

using namespace executorch_openvino::runner;

// No stat(): its GLIBC_2.33 symbol would keep the runner out of manylinux_2_28.
bool is_dir(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir) closedir(dir);
  return dir != nullptr;
}
bool is_readable_file(const std::string& path) {
  if (is_dir(path)) return false;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file) std::fclose(file);
  return file != nullptr;
}

// ExecuTorch's error lines (level E) are held instead of printed, so that a failure is told once: the
// delegate logs its message there and keeps it as last_error(), which failed() prints. Other levels print
// as ExecuTorch's default log does.
std::mutex held_errors_mutex;
std::vector<std::string> held_errors;

void emit_log(et_timestamp_t, et_pal_log_level_t level, const char* filename, const char*, size_t line,
              const char* message, size_t length) {
  const char* base = std::strrchr(filename, '/');
  std::string text =
      std::string(base ? base + 1 : filename) + ":" + std::to_string(line) + "] " + std::string(message, length);
  // The delegate's warnings (report_warning: "warning: ..." at level E, ExecuTorch's log has no warning
  // level) are not failures: they print at once.
  if (level == kError && text.find("] warning: ") == std::string::npos) {
    std::lock_guard<std::mutex> lock(held_errors_mutex);
    held_errors.push_back(text);
    return;
  }
  std::fprintf(stderr, "%c executorch:%s\n", static_cast<char>(level), text.c_str());
}

// What ExecuTorch logged as errors so far, one "ExecuTorch: ..." line each ("" for none).
std::string held_error_text() {
  std::lock_guard<std::mutex> lock(held_errors_mutex);
  std::string text;
  for (const std::string& held : held_errors) text += (text.empty() ? "ExecuTorch: " : "\nExecuTorch: ") + held;
  return text;
}

// One message per failure: the runner's, then the delegate's reason, or else what ExecuTorch logged.
int failed(const std::string& message) {
  std::string detail = executorch_openvino::last_error();
  if (detail.empty()) detail = held_error_text();
  std::fprintf(stderr, "executorch-openvino-run: %s%s%s\n", message.c_str(), detail.empty() ? "" : ":\n",
               detail.c_str());
  return 1;
}

std::string describe_value(const MethodMeta& meta, size_t i, bool input) {
  auto tag = input ? meta.input_tag(i) : meta.output_tag(i);
  if (!tag.ok()) return "?";
  if (tag.get() != Tag::Tensor) return executorch::runtime::tag_to_string(tag.get());
  auto info = input ? meta.input_tensor_meta(i) : meta.output_tensor_meta(i);
  if (!info.ok()) return "Tensor";
  return std::string(executorch::runtime::toString(info->scalar_type())) + " " + shape_text(to_shape(info->sizes()));
}

void list_methods(Module& module, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    auto meta = module.method_meta(name);
    if (!meta.ok()) {
      std::printf("%s: (its metadata could not be read)\n", name.c_str());
      continue;
    }
    std::printf("%s\n  inputs:\n", name.c_str());
    for (size_t i = 0; i < meta->num_inputs(); ++i)
      std::printf("    %zu: %s\n", i, describe_value(*meta, i, true).c_str());
    std::printf("  outputs:\n");
    for (size_t i = 0; i < meta->num_outputs(); ++i)
      std::printf("    %zu: %s\n", i, describe_value(*meta, i, false).c_str());
  }
  std::printf("(tensor sizes of dynamic dimensions are their upper bounds)\n");
}

std::string hex_code(executorch::runtime::Error error) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(error));
  return code;
}

// Each phase of run() returns -1 to go on, else the exit status.

// The OpenVINO C library to use: --openvino-lib, else where the runner's package suggests.
int choose_openvino(const Options& o) {
  auto& openvino = executorch_openvino::OpenVINOLibrary::instance();
  if (!o.openvino_lib.empty()) {
    if (!is_readable_file(o.openvino_lib)) {
      return bad_arguments("--openvino-lib '" + o.openvino_lib +
                           "' is not a file; give the OpenVINO C library, "
                           "e.g. .../libopenvino_c.so.2541");
    }
    char* absolute = realpath(o.openvino_lib.c_str(), nullptr);
    openvino.set_explicit_library_path(absolute ? absolute : o.openvino_lib);
    std::free(absolute);
  }
  // Installed from the wheel, the runner sits in site-packages/executorch_openvino/,
  // and a pip openvino package, if any, in site-packages/openvino/libs.
  if (char* self = realpath("/proc/self/exe", nullptr)) {
    std::string dir(self);
    std::free(self);
    dir = dir.substr(0, dir.rfind('/')) + "/../openvino/libs";
    if (char* libs = realpath(dir.c_str(), nullptr)) {
      if (is_dir(libs)) openvino.set_pip_library_dir(libs);
      std::free(libs);
    }
  }
  return -1;
}

int check_program(const Options& o) {
  if (!is_readable_file(o.program)) {
    return bad_arguments("the program '" + o.program + "' does not exist or is not a file");
  }
  if (executorch_openvino::registration_status() != executorch::runtime::Error::Ok) {
    return failed("the OpenVINO delegate did not register with ExecuTorch's runtime");
  }
  return -1;
}

// Loads the program and finds the method to run (--list prints them all and stops, status 0).
int open_method(Module& module, const Options& o, std::optional<MethodMeta>* meta) {
  // InternalConsistency: a damaged flatbuffer is refused instead of read out of bounds (Minimal crashed).
  if (module.load(executorch::runtime::Program::Verification::InternalConsistency) != executorch::runtime::Error::Ok) {
    return failed("'" + o.program + "' is not an ExecuTorch program this runtime can load");
  }
  auto names_result = module.method_names();
  if (!names_result.ok()) return failed("could not read the methods of '" + o.program + "'");
  std::vector<std::string> names(names_result->begin(), names_result->end());
  std::sort(names.begin(), names.end());
  if (o.list) {
    list_methods(module, names);
    return 0;
  }
  if (std::find(names.begin(), names.end(), o.method) == names.end()) {
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    return bad_arguments("the program has no method '" + o.method + "'; it has: " + all);
  }
  auto found = module.method_meta(o.method);
  if (!found.ok()) return failed("could not read the metadata of method '" + o.method + "'");
  // A program delegated to a backend this runner lacks: say which and what to do, before loading.
  std::string unregistered =
      executorch_openvino::unregistered_backends_message(o.method, executorch_openvino::method_backends(found.get()));
  if (!unregistered.empty()) return failed(unregistered);
  meta->emplace(*found);
  return -1;
}

// The method's inputs, from --input values or --random-inputs; `storage` holds the tensors' data.
int make_inputs(const Options& o, const MethodMeta& meta, std::vector<InputTensor>* storage,
                std::vector<EValue>* inputs) {
  const size_t n_inputs = meta.num_inputs();
  if (!o.random_inputs && o.inputs.size() != n_inputs) {
    return bad_arguments("method '" + o.method + "' takes " + std::to_string(n_inputs) +
                         (n_inputs == 1 ? " input, " : " inputs, ") + std::to_string(o.inputs.size()) +
                         (o.inputs.size() == 1 ? " --input value was" : " --input values were") +
                         " given (or use --random-inputs; --list shows them)");
  }
  storage->resize(n_inputs);
  inputs->resize(n_inputs);
  SplitMix64 rng{o.seed};
  std::string error;
  for (size_t i = 0; i < n_inputs; ++i) {
    auto tag = meta.input_tag(i);
    const bool is_tensor = tag.ok() && tag.get() == Tag::Tensor;
    InputTensor& tensor = (*storage)[i];
    if (is_tensor && o.random_inputs) {
      auto info = meta.input_tensor_meta(i);
      if (!random_tensor(info->scalar_type(), to_shape(info->sizes()), rng, &tensor, &error)) {
        return bad_arguments("input " + std::to_string(i) + ": " + error);
      }
      auto sizes = info->sizes();
      tensor.tensor =
          executorch::extension::make_tensor_ptr(std::vector<executorch::aten::SizesType>(sizes.begin(), sizes.end()),
                                                 tensor.data.data(), info->scalar_type());
    } else if (is_tensor) {
      if (!tensor_input(o.inputs[i], i, meta, &tensor, &error)) return bad_arguments(error);
    } else if (o.random_inputs) {
      return bad_arguments("input " + std::to_string(i) + " is not a tensor (" + describe_value(meta, i, true) +
                           "): pass every input with --input");
    } else if (!scalar_input(o.inputs[i], i, tag.ok() ? tag.get() : Tag::None, &(*inputs)[i], &error)) {
      return bad_arguments(error);
    }
    if (is_tensor) (*inputs)[i] = EValue(*tensor.tensor);
  }
  return -1;
}

// Before any run: a bad folder is an argument error.
int check_output_dir(const Options& o) {
  if (o.output_dir.empty()) return -1;
  if (!is_dir(o.output_dir) && mkdir(o.output_dir.c_str(), 0755) != 0) {
    return bad_arguments("cannot create the output folder '" + o.output_dir + "'");
  }
  if (access(o.output_dir.c_str(), W_OK | X_OK) != 0) {
    return bad_arguments("cannot write into the output folder '" + o.output_dir + "'");
  }
  return -1;
}

using Clock = std::chrono::steady_clock;

// Buffers of the outputs left out of memory planning (programs with dynamic shapes).
struct OutputBuffers {
  std::vector<std::unique_ptr<uint8_t[]>> storage;
  std::vector<TensorPtr> tensors;
};

// Loads the method (timed: `load_ms`) and gives its unplanned outputs their buffers.
int load_method(Module& module, const Options& o, const MethodMeta& meta, OutputBuffers* outputs, double* load_ms) {
  auto& openvino = executorch_openvino::OpenVINOLibrary::instance();
  executorch_openvino::clear_last_error();
  auto start = Clock::now();
  if (module.load_method(o.method) != executorch::runtime::Error::Ok) {
    return failed("method '" + o.method + "' did not load" +
                  (!o.openvino_lib.empty() ? "; check the --openvino-lib library"
                   : openvino.is_loaded()  ? ""
                                           : "; to choose the OpenVINO C library, pass --openvino-lib PATH"));
  }
  *load_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  // One buffer per such output, at its upper-bound size, left uninitialised
  // so that only the pages a run writes become resident.
  outputs->storage.resize(meta.num_outputs());
  outputs->tensors.resize(meta.num_outputs());
  for (size_t i = 0; i < meta.num_outputs(); ++i) {
    auto tag = meta.output_tag(i);
    if (!tag.ok() || tag.get() != Tag::Tensor) continue;
    auto info = meta.output_tensor_meta(i);
    if (!info.ok() || info->is_memory_planned()) continue;
    auto sizes = info->sizes();
    outputs->storage[i].reset(new (std::nothrow) uint8_t[std::max<size_t>(info->nbytes(), 1)]);
    if (!outputs->storage[i]) {
      return failed("output " + std::to_string(i) + " needs " + std::to_string(info->nbytes()) +
                    " bytes at its "
                    "upper bound " +
                    shape_text(to_shape(sizes)) +
                    ", more than this machine can allocate: lower "
                    "the model with a smaller maximum for its dynamic dimensions");
    }
    outputs->tensors[i] =
        executorch::extension::make_tensor_ptr(std::vector<executorch::aten::SizesType>(sizes.begin(), sizes.end()),
                                               outputs->storage[i].get(), info->scalar_type());
    if (module.set_output(o.method, EValue(*outputs->tensors[i]), i) != executorch::runtime::Error::Ok) {
      return failed("could not give output " + std::to_string(i) + " of method '" + o.method + "' its buffer");
    }
  }
  return -1;
}

struct Runs {
  std::vector<SavedOutput> saved;  // run 0's outputs
  double first_ms = 0;
  std::vector<double> times;  // runs 1..iterations
};

// Run 0 is the first (timed alone); runs 1..iterations are timed together.
// The outputs written are run 0's, copied before the timed runs: what one
// call of a fresh method gives, as executorch.runtime's first call does,
// also for programs that keep state between calls.
// The first tensor input whose shape is not the method's (ExecuTorch refuses a static size other than its own,
// where the runner's checks allowed any size up to it), as a message; "" when all match.
std::string static_shape_mismatch(const Options& o, const MethodMeta& meta, const std::vector<EValue>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto info = meta.input_tensor_meta(i);
    if (!inputs[i].isTensor() || !info.ok()) continue;
    auto given = inputs[i].toTensor().sizes();
    std::vector<int64_t> shape(given.begin(), given.end());
    if (shape == to_shape(info->sizes())) continue;
    return "input " + std::to_string(i) + (i < o.inputs.size() ? " ('" + o.inputs[i] + "')" : std::string()) +
           " has shape " + shape_text(shape) + "; the method refused it and takes " +
           shape_text(to_shape(info->sizes())) + " (that size exactly where the program's shape is static)";
  }
  return "";
}

int run_method(Module& module, const Options& o, const MethodMeta& meta, const std::vector<EValue>& inputs,
               Runs* runs) {
  for (long k = 0; k <= o.iterations; ++k) {
    auto start = Clock::now();
    executorch::runtime::Error set = module.set_inputs(o.method, inputs);
    if (set != executorch::runtime::Error::Ok) {
      const std::string mismatch = static_shape_mismatch(o, meta, inputs);
      if (!mismatch.empty()) return bad_arguments(mismatch);
      const std::string said = held_error_text();
      return bad_arguments("method '" + o.method + "' refused the inputs (ExecuTorch error " + hex_code(set) +
                           (said.empty() ? std::string("): a size that does not fit (0x10), a wrong type, or a "
                                                       "non-tensor value other than the one the program was "
                                                       "exported with (0x12)")
                                         : "):\n" + said) +
                           "\n--list shows what it takes");
    }
    auto result = module.execute(o.method);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result.ok()) {
      return failed("method '" + o.method + "' failed on run " + std::to_string(k + 1) + " (ExecuTorch error " +
                    hex_code(result.error()) + ")");
    }
    if (k == 0) {
      runs->first_ms = ms;
      for (const EValue& value : *result) runs->saved.push_back(save_output(value));
    } else {
      runs->times.push_back(ms);
    }
  }
  return -1;
}

// Prints the summary and writes the outputs; 1 when one could not be written.
int report(const Options& o, const Runs& runs, double load_ms) {
  auto& openvino = executorch_openvino::OpenVINOLibrary::instance();
  // Errors logged on the way that did not fail the run: shown, not lost.
  const std::string held = held_error_text();
  if (!held.empty()) std::fprintf(stderr, "%s\n", held.c_str());
  std::printf("program %s, method %s: load %.1f ms, first run %.2f ms\n", o.program.c_str(), o.method.c_str(), load_ms,
              runs.first_ms);
  if (openvino.is_loaded()) {
    const auto info = openvino.info();
    std::printf("OpenVINO %s (%s): %s\n", info.version.c_str(), info.source.c_str(), info.path.c_str());
  }
  const std::vector<double>& times = runs.times;
  if (!times.empty()) {
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0;
    for (double t : times) mean += t / times.size();
    const size_t middle = sorted.size() / 2;  // an even count's median is the mean of its two middle values
    const double median = sorted.size() % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    std::printf("%zu timed runs: median %.3f ms, mean %.3f ms, min %.3f ms\n", times.size(), median, mean,
                sorted.front());
    if (o.print_times) {
      std::printf("run times ms:");
      for (double t : times) std::printf(" %.4f", t);
      std::printf("\n");
    }
  }
  int status = 0;
  std::string error;
  for (size_t i = 0; i < runs.saved.size(); ++i) {
    const SavedOutput& saved = runs.saved[i];
    std::printf("output %zu: %s", i, saved.summary.c_str());
    if (!o.output_dir.empty()) {
      if (write_output(saved, i, o.output_dir, &error)) {
        std::printf(" -> %s/output_%zu.npy%s", o.output_dir.c_str(), i,
                    saved.type == ScalarType::BFloat16 ? " (bfloat16 bits as uint16: NumPy has no bfloat16)" : "");
      } else {
        std::printf(" (not written: %s)", error.c_str());
        status = 1;
      }
    }
    std::printf("\n");
  }
  return status;
}

}  // namespace

int run(int argc, char** argv) {
  Options o;
  int status = parse_arguments(argc, argv, &o);
  if (status < 0) status = choose_openvino(o);
  if (status < 0) status = check_program(o);
  if (status >= 0) return status;
  Module module(o.program, Module::LoadMode::Mmap);
  std::optional<MethodMeta> meta;
  status = open_method(module, o, &meta);
  if (status >= 0) return status;
  std::vector<InputTensor> storage;
  std::vector<EValue> inputs;
  status = make_inputs(o, *meta, &storage, &inputs);
  if (status < 0) status = check_output_dir(o);
  if (status >= 0) return status;
  OutputBuffers outputs;
  double load_ms = 0;
  Runs runs;
  status = load_method(module, o, *meta, &outputs, &load_ms);
  if (status < 0) status = run_method(module, o, *meta, inputs, &runs);
  if (status >= 0) return status;
  return report(o, runs, load_ms);
}

int main(int argc, char** argv) {
  executorch::runtime::register_pal(executorch::runtime::PalImpl::create(emit_log, __FILE__));
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // std::bad_alloc above all
    std::fprintf(stderr, "executorch-openvino-run: %s\n", e.what());
    return 1;
  }
}
