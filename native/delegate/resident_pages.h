// Dropping clean file pages from the process's resident memory (Linux; a
// no-op elsewhere).
//
// OpenVINO reads a model's constants from file mappings: the .pte's own pages
// (model_weights.h), or the model cache's files, which it maps itself. A
// compile or import reads every constant at least once, so the whole file
// would stay resident beside what OpenVINO builds from it, although the
// compiled model reads only part of it again. Pages of a read-only private
// file mapping hold nothing but the file's bytes: dropped, they are read from
// the file again, page by page, when next touched (measured on MiniLM: peak
// resident memory of a load from 2.19x to 1.21x its weights, docs/design.md).
#pragma once

#include "internal_symbols.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace executorch_openvino {
EXOV_INTERNAL_BEGIN

// Drops the pages of [start, start + size), which must be a read-only file mapping of the caller's.
void drop_file_pages(void* start, size_t size);

// Drops the pages of every read-only mapping of a file directly in `folder`
// whose name ends with `suffix` (as /proc/self/maps lists them): OpenVINO's
// own mappings of the cache's data files ("ir", ".bin"; an entry folder,
// ".blob"). Never wider: a library's read-only pages hold its relocations, and
// dropping them crashed a process whose cache folder held its venv (a
// breaker's finding).
void drop_file_pages_under(const std::string& folder, const std::string& suffix);

// The file of each mapping of a file directly in `folder` that the process
// has now (paths as /proc/self/maps gives them): a file mapped twice is listed
// twice, so that comparing two lists tells a new mapping of a file the process
// already mapped (a second import of one cache entry).
std::vector<std::string> mappings_under(const std::string& folder);

// While alive, calls `drop` every 5 ms from a thread of its own.
class PeriodicDrop {
 public:
  explicit PeriodicDrop(std::function<void()> drop);
  ~PeriodicDrop();
  PeriodicDrop(const PeriodicDrop&) = delete;
  PeriodicDrop& operator=(const PeriodicDrop&) = delete;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

EXOV_INTERNAL_END
}  // namespace executorch_openvino
