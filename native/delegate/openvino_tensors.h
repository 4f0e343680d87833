// Between ExecuTorch's tensors and OpenVINO's C API: element types, shapes as
// text for messages, guards for the C objects, and OpenVINO's own message.
#pragma once

#include "internal_symbols.h"
#include "openvino_library.h"

#include <executorch/runtime/core/array_ref.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>

#include <cstdint>
#include <string>
#include <vector>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// False for a type OpenVINO cannot take.
bool to_ov_type(executorch::aten::ScalarType t, ov_element_type_e* out);
const char* ov_type_name(ov_element_type_e t);
const char* scalar_type_name(executorch::aten::ScalarType t);
size_t element_size(ov_element_type_e t);

// "(2, 3)", "(4,)", "()": Python's tuple notation, as users see shapes.
std::string shape_text(const std::vector<int64_t>& dims);
template <typename T>
std::string shape_text(executorch::runtime::ArrayRef<T> dims) {
  return shape_text(std::vector<int64_t>(dims.begin(), dims.end()));
}

// `what`, then OpenVINO's last message when it has one.
std::string ov_message(const std::string& what);

// RAII for the C objects created per binding (the request keeps its own reference).
struct TensorGuard {
  ov_tensor_t* t = nullptr;
  ~TensorGuard() {
    if (t) OpenVINOLibrary::instance().api().ov_tensor_free(t);
  }
};
struct ShapeGuard {
  ov_shape_t s{};
  ~ShapeGuard() {
    if (s.dims) OpenVINOLibrary::instance().api().ov_shape_free(&s);
  }
};

// A view of `dims` as the C API's shape struct (which it copies). Built by hand
// because ov_shape_create refuses rank 0, and 0-d tensors are legitimate.
inline ov_shape_t shape_view(std::vector<int64_t>& dims) {
  return ov_shape_t{static_cast<int64_t>(dims.size()), dims.empty() ? nullptr : dims.data()};
}

EXOV_INTERNAL_END
}  // namespace executorch_openvino
