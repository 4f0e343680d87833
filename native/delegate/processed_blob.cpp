#include "processed_blob.h"

#include <algorithm>

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <utility>

namespace executorch_openvino {
namespace {

uint32_t read_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

uint64_t read_u64(const uint8_t* p) { return uint64_t(read_u32(p)) | uint64_t(read_u32(p + 4)) << 32; }

// True when [offset, offset + length) lies inside a blob of `size` bytes and
// after the header; written to avoid overflow for any 64-bit input.
bool section_fits(uint64_t offset, uint64_t length, size_t size) {
  return offset >= kHeaderSize && offset <= size && length <= size - offset;
}

}  // namespace

bool parse_blob_layout(const void* data, size_t size, ParsedBlob* out, std::string* error) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  const std::string relower = " Lower the model again with this version of executorch-openvino.";
  if (bytes == nullptr || size == 0) {
    *error =
        "the processed blob is empty; the .pte is damaged or was not made by "
        "executorch-openvino." +
        relower;
    return false;
  }
  if (size < sizeof(kBlobMagic) || std::memcmp(bytes, kBlobMagic, sizeof(kBlobMagic)) != 0) {
    *error = "the processed blob does not start with the magic '" + std::string(kBlobMagic, sizeof(kBlobMagic)) +
             "' (" + std::to_string(size) + " bytes): it was not made by executorch-openvino's preprocess." + relower;
    return false;
  }
  if (size < kHeaderSize) {
    *error = "the processed blob is truncated: " + std::to_string(size) + " bytes, shorter than its " +
             std::to_string(kHeaderSize) + "-byte header." + relower;
    return false;
  }
  uint32_t version = read_u32(bytes + kFormatVersionOffset);
  if (version != kFormatVersion) {
    *error =
        "the processed blob has format version " + std::to_string(version) + ", this delegate reads version " +
        std::to_string(kFormatVersion) + ". " +
        (version > kFormatVersion ? "Upgrade executorch-openvino to run it, or lower the model again with this version."
                                  : "Lower the model again with this version of executorch-openvino.");
    return false;
  }
  uint32_t kind = read_u32(bytes + kPayloadKindOffset);
  if (kind != kPayloadOpenVINOIr) {
    *error = "the processed blob's payload kind is " + std::to_string(kind) + ", this delegate knows only kind " +
             std::to_string(kPayloadOpenVINOIr) + " (OpenVINO IR)." + relower;
    return false;
  }
  uint64_t xml_offset = read_u64(bytes + kXmlOffsetOffset), xml_size = read_u64(bytes + kXmlSizeOffset);
  uint64_t bin_offset = read_u64(bytes + kWeightsOffsetOffset), bin_size = read_u64(bytes + kWeightsSizeOffset);
  if (xml_size == 0 || !section_fits(xml_offset, xml_size, size)) {
    *error = "the processed blob's model XML section (offset " + std::to_string(xml_offset) + ", " +
             std::to_string(xml_size) + " bytes) does not fit in the " + std::to_string(size) +
             "-byte blob: the blob is truncated or corrupt." + relower;
    return false;
  }
  if (!section_fits(bin_offset, bin_size, size)) {
    *error = "the processed blob's weights section (offset " + std::to_string(bin_offset) + ", " +
             std::to_string(bin_size) + " bytes) does not fit in the " + std::to_string(size) +
             "-byte blob: the blob is truncated or corrupt." + relower;
    return false;
  }
  // The bytes around the weights: the XML (a few hundred KiB), the header and padding.
  const size_t weights_end = static_cast<size_t>(bin_offset + bin_size);
  out->head_crc =
      static_cast<uint32_t>(crc32_z(crc32_z(0L, bytes, kChecksumOffset), bytes + kChecksumOffset + kChecksumSize,
                                    static_cast<size_t>(bin_offset) - kChecksumOffset - kChecksumSize));
  out->tail_crc = static_cast<uint32_t>(crc32_z(0L, bytes + weights_end, size - weights_end));
  out->tail_size = size - weights_end;
  out->xml = reinterpret_cast<const char*>(bytes + xml_offset);
  out->xml_size = static_cast<size_t>(xml_size);
  out->weights = bytes + bin_offset;
  out->weights_size = static_cast<size_t>(bin_size);
  out->checksum = read_u32(bytes + kChecksumOffset);
  static const char hex[] = "0123456789abcdef";
  out->digest.clear();
  for (size_t i = 0; i < kDigestSize; ++i) {
    out->digest += hex[bytes[kDigestOffset + i] >> 4];
    out->digest += hex[bytes[kDigestOffset + i] & 15];
  }
  return true;
}

