// What lets calls of one loaded program run at once (OpenVINOMethod's pool of
// methods, python/executorch_openvino/api.py): the hooks around each blocking
// OpenVINO inference, counters of inferences in flight, and the per-thread
// record of inits a program load made. The public side is in delegate_api.h.
#pragma once

#include "delegate_api.h"

#include <string>

namespace executorch_openvino {

// Around one OpenVINO inference: counts it in infer_counters() and calls the
// installed InferHooks (set_infer_hooks). Only the inference may run inside
// the scope: with the hooks of the pybindings, the Python thread has let go
// of its interpreter there.
class InferScope {
 public:
  InferScope();
  ~InferScope();
  InferScope(const InferScope&) = delete;
  InferScope& operator=(const InferScope&) = delete;

 private:
  void* token_ = nullptr;
  void (*reacquire_)(void*) = nullptr;  // the pair of the release that gave token_
};

// Appends one successful init to the calling thread's capture, if one is on.
void record_init(const CompileReport& report, const std::string& program_state);

}  // namespace executorch_openvino
