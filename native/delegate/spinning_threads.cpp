#include "spinning_threads.h"

#include "delegate_api.h"

#include <atomic>
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
// The path of a loaded libgomp (torch's wheel renames it libgomp-<hash>.so.1), "" when none is loaded.
std::string loaded_libgomp() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const char* base = std::strrchr(name, '/');
        base = base != nullptr ? base + 1 : name;
        if (std::strncmp(base, "libgomp", 7) != 0) return 0;
        *static_cast<std::string*>(out) = name;
        return 1;
      },
      &found);
  return found;
}

// libgomp's omp_get_max_threads() for the calling thread, 0 when it cannot be asked.
int openmp_threads(const std::string& libgomp) {
  void* handle = dlopen(libgomp.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  auto get = reinterpret_cast<int (*)()>(dlsym(handle, "omp_get_max_threads"));
  int threads = get != nullptr ? get() : 0;
  dlclose(handle);  // RTLD_NOLOAD took a reference of its own
  return threads;
}
#endif

std::string problem() {
#if defined(__linux__)
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  if ((policy != nullptr && strcasecmp(policy, "passive") == 0) || std::getenv("GOMP_SPINCOUNT") != nullptr) return "";
  std::string libgomp = loaded_libgomp();
  if (libgomp.empty()) return "";
  int threads = openmp_threads(libgomp);
  if (threads <= 1) return "";
  // Lines of at most 200 bytes: ExecuTorch's log cuts longer ones.
  return "torch's " + std::to_string(threads) +
         " OpenMP threads keep spinning after its parallel operations (executorch.runtime's copy of the outputs "
         "among them) and slow OpenVINO's next inference: 1.77x measured on 2 cores.\nSet OMP_WAIT_POLICY=PASSIVE "
         "before Python starts, or run the program with executorch_openvino.load_method (see "
         "docs/user-guide/troubleshooting.md).";
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

void check_spinning_openmp_threads() {
  if (outputs_copied_without_openmp || checked.load(std::memory_order_relaxed)) return;
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
