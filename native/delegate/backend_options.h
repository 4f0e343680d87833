// The delegate's one backend option, kCacheDirOption (delegate_api.h): set for
// every later init through ExecuTorch's set_option, or for one load as a
// runtime spec; and the model cache folder it gives each compile.
#pragma once

#include "compile_specs.h"
#include "internal_symbols.h"

#include <executorch/runtime/backend/interface.h>

#include <string>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// BackendInterface::set_option and get_option. All options are checked
// before any is applied.
executorch::runtime::Error set_backend_options(
    const executorch::runtime::Span<executorch::runtime::BackendOption>& options);
executorch::runtime::Error get_backend_options(executorch::runtime::Span<executorch::runtime::BackendOption>& options);

// The folder for this load: its runtime spec, else the backend option. False
// (and `error`) for a runtime spec that is not a string.
bool cache_dir_for(const executorch::runtime::BackendInitContext& context, std::string* dir, std::string* error);

EXOV_INTERNAL_END
}  // namespace executorch_openvino
