// A Windows program that loads the real openvino_c.dll through the delegate's
// own loader (native/delegate/openvino_library.cpp, library_search.cpp,
// dynamic_library.cpp, file_system.cpp) and runs a tiny model through the C
// API. Cross-compiled with mingw-w64 and run under wine by `nox -s
// windows_loader` (tests/windows/loader_checks.py says what each case expects).
//
//   loader_check.exe [--pip-dir DIR]   search as the delegate does (OPENVINO_LIB_PATH,
//                                      DIR as the pip package's libs, INTEL_OPENVINO_DIR, ...),
//                                      load, then compute x * y + x on CPU in f32
//   loader_check.exe --open PATH       only open_library(PATH) (the raw loader)
//   loader_check.exe --via-dll DLL LIBS [--pip-dir DIR]
//                                      load DLL (loader_dll.cpp, from a repaired wheel) with the
//                                      delegate's loader, its vendored dependencies in LIBS,
//                                      and call its exov_load_openvino(DIR)
//   loader_check.exe --plain-load NAME LoadLibraryExW(NAME) with Windows' standard search
//                                      (PATH and the current folder included): the control
//                                      that shows what the delegate's loader refuses to find
//
// Prints "loaded: <path>", "source: <place>", "version: <build>", "not used: ..."
// and "result: ok"; exit status 0 when all worked, 1 when the library did not
// load (the delegate's message is printed), 2 when the model gave a wrong result.
// windows.h first: openvino.h defines BOOLEAN as a macro, which would rename windows.h's typedef.
#include <windows.h>

#include "dynamic_library.h"
#include "openvino_library.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using executorch_openvino::OpenVINOLibrary;

namespace {

// out = x * y + x over two f32[2,3] parameters (OpenVINO IR, opset1).
const char* kModel = R"(<?xml version="1.0"?>
<net name="multiply_add" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="2,3" element_type="f32"/>
      <output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
    </layer>
    <layer id="1" name="y" type="Parameter" version="opset1">
      <data shape="2,3" element_type="f32"/>
      <output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
    </layer>
    <layer id="2" name="product" type="Multiply" version="opset1">
      <data auto_broadcast="numpy"/>
      <input><port id="0"><dim>2</dim><dim>3</dim></port><port id="1"><dim>2</dim><dim>3</dim></port></input>
      <output><port id="2" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
    </layer>
    <layer id="3" name="sum" type="Add" version="opset1">
      <data auto_broadcast="numpy"/>
      <input><port id="0"><dim>2</dim><dim>3</dim></port><port id="1"><dim>2</dim><dim>3</dim></port></input>
      <output><port id="2" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
    </layer>
    <layer id="4" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
    <edge from-layer="0" from-port="0" to-layer="3" to-port="1"/>
    <edge from-layer="3" from-port="2" to-layer="4" to-port="0"/>
  </edges>
</net>
)";

int fail(const char* what, const OpenVINOLibrary& library) {
  std::printf("error: %s failed: %s\n", what, library.last_openvino_message().c_str());
  return 2;
}

