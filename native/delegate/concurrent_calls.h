// What shows calls of one loaded program running at once (OpenVINOMethod's pool
// of methods, python/executorch_openvino/runtime/loaded_method.py): counters of
// inferences in flight, and the per-thread record of inits a program load made.
// The public side is in delegate_api.h.
#pragma once

#include "delegate_api.h"

#include <string>

namespace executorch_openvino {

// Around one OpenVINO inference: counts it in infer_counters().
class InferScope {
 public:
  InferScope();
  ~InferScope();
  InferScope(const InferScope&) = delete;
  InferScope& operator=(const InferScope&) = delete;
};

// Appends one successful init to the calling thread's capture, if one is on.
void record_init(const CompileReport& report, const std::string& program_state);

}  // namespace executorch_openvino
