#include "python_method.h"

#include "delegate_api.h"
#include "executorch_log_capture.h"
#include "spinning_threads.h"

#include <nanobind/stl/string.h>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <optional>

namespace nb = nanobind;
namespace et = executorch::runtime;
using executorch::aten::ScalarType;
using executorch::aten::TensorImpl;

namespace executorch_openvino {
namespace {

constexpr int kMaxDims = 16;  // more than any program this delegate lowers has used
constexpr int kScalarTypeCodes = 64;
constexpr size_t kTemplateBytes = 64 * 1024;  // outputs up to this size keep a tensor to make the next like

std::string hex(et::Error e) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%x", static_cast<unsigned>(e));
  return text;
}

// ExecuTorch's message, with the delegate's own when it reported one on this thread.
std::string with_delegate_message(std::string message) {
  std::string detail = thread_last_error();
  if (!detail.empty()) message += "\nexecutorch-openvino: " + detail;
  return message;
}

// An input tensor's view of a torch tensor's memory, alive for the call.
struct InputTensor {
  TensorImpl::SizesType sizes[kMaxDims];
  TensorImpl::DimOrderType dim_order[kMaxDims];
  TensorImpl::StridesType strides[kMaxDims];
  std::optional<TensorImpl> impl;
};

void* address_of(nb::handle integer) {
  void* address = PyLong_AsVoidPtr(integer.ptr());
  if (address == nullptr && PyErr_Occurred()) throw nb::python_error();
  return address;
}

// Attribute and method names, made once (interned: their hashes are kept).
struct Names {
  PyObject* dtype = PyUnicode_InternFromString("dtype");
  PyObject* shape = PyUnicode_InternFromString("shape");
  PyObject* data_ptr = PyUnicode_InternFromString("data_ptr");
  PyObject* layout = PyUnicode_InternFromString("layout");
  PyObject* is_contiguous = PyUnicode_InternFromString("is_contiguous");
  PyObject* is_neg = PyUnicode_InternFromString("is_neg");
  PyObject* is_cpu = PyUnicode_InternFromString("is_cpu");
};
const Names& names() {
  static const Names* made = new Names;  // never freed: outlives every call, as the interpreter's strings do
  return *made;
}

nb::object attribute(nb::handle object, PyObject* name) {
  PyObject* value = PyObject_GetAttr(object.ptr(), name);
  if (value == nullptr) throw nb::python_error();
  return nb::steal(value);
}

// tensor.name(), without making the bound method.
nb::object call_method(nb::handle tensor, PyObject* name) {
  PyObject* self = tensor.ptr();
  PyObject* result = PyObject_VectorcallMethod(name, &self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

void* data_address(nb::handle tensor) { return address_of(call_method(tensor, names().data_ptr)); }

}  // namespace

PythonMethod::PythonMethod(nb::object program, const std::string& method_name, nb::tuple torch_api, nb::object log_sink)
    : program_(program), log_sink_(log_sink), method_name_(method_name) {
  if (nb::len(torch_api) != 5)
    throw nb::value_error(
        "torch_api is (torch.Tensor, torch.empty_like, torch.empty_strided, {dtype: code}, torch.strided)");
  tensor_type_ = torch_api[0];
  empty_like_ = torch_api[1];
  empty_strided_ = torch_api[2];
  code_of_dtype_ = nb::borrow<nb::dict>(torch_api[3]);
  strided_ = torch_api[4];
  dtype_of_code_.assign(kScalarTypeCodes, nb::none());
  for (auto [dtype, code] : code_of_dtype_) {
    int c = nb::cast<int>(code);
    if (c >= 0 && c < kScalarTypeCodes) dtype_of_code_[c] = nb::borrow(dtype);
  }

  const bool from_memory = nb::isinstance<nb::bytes>(program);
  const char* data = nullptr;
  size_t size = 0;
  std::string path;
  if (from_memory) {
    nb::bytes bytes = nb::borrow<nb::bytes>(program);
    data = bytes.c_str();
    size = bytes.size();
  } else {
    path = nb::cast<std::string>(program);
  }
  install_log_capture();
  held_log_lines().clear();
  std::string failure;
  {
    nb::gil_scoped_release release;  // an OpenVINO compile takes seconds: other threads run meanwhile
    ThreadLogCapture capture;
    clear_thread_last_error();
    std::unique_ptr<et::DataLoader> loader;
    if (from_memory) {
      loader = std::make_unique<executorch::extension::BufferDataLoader>(data, size);
    } else {
      using executorch::extension::MmapDataLoader;
      auto mapped = MmapDataLoader::from(path.c_str(), MmapDataLoader::MlockConfig::NoMlock);
      if (mapped.ok())
        loader = std::make_unique<MmapDataLoader>(std::move(mapped.get()));
      else
        failure = "Failed to create MmapDataLoader from file " + path + ", error: " + hex(mapped.error());
    }
    if (loader) {
      module_ = std::make_unique<executorch::extension::module::Module>(std::move(loader));
      et::Error e = module_->load(et::Program::Verification::InternalConsistency);
      if (e != et::Error::Ok) failure = "Failed to load program, error: " + hex(e);
    }
    if (failure.empty()) {
      et::Error e = module_->load_method(method_name_);
      if (e != et::Error::Ok)
        failure = with_delegate_message("Failed to load method " + method_name_ + ", error: " + hex(e));
    }
    if (failure.empty()) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      auto method = module_->method(method_name_);  // Module keeps it; its set_inputs and execute are apart here
#pragma GCC diagnostic pop
      if (method.ok()) {
        method_ = method.get();
        output_templates_.resize(method_->outputs_size());
        const et::MethodMeta meta = method_->method_meta();
        for (size_t i = 0; i < meta.num_inputs(); ++i) {
          auto tag = meta.input_tag(i);
          input_tags_.push_back(tag.ok() ? tag.get() : et::Tag::None);
        }
        failure = give_unplanned_outputs_buffers();
      } else
        failure = "Failed to load method " + method_name_ + ", error: " + hex(method.error());
    }
  }
  if (!failure.empty()) throw std::runtime_error(failure);  // the held lines stay for take_held_log_lines()
  if (!held_log_lines().empty()) log_sink_(take_held_log_lines());
}

// Outputs left out of memory planning (programs with dynamic shapes) get a buffer each at their
// upper-bound size, left uninitialised so that only the pages a call writes become resident.
std::string PythonMethod::give_unplanned_outputs_buffers() {
  const et::MethodMeta meta = method_->method_meta();
  output_buffers_.resize(meta.num_outputs());
  for (size_t i = 0; i < meta.num_outputs(); ++i) {
    auto tag = meta.output_tag(i);
    if (!tag.ok() || tag.get() != et::Tag::Tensor) continue;
    auto info = meta.output_tensor_meta(i);
    if (!info.ok() || info->is_memory_planned()) continue;
    output_buffers_[i].reset(new (std::nothrow) uint8_t[std::max<size_t>(info->nbytes(), 1)]);
    if (!output_buffers_[i])
      return "output " + std::to_string(i) + " needs " + std::to_string(info->nbytes()) +
             " bytes at its upper bound, more than this machine can allocate: lower the model with a smaller "
             "maximum for its dynamic dimensions";
    et::Error e = method_->set_output_data_ptr(output_buffers_[i].get(), info->nbytes(), i);
    if (e != et::Error::Ok)
      return "could not give output " + std::to_string(i) + " of method '" + method_name_ +
             "' its buffer, error: " + hex(e);
  }
  return "";
}

nb::object PythonMethod::execute(nb::handle inputs) {
  if (!PyList_CheckExact(inputs.ptr())) return nb::none();
  bool idle = false;
  if (!running_.compare_exchange_strong(idle, true))
    throw std::runtime_error("this loaded copy of method '" + method_name_ +
                             "' is running on another thread; call it through exov.load_method's OpenVINOMethod, "
                             "which gives each thread its own copy");
  struct Idle {
    std::atomic<bool>& running;
    ~Idle() { running.store(false); }
  } idle_again{running_};

  const Py_ssize_t count = PyList_Size(inputs.ptr());
  std::vector<nb::object> kept;  // the list may change while the interpreter is let go: its items stay alive
  kept.reserve(count);
  std::vector<InputTensor> tensors(count);
  std::vector<et::EValue> values(count);
  for (Py_ssize_t i = 0; i < count; ++i) {
    nb::handle item(PyList_GetItem(inputs.ptr(), i));
    kept.push_back(nb::borrow(item));
    if (Py_TYPE(item.ptr()) == reinterpret_cast<PyTypeObject*>(tensor_type_.ptr())) {
      // Memory this method reads as it is: strided, contiguous, not a negated view; else None (converted).
      if (!attribute(item, names().layout).is(strided_) ||
          !PyObject_IsTrue(call_method(item, names().is_contiguous).ptr()) ||
          PyObject_IsTrue(call_method(item, names().is_neg).ptr()))
        return nb::none();
      if (!PyObject_IsTrue(attribute(item, names().is_cpu).ptr()))
        throw nb::type_error(("input " + std::to_string(i) + " is not in CPU memory: pass x.cpu()").c_str());
      nb::object dtype = attribute(item, names().dtype);
      PyObject* code = PyDict_GetItem(code_of_dtype_.ptr(), dtype.ptr());  // borrowed
      if (code == nullptr)
        throw nb::type_error(("input " + std::to_string(i) + " has dtype " + nb::cast<std::string>(nb::str(dtype)) +
                              ", which ExecuTorch has no type for")
                                 .c_str());
      nb::object shape = attribute(item, names().shape);
      const Py_ssize_t dim = PyTuple_Size(shape.ptr());
      if (dim < 0) throw nb::python_error();
      if (dim > kMaxDims)
        throw nb::value_error(("input " + std::to_string(i) + " has " + std::to_string(dim) + " dimensions; at most " +
                               std::to_string(kMaxDims) + " are taken")
                                  .c_str());
      InputTensor& t = tensors[i];
      long long elements = 1;
      for (Py_ssize_t d = dim - 1; d >= 0; --d) {
        long long s = PyLong_AsLongLong(PyTuple_GetItem(shape.ptr(), d));
        if (s == -1 && PyErr_Occurred()) throw nb::python_error();
        if (s > INT32_MAX || elements > INT32_MAX)
          throw nb::value_error(
              ("input " + std::to_string(i) + " is larger than ExecuTorch's 32-bit sizes hold").c_str());
        t.sizes[d] = static_cast<TensorImpl::SizesType>(s);
        t.strides[d] = static_cast<TensorImpl::StridesType>(elements);
        t.dim_order[d] = static_cast<TensorImpl::DimOrderType>(d);
        elements *= s > 0 ? s : 1;
      }
      void* data = data_address(item);
      t.impl.emplace(static_cast<ScalarType>(PyLong_AsLong(code)), dim, t.sizes, data, t.dim_order, t.strides);
      values[i] = et::EValue(executorch::aten::Tensor(&*t.impl));
    } else if (PyObject_TypeCheck(item.ptr(), reinterpret_cast<PyTypeObject*>(tensor_type_.ptr()))) {
      return nb::none();  // a subclass (a Parameter): made a plain tensor first
    } else if (PyBool_Check(item.ptr())) {
      values[i] = et::EValue(item.ptr() == Py_True);
    } else if (PyLong_Check(item.ptr())) {
      long long v = PyLong_AsLongLong(item.ptr());
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        throw nb::value_error(
            ("input " + std::to_string(i) + " is an int outside int64, which ExecuTorch's ints are").c_str());
      }
      values[i] = et::EValue(static_cast<int64_t>(v));
    } else if (PyFloat_Check(item.ptr())) {
      values[i] = et::EValue(PyFloat_AsDouble(item.ptr()));
    } else if (item.is_none()) {
      // ExecuTorch 1.5.1 aborts the process for None where the method takes a number ("EValue is not a
      // Scalar", found by a tester): refused here as ExecuTorch refuses other values of the wrong type.
      if (static_cast<size_t>(i) < input_tags_.size() && input_tags_[i] != et::Tag::None &&
          input_tags_[i] != et::Tag::Tensor)
        throw std::runtime_error("method->set_inputs() for method '" + method_name_ + "' failed with error " +
                                 hex(et::Error::InvalidArgument) + ": input " + std::to_string(i) +
                                 " is None, the method takes a number there");
      values[i] = et::EValue();
    } else {
      return nb::none();  // not a value a method takes: runtime/method_inputs.py says which and what to pass
    }
  }

