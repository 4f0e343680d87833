// The pybindings' InferHooks (delegate_api.h): a Python thread that opted in
// lets the interpreter go during each OpenVINO inference, so other Python
// threads run meanwhile, among them other calls of the same program
// (OpenVINOMethod's pool, python/executorch_openvino/api.py). A thread that did
// not opt in (executorch.runtime used directly) keeps the interpreter, as before:
// ExecuTorch's methods are not reentrant, and nothing else would stop two
// threads from running one method at once.
#pragma once

namespace executorch_openvino {

// Installs the hooks in the delegate library (once, when _native is imported).
void install_python_infer_hooks();

// Opts the calling thread in until end_python_call(). Returns false, opting
// nothing in, where the interpreter cannot be let go safely (see the .cpp).
// Call it with the interpreter held, outside any executorch.runtime call.
bool begin_python_call();
void end_python_call();

}  // namespace executorch_openvino
