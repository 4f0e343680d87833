#include "concurrent_calls.h"

#include <atomic>
#include <utility>
#include <vector>

namespace executorch_openvino {
namespace {

// Set once by the pybindings at import, read on every execute.
std::atomic<void* (*)()> release_hook{nullptr};
std::atomic<void (*)(void*)> reacquire_hook{nullptr};

std::atomic<int> in_flight{0};
std::atomic<int> peak{0};
std::atomic<uint64_t> finished{0};

struct InitCapture {
  bool on = false;
  std::vector<InitRecord> records;
};
thread_local InitCapture capture;

}  // namespace

void set_infer_hooks(InferHooks hooks) {
  // Both or neither: a release without its reacquire would never give the interpreter back.
  bool both = hooks.release != nullptr && hooks.reacquire != nullptr;
  release_hook.store(both ? hooks.release : nullptr);
  reacquire_hook.store(both ? hooks.reacquire : nullptr);
}

InferScope::InferScope() {
  int now = in_flight.fetch_add(1) + 1;
  int seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
  reacquire_ = reacquire_hook.load();
  auto release = release_hook.load();
  if (release && reacquire_) token_ = release();
}

InferScope::~InferScope() {
  // Counted until the caller holds its locks again, so an observer that can
  // run only while they are released (a Python thread) sees this inference.
  if (token_) reacquire_(token_);
  finished.fetch_add(1);
  in_flight.fetch_sub(1);
}

InferCounters infer_counters() { return {in_flight.load(), peak.load(), finished.load()}; }

void reset_infer_peak() { peak.store(in_flight.load()); }

void start_init_capture() {
  capture.records.clear();
  capture.on = true;
}

std::vector<InitRecord> finish_init_capture() {
  capture.on = false;
  return std::exchange(capture.records, {});
}

void record_init(const CompileReport& report, const std::string& program_state) {
  if (capture.on) capture.records.push_back({report, program_state});
}

}  // namespace executorch_openvino
