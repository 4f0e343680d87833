// executorch-openvino-run: loads a .pte, lists its methods, runs one on .npy
// (or deterministic random) inputs with this delegate and ExecuTorch's
// kernels, writes the outputs as .npy files and prints a summary. No Python.
//
// Exit status: 0 success, 1 the program failed to load or run, 2 bad arguments or input files.
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

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
#include <string>
#include <sys/stat.h>
#include <vector>

#include "delegate_api.h"
#include "npy_file.h"
#include "openvino_library.h"

using executorch::aten::ScalarType;
using executorch::extension::Module;
using executorch::extension::TensorPtr;
using executorch::runtime::EValue;
using executorch::runtime::MethodMeta;
using executorch::runtime::Tag;

namespace {

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

// SplitMix64 (Steele, Lea, Flood 2014): a fixed sequence per seed, on every platform and
// standard library (std::mt19937 would pull libstdc++'s random.o and glibc 2.36's arc4random).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

const char kUsage[] =
    "usage: executorch-openvino-run PROGRAM.pte [--list] [--method NAME]\n"
    "           [--input FILE.npy | --input int:N | --input float:X | --input bool:0|1]...\n"
    "           [--random-inputs] [--seed N] [--output-dir DIR] [--iterations N] [--openvino-lib PATH]\n"
    "\n"
    "  --list            print every method's inputs and outputs, then stop\n"
    "  --method NAME     the method to run (default: forward)\n"
    "  --input VALUE     one per method input, in order: a .npy file for a tensor input, int:/float:/bool: for others\n"
    "  --random-inputs   generate the inputs instead: tensors of the declared shapes, float types uniform in\n"
    "                    [-1, 1), integer types uniform in [0, 100), bool fair coin flips, from --seed (default 0;\n"
    "                    SplitMix64, the same numbers on every machine)\n"
    "  --output-dir DIR  write output i as DIR/output_<i>.npy\n"
    "  --iterations N    timed runs after the first (default 10); the summary gives their median and mean\n"
    "  --openvino-lib P  the OpenVINO C library to use. Without it: OPENVINO_LIB_PATH, then the pip openvino\n"
    "                    package beside this runner's package, then an install tree named by INTEL_OPENVINO_DIR,\n"
    "                    then CONDA_PREFIX, then the system's library search path\n";

struct Options {
  std::string program;
  std::string method = "forward";
  std::vector<std::string> inputs;
  bool list = false;
  bool random_inputs = false;
  uint64_t seed = 0;
  std::string output_dir;
  long iterations = 10;
  std::string openvino_lib;
};

int bad_arguments(const std::string& message) {
  std::fprintf(stderr, "executorch-openvino-run: %s\n(run with --help for the options)\n", message.c_str());
  return 2;
}

int failed(const std::string& message) {
  std::string detail = executorch_openvino::last_error();
  std::fprintf(stderr, "executorch-openvino-run: %s%s%s\n", message.c_str(),
               detail.empty() ? "" : "\nexecutorch-openvino: ", detail.c_str());
  return 1;
}

bool parse_count(const char* text, long* out) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || errno == ERANGE) return false;
  *out = value;
  return true;
}

// Returns -1 to go on, else the exit status.
int parse_arguments(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)name;
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--list") {
      o->list = true;
    } else if (arg == "--random-inputs") {
      o->random_inputs = true;
    } else if (arg == "--method" || arg == "--input" || arg == "--output-dir" || arg == "--iterations" ||
               arg == "--seed" || arg == "--openvino-lib") {
      const char* v = value(arg.c_str());
      if (v == nullptr) return bad_arguments(arg + " needs a value");
      if (arg == "--method") o->method = v;
      if (arg == "--input") o->inputs.push_back(v);
      if (arg == "--output-dir") o->output_dir = v;
      if (arg == "--openvino-lib") o->openvino_lib = v;
      long number = 0;
      if ((arg == "--iterations" || arg == "--seed") && !parse_count(v, &number)) {
        return bad_arguments(arg + " takes a whole number from 0 to " + std::to_string(LONG_MAX) + ", got '" + v + "'");
      }
      if (arg == "--iterations" && number > 1000000) {
        return bad_arguments("--iterations " + std::string(v) + " is more than 1000000 runs");
      }
      if (arg == "--output-dir" && o->output_dir.empty()) return bad_arguments("--output-dir needs a folder");
      if (arg == "--iterations") o->iterations = number;
      if (arg == "--seed") o->seed = static_cast<uint64_t>(number);
    } else if (!arg.empty() && arg[0] == '-') {
      return bad_arguments("unknown option '" + arg + "'");
    } else if (o->program.empty()) {
      o->program = arg;
    } else {
      return bad_arguments("more than one program given ('" + o->program + "', '" + arg +
                           "'); pass inputs with --input");
    }
  }
  if (o->program.empty()) return bad_arguments("no program given: executorch-openvino-run PROGRAM.pte ...");
  if (o->random_inputs && !o->inputs.empty()) {
    return bad_arguments("give either --input values or --random-inputs, not both");
  }
  return -1;
}

