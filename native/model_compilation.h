// Turns a processed blob into an OpenVINO compiled model: OpenVINO reads the
// IR, then compiles it for the device, through the model cache when a folder
// is set (backend_options.h).
#pragma once

#include "compile_specs.h"
#include "internal_symbols.h"
#include "processed_blob.h"
#include "shared_compiled_models.h"

#include <executorch/runtime/core/error.h>

#include <memory>
#include <string>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// Compiles `blob` with `options` into `*out` (`cache_dir` "" for no model
// cache). Reports the failure ("init: ...") and returns its error otherwise.
executorch::runtime::Error compile_blob(const RuntimeOptions& options, const ParsedBlob& blob,
                                        const std::string& cache_dir, std::shared_ptr<SharedCompiledModel>* out);

EXOV_INTERNAL_END
}  // namespace executorch_openvino
