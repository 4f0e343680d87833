// The delegate's BackendInterface called straight from C++ threads, as an
// application embedding ExecuTorch calls it (Python threads may be serialised
// by the GIL around executorch.runtime, so tests/runtime/test_concurrency.py cannot
// show real overlap). Built and run by tests/native/test_native_threads.py.
//
//   delegate_threads <processed blob file> <threads> <runs per thread>
//
// The blob is a partition taking one float32 (4, 32) input and returning one
// float32 (4, 16) output. Phase 1: <threads> threads, released at once, each
// init()s its own handle, so OpenVINO's first load happens under contention.
// Phase 2: one thread computes each thread's reference output. Phase 3: every
// thread execute()s its own handle <runs> times on its own input and compares
// each output bit for bit with its reference. Prints one JSON line.
#include "harness.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/platform/runtime.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace et = executorch::runtime;
using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;

namespace {

constexpr int kRows = 4, kIn = 32, kOut = 16;

// One thread's tensors: the delegate writes into `output`.
struct Io {
  std::vector<float> input = std::vector<float>(kRows * kIn);
  std::vector<float> output = std::vector<float>(kRows * kOut);
  SizesType in_sizes[2] = {kRows, kIn};
  SizesType out_sizes[2] = {kRows, kOut};
  executorch::aten::DimOrderType order[2] = {0, 1};
  TensorImpl in_impl{ScalarType::Float, 2, in_sizes, input.data(), order};
  TensorImpl out_impl{ScalarType::Float, 2, out_sizes, output.data(), order};
  et::EValue in_value{Tensor(&in_impl)};
  et::EValue out_value{Tensor(&out_impl)};

  explicit Io(int seed) {
    for (int k = 0; k < kRows * kIn; ++k) input[k] = std::sin(0.37f * float(k) + 1.9f * float(seed));
  }
  Io(const Io&) = delete;

  et::Error run(et::BackendInterface* backend, et::DelegateHandle* handle) {
    et::EValue* args[2] = {&in_value, &out_value};
    et::BackendExecutionContext context;
    return backend->execute(context, handle, et::Span<et::EValue*>(args, 2));
  }
};

// A start line: every thread waits until all have arrived, then all go at once.
class StartLine {
 public:
  explicit StartLine(int n) : waiting_(n) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(m_);
    if (--waiting_ == 0) cv_.notify_all();
    cv_.wait(lock, [&] { return waiting_ == 0; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int waiting_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <processed blob file> <threads> <runs per thread>\n", argv[0]);
    return 2;
  }
  const std::vector<char> blob = harness::read_file(argv[1]);
  const int threads = std::atoi(argv[2]), runs = std::atoi(argv[3]);
  if (blob.empty() || threads < 1 || runs < 1) {
    std::fprintf(stderr, "unreadable blob '%s' or bad counts\n", argv[1]);
    return 2;
  }
  et::BackendInterface* backend = harness::delegate_or_exit();
  const harness::CpuSpecs cpu;

  // Phase 1: the first OpenVINO load, from every thread at once.
  std::vector<et::DelegateHandle*> handles(threads, nullptr);
  std::vector<std::string> init_errors(threads);
  StartLine start(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<uint8_t> arena(1 << 16);
      et::MemoryAllocator allocator(static_cast<uint32_t>(arena.size()), arena.data());
      et::BackendInitContext context(&allocator);
      et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
      start.arrive_and_wait();
      auto result = backend->init(context, &processed, cpu.view());
      if (result.ok()) {
        handles[t] = result.get();
      } else {
        init_errors[t] = "error " + std::to_string(int(result.error())) + ": " + executorch_openvino::last_error();
      }
    });
  }
  for (auto& thread : pool) thread.join();
  pool.clear();
  int inits_ok = 0;
  for (int t = 0; t < threads; ++t) {
    if (handles[t])
      ++inits_ok;
    else
      std::fprintf(stderr, "init in thread %d failed: %s\n", t, init_errors[t].c_str());
  }
  if (inits_ok != threads) return 1;

  // Phase 2: each thread's reference output, computed by one thread.
  std::vector<std::vector<float>> reference(threads);
  for (int t = 0; t < threads; ++t) {
    Io io(t);
    if (io.run(backend, handles[0]) != et::Error::Ok) {
      std::fprintf(stderr, "single-threaded execute failed: %s\n", executorch_openvino::last_error().c_str());
      return 1;
    }
    reference[t] = io.output;
  }
  bool distinct =
      std::memcmp(reference[0].data(), reference[threads > 1 ? 1 : 0].data(), sizeof(float) * kRows * kOut) != 0 ||
      threads == 1;

  // Phase 3: every thread runs its own handle on its own input.
  std::atomic<long> mismatches{0}, failures{0};
  StartLine go(threads);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Io io(t);
      go.arrive_and_wait();
      for (int n = 0; n < runs; ++n) {
        std::fill(io.output.begin(), io.output.end(), std::nanf(""));
        if (io.run(backend, handles[t]) != et::Error::Ok)
          failures.fetch_add(1);
        else if (std::memcmp(io.output.data(), reference[t].data(), sizeof(float) * kRows * kOut) != 0)
          mismatches.fetch_add(1);
      }
    });
  }
  for (auto& thread : pool) thread.join();
  for (et::DelegateHandle* handle : handles) backend->destroy(handle);

  executorch_openvino::OpenVINOLoad info = executorch_openvino::openvino_load();
  std::string output0;
  for (float v : reference[0]) {
    char number[32];
    std::snprintf(number, sizeof number, "%.9g", double(v));  // float32 round-trips in 9 digits
    output0 += (output0.empty() ? "" : ", ") + std::string(number);
  }
  std::printf(
      "{\"threads\": %d, \"inits_ok\": %d, \"loads\": %d, \"runs\": %ld, \"failures\": %ld, "
      "\"mismatches\": %ld, \"references_distinct\": %s, \"openvino\": \"%s\", \"output0\": [%s]}\n",
      threads, inits_ok, info.loads, long(threads) * runs, failures.load(), mismatches.load(),
      distinct ? "true" : "false", info.path.c_str(), output0.c_str());
  return 0;
}
