#include "partition_ports.h"

#include "openvino_tensors.h"

namespace executorch_openvino {
namespace {

bool read_port(const OpenVINOApi& api, const ov_output_const_port_t* port, PortInfo* info, std::string* error) {
  if (api.ov_port_get_element_type(port, &info->type) != OK) {
    *error = ov_message("could not read a port's element type");
    return false;
  }
  ov_partial_shape_t partial{};
  if (api.ov_port_get_partial_shape(port, &partial) != OK) {
    *error = ov_message("could not read a port's shape");
    return false;
  }
  const bool rank_static = partial.rank.min == partial.rank.max && partial.rank.min >= 0;
  info->is_static = rank_static;
  info->rank_known = rank_static;
  info->shape.clear();
  info->ranges.clear();
  for (int64_t d = 0; rank_static && d < partial.rank.max; ++d) {
    const ov_dimension_t& dim = partial.dims[d];
    if (dim.min != dim.max || dim.min < 0) info->is_static = false;
    info->shape.push_back(dim.min);
    info->ranges.emplace_back(dim.min, dim.max);
  }
  if (info->is_static) {
    size_t n = 1;
    for (int64_t d : info->shape) n *= static_cast<size_t>(d);
    info->byte_size = n * element_size(info->type);
  } else {
    info->shape.clear();
  }
  api.ov_partial_shape_free(&partial);
  char* name = nullptr;
  if (api.ov_port_get_any_name(port, &name) == OK && name) {
    info->name = name;
    api.ov_free(name);
  }
  return true;
}

template <typename PortFn>
bool read_ports(const OpenVINOApi& api, ov_compiled_model_t* compiled, size_t count, PortFn get,
                std::vector<PortInfo>* out, std::string* error) {
  out->resize(count);
  for (size_t i = 0; i < count; ++i) {
    ov_output_const_port_t* port = nullptr;
    if (get(compiled, i, &port) != OK) {
      *error = ov_message("could not query port " + std::to_string(i));
      return false;
    }
    bool ok = read_port(api, port, &(*out)[i], error);
    api.ov_output_const_port_free(port);
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool read_model_ports(const OpenVINOApi& api, ov_compiled_model_t* compiled, std::vector<PortInfo>* inputs,
                      std::vector<PortInfo>* outputs, std::string* error) {
  size_t n_in = 0, n_out = 0;
  if (api.ov_compiled_model_inputs_size(compiled, &n_in) != OK ||
      api.ov_compiled_model_outputs_size(compiled, &n_out) != OK ||
      !read_ports(api, compiled, n_in, api.ov_compiled_model_input_by_index, inputs, error) ||
      !read_ports(api, compiled, n_out, api.ov_compiled_model_output_by_index, outputs, error)) {
    return false;
  }
  for (PortInfo& out : *outputs) {
    for (const PortInfo& in : *inputs) {
      if (!out.name.empty() && out.name == in.name) out.aliases_input = true;
    }
  }
  return true;
}

std::string port_shape_text(const PortInfo& port) {
  if (!port.rank_known) return "any shape";
  std::string s = "(";
  for (size_t i = 0; i < port.ranges.size(); ++i) {
    const auto& [min, max] = port.ranges[i];
    s += i ? ", " : "";
    s += min == max ? std::to_string(min)
                    : std::to_string(min) + ".." + (unbounded(max) ? std::string() : std::to_string(max));
  }
  return s + (port.ranges.size() == 1 ? ",)" : ")");
}

}  // namespace executorch_openvino