// NumPy's type string for an ExecuTorch scalar type, or "" when .npy has none (bfloat16).
std::string npy_descr(ScalarType type) {
  switch (type) {
    case ScalarType::Float: return "<f4";
    case ScalarType::Double: return "<f8";
    case ScalarType::Half: return "<f2";
    case ScalarType::Byte: return "|u1";
    case ScalarType::Char: return "|i1";
    case ScalarType::Short: return "<i2";
    case ScalarType::Int: return "<i4";
    case ScalarType::Long: return "<i8";
    case ScalarType::Bool: return "|b1";
    default: return "";
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += std::to_string(shape[i]) + (i + 1 < shape.size() ? ", " : "");
  return text + (shape.size() == 1 ? ",)" : ")");
}

template <typename Sizes>
std::vector<int64_t> to_shape(const Sizes& sizes) {
  return std::vector<int64_t>(sizes.begin(), sizes.end());
}

std::string describe_value(const MethodMeta& meta, size_t i, bool input) {
  auto tag = input ? meta.input_tag(i) : meta.output_tag(i);
  if (!tag.ok()) return "?";
  if (tag.get() != Tag::Tensor) return executorch::runtime::tag_to_string(tag.get());
  auto info = input ? meta.input_tensor_meta(i) : meta.output_tensor_meta(i);
  if (!info.ok()) return "Tensor";
  return std::string(executorch::runtime::toString(info->scalar_type())) + " " +
         shape_text(to_shape(info->sizes()));
}

void list_methods(Module& module, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    auto meta = module.method_meta(name);
    if (!meta.ok()) {
      std::printf("%s: (its metadata could not be read)\n", name.c_str());
      continue;
    }
    std::printf("%s\n  inputs:\n", name.c_str());
    for (size_t i = 0; i < meta->num_inputs(); ++i) std::printf("    %zu: %s\n", i, describe_value(*meta, i, true).c_str());
    std::printf("  outputs:\n");
    for (size_t i = 0; i < meta->num_outputs(); ++i) std::printf("    %zu: %s\n", i, describe_value(*meta, i, false).c_str());
  }
  std::printf("(tensor sizes of dynamic dimensions are their upper bounds)\n");
}

// The storage of one tensor input; the TensorPtr points into `data`.
struct InputTensor {
  std::vector<uint8_t> data;
  TensorPtr tensor;
};

bool random_tensor(ScalarType type, const std::vector<int64_t>& shape, SplitMix64& rng, InputTensor* out,
                   std::string* error) {
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  const size_t item = executorch::runtime::elementSize(type);
  out->data.assign(count * item, 0);
  for (size_t k = 0; k < count; ++k) {
    uint8_t* at = out->data.data() + k * item;
    const double real = rng.unit() * 2.0 - 1.0;
    const int64_t integer = static_cast<int64_t>(rng.next() % 100);
    switch (type) {
      case ScalarType::Float: { float v = static_cast<float>(real); std::memcpy(at, &v, 4); break; }
      case ScalarType::Double: { std::memcpy(at, &real, 8); break; }
      case ScalarType::Long: { std::memcpy(at, &integer, 8); break; }
      case ScalarType::Int: { int32_t v = static_cast<int32_t>(integer); std::memcpy(at, &v, 4); break; }
      case ScalarType::Short: { int16_t v = static_cast<int16_t>(integer); std::memcpy(at, &v, 2); break; }
      case ScalarType::Char: { int8_t v = static_cast<int8_t>(integer); std::memcpy(at, &v, 1); break; }
      case ScalarType::Byte: { *at = static_cast<uint8_t>(integer); break; }
      case ScalarType::Bool: { *at = static_cast<uint8_t>(integer % 2); break; }
      default:
        *error = std::string("random inputs of type ") + executorch::runtime::toString(type) +
                 " are not supported; pass a .npy file";
        return false;
    }
  }
  return true;
}

