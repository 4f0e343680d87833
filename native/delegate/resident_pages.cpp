#include "resident_pages.h"

#include "background_task.h"

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__linux__)
#include <errno.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace executorch_openvino {

#if defined(__linux__)

void drop_file_pages(void* start, size_t size) { ::madvise(start, size, MADV_DONTNEED); }

namespace {
// Calls `each(start, end, perms, path)` for every mapping of a file under `folder`.
template <typename Each>
void for_mappings_under(const std::string& folder, Each each) {
  if (folder.empty()) return;
  const std::string prefix = folder.back() == '/' ? folder : folder + "/";
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return;
  char line[4096 + 256];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long start = 0, end = 0;
    char perms[8] = {0};
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %*x %*x:%*x %*u %n", &start, &end, perms, &path_at) < 3 || path_at == 0 ||
        std::strncmp(line + path_at, prefix.c_str(), prefix.size()) != 0) {
      continue;
    }
    std::string path = line + path_at;
    while (!path.empty() && path.back() == '\n') path.pop_back();
    if (path.find('/', prefix.size()) != std::string::npos) continue;  // in a subfolder
    each(start, end, perms, path);
  }
  std::fclose(maps);
}
}  // namespace

std::vector<std::string> mappings_under(const std::string& folder) {
  std::vector<std::string> paths;
  for_mappings_under(
      folder, [&](unsigned long, unsigned long, const char*, const std::string& path) { paths.push_back(path); });
  return paths;
}

void drop_file_pages_under(const std::string& folder, const std::string& suffix) {
  for_mappings_under(
      folder, [&suffix](unsigned long start, unsigned long end, const char* perms, const std::string& path) {
        if (path.size() <= suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
          return;
        // Read-only ("r--s", "r--p"), of a data file, not a library (whose
        // relocated pages are private changes): every page holds the file's bytes.
        if (std::strcmp(perms, "r--s") == 0 || std::strcmp(perms, "r--p") == 0) {
          ::madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
        }
      });
}

struct PeriodicDrop::State {
  std::function<void()> drop;
  int wake[2] = {-1, -1};  // a pipe: the destructor writes to end the wait at once
  std::unique_ptr<BackgroundTask> task;
};

namespace {
// A poll of a pipe, not a timed wait (pthread_cond_clockwait has a glibc symbol
// version newer than manylinux_2_28 allows): ending does not wait out a pause,
// which would add up to 5 ms to each inference that drops.
void drop_until_done(PeriodicDrop::State* state) {
  pollfd woken{state->wake[0], POLLIN, 0};
  for (;;) {
    const int ready = ::poll(&woken, 1, 5);
    if (ready == 0) {
      state->drop();
    } else if (ready > 0 || errno != EINTR) {
      return;
    }
  }
}
}  // namespace

PeriodicDrop::PeriodicDrop(std::function<void()> drop) : state_(std::make_unique<State>()) {
  state_->drop = std::move(drop);
  if (::pipe(state_->wake) != 0) return;
  State* state = state_.get();
  state_->task = std::make_unique<BackgroundTask>([state] { drop_until_done(state); });
}

PeriodicDrop::~PeriodicDrop() {
  if (state_->task) {
    const char done = 1;
    while (::write(state_->wake[1], &done, 1) < 0 && errno == EINTR) {
    }
    state_->task.reset();  // joins the thread (a task that never started is not run)
  }
  for (int fd : state_->wake) {
    if (fd >= 0) ::close(fd);
  }
}

#else

void drop_file_pages(void*, size_t) {}
void drop_file_pages_under(const std::string&, const std::string&) {}
std::vector<std::string> mappings_under(const std::string&) { return {}; }
struct PeriodicDrop::State {};
PeriodicDrop::PeriodicDrop(std::function<void()>) {}
PeriodicDrop::~PeriodicDrop() = default;

#endif

}  // namespace executorch_openvino
