#include "spinning_threads.h"

#include "delegate_api.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <dlfcn.h>
#include <link.h>
#include <strings.h>
#endif

namespace executorch_openvino {
namespace {

thread_local bool outputs_copied_without_openmp = false;
std::atomic<bool> checked{false};

#if defined(__linux__)
// The path of a loaded library whose file name starts with `prefix` ("libgomp": torch's wheel renames it
// libgomp-<hash>.so.1), "" when none is loaded.
std::string loaded_library(const char* prefix) {
  struct Search {
    const char* prefix;
    std::string found;
  } search{prefix, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        auto* s = static_cast<Search*>(out);
        const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const char* base = std::strrchr(name, '/');
        base = base != nullptr ? base + 1 : name;
        if (std::strncmp(base, s->prefix, std::strlen(s->prefix)) != 0) return 0;
        s->found = name;
        return 1;
      },
      &search);
  return search.found;
}

// `symbol`, an int function of no arguments in the loaded library `path`, called; -1 when it is not there.
int call_loaded(const std::string& path, const char* symbol) {
  if (path.empty()) return -1;
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  auto get = reinterpret_cast<int (*)()>(dlsym(handle, symbol));
  int value = get != nullptr ? get() : -1;
  dlclose(handle);  // RTLD_NOLOAD took a reference of its own
  return value;
}

// How many threads torch's parallel operations use: at::get_num_threads() of libtorch_cpu (torch keeps the
// count for every thread; a new thread's omp_get_max_threads() is libgomp's default), else libgomp's
// omp_get_max_threads() for the calling thread; 0 when neither can be asked.
int openmp_threads(const std::string& libgomp) {
  int threads = call_loaded(loaded_library("libtorch_cpu"), "_ZN2at15get_num_threadsEv");
  if (threads < 0) threads = call_loaded(libgomp, "omp_get_max_threads");
  return threads < 0 ? 0 : threads;
}

// The value of `name` in the environment the process started with (/proc/self/environ): libgomp reads its
// settings when torch loads it, so one set later (os.environ after import torch) changes nothing.
// Returns false when it is not there.
bool start_environment(const char* name, std::string* value) {
  std::FILE* f = std::fopen("/proc/self/environ", "rb");
  if (f == nullptr) {  // no /proc: the environment as it is now
    const char* now = std::getenv(name);
    if (now != nullptr) *value = now;
    return now != nullptr;
  }
  std::string all;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) all.append(buffer, n);
  std::fclose(f);
  const std::string prefix = std::string(name) + "=";
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find('\0', at);
    if (end == std::string::npos) end = all.size();
    if (all.compare(at, prefix.size(), prefix) == 0) {
      *value = all.substr(at + prefix.size(), end - at - prefix.size());
      return true;
    }
    at = end + 1;
  }
  return false;
}

// Whether libgomp's settings in the start environment keep its threads from spinning long: OMP_WAIT_POLICY
// PASSIVE, or GOMP_SPINCOUNT of at most kShortSpin (libgomp's syntax: a number with an optional k, M, G or T;
// "infinite" spins for ever).
constexpr unsigned long long kShortSpin = 10000;  // libgomp's default is 300,000 (its GOMP_SPINCOUNT documentation)
bool short_spin() {
  std::string value;
  auto trimmed = [](std::string v) {  // libgomp skips spaces around a value
    const size_t first = v.find_first_not_of(" \t"), last = v.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : v.substr(first, last - first + 1);
  };
  if (start_environment("OMP_WAIT_POLICY", &value) && strcasecmp(trimmed(value).c_str(), "passive") == 0) return true;
  if (!start_environment("GOMP_SPINCOUNT", &value)) return false;
  value = trimmed(value);
  char* rest = nullptr;
  unsigned long long count = std::strtoull(value.c_str(), &rest, 10);
  if (rest == value.c_str()) return false;  // "infinite", or not a number libgomp takes
  const std::string suffix(rest);
  const unsigned long long scale = suffix == "k" || suffix == "K" ? 1000ULL
                                   : suffix == "M"                ? 1000000ULL
                                   : suffix == "G"                ? 1000000000ULL
                                   : suffix == "T"                ? 1000000000000ULL
                                   : suffix.empty()               ? 1ULL
                                                                  : 0ULL;
  return scale != 0 && count <= kShortSpin / scale;
}
#endif

std::string problem() {
#if defined(__linux__)
  if (short_spin()) return "";
  std::string libgomp = loaded_library("libgomp");
  if (libgomp.empty()) return "";
  int threads = openmp_threads(libgomp);
  if (threads <= 1) return "";
  // Lines of at most 200 bytes: ExecuTorch's log cuts longer ones.
  return "torch's " + std::to_string(threads) +
         " OpenMP threads keep spinning after its parallel operations (executorch.runtime's copy of large "
         "outputs among them) and share the cores with OpenVINO's next inference\n(1.77x the time per call "
         "of a ConvNeXt block on 2 cores in the project's measurement). Start Python with "
         "OMP_WAIT_POLICY=PASSIVE in the environment,\nor run the program with executorch_openvino.load_method. "
         "https://github.com/executorch-openvino/executorch-openvino/blob/main/docs/user-guide/"
         "troubleshooting.md";
#else
  return "";
#endif
}

}  // namespace

OutputsCopiedWithoutOpenMP::OutputsCopiedWithoutOpenMP() : outer_(!outputs_copied_without_openmp) {
  outputs_copied_without_openmp = true;
}

OutputsCopiedWithoutOpenMP::~OutputsCopiedWithoutOpenMP() {
  if (outer_) outputs_copied_without_openmp = false;
}

bool spinning_check_pending() { return !outputs_copied_without_openmp && !checked.load(std::memory_order_relaxed); }

void check_spinning_openmp_threads(size_t largest_tensor_elements) {
  if (!spinning_check_pending() || largest_tensor_elements < kParallelCopyElements) return;
  if (checked.exchange(true)) return;
  std::string found = problem();
  if (!found.empty()) report_warning(found);
}

const char* spinning_openmp_threads_problem() {
  static thread_local std::string text;
  text = problem();
  return text.c_str();
}

}  // namespace executorch_openvino