// Runs kModel on CPU with an f32 precision hint; 0 when the result is exact.
int run_model(OpenVINOLibrary& library) {
  const auto& api = library.api();
  ov_model_t* model = nullptr;
  if (api.ov_core_read_model_from_memory_buffer(library.core(), kModel, std::strlen(kModel), nullptr, &model) != OK)
    return fail("ov_core_read_model_from_memory_buffer", library);
  ov_compiled_model_t* compiled = nullptr;
  ov_status_e status =
      api.ov_core_compile_model(library.core(), model, "CPU", 2, &compiled, "INFERENCE_PRECISION_HINT", "f32");
  api.ov_model_free(model);
  if (status != OK) return fail("ov_core_compile_model", library);
  ov_infer_request_t* request = nullptr;
  if (api.ov_compiled_model_create_infer_request(compiled, &request) != OK)
    return fail("ov_compiled_model_create_infer_request", library);

  // Values that f32 holds exactly and bf16 would round (1.00390625 = 1 + 2^-8).
  float x[6] = {1.00390625f, -2.5f, 3.0f, 0.125f, -7.0f, 1e-3f};
  float y[6] = {3.0f, 0.5f, -1.00390625f, 8.0f, 0.0f, 1000.0f};
  int64_t dims[2] = {2, 3};
  ov_shape_t shape{2, dims};
  ov_tensor_t* tx = nullptr;
  ov_tensor_t* ty = nullptr;
  if (api.ov_tensor_create_from_host_ptr(F32, shape, x, &tx) != OK ||
      api.ov_tensor_create_from_host_ptr(F32, shape, y, &ty) != OK ||
      api.ov_infer_request_set_input_tensor_by_index(request, 0, tx) != OK ||
      api.ov_infer_request_set_input_tensor_by_index(request, 1, ty) != OK)
    return fail("setting the inputs", library);
  if (api.ov_infer_request_infer(request) != OK) return fail("ov_infer_request_infer", library);
  ov_tensor_t* tout = nullptr;
  void* data = nullptr;
  if (api.ov_infer_request_get_output_tensor_by_index(request, 0, &tout) != OK || api.ov_tensor_data(tout, &data) != OK)
    return fail("reading the output", library);
  const float* out = static_cast<const float*>(data);
  int wrong = 0;
  for (int i = 0; i < 6; ++i) {
    volatile float expected = x[i] * y[i];  // rounded to f32 before the add, as OpenVINO does
    expected = expected + x[i];
    std::printf("out[%d] = %.9g (expected %.9g)\n", i, out[i], static_cast<float>(expected));
    if (std::memcmp(&out[i], const_cast<float*>(&expected), sizeof(float)) != 0) ++wrong;
  }
  api.ov_tensor_free(tout);
  api.ov_tensor_free(tx);
  api.ov_tensor_free(ty);
  api.ov_infer_request_free(request);
  api.ov_compiled_model_free(compiled);
  std::printf("result: %s\n", wrong ? "wrong" : "ok");
  return wrong ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string pip_dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--open") == 0 && i + 1 < argc) {
      std::string error;
      void* h = executorch_openvino::open_library(argv[i + 1], {}, &error);
      if (!h) {
        std::printf("error: %s\n", error.c_str());
        return 1;
      }
      std::printf("opened: %s\n", argv[i + 1]);
      return 0;
    }
    if (std::strcmp(argv[i], "--via-dll") == 0 && i + 2 < argc) {
      std::string error;
      void* dll = executorch_openvino::open_library(argv[i + 1], {argv[i + 2]}, &error);
      if (!dll) {
        std::printf("error: %s\n", error.c_str());
        return 1;
      }
      using LoadFunction = int (*)(const char*, char*, size_t);
      auto load = reinterpret_cast<LoadFunction>(executorch_openvino::find_symbol(dll, "exov_load_openvino"));
      if (!load) {
        std::printf("error: %s has no exov_load_openvino\n", argv[i + 1]);
        return 1;
      }
      bool has_pip_dir = i + 4 < argc && std::strcmp(argv[i + 3], "--pip-dir") == 0;
      char report[8192];
      int status = load(has_pip_dir ? argv[i + 4] : "", report, sizeof report);
      std::printf("%s", report);
      return status;
    }
    if (std::strcmp(argv[i], "--plain-load") == 0 && i + 1 < argc) {
      std::wstring name(argv[i + 1], argv[i + 1] + std::strlen(argv[i + 1]));  // ASCII names only
      // For a full path, LOAD_WITH_ALTERED_SEARCH_PATH: the DLL's folder replaces the program's
      // folder in the search for its dependencies, as programs without the safe flags load them.
      bool full_path = name.find_first_of(L"\\:") != std::wstring::npos;
      HMODULE h = LoadLibraryExW(name.c_str(), nullptr, full_path ? LOAD_WITH_ALTERED_SEARCH_PATH : 0);
      std::printf(h ? "opened: %s\n" : "error: LoadLibraryExW(%s) failed\n", argv[i + 1]);
      return h ? 0 : 1;
    }
    if (std::strcmp(argv[i], "--pip-dir") == 0 && i + 1 < argc) {
      pip_dir = argv[++i];
    } else {
      std::printf(
          "usage: loader_check.exe [--pip-dir DIR] | --open PATH | --plain-load NAME |\n"
          "       --via-dll DLL LIBS [--pip-dir DIR]\n");
      return 64;
    }
  }
  OpenVINOLibrary& library = OpenVINOLibrary::instance();
  library.set_pip_library_dir(pip_dir);
  std::string error;
  if (!library.ensure_loaded(&error)) {
    std::printf("error: %s\n", error.c_str());
    return 1;
  }
  executorch_openvino::LoadedLibraryInfo info = library.info();
  std::printf("loaded: %s\nsource: %s\nversion: %s\n", info.path.c_str(), info.source.c_str(), info.version.c_str());
  for (const std::string& other : info.not_used) std::printf("not used: %s\n", other.c_str());
  std::fflush(stdout);
  return run_model(library);
}
