// The Python extension: loading it loads the delegate library, which registers
// the backend with ExecuTorch's runtime in this process. It reports what was
// registered and which OpenVINO was loaded from where.
#include "delegate_api.h"
#include "openvino_library.h"
#include "program_backends.h"
#include "python_method.h"
#include "spinning_threads.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/executor/program.h>

#include <array>
#include <cstring>

namespace nb = nanobind;
using executorch_openvino::OpenVINOLibrary;

namespace {
nb::dict plan_as_dict(const executorch_openvino::SearchPlan& plan) {
  nb::list candidates;
  for (const auto& c : plan.candidates) {
    nb::dict d;
    d["path"] = c.path;
    d["source"] = c.source;
    d["explicit"] = c.explicit_choice;
    d["dependency_dirs"] = c.dependency_dirs;
    candidates.append(d);
  }
  nb::dict result;
  result["candidates"] = candidates;
  result["notes"] = plan.notes;
  return result;
}

nb::dict report_as_dict(const executorch_openvino::CompileReport& r) {
  nb::dict d;
  d["device"] = r.device;
  d["requested_precision"] = r.requested_precision;
  d["effective_precision"] = r.effective_precision;
  d["loaded_from_cache"] = r.loaded_from_cache;
  d["cache_problem"] = r.cache_problem;
  d["requested_performance_hint"] = r.requested_performance_hint;
  d["performance_hint"] = r.performance_hint;
  d["num_streams"] = r.num_streams;
  d["optimal_infer_requests"] = r.optimal_infer_requests;
  d["shared"] = r.shared;
  d["weights"] = r.weights;
  return d;
}

// {method name: describe(its MethodMeta)} of the program `loader` reads; nothing is loaded but its metadata.
template <typename Describe>
nb::dict describe_methods(executorch::runtime::DataLoader* loader, Describe describe) {
  // InternalConsistency, as executorch.runtime loads: a damaged flatbuffer is refused, not read out of bounds.
  auto program =
      executorch::runtime::Program::load(loader, executorch::runtime::Program::Verification::InternalConsistency);
  if (!program.ok()) {
    throw std::invalid_argument("not an ExecuTorch program this runtime can read (ExecuTorch error " +
                                std::to_string(static_cast<int>(program.error())) + ")");
  }
  nb::dict methods;
  for (size_t i = 0; i < program->num_methods(); ++i) {
    auto name = program->get_method_name(i);
    if (!name.ok()) continue;
    auto meta = program->method_meta(name.get());
    if (!meta.ok()) continue;
    methods[name.get()] = describe(meta.get());
  }
  return methods;
}

// [(backend id, registered in this process)] of a method.
nb::list backends_of(const executorch::runtime::MethodMeta& meta) {
  nb::list uses;
  for (const auto& use : executorch_openvino::method_backends(meta))
    uses.append(nb::make_tuple(use.id, use.registered));
  return uses;
}

// One input or output: {"tag": ExecuTorch Tag code (-1 when unreadable)} and, for a tensor, "dtype"
// (ScalarType code), "sizes" (a dynamic dimension's upper bound), "dim_order", "nbytes" and "memory_planned".
nb::dict value_description(const executorch::runtime::Result<executorch::runtime::Tag>& tag,
                           const executorch::runtime::TensorInfo* info) {
  nb::dict d;
  d["tag"] = tag.ok() ? static_cast<int>(tag.get()) : -1;
  if (info != nullptr) {
    d["dtype"] = static_cast<int>(info->scalar_type());
    d["sizes"] = std::vector<int32_t>(info->sizes().begin(), info->sizes().end());
    d["dim_order"] = std::vector<int>(info->dim_order().begin(), info->dim_order().end());
    d["nbytes"] = info->nbytes();
    d["memory_planned"] = info->is_memory_planned();
  }
  return d;
}

// The value_description of each of `count` values: `tag_of(i)` and `info_of(i)` read them from a MethodMeta,
// the TensorInfo only for a tensor (MethodMeta logs "is not Tensor" for any other).
template <typename TagOf, typename InfoOf>
nb::list describe_values(size_t count, TagOf tag_of, InfoOf info_of) {
  nb::list values;
  for (size_t i = 0; i < count; ++i) {
    auto tag = tag_of(i);
    if (!tag.ok() || tag.get() != executorch::runtime::Tag::Tensor) {
      values.append(value_description(tag, nullptr));
      continue;
    }
    auto info = info_of(i);
    values.append(value_description(tag, info.ok() ? &info.get() : nullptr));
  }
  return values;
}

// {"inputs": [...], "outputs": [...], "backends": [...]} of a method (value_description's entries).
nb::dict signature_of(const executorch::runtime::MethodMeta& meta) {
  nb::dict d;
  d["inputs"] = describe_values(
      meta.num_inputs(), [&](size_t i) { return meta.input_tag(i); },
      [&](size_t i) { return meta.input_tensor_meta(i); });
  d["outputs"] = describe_values(
      meta.num_outputs(), [&](size_t i) { return meta.output_tag(i); },
      [&](size_t i) { return meta.output_tensor_meta(i); });
  d["backends"] = backends_of(meta);
  return d;
}

// A loader for a .pte given as bytes (read in place: `program` must outlive it) or a path, then `read(loader)`.
template <typename Read>
nb::dict read_program(nb::handle program, Read read) {
  if (nb::isinstance<nb::bytes>(program)) {
    nb::bytes data = nb::borrow<nb::bytes>(program);
    executorch::extension::BufferDataLoader loader(data.c_str(), data.size());
    return read(&loader);
  }
  std::string path = nb::cast<std::string>(nb::str(program));
  auto loader = executorch::extension::FileDataLoader::from(path.c_str());
  if (!loader.ok()) throw std::invalid_argument("cannot read '" + path + "'");
  return read(&loader.get());
}

[[noreturn]] void raise_reported(const std::string& error) {
  executorch_openvino::report_error(error);
  throw std::runtime_error(executorch_openvino::last_error());  // ASCII-escaped
}
}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "Native half of executorch_openvino: registration and OpenVINO library state.";
  m.attr("BACKEND_ID") = executorch_openvino::kBackendId;
  executorch_openvino::set_log_unavailability(false);  // Python raises it with the places tried
  executorch_openvino::bind_python_method(m);

  m.def(
      "registration_error_code", [] { return static_cast<int>(executorch_openvino::registration_status()); },
      "0 when the delegate registered with ExecuTorch, else ExecuTorch's Error code.");

  m.def(
      "set_library_path", [](const std::string& path) { OpenVINOLibrary::instance().set_explicit_library_path(path); },
      nb::arg("path"));
  m.def(
      "set_pip_library_dir", [](const std::string& dir) { OpenVINOLibrary::instance().set_pip_library_dir(dir); },
      nb::arg("dir"));

  m.def("is_loaded", [] { return OpenVINOLibrary::instance().is_loaded(); });
  m.def(
      "spinning_openmp_threads_problem",
      [] { return std::string(executorch_openvino::spinning_openmp_threads_problem()); },
      "The warning the delegate logs at the first execute outside exov.load_method ('' for none): torch's OpenMP "
      "threads spin after its parallel operations and slow OpenVINO's next inference (spinning_threads.h).");

  m.def(
      "program_backends",
      [](nb::handle program) {
        return read_program(program, [](auto* loader) { return describe_methods(loader, backends_of); });
      },
      nb::arg("program"),
      "{method: [(backend id, registered in this process)]} of a .pte (bytes or a path), read from its "
      "metadata without loading a method. ValueError when it is not a program.");
  m.def(
      "program_signatures",
      [](nb::handle program) {
        return read_program(program, [](auto* loader) { return describe_methods(loader, signature_of); });
      },
      nb::arg("program"),
      "{method: {'inputs', 'outputs', 'backends'}} of a .pte (bytes or a path), read from its metadata without "
      "loading a method: each input and output {'tag', and for a tensor 'dtype', 'sizes', 'dim_order', "
      "'nbytes', 'memory_planned'} (ExecuTorch's Tag and ScalarType codes). ValueError when it is not a program.");
  m.def(
      "unregistered_backends_message",
      [](const std::string& method, const std::vector<std::pair<std::string, bool>>& backends) {
        std::vector<executorch_openvino::BackendUse> uses;
        for (const auto& [id, registered] : backends) uses.push_back({id, registered});
        return executorch_openvino::unregistered_backends_message(method, uses);
      },
      nb::arg("method"), nb::arg("backends"),
      "Why `method` cannot load here ('' when every backend it uses is registered): the runner's words too.");

  m.def(
      "load_library",
      [] {
        std::string error;
        if (!OpenVINOLibrary::instance().ensure_loaded(&error)) raise_reported(error);
        auto info = OpenVINOLibrary::instance().info();
        nb::dict d;
        d["path"] = info.path;
        d["source"] = info.source;
        d["version"] = info.version;
        d["not_used"] = info.not_used;
        return d;
      },
      "Loads OpenVINO now (normally done at the first model init); raises RuntimeError naming "
      "every place tried.");

  m.def(
      "plan_library_search",
      [](const std::string& platform, const std::string& architecture, const std::string& explicit_path,
         const std::string& openvino_lib_path, const std::string& pip_dir, const std::string& install_tree,
         const std::string& conda_prefix) {
        using executorch_openvino::Architecture;
        using executorch_openvino::Platform;
        executorch_openvino::SearchSettings s;
        if (platform == "linux")
          s.platform = Platform::kLinux;
        else if (platform == "windows")
          s.platform = Platform::kWindows;
        else if (platform == "macos")
          s.platform = Platform::kMacOS;
        else
          throw nb::value_error("platform must be 'linux', 'windows' or 'macos'");
        if (architecture == "x86_64")
          s.architecture = Architecture::kX86_64;
        else if (architecture == "arm64")
          s.architecture = Architecture::kArm64;
        else
          throw nb::value_error("architecture must be 'x86_64' or 'arm64'");
        s.explicit_path = explicit_path;
        s.lib_path_env = openvino_lib_path;
        s.pip_dir = pip_dir;
        s.install_tree = install_tree;
        s.conda_prefix = conda_prefix;
        return plan_as_dict(executorch_openvino::plan_library_search(s));
      },
      nb::arg("platform"), nb::arg("architecture") = "x86_64", nb::arg("explicit_path") = "",
      nb::arg("openvino_lib_path") = "", nb::arg("pip_dir") = "", nb::arg("install_tree") = "",
      nb::arg("conda_prefix") = "",
      "The OpenVINO C library search (library_search.h) for a platform and settings: every place in "
      "order, without loading anything. For tests and diagnostics.");

  m.def(
      "host_library_search", [] { return plan_as_dict(OpenVINOLibrary::instance().search_plan()); },
      "The OpenVINO C library search of this process (every place, in order), without loading.");

  m.def(
      "device_property",
      [](const std::string& device, const std::string& key) {
        std::string error;
        std::string value = OpenVINOLibrary::instance().device_property(device, key, &error);
        if (!error.empty()) raise_reported(error);
        return value;
      },
      nb::arg("device"), nb::arg("key"), "An OpenVINO device property as text; loads OpenVINO if needed.");

  m.def("available_devices", [] {
    std::string error;
    auto devices = OpenVINOLibrary::instance().available_devices(&error);
    if (!error.empty()) raise_reported(error);
    return devices;
  });

  m.def(
      "last_compile_report", [] { return report_as_dict(executorch_openvino::last_compile_report()); },
      "What the most recent successful delegate init compiled (empty strings before any).");

  m.def("start_init_capture", &executorch_openvino::start_init_capture,
        "Records every successful delegate init on this thread until finish_init_capture().");
  m.def(
      "finish_init_capture",
      [] {
        nb::list records;
        for (const auto& record : executorch_openvino::finish_init_capture()) {
          nb::dict d = report_as_dict(record.report);
          d["program_state"] = record.program_state;
          records.append(d);
        }
        return records;
      },
      "The inits recorded on this thread since start_init_capture(), in order: last_compile_report()'s "
      "keys and the partition's 'program_state' compile spec ('' when absent); stops recording.");

  m.def("live_compiled_models", &executorch_openvino::live_compiled_models,
        "OpenVINO compiled models the delegate holds now: one per distinct partition and compile options, "
        "shared by every loaded copy of it.");
  m.def(
      "weights_bytes_alive",
      [] {
        executorch_openvino::WeightsBytes b = executorch_openvino::weights_bytes_alive();
        nb::dict d;
        d["mapped"] = b.mapped;
        d["copied"] = b.copied;
        return d;
      },
      "Bytes of partition weights the delegate holds now: 'mapped' from .pte files (resident only as OpenVINO "
      "reads them) and 'copied' (programs loaded from memory).");
  m.def("live_infer_requests", &executorch_openvino::live_infer_requests,
        "Initialised partitions (handles) alive now, each with its own OpenVINO infer request.");
  m.def(
      "infer_counters",
      [] {
        auto c = executorch_openvino::infer_counters();
        nb::dict d;
        d["in_flight"] = c.in_flight;
        d["peak"] = c.peak;
        d["finished"] = c.finished;
        return d;
      },
      "OpenVINO inferences running now, the most at once since reset_infer_peak(), and all finished.");
  m.def("reset_infer_peak", &executorch_openvino::reset_infer_peak);

  m.def(
      "output_counters",
      [] {
        auto c = executorch_openvino::output_counters();
        nb::dict d;
        d["in_place"] = c.in_place;
        d["copied"] = c.copied;
        return d;
      },
      "Outputs written in place by OpenVINO and outputs copied after inference, since load.");

  // Through ExecuTorch's backend-option API, as a C++ application would.
  m.def(
      "set_cache_dir",
      [](const std::string& dir) {
        namespace et = executorch::runtime;
        if (dir.find('\0') != std::string::npos) throw nb::value_error("the cache directory path contains a NUL byte");
        if (dir.size() >= et::kMaxOptionValueLength) {
          throw nb::value_error(("the cache directory path has " + std::to_string(dir.size()) +
                                 " bytes; ExecuTorch's backend options hold at most " +
                                 std::to_string(et::kMaxOptionValueLength - 1) + ": use a shorter path")
                                    .c_str());
        }
        et::BackendOption option;
        std::strncpy(option.key, executorch_openvino::kCacheDirOption, sizeof(option.key) - 1);
        std::array<char, et::kMaxOptionValueLength> text{};
        std::memcpy(text.data(), dir.data(), dir.size());
        option.value = text;
        et::Error e = et::set_option(executorch_openvino::kBackendId, et::Span<et::BackendOption>(&option, 1));
        if (e != et::Error::Ok)
          raise_reported("set_option('cache_dir') failed with ExecuTorch error " + std::to_string(int(e)) + ": " +
                         executorch_openvino::last_error());
      },
      nb::arg("dir"), "Sets the delegate's 'cache_dir' backend option ('' for none) for later loads.");

  m.def(
      "cache_dir",
      [] {
        namespace et = executorch::runtime;
        et::BackendOption option;
        std::strncpy(option.key, executorch_openvino::kCacheDirOption, sizeof(option.key) - 1);
        et::Span<et::BackendOption> span(&option, 1);
        et::Error e = et::get_option(executorch_openvino::kBackendId, span);
        if (e != et::Error::Ok)
          raise_reported("get_option('cache_dir') failed with ExecuTorch error " + std::to_string(int(e)));
        const auto* text = std::get_if<std::array<char, et::kMaxOptionValueLength>>(&option.value);
        return text ? std::string(text->data()) : std::string();
      },
      "The delegate's 'cache_dir' backend option ('' for none).");

  m.def("last_error", &executorch_openvino::last_error,
        "The delegate's last error message, or '' when none occurred since the last clear.");
  m.def("clear_last_error", &executorch_openvino::clear_last_error);
  m.def("thread_last_error", &executorch_openvino::thread_last_error,
        "The delegate's last error message on this thread, or '' when none since the last clear.");
  m.def("clear_thread_last_error", &executorch_openvino::clear_thread_last_error);
}
