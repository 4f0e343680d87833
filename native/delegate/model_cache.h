// The model cache's files (kCacheDirOption, docs/user-guide/model-cache.md).
//
// A cache folder holds, for each partition, its OpenVINO IR as files named by
// the processed blob's SHA-256 ("ir/<digest>.xml" and ".bin"), and, for each
// compile configuration, OpenVINO release and kind of CPU, a folder that
// OpenVINO's own model cache fills
// ("CPU_f32-openvino-2026.4.1-cpu1a2b3c4d/<OpenVINO's hash>.blob"). The delegate compiles
// the IR file through OpenVINO's cache: OpenVINO keys its entries by the IR's
// path (measured: a changed .bin under the same path was served from the
// cache), and a path that names the content's digest keys them by content. A
// warm load then imports OpenVINO's entry without reading the IR, and both the
// IR and the imported model are file mappings, not copies.
//
// The IR files are written once, to a temporary name renamed into place (two
// processes writing the same entry leave one whole file), and compared with
// the blob byte for byte whenever their size, modification or change time or
// inode differs from what a stamp file ("ir/<digest>.checked") recorded when
// they were last found equal: a changed IR file is rewritten rather than
// compiled. OpenVINO 2026.4.1 compiled a truncated .blob again but imported
// one changed in its middle: entries have records of their own (below).
#pragma once

#include "compile_specs.h"
#include "internal_symbols.h"
#include "processed_blob.h"
#include "watched_file.h"

#include <functional>
#include <string>
#include <vector>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// The folder of OpenVINO's cache inside `dir` for a compile with `options` by
// OpenVINO `release` ("2026.4.1") on this CPU: "<dir>/CPU_f32-openvino-2026.4.1-cpu<8 hex digits>",
// "<dir>/CPU_f32_THROUGHPUT-openvino-2026.4.1-cpu...". The digits hash the
// instruction sets /proc/cpuinfo lists (FNV-1a of its first "flags" or
// "Features" line from the ':' on). Characters outside [A-Za-z0-9._-] of the
// device and hint become '_'.
std::string cache_entry_dir(const std::string& dir, const RuntimeOptions& options, const std::string& release);

// The path of `blob`'s IR XML in `dir` ("<dir>/ir/<digest>.xml", its weights
// beside it as ".bin"), written or rewritten so that both files hold exactly
// the blob's bytes. "" with `problem` set when the files cannot be written
// or the weights changed while written, and "" with `problem` empty when they
// had to be read or written and `blob_intact` (the blob's checksum,
// processed_blob.h, giving the weights' CRC-32 it checked) said no.
// `rewritten` says whether files already there differed from the blob.
// `xml` and `weights` are the blob's (which may be released: the XML copied,
// the weights mapped from the .pte, model_weights.h).
std::string cached_ir_path(const std::string& dir, const ParsedBlob& blob, const std::string& xml, const void* weights,
                           const std::function<bool(uint32_t* weights_crc)>& blob_intact, bool* rewritten,
                           std::string* problem);

// The weights file beside the IR XML `ir_path` ("<dir>/ir/<digest>.bin").
std::string ir_weights_path(const std::string& ir_path);

// Whether `ir_path` (cached_ir_path's) and its .bin hold exactly `xml` and
// `weights` (read in chunks, compared byte for byte).
bool ir_files_hold(const std::string& ir_path, const std::string& xml, const void* weights, size_t weights_size);

// OpenVINO's entries (the *.blob files) in `entry_dir`, with their identities
// ("name size mtime inode" lines), to tell which ones a compile wrote.
std::vector<std::string> entry_files(const std::string& entry_dir);

// A compiled entry's record: "<entry>.exov-crc" holds the size and CRC-32 the
// entry had when the compile that wrote it finished. OpenVINO 2026.4.1 imported
// an entry with bytes changed in its middle without a word (a new user's
// finding: 0.207 off on MiniLM), so an entry is used only when its bytes match
// its record, read at every import (about 35 ms per 86 MiB): its times do not
// vouch for its bytes (a write through a shared mapping to a page already
// dirty changes neither, a breaker's finding).
// `crc`: the entry's entry_crc if read already, else it is read here.
// `recorded`, when given and the entry matches, gets the record's size and CRC-32.
bool entry_matches_record(const std::string& entry, const std::string& crc = "", FileContent* recorded = nullptr);
// "size crc" of the entry's bytes, as its record holds them ("" when it cannot be read).
std::string entry_crc(const std::string& entry);
void record_entry(const std::string& entry);
// Removes an entry and its record (a process that mapped it keeps its pages).
// False with `problem` set when the entry is still there (a read-only folder).
bool remove_entry(const std::string& entry, std::string* problem = nullptr);

// While alive, holds an exclusive lock on "<dir>/ir/<digest>.lock" (flock;
// nothing on Windows), so that one compile at a time, in any process, fills
// the partition's entries. OpenVINO 2026.4.1 writes an entry by opening its
// name with O_TRUNC (strace), and a process that has mapped one (an import)
// must not see it truncated: with the lock, a second compile finds the first
// one's entry and imports it instead.
class EntryLock {
 public:
  EntryLock(const std::string& dir, const std::string& digest);
  ~EntryLock();
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  int fd_ = -1;
};

EXOV_INTERNAL_END
}  // namespace executorch_openvino
