// Torch's OpenMP threads beside the delegate's inferences. torch's libgomp keeps
// its worker threads spinning for a while after each parallel region (unless
// OMP_WAIT_POLICY=PASSIVE): executorch's pybindings copy a method's outputs with
// torch, and the spinning threads then take cores from OpenVINO's next
// inference (a ConvNeXt block through executorch.runtime: 1.77x the time per
// call of OpenVINO's own API on 2 cores, 1.00x with OMP_WAIT_POLICY=PASSIVE;
// docs/user-guide/troubleshooting.md). Only the user can change libgomp's
// policy (it reads the environment when torch loads it), so the delegate says so.
#pragma once

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

// Called by each execute: the first one outside an OutputsCopiedWithoutOpenMP
// scope checks, once per process, whether libgomp is loaded with more than one
// thread and without OMP_WAIT_POLICY=PASSIVE or GOMP_SPINCOUNT, and if so logs
// a warning saying what it costs and what to set.
void check_spinning_openmp_threads();

// The warning check_spinning_openmp_threads() would log now ("" for none); for tests and the doctor.
const char* spinning_openmp_threads_problem();

}  // namespace executorch_openvino
