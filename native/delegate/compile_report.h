// What an init compiled (CompileReport, delegate_api.h): read from the
// compiled model's properties, and the latest successful init's kept for
// last_compile_report().
#pragma once

#include "compile_specs.h"
#include "delegate_api.h"
#include "internal_symbols.h"
#include "openvino_library.h"

#include <string>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// The report of `compiled`, compiled with `options`; `cache_problem` as CompileReport has it.
CompileReport compile_report(const RuntimeOptions& options, ov_compiled_model_t* compiled,
                             const std::string& cache_problem);

// OpenVINO's LOADED_FROM_CACHE of `compiled`: imported from the model cache.
bool loaded_from_cache(ov_compiled_model_t* compiled);

// Keeps `report` as the latest successful init's.
void remember_compile_report(const CompileReport& report);

EXOV_INTERNAL_END
}  // namespace executorch_openvino
