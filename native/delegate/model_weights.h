// The bytes OpenVINO reads a partition's constants from, held for as long as
// its compiled model lives: OpenVINO's CPU plugin keeps pointers into them
// after compiling (docs/design.md, "Weights held once").
//
// Where the processed blob lies in a file mapping (a .pte loaded from its path
// with ExecuTorch's mmap data loader), the delegate maps the same file range
// itself, read-only, and hands OpenVINO those pages: no copy, and nothing tied
// to ExecuTorch's loader, which may be gone before the last handle sharing the
// model. Once compiled, the pages are dropped from the process's resident
// memory (the file is still there to read them back from, page by page, as
// OpenVINO touches them). Elsewhere (a program loaded from memory, Windows)
// the weights are copied into a 64-byte aligned buffer, as before.
//
// A mapped file that is written in place (not replaced by a rename) changes
// the weights under the compiled model: each call checks first
// (file_unchanged), so such a call fails with a message instead of computing
// with other weights.
#pragma once

#include "delegate_api.h"
#include "internal_symbols.h"
#include "processed_blob.h"
#include "watched_file.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// "device:inode" of the file mapped at `address`, "" when it is no file
// mapping (Linux only): programs share a compiled model only with programs
// mapped from the same file (shared_compiled_models.h). `*cut_short` is set,
// naming the file and the fix, when that file (still at its path) now ends
// before `address + size`: the missing pages would end the process with
// SIGBUS on their first read (a file written in place while it loads).
std::string mapped_file_key(const void* address, size_t size, std::string* cut_short);

class ModelWeights {
 public:
  enum class Source { kFileMapping, kCopy };

  // The weights of `blob`: its file's pages when it lies in a file mapping
  // whose weights start on a 64-byte boundary, else a copy (or, without
  // `copy`, nullptr). nullptr with `error` set when a copy cannot be allocated.
  static std::unique_ptr<ModelWeights> for_blob(const ParsedBlob& blob, std::string* error, bool copy = true);
  ~ModelWeights();
  ModelWeights(const ModelWeights&) = delete;
  ModelWeights& operator=(const ModelWeights&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  Source source() const { return source_; }
  // "file mapping" or "copy".
  const char* source_name() const;

  // The weights part by part (weights_match_checksum): read from the file
  // with pread when mapped, so that no page of the mapping is faulted in
  // (beside OpenVINO's own faults, and into resident memory), else from the
  // copy. Valid while this object lives; one reader per thread.
  WeightsPart parts() const;
  // Drops the mapped pages from resident memory (no-op for a copy): they are
  // read from the file again when next touched (resident_pages.h).
  void release_resident_pages();

  // False, with `error` naming the file and the fix, when the mapped file was
  // written since it was mapped and its weights are no longer the program's.
  // One statx call; only when the size or modification time changed are the
  // weights read again and compared with the blob's CRC-32 (a file written
  // again with the same bytes is fine). A file replaced by a rename is fine:
  // the mapping keeps the old one. Always true for a copy.
  bool file_unchanged(std::string* error);
  // The weights' CRC-32 that file_unchanged compares with (the blob's checksum's check computes it).
  void set_weights_crc(uint32_t crc) { weights_crc_ = crc; }

 private:
  ModelWeights() = default;
  Source source_ = Source::kCopy;
  void* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // the page-aligned start of the mapping, or the copy
  size_t mapping_size_ = 0;
  int fd_ = -1;            // the mapped file, kept open to tell whether it was written since
  std::string path_;       // its path when mapped (for messages)
  FileIdentity identity_;  // its size and change time when last found to hold the weights
  uint64_t file_end_ = 0;  // where the weights end in the file
  uint32_t weights_crc_ = 0;
  std::mutex check_mutex_;
};

EXOV_INTERNAL_END
}  // namespace executorch_openvino
