#include "partition_executor.h"

#include "concurrent_calls.h"
#include "delegate_api.h"
#include "openvino_tensors.h"
#include "processed_blob_layout.h"

#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

namespace executorch_openvino {

using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::ArrayRef;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Span;

namespace {

// kIndexCheckPrefix, kStateCheckMark, kSizesCheckMark and kRestartStatePrefix: processed_blob_layout.h (what each
// means: processed_blob.py).

// Reads "A,a,B,b:" at the start of `text` into `check` and drops it from `text`; false when it is not there.
bool parse_sizes_check(std::string* text, Partition::SizesCheck* check) {
  size_t values[4];
  size_t at = 0;
  for (size_t k = 0; k < 4; ++k) {
    size_t end = at;
    while (end < text->size() && (*text)[end] >= '0' && (*text)[end] <= '9') ++end;
    const char separator = k < 3 ? ',' : ':';
    if (end == at || end >= text->size() || (*text)[end] != separator || end - at > 9) return false;
    values[k] = std::stoul(text->substr(at, end - at));
    at = end + 1;
  }
  *check = {values[0], values[1], values[2], values[3], text->substr(at)};
  return true;
}

std::atomic<int> live_partitions{0};
std::atomic<uint64_t> outputs_in_place{0};
std::atomic<uint64_t> outputs_copied{0};

// Sets `data` with `dims` as port `i` of the request, unless `bound` already holds them.
template <typename Sizes>
bool bind_to_request(Partition& partition, bool input, size_t i, ov_element_type_e type, void* data, const Sizes& dims,
                     BoundBuffer* bound) {
  if (bound->same(data, dims)) return true;
  const OpenVINOApi& api = OpenVINOLibrary::instance().api();
  bound->known = false;  // until the new binding succeeds; `data` keeps the old buffer
  bound->dims.assign(dims.begin(), dims.end());
  TensorGuard tensor;
  ov_status_e status = api.ov_tensor_create_from_host_ptr(type, shape_view(bound->dims), data, &tensor.t);
  if (status == OK) {
    status = input ? api.ov_infer_request_set_input_tensor_by_index(partition.request, i, tensor.t)
                   : api.ov_infer_request_set_output_tensor_by_index(partition.request, i, tensor.t);
  }
  if (status != OK) return false;
  bound->data = data;
  bound->known = true;
  return true;
}

// "execute: input 1 ('input_ids')": the partition's input number (its own,
// which is not the method's where the method has other inputs or reads
// them in another order) and the name the program gave it, which for a
// method's input is the argument's name.
std::string input_name(size_t i, const PortInfo& port) {
  return "execute: input " + std::to_string(i) + (port.name.empty() ? std::string() : " ('" + port.name + "')");
}

// An int (SymInt) argument of the partition: a one-element int64 parameter,
// as conversion.py lowers it.
Error bind_int_input(Partition& partition, size_t i, int64_t value) {
  const PortInfo& port = partition.inputs[i];
  auto which = [i, &port] { return input_name(i, port); };
  // One element: shape () or (1,), whichever the conversion chose.
  if (port.type != I64 || !port.is_static || port.shape.size() > 1 || (port.shape.size() == 1 && port.shape[0] != 1)) {
    report_error(which() + " is an int but the compiled model expects a " + ov_type_name(port.type) +
                 " tensor; lower the model again");
    return Error::InvalidType;
  }
  if (value < INT32_MIN || value > INT32_MAX) {
    report_error(which() + " is the int " + std::to_string(value) +
                 ", outside the int32 range "
                 "that OpenVINO computes int64 in; its result would be wrong");
    return Error::InvalidArgument;
  }
  BoundBuffer& bound = partition.bound_inputs[i];
  bound.scalar = value;
  if (!bind_to_request(partition, true, i, I64, &bound.scalar, port.shape, &bound)) {
    report_error(ov_message(which() + ": could not bind it to the infer request"));
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

Error bind_input(Partition& partition, size_t i, EValue& value) {
  const PortInfo& port = partition.inputs[i];
  // Built only for a message: a string per input per call is measurable.
  auto which = [i, &port] { return input_name(i, port); };
  if (value.isInt()) return bind_int_input(partition, i, value.toInt());
  if (!value.isTensor()) {
    report_error(which() + " is not a tensor (tag " + std::to_string(int(value.tag)) +
                 "); only tensor inputs are delegated");
    return Error::InvalidArgument;
  }
  Tensor in = value.toTensor();
  ov_element_type_e type;
  if (!to_ov_type(in.scalar_type(), &type)) {
    report_error(which() + " has dtype " + scalar_type_name(in.scalar_type()) + ", which OpenVINO cannot take");
    return Error::InvalidType;
  }
  if (type != port.type) {
    report_error(which() + " has dtype " + scalar_type_name(in.scalar_type()) + " but the compiled model expects " +
                 ov_type_name(port.type) + "; pass the dtype the model was exported with");
    return Error::InvalidType;
  }
  if (!executorch::runtime::tensor_is_default_dim_order(in)) {
    report_error(which() +
                 " is not in the default (contiguous) dim order; pass a "
                 "contiguous tensor (torch: x.contiguous())");
    return Error::InvalidArgument;
  }
  if (!shape_fits(port, in.sizes())) {
    report_error(which() + " has shape " + shape_text(in.sizes()) + " but the model was lowered for " +
                 port_shape_text(port) +
                 "; pass such a shape, or export with dynamic shapes that "
                 "cover this one");
    return Error::InvalidArgument;
  }
  // OpenVINO's plugins compute int64 in int32 (measured, 2025.4.1 and
  // 2026.4.1 CPU: 2^40 + 3 arrives as 3), so a value outside int32 would be
  // silently wrong: refuse it.
  if (type == I64) {
    const int64_t* v = in.const_data_ptr<int64_t>();
    for (ssize_t k = 0; k < in.numel(); ++k) {
      if (v[k] < INT32_MIN || v[k] > INT32_MAX) {
        report_error(which() + " holds the int64 value " + std::to_string(v[k]) + " at flat index " +
                     std::to_string(k) +
                     ", outside the int32 range: OpenVINO computes int64 "
                     "tensors in int32 and would return a wrong result. Keep such values out of "
                     "the delegated part of the program: compute them before or after it, or lower with "
                     "OpenvinoPartitioner(op_types_to_skip=...) naming the operators that read them.");
        return Error::InvalidArgument;
      }
    }
  }
  // OpenVINO refuses a null host pointer even for zero elements.
  static uint64_t empty_storage = 0;
  void* data = in.numel() == 0 ? &empty_storage : in.mutable_data_ptr();
  if (!bind_to_request(partition, true, i, type, data, in.sizes(), &partition.bound_inputs[i])) {
    report_error(ov_message(which() + ": could not bind it to the infer request"));
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

// Zero copy: OpenVINO writes into ExecuTorch's buffer when the sizes agree;
// otherwise the output is copied after inference (copy_output).
Error bind_output(Partition& partition, size_t i, EValue& value) {
  const OpenVINOApi& api = OpenVINOLibrary::instance().api();
  if (!value.isTensor()) {
    report_error("execute: output " + std::to_string(i) + " is not a tensor");
    return Error::InvalidArgument;
  }
  const PortInfo& port = partition.outputs[i];
  Tensor out = value.toTensor();
  ov_element_type_e et_type;
  if (!to_ov_type(out.scalar_type(), &et_type) || et_type != port.type) {
    report_error(std::string("execute: output ") + std::to_string(i) + " is " + scalar_type_name(out.scalar_type()) +
                 " in the program but " + ov_type_name(port.type) + " in the compiled model; lower the model again");
    return Error::InvalidType;
  }
  if (out.nbytes() > 0 && out.const_data_ptr() == nullptr) {
    // A program output left out of memory planning (dynamic shapes) that the
    // caller gave no buffer: executorch.runtime gives one, a C++ caller must.
    report_error(
        "execute: output " + std::to_string(i) +
        " has no memory: the program's outputs are not "
        "memory planned, so give the method a buffer for it (Module::set_output, Method::set_output_data_ptr)");
    return Error::InvalidState;
  }
  BoundBuffer& bound = partition.bound_outputs[i];
  const bool in_place = port.is_static && !port.aliases_input && port.byte_size == out.nbytes() && port.byte_size > 0;
  partition.copy_after[i] = !in_place;
  if (in_place) {
    if (!bind_to_request(partition, false, i, port.type, out.mutable_data_ptr(), port.shape, &bound)) {
      report_error(ov_message("execute: could not bind output " + std::to_string(i)));
      return Error::Internal;
    }
  } else if (bound.data != nullptr) {
    // The request still writes into a buffer of an earlier call: give it its
    // own again, or OpenVINO would write where ExecuTorch no longer expects.
    TensorGuard own;
    std::vector<int64_t> dims = port.shape;
    if (api.ov_tensor_create(port.type, shape_view(dims), &own.t) != OK ||
        api.ov_infer_request_set_output_tensor_by_index(partition.request, i, own.t) != OK) {
      report_error(ov_message("execute: could not unbind output " + std::to_string(i)));
      return Error::Internal;
    }
    bound.data = nullptr;
    bound.known = false;
  }
  return Error::Ok;
}

Error copy_output(Partition& partition, size_t i, Tensor out) {
  const OpenVINOApi& api = OpenVINOLibrary::instance().api();
  const PortInfo& port = partition.outputs[i];
  const std::string which = "execute: output " + std::to_string(i);
  TensorGuard result;
  void* data = nullptr;
  size_t bytes = 0;
  if (api.ov_infer_request_get_output_tensor_by_index(partition.request, i, &result.t) != OK ||
      api.ov_tensor_get_byte_size(result.t, &bytes) != OK || api.ov_tensor_data(result.t, &data) != OK) {
    report_error(ov_message(which + ": could not read OpenVINO's result"));
    return Error::Internal;
  }
  std::vector<int64_t> dims = port.shape;
  if (!port.is_static) {
    ShapeGuard shape;
    if (api.ov_tensor_get_shape(result.t, &shape.s) != OK) {
      report_error(ov_message(which + ": could not read the shape of OpenVINO's result"));
      return Error::Internal;
    }
    dims.assign(shape.s.dims, shape.s.dims + shape.s.rank);
  }
  // A dynamic result takes OpenVINO's shape. A static one keeps ExecuTorch's
  // planned shape when the byte counts agree (a 0-d result and a (1,) output).
  if (!port.is_static || static_cast<size_t>(out.nbytes()) != bytes) {
    std::vector<SizesType> sizes(dims.begin(), dims.end());
    Error e = executorch::runtime::resize_tensor(out, ArrayRef<SizesType>(sizes.data(), sizes.size()));
    if (e != Error::Ok || static_cast<size_t>(out.nbytes()) != bytes) {
      report_error(which + " has shape " + shape_text(dims) + ", which does not fit ExecuTorch's output of shape " +
                   shape_text(out.sizes()));
      return Error::InvalidArgument;
    }
  }
  if (bytes) std::memcpy(out.mutable_data_ptr(), data, bytes);
  return Error::Ok;
}

}  // namespace

Partition::Partition() { live_partitions.fetch_add(1); }

Partition::~Partition() {
  live_partitions.fetch_sub(1);
  // The request before the model it came from (`model` is released after this body).
  if (request) OpenVINOLibrary::instance().api().ov_infer_request_free(request);
}

Error open_partition(std::shared_ptr<SharedCompiledModel> model, std::unique_ptr<Partition>* out) {
  const OpenVINOApi& api = OpenVINOLibrary::instance().api();
  auto partition = std::make_unique<Partition>();
  partition->model = std::move(model);
  ov_compiled_model_t* compiled = partition->model->compiled();
  std::string error;
  if (!read_model_ports(api, compiled, &partition->inputs, &partition->outputs, &error)) {
    report_error("init: " + (error.empty() ? ov_message("could not query the compiled model") : error));
    return Error::Internal;
  }
  // Index checks follow the partition's outputs: take them off the end.
  const size_t prefix = sizeof(kIndexCheckPrefix) - 1;
  std::vector<PortInfo>& outputs = partition->outputs;
  while (!outputs.empty() && outputs.back().name.compare(0, prefix, kIndexCheckPrefix) == 0) {
    if (outputs.back().type != BOOLEAN) {
      report_error("init: the index check output '" + outputs.back().name + "' is not a bool; lower the model again");
      return Error::InvalidProgram;
    }
    std::string message = outputs.back().name.substr(prefix);
    const size_t mark = sizeof(kStateCheckMark) - 1;
    if (message.compare(0, mark, kStateCheckMark) == 0) {
      partition->guards_state = true;
      message.erase(0, mark);
    }
    const size_t sizes_mark = sizeof(kSizesCheckMark) - 1;
    if (message.compare(0, sizes_mark, kSizesCheckMark) == 0) {
      message.erase(0, sizes_mark);
      Partition::SizesCheck check;
      auto has_dim = [&](size_t input, size_t dim) {
        return input < partition->inputs.size() && partition->inputs[input].rank_known &&
               dim < partition->inputs[input].ranges.size();
      };
      if (!parse_sizes_check(&message, &check) || !has_dim(check.a, check.a_dim) || !has_dim(check.b, check.b_dim)) {
        report_error("init: the size check output '" + outputs.back().name + "' is malformed; lower the model again");
        return Error::InvalidProgram;
      }
      partition->sizes_checks.insert(partition->sizes_checks.begin(), check);
    } else {
      partition->index_checks.insert(partition->index_checks.begin(), {outputs.size() - 1, message});
    }
    outputs.pop_back();
  }
  const size_t restart_prefix = sizeof(kRestartStatePrefix) - 1;
  for (size_t i = 0; i < partition->inputs.size(); ++i) {
    const PortInfo& port = partition->inputs[i];
    if (port.name.compare(0, restart_prefix, kRestartStatePrefix) != 0) continue;
    if (port.type != I64 || !port.rank_known || port.ranges.size() != 1) {
      report_error("init: the input '" + port.name +
                   "' that restarts the model's state is not a 1-d int64 tensor; "
                   "lower the model again");
      return Error::InvalidProgram;
    }
    partition->restart_input = static_cast<int64_t>(i);
  }
  partition->bound_inputs.resize(partition->inputs.size());
  partition->bound_outputs.resize(partition->outputs.size());
  // Constructed, not resized: resize would add std::vector<char>'s growth code to the exported symbols.
  partition->copy_after = std::vector<char>(partition->outputs.size());
  if (api.ov_compiled_model_create_infer_request(compiled, &partition->request) != OK) {
    report_error(ov_message("init: could not create an infer request"));
    return Error::MemoryAllocationFailed;
  }
  *out = std::move(partition);
  return Error::Ok;
}

// A call at position 0 of a model whose KV cache grows with each call starts a new sequence: a new
// infer request holds an empty cache (OpenVINO's C API has no call that resets a request's state).
static Error restart_at_position_zero(Partition& partition, const EValue& value) {
  if (!value.isTensor()) return Error::Ok;  // bind_input reports it
  const Tensor& positions = value.toTensor();
  if (positions.scalar_type() != executorch::aten::ScalarType::Long || positions.numel() < 1 ||
      positions.const_data_ptr<int64_t>()[0] != 0) {
    return Error::Ok;
  }
  const OpenVINOApi& api = OpenVINOLibrary::instance().api();
  ov_infer_request_t* fresh = nullptr;
  if (api.ov_compiled_model_create_infer_request(partition.model->compiled(), &fresh) != OK) {
    report_error(ov_message("execute: could not create the infer request of a new sequence"));
    return Error::MemoryAllocationFailed;
  }
  api.ov_infer_request_free(partition.request);
  partition.request = fresh;
  for (BoundBuffer& bound : partition.bound_inputs) bound.known = false;
  for (BoundBuffer& bound : partition.bound_outputs) bound.known = false;
  partition.state_written = false;
  partition.state_lost = false;  // what was lost belonged to the sequence that ended
  return Error::Ok;
}

Error execute_partition(Partition& partition, Span<EValue*> args) {
  std::lock_guard<std::mutex> lock(partition.mutex);
  const OpenVINOApi& api = OpenVINOLibrary::instance().api();
  const size_t n_in = partition.inputs.size(), n_out = partition.outputs.size();
  if (args.size() != n_in + n_out) {
    report_error("execute: the delegate call has " + std::to_string(args.size()) +
                 " arguments, the compiled model has " + std::to_string(n_in) + " inputs and " + std::to_string(n_out) +
                 " outputs; lower the model again");
    return Error::InvalidProgram;
  }
  if (partition.restart_input >= 0 && partition.state_written) {
    Error e = restart_at_position_zero(partition, *args[partition.restart_input]);
    if (e != Error::Ok) return e;
  }
  if (partition.state_lost) {
    report_error(
        "execute: an earlier call of this method failed after OpenVINO had already updated the buffers the "
        "program keeps between calls (a KV cache), so they may no longer be what eager PyTorch would hold; "
        "load the method again to start from the program's values" +
        std::string(partition.restart_input >= 0 ? ", or start a new sequence at position 0" : ""));
    return Error::InvalidState;
  }
  std::string changed;
  if (!partition.model->weights_unchanged(&changed)) {
    report_error("execute: " + changed);
    return Error::InvalidState;
  }
  for (size_t i = 0; i < n_in; ++i) {
    Error e = bind_input(partition, i, *args[i]);
    if (e != Error::Ok) return e;
  }
  for (const Partition::SizesCheck& check : partition.sizes_checks) {
    // Bound above: tensors of the ports' ranks, which hold these dimensions (checked at init).
    const Tensor a = args[check.a]->toTensor(), b = args[check.b]->toTensor();
    if (a.size(check.a_dim) != b.size(check.b_dim)) {
      // The sizes go before the message's advice (after its first "; ").
      const size_t advice = std::min(check.message.find("; "), check.message.size());
      report_error("execute: " + check.message.substr(0, advice) + " (here " + std::to_string(a.size(check.a_dim)) +
                   " and " + std::to_string(b.size(check.b_dim)) + ")" + check.message.substr(advice));
      return Error::InvalidArgument;
    }
  }
  for (size_t i = 0; i < n_out; ++i) {
    Error e = bind_output(partition, i, *args[n_in + i]);
    if (e != Error::Ok) return e;
  }
  ov_status_e status;
  {
    InferScope scope;
    FirstInferencePageDrop dropping(*partition.model);
    status = api.ov_infer_request_infer(partition.request);
  }
  partition.state_written = true;  // (a failed inference may have written it too)
  if (status != OK) {
    report_error(ov_message("execute: OpenVINO inference failed"));
    return Error::Internal;
  }
  for (const Partition::IndexCheck& check : partition.index_checks) {
    TensorGuard result;
    void* data = nullptr;
    if (api.ov_infer_request_get_output_tensor_by_index(partition.request, check.output, &result.t) != OK ||
        api.ov_tensor_data(result.t, &data) != OK || data == nullptr) {
      report_error(ov_message("execute: could not read the index check of " + check.message));
      return Error::Internal;
    }
    if (*static_cast<const char*>(data) != 0) {
      // OpenVINO would have returned zeros or a wrapped row; eager PyTorch raises an error.
      partition.state_lost = partition.guards_state;
      // The message says what to do (passes/index_checks.py and cached_attention.py write it whole).
      report_error("execute: " + check.message);
      return Error::InvalidArgument;
    }
  }
  for (size_t i = 0; i < n_out; ++i) {
    if (!partition.copy_after[i]) {
      outputs_in_place.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    Error e = copy_output(partition, i, args[n_in + i]->toTensor());
    if (e != Error::Ok) return e;
    outputs_copied.fetch_add(1, std::memory_order_relaxed);
  }
  return Error::Ok;
}

OutputCounters output_counters() { return {outputs_in_place.load(), outputs_copied.load()}; }

int live_infer_requests() { return live_partitions.load(); }

}  // namespace executorch_openvino
