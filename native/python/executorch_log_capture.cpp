#include "executorch_log_capture.h"

#include <executorch/runtime/platform/platform.h>

#include <atomic>
#include <cstring>
#include <ios>
#include <ostream>
#include <streambuf>

#if defined(__linux__)
#include <dlfcn.h>
#endif

namespace executorch_openvino {
namespace {

// executorch's pybindings write ExecuTorch's log to the std::cerr of
// libstdc++.so.6 (our libraries link a private libstdc++), found with dlsym.
// While alive, that stream has no buffer (writes set badbit and are dropped);
// where it cannot be found nothing is muted.
class MutedSharedStderr {
 public:
  MutedSharedStderr() {
#if defined(__linux__)
    void* library = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) return;
    void* err = dlsym(library, "_ZSt4cerr");
    void* set = dlsym(library, "_ZNSt9basic_iosIcSt11char_traitsIcEE5rdbufEPSt15basic_streambufIcS1_E");
    dlclose(library);  // it stays loaded: executorch's pybindings link it
    if (err == nullptr || set == nullptr) return;
    stream_ = static_cast<std::ostream*>(err);  // libstdc++'s object layout is its stable ABI
    set_ = reinterpret_cast<SetBuffer>(set);
    saved_ = set_(stream_, nullptr);
#endif
  }
  ~MutedSharedStderr() {
    if (set_ != nullptr) set_(stream_, saved_);  // rdbuf(saved) clears the state again
  }
  MutedSharedStderr(const MutedSharedStderr&) = delete;
  MutedSharedStderr& operator=(const MutedSharedStderr&) = delete;

 private:
  using SetBuffer = std::streambuf* (*)(std::basic_ios<char>*, std::streambuf*);
  std::basic_ios<char>* stream_ = nullptr;
  std::streambuf* saved_ = nullptr;
  SetBuffer set_ = nullptr;
};

thread_local bool capturing = false;
thread_local std::string held;
std::atomic<pal_emit_log_message_method> forward_to{nullptr};

void hold_or_forward(et_timestamp_t timestamp, et_pal_log_level_t level, const char* filename, const char* function,
                     size_t line, const char* message, size_t length) {
  if (capturing && level != kFatal) {
    const char* name = filename != nullptr ? filename : "";
    if (const char* slash = std::strrchr(name, '/')) name = slash + 1;
    held.append("[").append(name).append(":").append(std::to_string(line)).append("] ");
    held.append(message, length);
    if (length == 0 || message[length - 1] != '\n') held.push_back('\n');
    return;
  }
  if (auto forward = forward_to.load()) forward(timestamp, level, filename, function, line, message, length);
}

}  // namespace

void install_log_capture() {
  namespace et = executorch::runtime;
  const et::PalImpl* current = et::get_pal_impl();
  if (current->emit_log_message == &hold_or_forward) return;
  forward_to.store(current->emit_log_message);
  // ExecuTorch logs, through the function it replaces (executorch's pybindings', which writes to
  // std::cerr), that a PAL was registered before: not the user's concern. The interpreter is held, so no
  // executorch pybindings call runs meanwhile.
  MutedSharedStderr muted;
  et::register_pal(et::PalImpl::create(&hold_or_forward, __FILE__));
}

ThreadLogCapture::ThreadLogCapture() : outer_(!capturing) { capturing = true; }

ThreadLogCapture::~ThreadLogCapture() {
  if (outer_) capturing = false;
}

std::string& held_log_lines() { return held; }

}  // namespace executorch_openvino
