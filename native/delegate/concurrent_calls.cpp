#include "concurrent_calls.h"

#include <atomic>
#include <utility>
#include <vector>

namespace executorch_openvino {
namespace {

std::atomic<int> in_flight{0};
std::atomic<int> peak{0};
std::atomic<uint64_t> finished{0};

struct InitCapture {
  bool on = false;
  std::vector<InitRecord> records;
};
thread_local InitCapture capture;

}  // namespace

InferScope::InferScope() {
  int now = in_flight.fetch_add(1) + 1;
  int seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
}

InferScope::~InferScope() {
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

bool init_capture_on() { return capture.on; }

void record_init(const CompileReport& report, const std::string& program_state) {
  if (capture.on) capture.records.push_back({report, program_state});
}

}  // namespace executorch_openvino
