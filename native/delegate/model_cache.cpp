#include "model_cache.h"

#include "file_system.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <zlib.h>

#ifdef _WIN32
#include <direct.h>
#include <process.h>
#else
#include <fcntl.h>  // AT_FDCWD, open
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace executorch_openvino {
namespace {

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

File open_file(const std::string& path, const char* mode) {
#ifdef _WIN32
  return File(_wfopen(files::widen(path).c_str(), files::widen(mode).c_str()), &std::fclose);
#else
  return File(std::fopen(path.c_str(), mode), &std::fclose);
#endif
}

bool make_directory(const std::string& path) {
#ifdef _WIN32
  return _wmkdir(files::widen(path).c_str()) == 0 || errno == EEXIST;
#else
  return ::mkdir(path.c_str(), 0777) == 0 || errno == EEXIST;
#endif
}

// Whether the file at `path` holds exactly `size` bytes equal to `data`, read
// in chunks (not mapped: the check adds nothing to the process's memory).
// `crc`, when given, gets zlib's CRC-32 of the file's bytes.
bool file_holds(const std::string& path, const void* data, size_t size, uint32_t* crc = nullptr) {
  File f = open_file(path, "rb");
  if (!f) return false;
  std::vector<char> chunk(1 << 20);
  const auto* expected = static_cast<const char*>(data);
  size_t at = 0;
  uLong sum = crc32_z(0L, nullptr, 0);
  while (true) {
    size_t n = std::fread(chunk.data(), 1, chunk.size(), f.get());
    if (n == 0) break;
    if (n > size - at || std::memcmp(chunk.data(), expected + at, n) != 0) return false;
    if (crc) sum = crc32_z(sum, reinterpret_cast<const Bytef*>(chunk.data()), n);
    at += n;
  }
  if (crc) *crc = static_cast<uint32_t>(sum);
  return at == size && !std::ferror(f.get());
}

// Writes `data` to a new temporary file beside `path` (its name returned, ""
// with `problem` set when it cannot be written), for rename_into_place: no
// reader ever sees a partial file.
std::string write_temporary(const std::string& path, const void* data, size_t size, std::string* problem,
                            uint32_t* crc = nullptr) {
  static std::atomic<unsigned> counter{0};
#ifdef _WIN32
  int pid = _getpid();
#else
  int pid = static_cast<int>(::getpid());
#endif
  const std::string temporary = path + ".tmp-" + std::to_string(pid) + "-" + std::to_string(counter.fetch_add(1));
  File f = open_file(temporary, "wb");
  if (!f) {
    *problem = "could not create '" + temporary + "': " + std::strerror(errno);
    return "";
  }
  // In parts, each part's CRC-32 taken from the bytes as they were written (the source may be a file mapping
  // that another process writes meanwhile: `crc` tells what the file got).
  const auto* bytes = static_cast<const Bytef*>(data);
  uLong sum = crc32_z(0L, nullptr, 0);
  bool written = true;
  std::vector<Bytef> part(crc ? std::min(size, size_t(4) << 20) : 0);  // what is summed is what is written
  for (size_t at = 0; written && at < size; at += size_t(4) << 20) {
    const size_t n = std::min(size - at, size_t(4) << 20);
    const Bytef* source = bytes + at;
    if (crc) {
      std::memcpy(part.data(), source, n);
      source = part.data();
      sum = crc32_z(sum, source, n);
    }
    written = std::fwrite(source, 1, n, f.get()) == n;
  }
  if (crc) *crc = static_cast<uint32_t>(sum);
  if (!written || std::fflush(f.get()) != 0) {
    *problem = "could not write " + std::to_string(size) + " bytes to '" + temporary + "': " + std::strerror(errno);
    f.reset();
    std::remove(temporary.c_str());
    return "";
  }
  return temporary;
}

bool rename_into_place(const std::string& temporary, const std::string& path, std::string* problem) {
#ifdef _WIN32
  std::remove(path.c_str());  // rename does not replace on Windows
#endif
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    *problem = "could not rename '" + temporary + "' to '" + path + "': " + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

bool write_whole_file(const std::string& path, const void* data, size_t size, std::string* problem) {
  const std::string temporary = write_temporary(path, data, size, problem);
  return !temporary.empty() && rename_into_place(temporary, path, problem);
}

// What identifies a file's current bytes without reading them: size,
// modification and change times, and inode ("" where unknown). A write()
// changes the change time, which no writer can set back (utime sets it to
// now); a write through a shared mapping may change neither time, so the
// identity only tells when bytes must be compared, never that they are equal.
std::string identity(const std::string& path) {
#if defined(__linux__)
  // statx, not stat: glibc 2.33 gave stat a symbol version newer than manylinux_2_28 allows.
  struct statx st;
  if (::statx(AT_FDCWD, path.c_str(), 0, STATX_SIZE | STATX_MTIME | STATX_CTIME | STATX_INO, &st) != 0) return "";
  return std::to_string(st.stx_size) + " " + std::to_string(st.stx_mtime.tv_sec) + "." +
         std::to_string(st.stx_mtime.tv_nsec) + " " + std::to_string(st.stx_ctime.tv_sec) + "." +
         std::to_string(st.stx_ctime.tv_nsec) + " " + std::to_string(st.stx_ino);
#else
  (void)path;
  return "";
#endif
}

std::string read_small_file(const std::string& path) {
  File f = open_file(path, "rb");
  std::string text;
  char buffer[512];
  size_t n = 0;
  while (f && (n = std::fread(buffer, 1, sizeof buffer, f.get())) > 0 && text.size() < 4096) text.append(buffer, n);
  return text;
}

// The CPU's instruction sets, as 8 hex digits: FNV-1a of the first "flags"
// (x86) or "Features" (ARM) line of /proc/cpuinfo; "" elsewhere. An entry
// compiled for one CPU's kernels is never offered to another kind of CPU.
std::string cpu_signature() {
  static const std::string signature = [] {
    File f = open_file("/proc/cpuinfo", "r");
    char line[8192];
    while (f && std::fgets(line, sizeof line, f.get()) != nullptr) {
      if (std::strncmp(line, "flags", 5) != 0 && std::strncmp(line, "Features", 8) != 0) continue;
      uint32_t hash = 2166136261u;
      for (const char* c = std::strchr(line, ':'); c != nullptr && *c != '\0' && *c != '\n'; ++c) {
        hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
      }
      char hex[9];
      std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(hash));
      return std::string(hex);
    }
    return std::string();
  }();
  return signature;
}

std::string file_name_part(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return text;
}

}  // namespace

// OpenVINO keys its cache by the model and the properties its plugin lists as
// caching properties: 2026.4.1's CPU plugin served the model compiled for f32
// to f16 and bf16 requests (measured on a CPU without bf16 or f16 units, where
// all three compile to f32). So each device, precision and performance hint
// gets its own folder, and each OpenVINO release and kind of CPU too (two
// environments or machines sharing a folder would otherwise overwrite each
// other's entries).
std::string cache_entry_dir(const std::string& dir, const RuntimeOptions& options, const std::string& release) {
  std::string name =
      options.device + "_" + (options.inference_precision.empty() ? "default" : options.inference_precision);
  if (!options.performance_hint.empty()) name += "_" + options.performance_hint;
  name += "-openvino-" + release;
  if (!cpu_signature().empty()) name += "-cpu" + cpu_signature();
  return files::join(dir, file_name_part(name));
}

std::string cached_ir_path(const std::string& dir, const ParsedBlob& blob, const std::string& xml_bytes,
                           const void* weights, const std::function<bool(uint32_t*)>& blob_intact, bool* rewritten,
                           std::string* problem) {
  *rewritten = false;
  const std::string folder = files::join(dir, "ir");
  if (!make_directory(dir) || !make_directory(folder)) {
    *problem = "could not create the folder '" + folder + "': " + std::strerror(errno);
    return "";
  }
  const std::string xml = files::join(folder, blob.digest + ".xml");
  const std::string bin = files::join(folder, blob.digest + ".bin");
  // The stamp holds both files' identities as they were when last found equal
  // to a blob: while they are unchanged, the bytes need not be read again.
  const std::string stamp = files::join(folder, blob.digest + ".checked");
  const std::string xml_id = identity(xml), bin_id = identity(bin);
  if (!xml_id.empty() && !bin_id.empty() && read_small_file(stamp) == xml_id + "\n" + bin_id + "\n") return xml;
  // Compared and written while the blob's checksum is checked on its own
  // thread; nothing is put in place before it passed.
  const bool xml_there = files::exists(xml), bin_there = files::exists(bin);
  std::string xml_temporary, bin_temporary;
  auto remove_temporaries = [&] {
    if (!xml_temporary.empty()) std::remove(xml_temporary.c_str());
    if (!bin_temporary.empty()) std::remove(bin_temporary.c_str());
  };
  if (!xml_there || !file_holds(xml, xml_bytes.data(), xml_bytes.size())) {
    *rewritten = *rewritten || xml_there;
    xml_temporary = write_temporary(xml, xml_bytes.data(), xml_bytes.size(), problem);
    if (xml_temporary.empty()) return "";
  }
  uint32_t bin_crc = 0;  // of the bytes the .bin holds: what the checksum checked, or the source changed since
  if (!bin_there || !file_holds(bin, weights, blob.weights_size, &bin_crc)) {
    *rewritten = *rewritten || bin_there;
    bin_temporary = write_temporary(bin, weights, blob.weights_size, problem, &bin_crc);
    if (bin_temporary.empty()) {
      remove_temporaries();
      return "";
    }
  }
  uint32_t checked_crc = 0;
  if (!blob_intact(&checked_crc)) {  // nothing is kept from a damaged blob
    remove_temporaries();
    problem->clear();
    return "";
  }
  if (bin_crc != checked_crc) {  // the program's file was written during the load (a breaker's finding)
    remove_temporaries();
    *problem =
        "the program's weights changed while they were written into the cache (is the .pte being "
        "written?)";
    return "";
  }
  if ((!xml_temporary.empty() && !rename_into_place(xml_temporary, xml, problem)) ||
      (!bin_temporary.empty() && !rename_into_place(bin_temporary, bin, problem))) {
    remove_temporaries();
    return "";
  }
  const std::string checked = identity(xml) + "\n" + identity(bin) + "\n";
  std::string ignored;  // without a stamp the next load compares the bytes again
  write_whole_file(stamp, checked.data(), checked.size(), &ignored);
  return xml;
}

EntryLock::EntryLock(const std::string& dir, const std::string& digest) {
#ifndef _WIN32
  const std::string path = files::join(files::join(dir, "ir"), digest + ".lock");
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  // Without the lock (a folder that refuses it) the compile goes on unlocked,
  // as OpenVINO's own cache would.
  if (fd_ >= 0) {
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
#else
  (void)dir;
  (void)digest;
#endif
}

EntryLock::~EntryLock() {
#ifndef _WIN32
  if (fd_ >= 0) ::close(fd_);  // releases the lock
#endif
}

std::string ir_weights_path(const std::string& ir_path) { return ir_path.substr(0, ir_path.size() - 4) + ".bin"; }

bool ir_files_hold(const std::string& ir_path, const std::string& xml, const void* weights, size_t weights_size) {
  return file_holds(ir_path, xml.data(), xml.size()) && file_holds(ir_weights_path(ir_path), weights, weights_size);
}

std::vector<std::string> entry_files(const std::string& entry_dir) {
  std::vector<std::string> found;
  for (const std::string& name : files::list_directory(entry_dir)) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".blob") == 0) {
      found.push_back(name + " " + identity(files::join(entry_dir, name)));
    }
  }
  return found;
}

