#include "python_infer_hooks.h"

#include "delegate_api.h"

#include <Python.h>

#include <atomic>
#include <ios>
#include <ostream>
#include <streambuf>

#if defined(__linux__)
#include <dlfcn.h>
#endif

namespace executorch_openvino {
namespace {

// executorch's pybindings (1.5.1) run every call under pybind11's
// scoped_ostream_redirect and scoped_estream_redirect: std::cout's and
// std::cerr's buffers are replaced on entry by ones writing to sys.stdout and
// sys.stderr, and the previous ones put back on exit. Calls that overlap would
// put them back out of order and leave std::cout on the buffer of a finished
// call, whose stack is gone. So while a thread has let the interpreter go, the
// streams hold the buffers they had outside any call, and the call's own come
// back with the interpreter: every call that starts meanwhile saves, and puts
// back, the outside buffers. These are the streams of libstdc++.so.6, which
// executorch's pybindings use (our libraries link a private libstdc++), found
// with dlsym; where they cannot be found the interpreter is never let go.
using SetBuffer = std::streambuf* (*)(std::basic_ios<char>*, std::streambuf*);

struct SharedStreams {
  std::basic_ios<char>* out = nullptr;
  std::basic_ios<char>* err = nullptr;
  SetBuffer set = nullptr;  // std::basic_ios<char>::rdbuf(std::streambuf*), a member: `this` first
};

std::atomic<const SharedStreams*> found_streams{nullptr};

const SharedStreams* shared_streams() {
  if (const SharedStreams* s = found_streams.load()) return s;
#if defined(__linux__)
  // Not loaded yet means executorch's pybindings are not either: look again next time.
  void* library = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  void* out = dlsym(library, "_ZSt4cout");
  void* err = dlsym(library, "_ZSt4cerr");
  void* set = dlsym(library, "_ZNSt9basic_iosIcSt11char_traitsIcEE5rdbufEPSt15basic_streambufIcS1_E");
  dlclose(library);  // the library stays loaded: executorch's pybindings link it
  if (out == nullptr || err == nullptr || set == nullptr) return nullptr;
  // Never freed: the hooks may run until the process ends. Two threads may both
  // make one; either is right.
  auto* s = new SharedStreams;
  s->out = static_cast<std::ostream*>(out);  // libstdc++'s object layout is its stable ABI
  s->err = static_cast<std::ostream*>(err);
  s->set = reinterpret_cast<SetBuffer>(set);
  const SharedStreams* expected = nullptr;
  if (!found_streams.compare_exchange_strong(expected, s)) {
    delete s;
    return expected;
  }
  return s;
#else
  return nullptr;
#endif
}

struct CallState {
  bool opted_in = false;
  const SharedStreams* streams = nullptr;
  std::streambuf* outside_out = nullptr;
  std::streambuf* outside_err = nullptr;
  std::streambuf* call_out = nullptr;
  std::streambuf* call_err = nullptr;
  PyThreadState* thread = nullptr;
};
thread_local CallState call_state;

void* release_interpreter() {
  CallState& state = call_state;
  if (!state.opted_in) return nullptr;
  // executorch's pybindings hold the interpreter for the whole call; letting go
  // of one this thread does not hold would be fatal, so check.
  PyGILState_STATE gil = PyGILState_Ensure();
  const bool held = gil == PyGILState_LOCKED;
  PyGILState_Release(gil);
  if (!held) return nullptr;
  const SharedStreams& s = *state.streams;
  state.call_out = s.set(s.out, state.outside_out);
  state.call_err = s.set(s.err, state.outside_err);
  state.thread = PyEval_SaveThread();
  return &state;
}

void reacquire_interpreter(void* token) {
  auto* state = static_cast<CallState*>(token);
  PyEval_RestoreThread(state->thread);
  const SharedStreams& s = *state->streams;
  s.set(s.out, state->call_out);
  s.set(s.err, state->call_err);
}

}  // namespace

void install_python_infer_hooks() {
  InferHooks hooks;
  hooks.release = &release_interpreter;
  hooks.reacquire = &reacquire_interpreter;
  set_infer_hooks(hooks);
}

// The buffers std::cout and std::cerr hold while no opted-in call runs, taken
// when the first of overlapping calls begins. A redirect that starts while
// another call's buffer is in the streams (when the interpreter changed
// threads inside a call other than through these hooks) saves that buffer and
// puts it back when it ends, after the other call's stack is gone: seen as a
// crash at process exit, in std::ios_base::Init's flush of std::cout (a core
// dump of tests/runtime/test_concurrency.py under pytest). So when the last overlapping call
// ends, the streams get these buffers back, whatever the redirects left.
// Both counters and buffers change only with the interpreter held.
int calls_in_progress = 0;
std::streambuf* quiet_out = nullptr;
std::streambuf* quiet_err = nullptr;

bool begin_python_call() {
  CallState& state = call_state;
  if (state.opted_in) end_python_call();  // an earlier call of this thread that never ended
  const SharedStreams* s = shared_streams();
  if (s == nullptr) return false;
  if (calls_in_progress++ == 0) {
    quiet_out = s->out->rdbuf();
    quiet_err = s->err->rdbuf();
  }
  state.streams = s;
  state.outside_out = quiet_out;
  state.outside_err = quiet_err;
  state.opted_in = true;
  return true;
}

void end_python_call() {
  CallState& state = call_state;
  if (!state.opted_in) return;
  state.opted_in = false;
  if (--calls_in_progress == 0) {
    state.streams->set(state.streams->out, quiet_out);
    state.streams->set(state.streams->err, quiet_err);
  }
}

}  // namespace executorch_openvino