  held_log_lines().clear();
  et::Error set = et::Error::Ok, run = et::Error::Ok;
  {
    nb::gil_scoped_release release;
    ThreadLogCapture capture;
    OutputsCopiedWithoutOpenMP copied_here;  // below, with memcpy: no warning about torch's OpenMP threads
    clear_thread_last_error();
    set = method_->set_inputs(executorch::aten::ArrayRef<et::EValue>(values.data(), values.size()));
    if (set == et::Error::Ok) run = method_->execute();
  }
  if (set != et::Error::Ok)
    throw std::runtime_error("method->set_inputs() for method '" + method_name_ + "' failed with error " + hex(set));
  if (run != et::Error::Ok)
    throw std::runtime_error(with_delegate_message("method->execute() failed with error " + hex(run)));

  const size_t outputs = method_->outputs_size();
  nb::list result;
  for (size_t i = 0; i < outputs; ++i) {
    const et::EValue& value = method_->get_output(i);
    if (value.isTensor()) {
      const executorch::aten::Tensor& t = value.toTensor();
      const int code = static_cast<int>(t.scalar_type());
      if (code < 0 || code >= kScalarTypeCodes || dtype_of_code_[code].is_none())
        throw std::runtime_error("output " + std::to_string(i) + " has ExecuTorch scalar type " + std::to_string(code) +
                                 ", which has no torch dtype here");
      // A tensor of the output's shape this object keeps for itself (never one it returned: a caller may
      // change that one's shape in place), for outputs small enough that holding one costs little.
      OutputTemplate& kept = output_templates_[i];
      const size_t bytes = t.nbytes();
      const bool same_shape = !kept.tensor.is_none() && kept.code == code &&
                              kept.sizes.size() == static_cast<size_t>(t.dim()) &&
                              std::equal(kept.sizes.begin(), kept.sizes.end(), t.sizes().begin());
      nb::object out;
      if (same_shape) {
        out = empty_like_(kept.tensor);  // 0.7 us against 1.4 for torch.empty_strided(..., dtype=, device=)
      } else {
        nb::tuple sizes = nb::steal<nb::tuple>(PyTuple_New(t.dim()));
        nb::tuple strides = nb::steal<nb::tuple>(PyTuple_New(t.dim()));
        for (ssize_t d = 0; d < t.dim(); ++d) {
          PyTuple_SetItem(sizes.ptr(), d, PyLong_FromLong(t.sizes()[d]));
          PyTuple_SetItem(strides.ptr(), d, PyLong_FromLong(t.strides()[d]));  // channels-last outputs too
        }
        // device: a `with torch.device(...)` block around the call must not move the result.
        auto make = [&] {
          return empty_strided_(sizes, strides, nb::arg("dtype") = dtype_of_code_[code], nb::arg("device") = "cpu");
        };
        out = make();
        if (bytes <= kTemplateBytes) {
          kept.tensor = make();
          kept.code = code;
          kept.sizes.assign(t.sizes().begin(), t.sizes().end());
        } else {
          kept.tensor = nb::none();
        }
      }
      void* destination = data_address(out);
      if (bytes > 0 && (destination == nullptr || !PyObject_IsTrue(attribute(out, names().is_cpu).ptr())))
        throw std::runtime_error("output " + std::to_string(i) +
                                 " was made outside CPU memory by torch (a mode such as FakeTensorMode is active?): "
                                 "call the method outside it");
      if (bytes > 0) std::memcpy(destination, t.const_data_ptr(), bytes);
      result.append(out);
    } else if (value.isInt()) {
      result.append(nb::int_(value.toInt()));
    } else if (value.isDouble()) {
      result.append(nb::float_(value.toDouble()));
    } else if (value.isBool()) {
      result.append(nb::bool_(value.toBool()));
    } else if (value.isNone()) {
      result.append(nb::none());
    } else {
      throw std::runtime_error("output " + std::to_string(i) + " has ExecuTorch tag " +
                               std::to_string(static_cast<int>(value.tag)) + ", which this package does not convert");
    }
  }
  if (!held_log_lines().empty()) log_sink_(take_held_log_lines());
  return result;
}

std::string take_held_log_lines() {
  std::string text;
  text.swap(held_log_lines());
  return text;
}

void bind_python_method(nb::module_& m) {
  nb::class_<PythonMethod>(m, "Method",
                           "A loaded ExecuTorch method called without executorch's pybindings (python_method.h).")
      .def(nb::init<nb::object, const std::string&, nb::tuple, nb::object>(), nb::arg("program"),
           nb::arg("method_name"), nb::arg("torch_api"), nb::arg("log_sink"))
      .def("execute", &PythonMethod::execute, nb::arg("inputs"))
      .def_prop_ro("method_name", &PythonMethod::method_name);
  m.def("take_held_log_lines", &take_held_log_lines,
        "ExecuTorch's lines held on this thread by a Method load or call that failed ('' if none), then cleared.");
}

}  // namespace executorch_openvino
