# The C++ sources of native/, by product, in the lists the builds share.
# CMakeLists.txt (the wheel) and tests/CMakeLists.txt (the fuzzers, the
# sanitizer control, the Windows checks) both include this file, so each
# source is named once. Each list holds absolute paths.
#
#   delegate/    the delegate library: ExecuTorch's BackendInterface around OpenVINO's C library
#   python/      the pybindings (_native), linked to the delegate library
#   runner/      the command-line runner, linked to the delegate library
#   glibc_2_28/  what every Linux product adds for manylinux_2_28 (cmake/Glibc.cmake)

set(EXOV_DELEGATE_DIR "${CMAKE_CURRENT_LIST_DIR}/delegate")  # its headers are the delegate's interface too
# processed_blob_layout.h and compile_spec_keys.h, generated from the one definition of what the lowering and
# the runtime share (cmake/ProcessedBlobLayout.cmake, cmake/CompileSpecKeys.cmake); a target that includes the
# delegate's headers takes EXOV_DELEGATE_INCLUDES, which holds both folders.
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/ProcessedBlobLayout.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/CompileSpecKeys.cmake")
set(EXOV_GENERATED_DIR "${CMAKE_BINARY_DIR}/exov_generated")
exov_generate_blob_layout("${CMAKE_CURRENT_LIST_DIR}/../python/executorch_openvino/contract/processed_blob_layout.json"
                          "${EXOV_GENERATED_DIR}")
exov_generate_compile_spec_keys("${CMAKE_CURRENT_LIST_DIR}/../python/executorch_openvino/contract/compile_specs.json"
                                "${EXOV_GENERATED_DIR}")
set(EXOV_DELEGATE_INCLUDES "${EXOV_DELEGATE_DIR}" "${EXOV_GENERATED_DIR}")
set(EXOV_RUNNER_DIR "${CMAKE_CURRENT_LIST_DIR}/runner")
# Opening OpenVINO's C library (found by library_search.h's rules); all that
# the Windows checks build, since the rest needs ExecuTorch's runtime.
set(EXOV_LOADER_SOURCES dynamic_library.cpp file_system.cpp library_search.cpp openvino_library.cpp)
# The processed blob's reader and writer (what the delegate's init parses), and the thread its checksum runs on.
set(EXOV_BLOB_SOURCES background_task.cpp processed_blob.cpp)
# The delegate library: ExecuTorch's BackendInterface around OpenVINO.
set(EXOV_BACKEND_SOURCES ${EXOV_LOADER_SOURCES} ${EXOV_BLOB_SOURCES}
    backend_options.cpp compile_report.cpp compile_specs.cpp concurrent_calls.cpp error_report.cpp
    model_cache.cpp model_compilation.cpp model_weights.cpp watched_file.cpp openvino_backend.cpp openvino_tensors.cpp
    partition_executor.cpp partition_ports.cpp program_backends.cpp resident_pages.cpp shared_compiled_models.cpp
    spinning_threads.cpp)
list(SORT EXOV_BACKEND_SOURCES)
foreach(list EXOV_LOADER_SOURCES EXOV_BLOB_SOURCES EXOV_BACKEND_SOURCES)
  list(TRANSFORM ${list} PREPEND "${EXOV_DELEGATE_DIR}/")
endforeach()
# The Python extension _native (linked to the delegate library).
set(EXOV_PYTHON_SOURCES executorch_log_capture.cpp python_method.cpp python_module.cpp)
list(TRANSFORM EXOV_PYTHON_SOURCES PREPEND "${CMAKE_CURRENT_LIST_DIR}/python/")
# The runner's .npy reader and writer.
set(EXOV_NPY_SOURCES "${EXOV_RUNNER_DIR}/npy_file.cpp")
# The command-line runner, besides the delegate library.
set(EXOV_RUNNER_SOURCES runner.cpp runner_options.cpp runner_values.cpp)
list(TRANSFORM EXOV_RUNNER_SOURCES PREPEND "${EXOV_RUNNER_DIR}/")
list(APPEND EXOV_RUNNER_SOURCES ${EXOV_NPY_SOURCES})
