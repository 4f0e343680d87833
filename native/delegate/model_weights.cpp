#include "model_weights.h"

#include "delegate_api.h"
#include "resident_pages.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#if defined(__linux__)
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#endif

namespace executorch_openvino {
namespace {

std::atomic<uint64_t> mapped_alive{0};
std::atomic<uint64_t> copied_alive{0};

#if defined(__linux__)
// The file behind the mapping that holds `address`, as /proc/self/maps lists
// it: its path, device and inode, and the file offset of `address`.
struct MappedFile {
  std::string path;
  dev_t device = 0;
  ino_t inode = 0;
  uint64_t offset = 0;
};

bool find_mapped_file(const void* address, MappedFile* out) {
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return false;
  const auto wanted = reinterpret_cast<uintptr_t>(address);
  char line[4096 + 256];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long start = 0, end = 0, inode = 0;
    unsigned long long offset = 0;
    unsigned major_id = 0, minor_id = 0;
    char perms[8] = {0};
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %llx %x:%x %lu %n", &start, &end, perms, &offset, &major_id, &minor_id, &inode,
                    &path_at) < 7) {
      continue;
    }
    if (wanted < start || wanted >= end) continue;
    found = true;
    // An anonymous mapping (inode 0), a pseudo-file ("[heap]") or a replaced
    // or deleted file ("... (deleted)") has no file to map again.
    std::string path = path_at > 0 ? line + path_at : "";
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    const std::string deleted = " (deleted)";
    if (inode == 0 || path.empty() || path[0] != '/' ||
        (path.size() > deleted.size() && path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)) {
      std::fclose(maps);
      return false;
    }
    out->path = path;
    out->device = makedev(major_id, minor_id);
    out->inode = static_cast<ino_t>(inode);
    out->offset = offset + (wanted - start);
  }
  std::fclose(maps);
  return found;
}

// The size of the file at `file.path` when it is still that file (device and
// inode), with `fd` its open descriptor; false when it cannot be told.
bool same_file_size(int fd, const MappedFile& file, uint64_t* size) {
  struct statx st;
  if (fd < 0 || ::statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_SIZE, &st) != 0 ||
      makedev(st.stx_dev_major, st.stx_dev_minor) != file.device || st.stx_ino != file.inode) {
    return false;
  }
  *size = st.stx_size;
  return true;
}

// Maps [offset, offset + size) of the file behind `address` read-only, when it
// is still the same file (device and inode). The mapping starts on a page
// boundary: `*data` is the first byte of the range inside it; `*fd` stays open.
bool map_same_range(const void* address, size_t size, void** mapping, size_t* mapping_size, void** data, int* fd_out,
                    std::string* path, FileIdentity* identity, uint64_t* file_end) {
  MappedFile file;
  if (!find_mapped_file(address, &file)) return false;
  int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uint64_t file_size = 0;
  const bool same = same_file_size(fd, file, &file_size) && file.offset + size <= file_size;
  void* pages = MAP_FAILED;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = file.offset / page * page;
  const size_t length = static_cast<size_t>(file.offset - start + size);
  if (same) pages = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
  const bool known = identity_of(fd, identity);
  if (pages == MAP_FAILED || !known) {
    if (pages != MAP_FAILED) ::munmap(pages, length);
    ::close(fd);
    return false;
  }
  *fd_out = fd;
  *path = file.path;
  *file_end = file.offset + size;
  *mapping = pages;
  *mapping_size = length;
  *data = static_cast<uint8_t*>(pages) + (file.offset - start);
  return true;
}
#endif

}  // namespace

std::string mapped_file_key(const void* address, size_t size, std::string* cut_short) {
#if defined(__linux__)
  MappedFile file;
  if (!find_mapped_file(address, &file)) return "";
  const int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
  uint64_t file_size = 0;
  if (same_file_size(fd, file, &file_size) && file.offset + size > file_size) {
    *cut_short = "the program file '" + file.path + "' now ends at byte " + std::to_string(file_size) +
                 ", before the end of this partition's data (bytes " + std::to_string(file.offset) + " to " +
                 std::to_string(file.offset + size) +
                 "): it was cut short or written in place since ExecuTorch loaded the program. Load the program "
                 "again once the file is whole; to replace a program in use, write the new one to another file "
                 "and rename it over the old one";
  }
  if (fd >= 0) ::close(fd);
  return std::to_string(file.device) + ":" + std::to_string(file.inode);
#else
  (void)address;
  (void)size;
  (void)cut_short;
  return "";
#endif
}

