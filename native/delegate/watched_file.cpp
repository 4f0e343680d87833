#include "watched_file.h"

#include <zlib.h>

#include <vector>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace executorch_openvino {
namespace {

#if defined(__linux__)
// Whether the open file `fd` holds `content`, read with pread from its start.
bool holds(int fd, const FileContent& content) {
  std::vector<unsigned char> chunk(1 << 20);
  uLong crc = crc32_z(0L, nullptr, 0);
  uint64_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(offset));
    if (n < 0) return false;
    if (n == 0) break;
    crc = crc32_z(crc, chunk.data(), static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return offset == content.size && static_cast<uint32_t>(crc) == content.crc;
}
#endif

}  // namespace

bool identity_of(int fd, FileIdentity* out) {
#if defined(__linux__)
  // statx, not fstat: glibc 2.33 gave fstat a symbol version of its own,
  // which a manylinux_2_28 library must not need (file_system.cpp too).
  struct statx st;
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_SIZE | STATX_CTIME, &st) != 0) return false;
  *out = {st.stx_size, st.stx_ctime.tv_sec, st.stx_ctime.tv_nsec};
  return true;
#else
  (void)fd;
  (void)out;
  return false;
#endif
}

std::unique_ptr<WatchedFile> WatchedFile::open(const std::string& path, const FileContent& content, const char* role) {
#if defined(__linux__)
  std::unique_ptr<WatchedFile> w(new WatchedFile());
  w->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (w->fd_ < 0 || !identity_of(w->fd_, &w->identity_)) return nullptr;
  w->path_ = path;
  w->role_ = role;
  w->content_ = content;
  return w;
#else
  (void)path;
  (void)content;
  (void)role;
  return nullptr;
#endif
}

WatchedFile::~WatchedFile() {
#if defined(__linux__)
  if (fd_ >= 0) ::close(fd_);
#endif
}

bool WatchedFile::unchanged(std::string* error) {
  std::lock_guard<std::mutex> lock(check_mutex_);
  FileIdentity now;
  if (identity_of(fd_, &now) && now == identity_) return true;
#if defined(__linux__)
  if (holds(fd_, content_)) {  // written again with the same bytes, or only its mode changed
    identity_ = now;
    return true;
  }
#endif
  *error = std::string(role_) + " '" + path_ +
           "' was written since this method was loaded, and OpenVINO reads the partition's compiled model from "
           "it: load the program again (the cache compiles what it lost). Nothing may write into a cache folder in "
           "use: `python -m executorch_openvino cache <folder> --clear` removes the delegate's files safely";
  return false;
}

}  // namespace executorch_openvino
