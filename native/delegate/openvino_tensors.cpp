#include "openvino_tensors.h"

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

namespace executorch_openvino {

using executorch::aten::ScalarType;

bool to_ov_type(ScalarType t, ov_element_type_e* out) {
  switch (t) {
    case ScalarType::Float:
      *out = F32;
      return true;
    case ScalarType::Half:
      *out = F16;
      return true;
    case ScalarType::BFloat16:
      *out = BF16;
      return true;
    case ScalarType::Double:
      *out = F64;
      return true;
    case ScalarType::Char:
      *out = I8;
      return true;
    case ScalarType::Short:
      *out = I16;
      return true;
    case ScalarType::Int:
      *out = I32;
      return true;
    case ScalarType::Long:
      *out = I64;
      return true;
    case ScalarType::Byte:
      *out = U8;
      return true;
    case ScalarType::Bool:
      *out = BOOLEAN;
      return true;
    default:
      return false;
  }
}

const char* ov_type_name(ov_element_type_e t) {
  switch (t) {
    case F32:
      return "f32";
    case F16:
      return "f16";
    case BF16:
      return "bf16";
    case F64:
      return "f64";
    case I8:
      return "i8";
    case I16:
      return "i16";
    case I32:
      return "i32";
    case I64:
      return "i64";
    case U8:
      return "u8";
    case BOOLEAN:
      return "boolean";
    default:
      return "an unsupported type";
  }
}

const char* scalar_type_name(ScalarType t) { return executorch::runtime::toString(t); }

size_t element_size(ov_element_type_e t) {
  switch (t) {
    case F64:
    case I64:
      return 8;
    case F32:
    case I32:
      return 4;
    case F16:
    case BF16:
    case I16:
      return 2;
    default:
      return 1;
  }
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

std::string ov_message(const std::string& what) {
  std::string detail = OpenVINOLibrary::instance().last_openvino_message();
  return what + (detail.empty() ? std::string() : ": " + detail);
}

}  // namespace executorch_openvino
