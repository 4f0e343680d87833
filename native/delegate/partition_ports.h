// The inputs and outputs of a compiled model as the delegate checks and binds
// them: element type, shape (static, or a range per dimension) and name.
#pragma once

#include "internal_symbols.h"
#include "openvino_library.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// One port of the compiled model: its element type and, when static, shape.
struct PortInfo {
  ov_element_type_e type = DYNAMIC;
  bool is_static = false;
  std::vector<int64_t> shape;
  size_t byte_size = 0;  // for static ports
  std::string name;      // a tensor name, "" when it has none
  // Per dimension, the sizes the compiled model takes: {min, max}, max < 0
  // for no bound (when the rank itself is known).
  bool rank_known = false;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  // An output that is one of the inputs (OpenVINO folds a clone into a
  // Parameter -> Result edge). Bound in place, OpenVINO's CPU plugin zeroes
  // it (measured, 2026.4.1), so it is always copied.
  bool aliases_input = false;
};

// Reads every input and output port of `compiled` and marks the outputs that
// alias an input. False with `error` ("" when OpenVINO gave no port count).
bool read_model_ports(const OpenVINOApi& api, ov_compiled_model_t* compiled, std::vector<PortInfo>* inputs,
                      std::vector<PortInfo>* outputs, std::string* error);

inline bool unbounded(int64_t max) { return max < 0 || max == INT64_MAX; }

// The sizes a port takes, e.g. "(1..100, 3)" or "(2.., 3)".
std::string port_shape_text(const PortInfo& port);

// Whether `dims` fits the port: the same rank, and each size within its range.
// ExecuTorch checks a dynamic input only against its element count, so a
// wrong static size would otherwise reach OpenVINO and be read past its end.
template <typename Sizes>
bool shape_fits(const PortInfo& port, const Sizes& dims) {
  if (!port.rank_known) return true;
  if (dims.size() != port.ranges.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto& [min, max] = port.ranges[i];
    if (dims[i] < min || (!unbounded(max) && dims[i] > max)) return false;
  }
  return true;
}

EXOV_INTERNAL_END
}  // namespace executorch_openvino
