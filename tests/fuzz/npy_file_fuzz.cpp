// libFuzzer target for the runner's .npy reader (native/runner/npy_file.cpp), built
// with AddressSanitizer and UndefinedBehaviorSanitizer by `nox -s fuzz`.
//
// Each input is written to a file and read back. A crash, a sanitizer report,
// a failure without a message, or a success whose data size does not match its
// shape and type is a finding. Successes are also written again and re-read,
// which must give the same array.
#include "npy_file.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string scratch_path(const char* tag) {
  return std::string("/tmp/npy_file_fuzz.") + std::to_string(getpid()) + tag;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = scratch_path(".in");
  if (std::FILE* file = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, file);
    std::fclose(file);
  } else {
    std::abort();
  }
  executorch_openvino::NpyArray array;
  std::string error;
  if (!executorch_openvino::read_npy(path, &array, &error)) {
    if (error.empty()) std::abort();  // every refusal says why
    return 0;
  }
  size_t count = 1;
  for (int64_t d : array.shape) count *= static_cast<size_t>(d);
  if (array.data.size() != count * static_cast<size_t>(array.descr[2] - '0')) std::abort();
  const std::string again = scratch_path(".out");
  executorch_openvino::NpyArray reread;
  if (!executorch_openvino::write_npy(again, array.descr, array.shape, array.data.data(), array.data.size(), &error) ||
      !executorch_openvino::read_npy(again, &reread, &error) || reread.descr != array.descr ||
      reread.shape != array.shape || reread.data != array.data) {
    std::abort();
  }
  return 0;
}
