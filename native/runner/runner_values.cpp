#include "runner_values.h"

#include "npy_file.h"

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace executorch_openvino::runner {

using executorch::aten::ScalarType;
using executorch::runtime::EValue;
using executorch::runtime::MethodMeta;
using executorch::runtime::Tag;

std::string npy_descr(ScalarType type) {
  switch (type) {
    case ScalarType::Float:
      return "<f4";
    case ScalarType::Double:
      return "<f8";
    case ScalarType::Half:
      return "<f2";
    case ScalarType::Byte:
      return "|u1";
    case ScalarType::Char:
      return "|i1";
    case ScalarType::Short:
      return "<i2";
    case ScalarType::Int:
      return "<i4";
    case ScalarType::Long:
      return "<i8";
    case ScalarType::Bool:
      return "|b1";
    default:
      return "";
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += std::to_string(shape[i]) + (i + 1 < shape.size() ? ", " : "");
  return text + (shape.size() == 1 ? ",)" : ")");
}

bool random_tensor(ScalarType type, const std::vector<int64_t>& shape, SplitMix64& rng, InputTensor* out,
                   std::string* error) {
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  const size_t item = executorch::runtime::elementSize(type);
  out->data.assign(count * item, 0);
  for (size_t k = 0; k < count; ++k) {
    uint8_t* at = out->data.data() + k * item;
    const double real = rng.unit() * 2.0 - 1.0;
    const int64_t integer = static_cast<int64_t>(rng.next() % 100);
    switch (type) {
      case ScalarType::Float: {
        float v = static_cast<float>(real);
        std::memcpy(at, &v, 4);
        break;
      }
      case ScalarType::Double: {
        std::memcpy(at, &real, 8);
        break;
      }
      case ScalarType::Long: {
        std::memcpy(at, &integer, 8);
        break;
      }
      case ScalarType::Int: {
        int32_t v = static_cast<int32_t>(integer);
        std::memcpy(at, &v, 4);
        break;
      }
      case ScalarType::Short: {
        int16_t v = static_cast<int16_t>(integer);
        std::memcpy(at, &v, 2);
        break;
      }
      case ScalarType::Char: {
        int8_t v = static_cast<int8_t>(integer);
        std::memcpy(at, &v, 1);
        break;
      }
      case ScalarType::Byte: {
        *at = static_cast<uint8_t>(integer);
        break;
      }
      case ScalarType::Bool: {
        *at = static_cast<uint8_t>(integer % 2);
        break;
      }
      default:
        *error = std::string("random inputs of type ") + executorch::runtime::toString(type) +
                 " are not supported; pass a .npy file";
        return false;
    }
  }
  return true;
}

bool scalar_input(const std::string& text, size_t i, Tag tag, EValue* out, std::string* error) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon == std::string::npos ? 0 : colon);
  const std::string number = colon == std::string::npos ? "" : text.substr(colon + 1);
  const char* wanted = tag == Tag::Int ? "int" : tag == Tag::Double ? "float" : tag == Tag::Bool ? "bool" : nullptr;
  if (wanted == nullptr) {
    *error = std::string("input ") + std::to_string(i) + " is a " + executorch::runtime::tag_to_string(tag) +
             ", which the runner cannot give";
    return false;
  }
  if (kind != wanted) {
    *error = "input " + std::to_string(i) + " is " + (tag == Tag::Int ? "an " : "a ") +
             executorch::runtime::tag_to_string(tag) + ": give it as " + wanted + ":" +
             (tag == Tag::Bool ? "0|1" : "VALUE") + ", not '" + text + "'";
    return false;
  }
  char* end = nullptr;
  errno = 0;
  if (tag == Tag::Int) {
    long long v = std::strtoll(number.c_str(), &end, 10);
    if (!number.empty() && *end == '\0' && errno != ERANGE) {
      *out = EValue(static_cast<int64_t>(v));
      return true;
    }
  } else if (tag == Tag::Double) {
    double v = std::strtod(number.c_str(), &end);
    if (!number.empty() && *end == '\0' && errno != ERANGE) {
      *out = EValue(v);
      return true;
    }
  } else if (number == "0" || number == "1") {
    *out = EValue(number == "1");
    return true;
  }
  *error = "input " + std::to_string(i) + ": '" + text + "' is not a valid " + wanted + " (a 64-bit " +
           (tag == Tag::Int      ? "integer"
            : tag == Tag::Double ? "float"
                                 : "0 or 1") +
           ")";
  return false;
}

