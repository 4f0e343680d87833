// Torch's OpenMP threads beside the delegate's inferences. torch's libgomp keeps
// its worker threads spinning for a while after each parallel region (unless
// OMP_WAIT_POLICY=PASSIVE): executorch's pybindings copy a method's outputs with
// torch, and the spinning threads then take cores from OpenVINO's next
// inference (a ConvNeXt block through executorch.runtime: 1.77x the time per
// call of OpenVINO's own API on 2 cores, 1.00x with OMP_WAIT_POLICY=PASSIVE;
// docs/user-guide/troubleshooting.md). Only the user can change libgomp's
// policy (it reads the environment when torch loads it), so the delegate says so.
#pragma once

#include <cstddef>

namespace executorch_openvino {

// While one lives, the calling thread's executes copy their outputs without
// OpenMP threads (exov.load_method's PythonMethod): nothing to warn about.
class OutputsCopiedWithoutOpenMP {
 public:
  OutputsCopiedWithoutOpenMP();
  ~OutputsCopiedWithoutOpenMP();
  OutputsCopiedWithoutOpenMP(const OutputsCopiedWithoutOpenMP&) = delete;
  OutputsCopiedWithoutOpenMP& operator=(const OutputsCopiedWithoutOpenMP&) = delete;

 private:
  bool outer_;
};

// torch copies a tensor on several threads from this many elements (at::internal::GRAIN_SIZE, torch 2.13):
// smaller outputs wake no OpenMP thread.
constexpr size_t kParallelCopyElements = 32768;

// Whether check_spinning_openmp_threads() may still warn on this thread: false once it checked, and inside
// an OutputsCopiedWithoutOpenMP scope (execute skips counting its tensors' elements then).
bool spinning_check_pending();

// Called by each execute with its largest tensor's element count: the first one outside an
// OutputsCopiedWithoutOpenMP scope with a tensor of kParallelCopyElements or more checks, once per process,
// whether libgomp is loaded with more than one thread and without a short spin in the environment the
// process started with (OMP_WAIT_POLICY=PASSIVE, or GOMP_SPINCOUNT of at most 10000), and if so logs a
// warning saying what it costs and what to set.
void check_spinning_openmp_threads(size_t largest_tensor_elements);

// The warning check_spinning_openmp_threads() would log now ("" for none); for tests and the doctor.
const char* spinning_openmp_threads_problem();

}  // namespace executorch_openvino