std::string entry_crc(const std::string& path) {
  File f = open_file(path, "rb");
  if (!f) return "";
  std::vector<unsigned char> chunk(1 << 20);
  uLong crc = crc32_z(0L, nullptr, 0);
  uint64_t size = 0;
  size_t n = 0;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), f.get())) > 0) {
    crc = crc32_z(crc, chunk.data(), n);
    size += n;
  }
  if (std::ferror(f.get())) return "";
  return std::to_string(size) + " " + std::to_string(static_cast<uint32_t>(crc)) + "\n";
}

bool entry_matches_record(const std::string& entry, const std::string& crc, FileContent* recorded) {
  // Read every time: a file's times do not vouch for its bytes (a write through a shared mapping to a page
  // already dirty changes neither, a breaker's finding; tmpfs updates them for no mapped write).
  const std::string record = read_small_file(entry + ".exov-crc");
  if (record.empty() || (crc.empty() ? entry_crc(entry) : crc) != record) return false;
  unsigned long long size = 0;
  unsigned long sum = 0;
  if (recorded && std::sscanf(record.c_str(), "%llu %lu", &size, &sum) == 2) *recorded = {size, uint32_t(sum)};
  return true;
}

void record_entry(const std::string& entry) {
  const std::string record = entry_crc(entry);
  std::string ignored;  // without a record the entry is compiled again next time
  if (!record.empty()) write_whole_file(entry + ".exov-crc", record.data(), record.size(), &ignored);
}

bool remove_entry(const std::string& entry, std::string* problem) {
  const bool removed = std::remove(entry.c_str()) == 0 || errno == ENOENT;
  if (!removed && problem) *problem = "could not remove the model cache entry " + entry + ": " + std::strerror(errno);
  std::remove((entry + ".exov-crc").c_str());
  return removed;
}

}  // namespace executorch_openvino
