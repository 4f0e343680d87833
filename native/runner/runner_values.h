// executorch-openvino-run's values: the inputs it makes (random, scalars, .npy files) and the outputs it
// saves and writes as .npy, with their descriptions.
#pragma once

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor_ptr.h>

#include <cstdint>
#include <string>
#include <vector>

namespace executorch_openvino::runner {

// SplitMix64 (Steele, Lea, Flood 2014): a fixed sequence per seed, on every platform and
// standard library (std::mt19937 would pull libstdc++'s random.o and glibc 2.36's arc4random).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

// The storage of one tensor input; the TensorPtr points into `data`.
struct InputTensor {
  std::vector<uint8_t> data;
  executorch::extension::TensorPtr tensor;
};

// One output of the first run, copied out of the method's memory.
struct SavedOutput {
  std::string summary;                                                          // "Float (3, 4)", "int 7"
  executorch::aten::ScalarType type = executorch::aten::ScalarType::Undefined;  // tensors only
  std::string descr;           // NumPy's type string; "" when .npy cannot hold it
  std::vector<int64_t> shape;  // () for a scalar
  std::vector<uint8_t> bytes;
};

// NumPy's type string for an ExecuTorch scalar type, or "" when .npy has none (bfloat16).
std::string npy_descr(executorch::aten::ScalarType type);
// "(2, 3)", "(4,)", "()".
std::string shape_text(const std::vector<int64_t>& shape);
template <typename Sizes>
std::vector<int64_t> to_shape(const Sizes& sizes) {
  return std::vector<int64_t>(sizes.begin(), sizes.end());
}

// A tensor of `type` and `shape` from `rng` (floats uniform in [-1, 1), integers in [0, 100), bools 0/1).
bool random_tensor(executorch::aten::ScalarType type, const std::vector<int64_t>& shape, SplitMix64& rng,
                   InputTensor* out, std::string* error);
// Parses "int:3", "float:0.5", "bool:1" for a non-tensor input of kind `tag`.
bool scalar_input(const std::string& text, size_t i, executorch::runtime::Tag tag, executorch::runtime::EValue* out,
                  std::string* error);
// Input `i` from the .npy file at `path`, checked against the method's dtype and (upper-bound) shape.
bool tensor_input(const std::string& path, size_t i, const executorch::runtime::MethodMeta& meta, InputTensor* out,
                  std::string* error);
// "Float (3, 4)", "int 7".
std::string summary(const executorch::runtime::EValue& value);
SavedOutput save_output(const executorch::runtime::EValue& value);
// Writes `value` as DIR/output_<i>.npy.
bool write_output(const SavedOutput& value, size_t i, const std::string& dir, std::string* error);

}  // namespace executorch_openvino::runner
