// A loaded ExecuTorch method that Python calls without executorch's pybindings
// (bound as _native.Method; python/executorch_openvino/runtime/loaded_method.py).
// executorch's pybindings spend about 5.7 us of a call around the method itself
// (stream redirects, pybind11's argument handling, ATen clones of the outputs;
// issue 36's tiny_add): this reads torch tensors through their Python attributes,
// hands their memory to the method, and copies each output into a tensor made by
// torch (empty_like of the last output of that shape), with the interpreter let go for
// set_inputs and execute.
#pragma once

#include <nanobind/nanobind.h>

#include <executorch/extension/module/module.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace executorch_openvino {

class PythonMethod {
 public:
  // `program`: a .pte path (str, mapped without mlock) or its bytes (kept
  // referenced, not copied). `torch_api`: (torch.Tensor, torch.empty_like, torch.empty_strided,
  // {torch.dtype: ExecuTorch ScalarType code}, torch.strided). `log_sink`: called with the
  // text of ExecuTorch's lines held during a load or call that succeeded.
  // Raises RuntimeError with ExecuTorch's words and code (executorch's
  // pybindings' wording) when loading fails; the held lines are then left for
  // take_held_log_lines().
  PythonMethod(nanobind::object program, const std::string& method_name, nanobind::tuple torch_api,
               nanobind::object log_sink);

  // The method's outputs (tensors copied out of its planned memory, numbers as
  // Python numbers) for `inputs`, a list of torch.Tensor (contiguous, not a
  // negated view) and Python numbers; None, having done nothing, for anything
  // else (runtime/method_inputs.py makes such a list, or says what is wrong).
  // RuntimeError on failure: "method->set_inputs() ... failed with error 0x.."
  // when ExecuTorch refused the inputs, else ExecuTorch's code with the
  // delegate's message; TypeError for a tensor outside CPU memory;
  // RuntimeError when another thread is calling this copy.
  nanobind::object execute(nanobind::handle inputs);

  const std::string& method_name() const { return method_name_; }

 private:
  nanobind::object program_;  // the bytes the loader reads, or the path
  nanobind::object tensor_type_, empty_like_, empty_strided_, strided_;
  struct OutputTemplate {  // a private tensor of an output's last shape: empty_like(tensor) makes the next
    nanobind::object tensor = nanobind::none();
    int code = -1;
    std::vector<int32_t> sizes;
  };
  std::vector<OutputTemplate> output_templates_;
  std::vector<executorch::runtime::Tag> input_tags_;
  std::vector<std::unique_ptr<uint8_t[]>> output_buffers_;  // of outputs memory planning left out

  std::string give_unplanned_outputs_buffers();  // "" or why it failed
  std::vector<nanobind::object> dtype_of_code_;  // ScalarType code -> torch.dtype (None where unknown)
  nanobind::dict code_of_dtype_;
  nanobind::object log_sink_;
  std::string method_name_;
  std::unique_ptr<executorch::extension::module::Module> module_;
  executorch::runtime::Method* method_ = nullptr;
  std::atomic<bool> running_{false};
};

void bind_python_method(nanobind::module_& m);

// ExecuTorch's lines held on this thread by a load or call that failed, then cleared.
std::string take_held_log_lines();

}  // namespace executorch_openvino