std::unique_ptr<ModelWeights> ModelWeights::for_blob(const ParsedBlob& blob, std::string* error, bool copy) {
  std::unique_ptr<ModelWeights> w(new ModelWeights());
  w->size_ = blob.weights_size;
  if (blob.weights_size == 0) return w;
#if defined(__linux__)
  // OpenVINO reads constants in place from 64-byte aligned weights (the copy
  // below is aligned so too); a blob placed otherwise is copied.
  if (reinterpret_cast<uintptr_t>(blob.weights) % 64 == 0 &&
      map_same_range(blob.weights, blob.weights_size, &w->mapping_, &w->mapping_size_, &w->data_, &w->fd_, &w->path_,
                     &w->identity_, &w->file_end_)) {
    w->source_ = Source::kFileMapping;
    mapped_alive.fetch_add(w->size_);
    return w;
  }
#endif
  if (!copy) return nullptr;
  size_t padded = (blob.weights_size + 63) / 64 * 64;
  w->mapping_ = std::aligned_alloc(64, padded);
  if (w->mapping_ == nullptr) {
    *error = "could not allocate " + std::to_string(blob.weights_size) + " bytes for the model weights";
    return nullptr;
  }
  std::memcpy(w->mapping_, blob.weights, blob.weights_size);
  w->data_ = w->mapping_;
  w->source_ = Source::kCopy;
  copied_alive.fetch_add(w->size_);
  return w;
}

ModelWeights::~ModelWeights() {
  if (mapping_ == nullptr) return;
  if (source_ == Source::kFileMapping) {
#if defined(__linux__)
    ::munmap(mapping_, mapping_size_);
    ::close(fd_);
#endif
    mapped_alive.fetch_sub(size_);
  } else {
    std::free(mapping_);
    copied_alive.fetch_sub(size_);
  }
}

WeightsPart ModelWeights::parts() const {
#if defined(__linux__)
  if (source_ == Source::kFileMapping) {
    auto buffer = std::make_shared<std::vector<uint8_t>>(kWeightsPartSize);
    const off_t start = static_cast<off_t>(file_end_ - size_);
    return [fd = fd_, start, buffer](size_t at, size_t n) -> const uint8_t* {
      size_t got = 0;
      while (got < n) {
        const ssize_t r = ::pread(fd, buffer->data() + got, n - got, start + static_cast<off_t>(at + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return nullptr;  // an error, or the file ends before the weights do
        got += static_cast<size_t>(r);
      }
      return buffer->data();
    };
  }
#endif
  return weights_in_memory(data_);
}

const char* ModelWeights::source_name() const { return source_ == Source::kFileMapping ? "file mapping" : "copy"; }

void ModelWeights::release_resident_pages() {
#if defined(__linux__)
  if (source_ == Source::kFileMapping) drop_file_pages(mapping_, mapping_size_);
#endif
}

bool ModelWeights::file_unchanged(std::string* error) {
#if defined(__linux__)
  FileIdentity now;
  if (source_ != Source::kFileMapping) return true;
  std::lock_guard<std::mutex> lock(check_mutex_);
  if (identity_of(fd_, &now) && now == identity_) return true;
  // Written: the weights are read from the file (parts), not the mapping, so
  // a file cut short meanwhile is a failed read rather than a SIGBUS, and no
  // page of the mapping is faulted in.
  uint32_t crc = 0;
  size_t failed_at = 0;
  if (now.size >= file_end_ && weights_crc32(parts(), size_, &crc, &failed_at) && crc == weights_crc_) {
    identity_ = now;  // the same weights: nothing to report
    return true;
  }
  *error = "the program file '" + path_ +
           "' was written since this method was loaded, and OpenVINO reads the partition's weights from it: "
           "load the program again. To replace a program that is in use, write the new one to another file and "
           "rename it over the old one";
  return false;
#else
  (void)error;
  return true;
#endif
}

WeightsBytes weights_bytes_alive() { return {mapped_alive.load(), copied_alive.load()}; }

}  // namespace executorch_openvino
