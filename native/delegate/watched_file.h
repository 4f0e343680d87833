// A file that a compiled model keeps reading after its load, watched so that a
// call never computes with bytes written into it since.
//
// OpenVINO maps the model cache's files (model_cache.h) and reads constants
// from them as long as the compiled model lives: the imported entry, or the
// IR's weights when the load compiled them. Measured (OpenVINO 2026.4.1): an
// IR .bin truncated under a running method changed its answer without an
// error, and a truncated entry ended the process with SIGBUS. Each call checks
// first, as it does for the program file itself (model_weights.h).
#pragma once

#include "internal_symbols.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// What tells whether a file was written: its size and change time (ctime,
// which no writer can set back, unlike the modification time that cp -p,
// tar and rsync restore: a breaker's finding).
struct FileIdentity {
  uint64_t size = 0;
  int64_t ctime_sec = 0;
  uint32_t ctime_nsec = 0;
  bool operator==(const FileIdentity& o) const {
    return size == o.size && ctime_sec == o.ctime_sec && ctime_nsec == o.ctime_nsec;
  }
};

// FileIdentity of the open file `fd` (false when unknown; always false off
// Linux). One statx call, measured 0.4-0.9 us: cheap enough for every call.
bool identity_of(int fd, FileIdentity* out);

// The bytes a file must hold: its size and CRC-32 (zlib's).
struct FileContent {
  uint64_t size = 0;
  uint32_t crc = 0;
};

class WatchedFile {
 public:
  // Watches `path` as it is now, expected to hold `content`; nullptr when it
  // cannot be opened (or off Linux, where nothing is watched). `role` says in
  // a message what the compiled model reads from it ("the model cache entry").
  static std::unique_ptr<WatchedFile> open(const std::string& path, const FileContent& content, const char* role);
  ~WatchedFile();
  WatchedFile(const WatchedFile&) = delete;
  WatchedFile& operator=(const WatchedFile&) = delete;

  // False, with `error` naming the file and the fix, when the file was
  // written since it was opened and no longer holds its content. Only when
  // its size or change time moved are its bytes read again (through the open
  // file: a file replaced by a rename is still the old one, and fine).
  bool unchanged(std::string* error);

 private:
  WatchedFile() = default;
  int fd_ = -1;
  std::string path_;
  const char* role_ = "";
  FileContent content_;
  FileIdentity identity_;  // when last found to hold `content_`
  std::mutex check_mutex_;
};

EXOV_INTERNAL_END
}  // namespace executorch_openvino
