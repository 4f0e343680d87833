// Turns a processed blob into an OpenVINO compiled model: OpenVINO reads the
// IR, with its weights where the .pte lies (model_weights.h), then compiles it
// for the device; or, when a cache folder is set (backend_options.h), compiles
// the IR's file through OpenVINO's model cache (model_cache.h).
#pragma once

#include "compile_specs.h"
#include "internal_symbols.h"
#include "processed_blob.h"
#include "shared_compiled_models.h"

#include <executorch/runtime/core/error.h>

#include <functional>
#include <memory>
#include <string>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// Compiles `blob` with `options` into `*out` (`cache_dir` "" for no model
// cache). Reports the failure ("init: ...") and returns its error otherwise.
// Calls `release_blob` (once or more) as soon as the blob's bytes are no longer
// needed, so that ExecuTorch's copy is gone before the compile's own memory.
executorch::runtime::Error compile_blob(const RuntimeOptions& options, const ParsedBlob& blob,
                                        const std::string& cache_dir, const std::function<void()>& release_blob,
                                        std::shared_ptr<SharedCompiledModel>* out);

EXOV_INTERNAL_END
}  // namespace executorch_openvino
