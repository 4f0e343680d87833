// libFuzzer target for the processed-blob parser (native/delegate/processed_blob.cpp)
// and the recorded-OpenVINO-version reader init uses after it,
// built with AddressSanitizer and UndefinedBehaviorSanitizer by `nox -s fuzz`.
//
// The first input byte picks the mode. Odd: the rest is the blob as given, so
// the checksum fails almost always and the field checks before it are fuzzed.
// Even: the checksum of the rest is recomputed first, as a writer would, so the
// fuzzer also reaches everything after the checksum.
// A crash, a sanitizer report, a failure without a message, or a success whose
// sections lie outside the input is a finding.
#include "processed_blob.h"
#include "reseal.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using executorch_openvino::kHeaderSize;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool resealed = (data[0] & 1) == 0;
  std::vector<uint8_t> blob(data + 1, data + size);  // its own allocation: ASan sees every overread
  if (resealed) reseal(blob);
  executorch_openvino::ParsedBlob parsed;
  std::string error;
  const uint8_t* begin = blob.data();
  const uint8_t* end = begin + blob.size();
  if (executorch_openvino::parse_processed_blob(begin, blob.size(), &parsed, &error)) {
    const auto* xml = reinterpret_cast<const uint8_t*>(parsed.xml);
    if (xml < begin + kHeaderSize || parsed.xml_size == 0 || parsed.xml_size > size_t(end - xml)) __builtin_trap();
    if (parsed.weights < begin + kHeaderSize || parsed.weights_size > size_t(end - parsed.weights)) __builtin_trap();
    // Read every byte the parser handed out, so a section that runs past the input is an ASan report.
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < parsed.xml_size; ++i) sink ^= xml[i];
    for (size_t i = 0; i < parsed.weights_size; ++i) sink ^= parsed.weights[i];
    // What init reads from the XML itself when OpenVINO cannot read it.
    if (executorch_openvino::lowered_with_openvino(parsed.xml, parsed.xml_size).size() > 100) __builtin_trap();
  } else if (error.empty()) {
    __builtin_trap();
  }
  return 0;
}
