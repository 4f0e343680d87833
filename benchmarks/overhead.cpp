// Per-call cost of the delegate over OpenVINO's own C API, with no Python in
// between (for bench.py). The blob is the tiny_add partition: two float32 (16,)
// inputs, one float32 (16,) output.
//
//   overhead <processed blob file> <calls>
//
// Four ways to run one inference, interleaved in rounds, each timed per call:
//   openvino_infer_only  ov_infer_request_infer with the tensors bound once: the floor
//   openvino_bind_infer  wrap the 3 buffers in ov tensors, set them, infer, free them,
//                        alternating between two buffer sets: a C API caller with new buffers
//   delegate_same_buffers     BackendInterface::execute with the same buffers each call
//                             (ExecuTorch's planned memory)
//   delegate_alternating_buffers  execute with inputs alternating between two buffer sets
// After each round every buffer set gets new input values and one more run of
// each way, and every output must be a + b: a stale binding would leave one
// wrong. Prints one JSON line of median and p90 microseconds per call.
#include "harness.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/platform/runtime.h>
#include <openvino/c/openvino.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace et = executorch::runtime;
using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;

namespace {

constexpr int kSize = 16;

#define CHECK_OV(call)                                                       \
  do {                                                                       \
    if ((call) != OK) {                                                      \
      std::fprintf(stderr, "%s failed: %s\n", #call, ov_get_last_err_msg()); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

struct Buffers {
  std::vector<float> a = std::vector<float>(kSize), b = std::vector<float>(kSize), out = std::vector<float>(kSize);
  SizesType sizes[1] = {kSize};
  executorch::aten::DimOrderType order[1] = {0};
  TensorImpl a_impl{ScalarType::Float, 1, sizes, a.data(), order};
  TensorImpl b_impl{ScalarType::Float, 1, sizes, b.data(), order};
  TensorImpl out_impl{ScalarType::Float, 1, sizes, out.data(), order};
  et::EValue a_value{Tensor(&a_impl)}, b_value{Tensor(&b_impl)}, out_value{Tensor(&out_impl)};
  et::EValue* args[3] = {&a_value, &b_value, &out_value};

  explicit Buffers(float seed) { refill(seed); }
  void refill(float seed) {
    for (int k = 0; k < kSize; ++k) a[k] = seed + k, b[k] = 2 * seed - k, out[k] = -1.0f;
  }
  bool correct() const {
    for (int k = 0; k < kSize; ++k)
      if (out[k] != a[k] + b[k]) return false;
    return true;
  }
};

// OpenVINO's model from the blob's header (native/delegate/processed_blob.h: magic,
// version, payload, then the XML's and the weights' offset and size).
ov_model_t* read_blob_model(ov_core_t* core, const std::vector<char>& blob) {
  uint64_t f[4];
  std::memcpy(f, blob.data() + 16, sizeof(f));
  ov_tensor_t* weights = nullptr;
  ov_shape_t shape{};
  int64_t dims[1] = {static_cast<int64_t>(f[3])};
  CHECK_OV(ov_shape_create(1, dims, &shape));
  CHECK_OV(ov_tensor_create_from_host_ptr(U8, shape, const_cast<char*>(blob.data() + f[2]), &weights));
  ov_model_t* model = nullptr;
  CHECK_OV(ov_core_read_model_from_memory_buffer(core, blob.data() + f[0], f[1], weights, &model));
  ov_tensor_free(weights);
  ov_shape_free(&shape);
  return model;
}

// Linear interpolation between the closest ranks, as bench.py's percentile().
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double position = q * (v.size() - 1);
  const size_t low = static_cast<size_t>(position), high = std::min(low + 1, v.size() - 1);
  return v[low] + (v[high] - v[low]) * (position - low);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <processed blob file> <calls>\n", argv[0]);
    return 2;
  }
  std::vector<char> blob = harness::read_file(argv[1]);
  const int calls = std::atoi(argv[2]);
  if (blob.size() < 56 || calls < 10) {
    std::fprintf(stderr, "unreadable blob '%s' or fewer than 10 calls\n", argv[1]);
    return 2;
  }

  // OpenVINO's C API directly, compiled as the delegate compiles (f32 hint on CPU).
  ov_core_t* core = nullptr;
  CHECK_OV(ov_core_create(&core));
  ov_model_t* model = read_blob_model(core, blob);
  ov_compiled_model_t* compiled = nullptr;
  CHECK_OV(ov_core_compile_model(core, model, "CPU", 2, &compiled, "INFERENCE_PRECISION_HINT", "f32"));
  ov_infer_request_t* request = nullptr;
  CHECK_OV(ov_compiled_model_create_infer_request(compiled, &request));
  Buffers raw(1.0f), raw_second(5.0f);
  bool raw_use_second = false;
  int64_t dims[1] = {kSize};
  ov_shape_t shape{};
  CHECK_OV(ov_shape_create(1, dims, &shape));
  auto bind_infer = [&](Buffers& io) {
    ov_tensor_t *ta = nullptr, *tb = nullptr, *to = nullptr;
    CHECK_OV(ov_tensor_create_from_host_ptr(F32, shape, io.a.data(), &ta));
    CHECK_OV(ov_tensor_create_from_host_ptr(F32, shape, io.b.data(), &tb));
    CHECK_OV(ov_tensor_create_from_host_ptr(F32, shape, io.out.data(), &to));
    CHECK_OV(ov_infer_request_set_input_tensor_by_index(request, 0, ta));
    CHECK_OV(ov_infer_request_set_input_tensor_by_index(request, 1, tb));
    CHECK_OV(ov_infer_request_set_output_tensor_by_index(request, 0, to));
    CHECK_OV(ov_infer_request_infer(request));
    ov_tensor_free(ta), ov_tensor_free(tb), ov_tensor_free(to);
  };

  // The delegate, through ExecuTorch's BackendInterface.
  et::BackendInterface* backend = harness::delegate_or_exit();
  const harness::CpuSpecs cpu;
  std::vector<uint8_t> arena(1 << 16);
  et::MemoryAllocator allocator(static_cast<uint32_t>(arena.size()), arena.data());
  et::BackendInitContext init_context(&allocator);
  et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  auto handle = backend->init(init_context, &processed, cpu.view());
  if (!handle.ok()) {
    std::fprintf(stderr, "init failed: %s\n", executorch_openvino::last_error().c_str());
    return 1;
  }
  Buffers first(3.0f), second(-7.0f);
  bool use_second = false;
  auto execute = [&](Buffers& io) {
    et::BackendExecutionContext context;
    if (backend->execute(context, handle.get(), et::Span<et::EValue*>(io.args, 3)) != et::Error::Ok) {
      std::fprintf(stderr, "execute failed: %s\n", executorch_openvino::last_error().c_str());
      std::exit(1);
    }
  };

  std::map<std::string, std::function<void()>> ways = {
      // The floor: `raw` stays bound from the previous bind_infer of the round.
      {"openvino_infer_only", [&] { CHECK_OV(ov_infer_request_infer(request)); }},
      {"openvino_bind_infer", [&] { bind_infer((raw_use_second = !raw_use_second) ? raw_second : raw); }},
      {"delegate_same_buffers", [&] { execute(first); }},
      {"delegate_alternating_buffers", [&] { execute((use_second = !use_second) ? second : first); }},
  };
  std::map<std::string, std::vector<double>> times;
  const int rounds = 10, per_round = calls / rounds;
  for (auto& [name, way] : ways)
    for (int k = 0; k < 100; ++k) way();  // warm-up
  for (int r = 0; r < rounds; ++r) {
    bind_infer(raw);
    for (auto& [name, way] : ways) {
      for (int k = 0; k < per_round; ++k) {
        auto start = std::chrono::steady_clock::now();
        way();
        times[name].push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      }
    }
    // New values everywhere, then one more run of each way on each set.
    raw.refill(10.0f * r + 1), raw_second.refill(10.0f * r + 2);
    first.refill(10.0f * r + 3), second.refill(10.0f * r + 4);
    bind_infer(raw), bind_infer(raw_second);
    execute(first), execute(second);
    if (!raw.correct() || !raw_second.correct() || !first.correct() || !second.correct()) {
      std::fprintf(stderr, "round %d: an output is not a + b (a stale binding?)\n", r);
      return 1;
    }
  }
  std::printf("{");
  const char* sep = "";
  for (auto& [name, t] : times) {
    std::printf("%s\"%s\": {\"median_us\": %.3f, \"p90_us\": %.3f, \"calls\": %zu}", sep, name.c_str(),
                percentile(t, 0.5), percentile(t, 0.9), t.size());
    sep = ", ";
  }
  std::printf("}\n");
  backend->destroy(handle.get());
  ov_shape_free(&shape);
  ov_infer_request_free(request);
  ov_compiled_model_free(compiled);
  ov_model_free(model);
  ov_core_free(core);
  return 0;
}
