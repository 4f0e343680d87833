// The processed blob that preprocess (python/executorch_openvino/contract/processed_blob.py)
// writes and the delegate reads at init. Its layout has one definition,
// python/executorch_openvino/contract/processed_blob_layout.json, from which the build
// writes processed_blob_layout.h (the fields' offsets and sizes, the magic, the
// format version). In short, an 88-byte little-endian header:
//   magic "EXOVBLOB", format version, payload kind (1 = OpenVINO IR: XML text +
//   weights binary), XML offset and size, weights offset and size, the CRC-32
//   (zlib's) of the whole blob without its own 4 bytes, 4 reserved bytes, and the
//   SHA-256 of the bytes from the XML offset to the end of the blob.
// The checksum makes a changed byte anywhere (header, XML, weights, padding)
// fail init instead of silently changing results. The SHA-256, computed by
// preprocess (Python's hashlib) and not recomputed here, is the blob's identity:
// inits of equal digests share one compiled model (shared_compiled_models.h)
// and the model cache names its entries by it (model_cache.h), without reading
// the weights again.
// OpenVINO IR is read by every OpenVINO release from 2025.4 on, which keeps a
// .pte portable across releases (a compiled-model export would not be).
#pragma once

#include "background_task.h"
#include "processed_blob_layout.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace executorch_openvino {

struct ParsedBlob {
  const char* xml = nullptr;
  size_t xml_size = 0;
  const uint8_t* weights = nullptr;
  size_t weights_size = 0;
  uint32_t checksum = 0;     // the header's CRC-32, checked against the bytes
  std::string digest;        // the header's SHA-256, 64 lowercase hex digits
  uint32_t weights_crc = 0;  // zlib's CRC-32 of the weights section alone (set by the checksum's check)
  std::string file_key;      // set by init: mapped_file_key of the weights (model_weights.h)
  // zlib's CRC-32 of the bytes before the weights (the checksum field left
  // out) and of the `tail_size` bytes after them: the checksum is these and
  // the weights' CRC combined.
  uint32_t head_crc = 0, tail_crc = 0;
  size_t tail_size = 0;
};

// Checks every field, then the checksum, before use. Returns false with
// `error` naming the field and what to do when the blob is truncated, foreign,
// changed since lowering, or from another version.
bool parse_processed_blob(const void* data, size_t size, ParsedBlob* out, std::string* error);

// parse_processed_blob without reading the weights: every field checked, the
// CRC-32 of the XML and the header computed (head_crc, tail_crc), the
// checksum left to weights_match_checksum.
bool parse_blob_layout(const void* data, size_t size, ParsedBlob* out, std::string* error);

// The weights' `n` bytes from `at` (n at most kWeightsPartSize): a pointer
// into memory, or into a buffer of the source's that it filled from a file;
// nullptr when they cannot be read (a file truncated since).
using WeightsPart = std::function<const uint8_t*(size_t at, size_t n)>;
constexpr size_t kWeightsPartSize = size_t(1) << 20;

// The parts of `weights` in memory (`blob.weights_size` bytes).
WeightsPart weights_in_memory(const void* weights);

// The CRC-32 of `size` bytes of weights read part by part into `*crc`; false,
// with `*failed_at` the offset of the part, when a part could not be read.
bool weights_crc32(const WeightsPart& weights, size_t size, uint32_t* crc, size_t* failed_at);

// Whether the weights (`blob.weights_size` bytes, the blob's or a mapping or
// copy of them, read part by part) complete the blob's checksum; sets
// `*weights_crc`, or `error` as parse_processed_blob would.
bool weights_match_checksum(const ParsedBlob& blob, const WeightsPart& weights, uint32_t* weights_crc,
                            std::string* error);

// The checksum's check over the weights on a thread of its own (background_task.h),
// started by the constructor, so that it costs no time beside OpenVINO's
// compile or import (MiniLM's 86 MiB: 25 ms read from the file, docs/design.md);
// `weights` must stay readable until passed() returned or the object is gone.
// Weights in a file mapping are best read from the file (ModelWeights::parts):
// reading the mapping would fault every page in beside OpenVINO's own faults
// and add them to the process's resident memory.
class ChecksumInBackground {
 public:
  ChecksumInBackground(const ParsedBlob& blob, WeightsPart weights);
  ChecksumInBackground(const ChecksumInBackground&) = delete;
  ChecksumInBackground& operator=(const ChecksumInBackground&) = delete;

  // Waits for the check; the same answer on every call. `error` as parse_processed_blob's.
  bool passed(std::string* error);
  // The weights' CRC-32, once passed() returned (whatever its answer).
  uint32_t weights_crc() const { return weights_crc_; }

 private:
  bool passed_ = false;
  uint32_t weights_crc_ = 0;
  std::string error_;
  BackgroundTask task_;  // last: joined first, before the fields it writes go
};

// The OpenVINO version that wrote the IR's XML (kLoweredWithKey, else what
// OpenVINO records itself), or "" when none is recorded or it is not a short
// printable value.
std::string lowered_with_openvino(const char* xml, size_t xml_size);

}  // namespace executorch_openvino
