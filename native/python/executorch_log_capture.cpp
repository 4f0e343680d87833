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
// Returns false where it cannot be found (then nothing is muted).
bool mute_shared_stderr(std::streambuf** saved, std::basic_ios<char>** stream) {
#if defined(__linux__)
  using SetBuffer = std::streambuf* (*)(std::basic_ios<char>*, std::streambuf*);
  void* library = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return false;
  void* err = dlsym(library, "_ZSt4cerr");
  void* set = dlsym(library, "_ZNSt9basic_iosIcSt11char_traitsIcEE5rdbufEPSt15basic_streambufIcS1_E");
  dlclose(library);  // it stays loaded: executorch's pybindings link it
  if (err == nullptr || set == nullptr) return false;
  *stream = static_cast<std::ostream*>(err);                    // libstdc++'s object layout is its stable ABI
  *saved = reinterpret_cast<SetBuffer>(set)(*stream, nullptr);  // no buffer: writes set badbit, are dropped
  return true;
#else
  (void)saved;
  (void)stream;
  return false;
#endif
}

void unmute_shared_stderr(std::streambuf* saved, std::basic_ios<char>* stream) {
#if defined(__linux__)
  using SetBuffer = std::streambuf* (*)(std::basic_ios<char>*, std::streambuf*);
  void* library = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
  void* set =
      library ? dlsym(library, "_ZNSt9basic_iosIcSt11char_traitsIcEE5rdbufEPSt15basic_streambufIcS1_E") : nullptr;
  if (library) dlclose(library);
  if (set) reinterpret_cast<SetBuffer>(set)(stream, saved);  // rdbuf(saved) clears the state again
#else
  (void)saved;
  (void)stream;
#endif
}

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
  std::streambuf* saved = nullptr;
  std::basic_ios<char>* stream = nullptr;
  const bool muted = mute_shared_stderr(&saved, &stream);
  et::register_pal(et::PalImpl::create(&hold_or_forward, __FILE__));
  if (muted) unmute_shared_stderr(saved, stream);
}

ThreadLogCapture::ThreadLogCapture() : outer_(!capturing) { capturing = true; }

ThreadLogCapture::~ThreadLogCapture() {
  if (outer_) capturing = false;
}

std::string& held_log_lines() { return held; }

}  // namespace executorch_openvino
