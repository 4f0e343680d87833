// What both fuzz targets do in their even mode: recompute a blob's checksum as
// a writer would, so mutations reach everything after the checksum check.
#pragma once

#include "processed_blob.h"

#include <zlib.h>

#include <cstdint>
#include <vector>

inline void reseal(std::vector<uint8_t>& blob) {
  const size_t at = executorch_openvino::kChecksumOffset;
  if (blob.size() < executorch_openvino::kHeaderSize) return;
  uLong crc = crc32_z(0L, blob.data(), at);
  crc = crc32_z(crc, blob.data() + at + 4, blob.size() - at - 4);
  for (int i = 0; i < 4; ++i) blob[at + i] = static_cast<uint8_t>(crc >> (8 * i));
}