// Parses "int:3", "float:0.5", "bool:1" for a non-tensor input of kind `tag`.
bool scalar_input(const std::string& text, size_t i, Tag tag, EValue* out, std::string* error) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon == std::string::npos ? 0 : colon);
  const std::string number = colon == std::string::npos ? "" : text.substr(colon + 1);
  const char* wanted = tag == Tag::Int ? "int" : tag == Tag::Double ? "float" : tag == Tag::Bool ? "bool" : nullptr;
  if (wanted == nullptr) {
    *error = std::string("input ") + std::to_string(i) + " is a " + executorch::runtime::tag_to_string(tag) +
             ", which the runner cannot give";
    return false;
  }
  if (kind != wanted) {
    *error = "input " + std::to_string(i) + " is " + (tag == Tag::Int ? "an " : "a ") +
             executorch::runtime::tag_to_string(tag) + ": give it as " + wanted + ":" +
             (tag == Tag::Bool ? "0|1" : "VALUE") + ", not '" + text + "'";
    return false;
  }
  char* end = nullptr;
  errno = 0;
  if (tag == Tag::Int) {
    long long v = std::strtoll(number.c_str(), &end, 10);
    if (!number.empty() && *end == '\0' && errno != ERANGE) { *out = EValue(static_cast<int64_t>(v)); return true; }
  } else if (tag == Tag::Double) {
    double v = std::strtod(number.c_str(), &end);
    if (!number.empty() && *end == '\0' && errno != ERANGE) { *out = EValue(v); return true; }
  } else if (number == "0" || number == "1") {
    *out = EValue(number == "1");
    return true;
  }
  *error = "input " + std::to_string(i) + ": '" + text + "' is not a valid " + wanted + " (a 64-bit " +
           (tag == Tag::Int ? "integer" : tag == Tag::Double ? "float" : "0 or 1") + ")";
  return false;
}

bool tensor_input(const std::string& path, size_t i, const MethodMeta& meta, InputTensor* out, std::string* error) {
  auto info = meta.input_tensor_meta(i);
  executorch_openvino::NpyArray array;
  if (!executorch_openvino::read_npy(path, &array, error)) {
    *error = "input " + std::to_string(i) + ": " + *error;
    return false;
  }
  const ScalarType type = info->scalar_type();
  const std::vector<int64_t> declared = to_shape(info->sizes());
  const std::string wanted = npy_descr(type);
  if (array.descr != wanted) {
    *error = "input " + std::to_string(i) + " ('" + path + "') holds NumPy type '" + array.descr +
             "'; the method takes " + executorch::runtime::toString(type) + (wanted.empty() ? "" : " ('" + wanted + "')") +
             ": save array.astype(...) of that type";
    return false;
  }
  if (array.shape.size() != declared.size()) {
    *error = "input " + std::to_string(i) + " ('" + path + "') has shape " + shape_text(array.shape) + "; the method takes " +
             std::to_string(declared.size()) + " dimensions " + shape_text(declared);
    return false;
  }
  for (size_t d = 0; d < declared.size(); ++d) {
    if (array.shape[d] > declared[d]) {  // smaller fits a dynamic dimension: ExecuTorch checks that
      *error = "input " + std::to_string(i) + " ('" + path + "') has shape " + shape_text(array.shape) +
               "; the method takes " + shape_text(declared) + " (dynamic dimensions: at most that)";
      return false;
    }
  }
  out->data = std::move(array.data);
  std::vector<executorch::aten::SizesType> sizes(array.shape.begin(), array.shape.end());
  out->tensor = executorch::extension::make_tensor_ptr(std::move(sizes), out->data.data(), type);
  return true;
}

std::string summary(const EValue& value) {
  if (value.isTensor()) {
    const auto& t = value.toTensor();
    return std::string(executorch::runtime::toString(t.scalar_type())) + " " + shape_text(to_shape(t.sizes()));
  }
  if (value.isInt()) return "int " + std::to_string(value.toInt());
  if (value.isDouble()) return "float " + std::to_string(value.toDouble());
  if (value.isBool()) return std::string("bool ") + (value.toBool() ? "true" : "false");
  return executorch::runtime::tag_to_string(value.tag);
}

std::string hex_code(executorch::runtime::Error error) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(error));
  return code;
}

// One output of the first run, copied out of the method's memory.
struct SavedOutput {
  std::string summary;                 // "Float (3, 4)", "int 7"
  ScalarType type = ScalarType::Undefined;  // tensors only
  std::string descr;                   // NumPy's type string; "" when .npy cannot hold it
  std::vector<int64_t> shape;          // () for a scalar
  std::vector<uint8_t> bytes;
};

SavedOutput save_output(const EValue& value) {
  SavedOutput out;
  out.summary = summary(value);
  if (value.isTensor()) {
    const auto& t = value.toTensor();
    out.type = t.scalar_type();
    // .npy has no bfloat16: its bits are written as uint16.
    out.descr = out.type == ScalarType::BFloat16 ? "<u2" : npy_descr(out.type);
    out.shape = to_shape(t.sizes());
    const auto* data = static_cast<const uint8_t*>(t.const_data_ptr());
    out.bytes.assign(data, data + t.nbytes());
  } else if (value.isInt()) {
    int64_t v = value.toInt();
    out.descr = "<i8";
    out.bytes.assign(reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + sizeof v);
  } else if (value.isDouble()) {
    double v = value.toDouble();
    out.descr = "<f8";
    out.bytes.assign(reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + sizeof v);
  } else if (value.isBool()) {
    out.descr = "|b1";
    out.bytes.assign(1, value.toBool() ? 1 : 0);
  }
  return out;
}

