// One delegated partition (one handle) at execute time: its infer request,
// the ports it checks ExecuTorch's values against, and what each port was
// last bound to.
//
// Inputs are bound to ExecuTorch's buffers without copying; outputs with a
// static shape are written by OpenVINO straight into ExecuTorch's buffers,
// others are copied after inference. A buffer bound on the previous call with
// the same address and shape is not bound again (ExecuTorch's planned buffers
// stay put). The inference itself runs inside an InferScope (concurrent_calls.h).
#pragma once

#include "internal_symbols.h"
#include "partition_ports.h"
#include "shared_compiled_models.h"

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/span.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// What an infer request port was last bound to. OpenVINO keeps the tensor
// set on the request, so the same address and shape need no new binding.
struct BoundBuffer {
  // The caller's buffer the request may hold (nullptr: its own), and whether
  // `data` and `dims` are known to be what it holds: after a failed binding
  // the request may hold the previous buffer, but with which shape is unknown.
  const void* data = nullptr;
  std::vector<int64_t> dims;
  bool known = false;
  int64_t scalar = 0;  // storage of an int (SymInt) input; its address is stable

  template <typename Sizes>
  bool same(const void* address, const Sizes& sizes) const {
    return known && data == address && dims.size() == sizes.size() &&
           std::equal(dims.begin(), dims.end(), sizes.begin());
  }
};

// The compiled model may be shared with other handles; the infer request and
// the binding state are this handle's own.
struct Partition {
  std::shared_ptr<SharedCompiledModel> model;
  ov_infer_request_t* request = nullptr;
  std::vector<PortInfo> inputs;
  std::vector<PortInfo> outputs;
  std::mutex mutex;  // one infer request: one execute at a time
  // Per port, sized at init (addresses stay valid): see BoundBuffer.
  std::vector<BoundBuffer> bound_inputs;
  std::vector<BoundBuffer> bound_outputs;
  std::vector<char> copy_after;  // per output, this call: copied after inference
  // The compiled model's outputs after `outputs` that are index checks, not
  // ExecuTorch's: a 0-d bool each, true when a lookup read an index outside its
  // table; the call then fails with `message` (lowering/passes/index_checks.py).
  struct IndexCheck {
    size_t output;
    std::string message;
  };
  std::vector<IndexCheck> index_checks;
  // Input sizes the program was exported with as one dynamic size: input `a`'s dimension `a_dim` equals input
  // `b`'s `b_dim`, checked before inference (processed_blob.py, SIZES_CHECK_MARK).
  struct SizesCheck {
    size_t a, a_dim, b, b_dim;
    std::string message;
  };
  std::vector<SizesCheck> sizes_checks;
  // The model keeps state (buffers the program updates, lowering/model_state.py) and
  // its checks name it ("state:" after the prefix): a failed check left that state
  // written by a call eager PyTorch would have refused, so later calls fail too.
  bool guards_state = false;
  bool state_lost = false;
  // The input whose first value 0 starts a new sequence with a new infer request (a KV cache that
  // grows with each call, lowering/cached_attention.py), -1 for none; and whether the request's state
  // has been written since it was created.
  int64_t restart_input = -1;
  bool state_written = false;

  Partition();
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;
  ~Partition();
};

// A partition of `model` with its ports read and its own infer request.
// Reports the failure ("init: ...") and returns its error otherwise.
executorch::runtime::Error open_partition(std::shared_ptr<SharedCompiledModel> model, std::unique_ptr<Partition>* out);

// One inference: `args` are the partition's inputs, then its outputs.
executorch::runtime::Error execute_partition(Partition& partition,
                                             executorch::runtime::Span<executorch::runtime::EValue*> args);

EXOV_INTERNAL_END
}  // namespace executorch_openvino