bool tensor_input(const std::string& path, size_t i, const MethodMeta& meta, InputTensor* out, std::string* error) {
  auto info = meta.input_tensor_meta(i);
  for (const char* prefix : {"int:", "float:", "bool:"}) {
    if (path.rfind(prefix, 0) == 0) {  // a value for a non-tensor input given to a tensor input
      *error = "input " + std::to_string(i) + " is a " + executorch::runtime::toString(info->scalar_type()) + " " +
               shape_text(to_shape(info->sizes())) + " tensor: pass a .npy file (" + prefix +
               " values are for non-tensor inputs)";
      return false;
    }
  }
  executorch_openvino::NpyArray array;
  if (!executorch_openvino::read_npy(path, &array, error)) {
    *error = "input " + std::to_string(i) + ": " + *error;
    return false;
  }
  const ScalarType type = info->scalar_type();
  const std::vector<int64_t> declared = to_shape(info->sizes());
  const std::string wanted = npy_descr(type);
  if (array.descr != wanted) {
    *error = "input " + std::to_string(i) + " ('" + path + "') holds NumPy type '" + array.descr +
             "'; the method takes " + executorch::runtime::toString(type) +
             (wanted.empty() ? "" : " ('" + wanted + "')") + ": save array.astype(...) of that type";
    return false;
  }
  if (array.shape.size() != declared.size()) {
    *error = "input " + std::to_string(i) + " ('" + path + "') has shape " + shape_text(array.shape) +
             "; the method takes " + std::to_string(declared.size()) + " dimensions " + shape_text(declared);
    return false;
  }
  for (size_t d = 0; d < declared.size(); ++d) {
    if (array.shape[d] > declared[d]) {  // smaller fits a dynamic dimension: ExecuTorch checks that
      *error = "input " + std::to_string(i) + " ('" + path + "') has shape " + shape_text(array.shape) +
               "; the method takes " + shape_text(declared) +
               " (a dynamic dimension at most that size, a static one exactly it)";
      return false;
    }
  }
  out->data = std::move(array.data);
  std::vector<executorch::aten::SizesType> sizes(array.shape.begin(), array.shape.end());
  out->tensor = executorch::extension::make_tensor_ptr(std::move(sizes), out->data.data(), type);
  return true;
}

std::string summary(const EValue& value) {
  if (value.isTensor()) {
    const auto& t = value.toTensor();
    return std::string(executorch::runtime::toString(t.scalar_type())) + " " + shape_text(to_shape(t.sizes()));
  }
  if (value.isInt()) return "int " + std::to_string(value.toInt());
  if (value.isDouble()) return "float " + std::to_string(value.toDouble());
  if (value.isBool()) return std::string("bool ") + (value.toBool() ? "true" : "false");
  return executorch::runtime::tag_to_string(value.tag);
}

SavedOutput save_output(const EValue& value) {
  SavedOutput out;
  out.summary = summary(value);
  if (value.isTensor()) {
    const auto& t = value.toTensor();
    out.type = t.scalar_type();
    // .npy has no bfloat16: its bits are written as uint16.
    out.descr = out.type == ScalarType::BFloat16 ? "<u2" : npy_descr(out.type);
    out.shape = to_shape(t.sizes());
    const auto* data = static_cast<const uint8_t*>(t.const_data_ptr());
    out.bytes.assign(data, data + t.nbytes());
  } else if (value.isInt()) {
    int64_t v = value.toInt();
    out.descr = "<i8";
    out.bytes.assign(reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + sizeof v);
  } else if (value.isDouble()) {
    double v = value.toDouble();
    out.descr = "<f8";
    out.bytes.assign(reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + sizeof v);
  } else if (value.isBool()) {
    out.descr = "|b1";
    out.bytes.assign(1, value.toBool() ? 1 : 0);
  }
  return out;
}

bool write_output(const SavedOutput& value, size_t i, const std::string& dir, std::string* error) {
  if (value.descr.empty()) {
    *error = ".npy has no form for " + value.summary;
    return false;
  }
  const std::string path = dir + "/output_" + std::to_string(i) + ".npy";
  return executorch_openvino::write_npy(path, value.descr, value.shape, value.bytes.data(), value.bytes.size(), error);
}

}  // namespace executorch_openvino::runner