bool write_output(const SavedOutput& value, size_t i, const std::string& dir, std::string* error) {
  if (value.descr.empty()) {
    *error = ".npy has no form for " + value.summary;
    return false;
  }
  const std::string path = dir + "/output_" + std::to_string(i) + ".npy";
  return executorch_openvino::write_npy(path, value.descr, value.shape, value.bytes.data(), value.bytes.size(), error);
}

// Each phase of run() returns -1 to go on, else the exit status.

// The OpenVINO C library to use: --openvino-lib, else where the runner's package suggests.
int choose_openvino(const Options& o) {
  auto& openvino = executorch_openvino::OpenVinoLibrary::instance();
  if (!o.openvino_lib.empty()) {
    if (!is_readable_file(o.openvino_lib)) {
      return bad_arguments("--openvino-lib '" + o.openvino_lib + "' is not a file; give the OpenVINO C library, "
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
  if (module.load() != executorch::runtime::Error::Ok) {
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
  meta->emplace(*found);
  return -1;
}

// The method's inputs, from --input values or --random-inputs; `storage` holds the tensors' data.
int make_inputs(const Options& o, const MethodMeta& meta, std::vector<InputTensor>* storage,
                std::vector<EValue>* inputs) {
  const size_t n_inputs = meta.num_inputs();
  if (!o.random_inputs && o.inputs.size() != n_inputs) {
    return bad_arguments("method '" + o.method + "' takes " + std::to_string(n_inputs) + " inputs, " +
                         std::to_string(o.inputs.size()) + " --input values were given (or use --random-inputs; "
                         "--list shows them)");
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
      tensor.tensor = executorch::extension::make_tensor_ptr(
          std::vector<executorch::aten::SizesType>(sizes.begin(), sizes.end()), tensor.data.data(),
          info->scalar_type());
    } else if (is_tensor) {
      if (!tensor_input(o.inputs[i], i, meta, &tensor, &error)) return bad_arguments(error);
    } else if (o.random_inputs) {
      return bad_arguments("input " + std::to_string(i) + " is not a tensor (" +
                           describe_value(meta, i, true) + "): pass every input with --input");
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
int load_method(Module& module, const Options& o, const MethodMeta& meta, OutputBuffers* outputs,
                double* load_ms) {
  auto& openvino = executorch_openvino::OpenVinoLibrary::instance();
  executorch_openvino::clear_last_error();
  auto start = Clock::now();
  if (module.load_method(o.method) != executorch::runtime::Error::Ok) {
    return failed("method '" + o.method + "' did not load" +
                  (!o.openvino_lib.empty() ? "; check the --openvino-lib library (above: why it did not load)"
                   : openvino.is_loaded() ? ""
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
      return failed("output " + std::to_string(i) + " needs " + std::to_string(info->nbytes()) + " bytes at its "
                    "upper bound " + shape_text(to_shape(sizes)) + ", more than this machine can allocate: lower "
                    "the model with a smaller maximum for its dynamic dimensions");
    }
    outputs->tensors[i] = executorch::extension::make_tensor_ptr(
        std::vector<executorch::aten::SizesType>(sizes.begin(), sizes.end()), outputs->storage[i].get(),
        info->scalar_type());
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
int run_method(Module& module, const Options& o, const std::vector<EValue>& inputs, Runs* runs) {
  for (long k = 0; k <= o.iterations; ++k) {
    auto start = Clock::now();
    executorch::runtime::Error set = module.set_inputs(o.method, inputs);
    if (set != executorch::runtime::Error::Ok) {
      return bad_arguments("method '" + o.method + "' refused the inputs (ExecuTorch error " + hex_code(set) +
                           "): a size that does not fit (0x10), a wrong type, or a non-tensor value other than "
                           "the one the program was exported with (0x12); --list shows what it takes");
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
  auto& openvino = executorch_openvino::OpenVinoLibrary::instance();
  std::printf("program %s, method %s: load %.1f ms, first run %.2f ms\n", o.program.c_str(), o.method.c_str(),
              load_ms, runs.first_ms);
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
    std::printf("%zu timed runs: median %.3f ms, mean %.3f ms, min %.3f ms\n", times.size(),
                sorted[sorted.size() / 2], mean, sorted.front());
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
  if (status < 0) status = run_method(module, o, inputs, &runs);
  if (status >= 0) return status;
  return report(o, runs, load_ms);
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // std::bad_alloc above all
    std::fprintf(stderr, "executorch-openvino-run: %s\n", e.what());
    return 1;
  }
}

