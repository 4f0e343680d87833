// libFuzzer target for the delegate's init path: the compile specs and the
// processed blob that a .pte hands the delegate go through the real
// BackendInterface::init, with OpenVINO loaded (OPENVINO_LIB_PATH), then one
// execute when init succeeds, then destroy. Built with AddressSanitizer and
// UBSan by `nox -s fuzz`, which also lets oneTBB's RTLD_DEEPBIND pass
// (tests/sanitizers/strip_deepbind.c).
//
// Input: byte 0 picks the blob mode (odd: as given; even: checksum recomputed,
// which lets changed IR reach OpenVINO's reader); byte 1 the device (one of a
// few names, right or wrong); byte 2 the precision spec, raw; the rest is the
// blob. The seed (tests/fuzz/init_corpus/) is a real partition taking
// float32 inputs of at most 4096 elements each.
// A crash, a sanitizer report, or a failed init without a message is a finding.
#include "delegate_api.h"
#include "processed_blob.h"
#include "reseal.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace et = executorch::runtime;

namespace {

const char* const kDevices[] = {"CPU", "GPU", "AUTO", "AUTO:CPU", "HETERO:CPU", "NPU", "", "CPU.0"};
const char* const kPrecisions[] = {"f32", "bf16", "f16", "", "fp32", "\xff"};

et::BackendInterface* backend() {
  static et::BackendInterface* found = [] {
    et::runtime_init();
    return et::get_backend_class(executorch_openvino::kBackendId);
  }();
  return found;
}

// One execute with zero-filled float32 tensors of the seed's shapes; the
// delegate must refuse anything that does not fit, never read past a buffer.
void execute_once(et::BackendInterface* b, et::DelegateHandle* handle) {
  static float input[4096], output[4096];
  executorch::aten::SizesType in_sizes[2] = {4, 32}, out_sizes[2] = {4, 16};
  executorch::aten::DimOrderType order[2] = {0, 1};
  executorch::aten::TensorImpl in(executorch::aten::ScalarType::Float, 2, in_sizes, input, order);
  executorch::aten::TensorImpl out(executorch::aten::ScalarType::Float, 2, out_sizes, output, order);
  et::EValue in_value{executorch::aten::Tensor(&in)}, out_value{executorch::aten::Tensor(&out)};
  et::EValue* args[2] = {&in_value, &out_value};
  et::BackendExecutionContext context;
  (void)b->execute(context, handle, et::Span<et::EValue*>(args, 2));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  et::BackendInterface* b = backend();
  if (b == nullptr) __builtin_trap();
  const bool resealed = (data[0] & 1) == 0;
  std::string device = kDevices[data[1] % (sizeof kDevices / sizeof *kDevices)];
  std::string precision = kPrecisions[data[2] % (sizeof kPrecisions / sizeof *kPrecisions)];
  std::vector<uint8_t> blob(data + 3, data + size);  // its own allocation: ASan sees every overread
  if (resealed) reseal(blob);
  et::CompileSpec specs[2] = {{"device", {device.data(), device.size()}},
                              {"inference_precision", {precision.data(), precision.size()}}};
  std::vector<uint8_t> arena(1 << 12);
  et::MemoryAllocator allocator(static_cast<uint32_t>(arena.size()), arena.data());
  et::BackendInitContext context(&allocator);
  et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  executorch_openvino::clear_last_error();
  auto result = b->init(context, &processed, et::ArrayRef<et::CompileSpec>(specs, 2));
  if (!result.ok()) {
    if (executorch_openvino::last_error().empty()) __builtin_trap();
    return 0;
  }
  execute_once(b, result.get());
  b->destroy(result.get());
  return 0;
}