WeightsPart weights_in_memory(const void* weights) {
  return [bytes = static_cast<const uint8_t*>(weights)](size_t at, size_t) { return bytes + at; };
}

bool weights_crc32(const WeightsPart& weights, size_t size, uint32_t* crc, size_t* failed_at) {
  uLong sum = crc32_z(0L, nullptr, 0);
  for (size_t at = 0; at < size; at += kWeightsPartSize) {
    const size_t n = std::min(kWeightsPartSize, size - at);
    const uint8_t* part = weights(at, n);
    if (part == nullptr) {
      *crc = 0;
      *failed_at = at;
      return false;
    }
    sum = crc32_z(sum, part, n);
  }
  *crc = static_cast<uint32_t>(sum);
  return true;
}

bool weights_match_checksum(const ParsedBlob& blob, const WeightsPart& weights, uint32_t* weights_crc,
                            std::string* error) {
  size_t failed_at = 0;
  if (!weights_crc32(weights, blob.weights_size, weights_crc, &failed_at)) {
    *error = "the processed blob's weights could not be read from its file at byte " + std::to_string(failed_at) +
             " of " + std::to_string(blob.weights_size) +
             ": the program file was truncated or removed while it was loaded. Load the program again.";
    return false;
  }
  const uLong crc = *weights_crc;
  uLong computed = crc32_combine(crc32_combine(blob.head_crc, crc, static_cast<z_off_t>(blob.weights_size)),
                                 blob.tail_crc, static_cast<z_off_t>(blob.tail_size));
  if (blob.checksum == static_cast<uint32_t>(computed)) return true;
  char detail[64];
  std::snprintf(detail, sizeof detail, "stored 0x%08x, computed 0x%08x", unsigned(blob.checksum), unsigned(computed));
  *error = std::string("the processed blob's checksum does not match (") + detail +
           "): its bytes changed after lowering (a damaged copy, download or disk, or a program file written "
           "in place while it was loading). Load it again once it is whole; if it still fails, lower the model "
           "again with this version of executorch-openvino.";
  return false;
}

bool parse_processed_blob(const void* data, size_t size, ParsedBlob* out, std::string* error) {
  // The fields first, so that a damaged one is named; then every byte once.
  return parse_blob_layout(data, size, out, error) &&
         weights_match_checksum(*out, weights_in_memory(out->weights), &out->weights_crc, error);
}

ChecksumInBackground::ChecksumInBackground(const ParsedBlob& blob, WeightsPart weights)
    : task_([this, blob, weights = std::move(weights)] {
        passed_ = weights_match_checksum(blob, weights, &weights_crc_, &error_);
      }) {}

bool ChecksumInBackground::passed(std::string* error) {
  task_.wait();
  if (!passed_) *error = error_;
  return passed_;
}

std::string lowered_with_openvino(const char* xml, size_t xml_size) {
  // Ours first; then what OpenVINO itself records, for programs lowered before
  // ours was written (2026.4.1: "OpenVINO Runtime", 2025.4.1's converter: Runtime_version).
  const std::string markers[] = {std::string("<") + kLoweredWithKey + " value=\"",
                                 "<info name=\"OpenVINO Runtime\" value=\"", "<Runtime_version value=\""};
  const char* end = xml + xml_size;
  for (const std::string& marker : markers) {
    const char* found = std::search(xml, end, marker.begin(), marker.end());
    if (found == end) continue;
    // A version is short printable ASCII ("2026.4.1-22982-e213a147257-releases/2026/4").
    std::string version;
    const char* c = found + marker.size();
    for (; c < end && *c != '"' && version.size() <= 100; ++c) {
      if (*c < 0x20 || *c > 0x7e) break;
      version += *c;
    }
    if (c < end && *c == '"' && !version.empty() && version.size() <= 100) return version;
  }
  return "";
}

}  // namespace executorch_openvino
