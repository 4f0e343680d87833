#include "library_search.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <initializer_list>

#include "file_system.h"

namespace executorch_openvino {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// "2641" or "2026.4.1" -> its numbers; false for anything else ("2641.debug", "", "1..2").
bool parse_version(const std::string& text, std::vector<unsigned long>* numbers) {
  numbers->clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('.', start);
    if (end == std::string::npos) end = text.size();
    if (end == start || end - start > 9) return false;
    for (size_t i = start; i < end; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    }
    numbers->push_back(std::stoul(text.substr(start, end - start)));
    start = end + 1;
  }
  return !numbers->empty();
}

// The version numbers in a C library file name (empty for the unversioned
// name); false when `name` is not the C library's on `platform`.
bool c_library_version(Platform platform, const std::string& name, std::vector<unsigned long>* version) {
  version->clear();
  if (platform == Platform::kWindows) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower == "openvino_c.dll";  // file names are case-insensitive there
  }
  if (platform == Platform::kMacOS) {  // libopenvino_c.dylib, libopenvino_c.2641.dylib
    const std::string prefix = "libopenvino_c.", suffix = ".dylib";
    if (name == "libopenvino_c.dylib") return true;
    return starts_with(name, prefix) && ends_with(name, suffix) && name.size() > prefix.size() + suffix.size() &&
           parse_version(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()), version);
  }
  // Linux: libopenvino_c.so, libopenvino_c.so.2641, libopenvino_c.so.2026.4.1
  if (name == "libopenvino_c.so") return true;
  const std::string prefix = "libopenvino_c.so.";
  return starts_with(name, prefix) && parse_version(name.substr(prefix.size()), version);
}

// The C library inside `dir`, or "" when there is none. Only regular files (or
// links to them) count; where several versions sit side by side the highest
// version number wins, so the choice is stable.
std::string find_c_library_in(Platform platform, const std::string& dir) {
  if (!files::is_directory(dir)) return "";
  std::string best;
  std::vector<unsigned long> best_version;
  for (const std::string& name : files::list_directory(dir)) {
    std::vector<unsigned long> version;
    if (!c_library_version(platform, name, &version) || !files::is_regular_file(files::join(dir, name))) continue;
    if (best.empty() || version > best_version || (version == best_version && name > best)) {
      best = name;
      best_version = version;
    }
  }
  return best.empty() ? "" : files::join(dir, best);
}

// `base` followed by `parts`, joined with the host's separator.
std::string path_of(std::string base, std::initializer_list<const char*> parts) {
  for (const char* part : parts) base = files::join(base, part);
  return base;
}

// The install tree's library folders, in the order tried.
std::vector<std::string> install_tree_library_dirs(const SearchSettings& s) {
  std::string runtime = files::join(s.install_tree, "runtime");
  const char* arch =
      s.architecture == Architecture::kArm64 ? (s.platform == Platform::kLinux ? "aarch64" : "arm64") : "intel64";
  switch (s.platform) {
    case Platform::kWindows:
      return {path_of(runtime, {"bin", arch, "Release"})};
    case Platform::kMacOS:
      return {path_of(runtime, {"lib", arch, "Release"})};
    case Platform::kLinux:
    default:
      return {path_of(runtime, {"lib", arch})};
  }
}

std::string conda_library_dir(const SearchSettings& s) {
  return s.platform == Platform::kWindows ? path_of(s.conda_prefix, {"Library", "bin"})
                                          : files::join(s.conda_prefix, "lib");
}

// Adds the library found in one of `dirs`, or a note naming the folders looked in.
void add_found(const SearchSettings& s, const std::vector<std::string>& dirs, const std::string& source,
               std::vector<std::string> dependency_dirs, SearchPlan* plan) {
  std::string looked;
  for (const std::string& dir : dirs) {
    std::string found = find_c_library_in(s.platform, dir);
    if (!found.empty()) {
      plan->candidates.push_back({found, source, false, std::move(dependency_dirs)});
      return;
    }
    looked += (looked.empty() ? "" : ", ") + dir;
  }
  plan->notes.push_back(source + ": no " + c_library_file_name(s.platform) + " in " + looked);
}

}  // namespace

const char* c_library_file_name(Platform platform) {
  switch (platform) {
    case Platform::kWindows:
      return "openvino_c.dll";
    case Platform::kMacOS:
      return "libopenvino_c.dylib";
    case Platform::kLinux:
    default:
      return "libopenvino_c.so";
  }
}

std::string find_c_library(Platform platform, const std::string& dir) { return find_c_library_in(platform, dir); }

bool is_c_library_name(Platform platform, const std::string& name) {
  std::vector<unsigned long> version;
  return c_library_version(platform, name, &version);
}

Platform host_platform() {
#if defined(_WIN32)
  return Platform::kWindows;
#elif defined(__APPLE__)
  return Platform::kMacOS;
#else
  return Platform::kLinux;
#endif
}

SearchSettings host_search_settings(const std::string& explicit_path, const std::string& pip_dir) {
  SearchSettings s;
  s.platform = host_platform();
#if defined(__aarch64__) || defined(_M_ARM64)
  s.architecture = Architecture::kArm64;
#else
  s.architecture = Architecture::kX86_64;
#endif
  s.explicit_path = explicit_path;
  s.lib_path_env = env_or_empty("OPENVINO_LIB_PATH");
  s.pip_dir = pip_dir;
  s.install_tree = env_or_empty("INTEL_OPENVINO_DIR");
  s.conda_prefix = env_or_empty("CONDA_PREFIX");
  return s;
}

SearchPlan plan_library_search(const SearchSettings& s) {
  SearchPlan plan;
  if (!s.explicit_path.empty()) {
    plan.candidates.push_back({s.explicit_path, "explicit path (set_library_path)", true, {}});
  }
  std::string pip_library = s.pip_dir.empty() ? "" : find_c_library_in(s.platform, s.pip_dir);
  if (!s.lib_path_env.empty()) {
    // executorch's pybindings set OPENVINO_LIB_PATH to the pip package's
    // library when it is unset; say so rather than credit the user.
    bool is_pip = !pip_library.empty() && files::same_file(s.lib_path_env, pip_library);
    plan.candidates.push_back(
        {s.lib_path_env, is_pip ? "OPENVINO_LIB_PATH (the pip openvino package)" : "OPENVINO_LIB_PATH", true, {}});
  }
  if (s.pip_dir.empty()) {
    plan.notes.push_back("pip openvino package: not installed (or not told by Python)");
  } else {
    add_found(s, {s.pip_dir}, "pip openvino package", {}, &plan);
  }
  if (!s.install_tree.empty()) {
    std::vector<std::string> dependencies;
    if (s.platform == Platform::kWindows) {
      // openvino.dll loads tbb12.dll, which the archive keeps apart.
      dependencies.push_back(path_of(s.install_tree, {"runtime", "3rdparty", "tbb", "bin"}));
    }
    add_found(s, install_tree_library_dirs(s), "INTEL_OPENVINO_DIR install tree", std::move(dependencies), &plan);
  }
  if (!s.conda_prefix.empty()) {
    add_found(s, {conda_library_dir(s)}, "CONDA_PREFIX conda environment", {}, &plan);
  }
  if (s.platform != Platform::kWindows) {
    plan.candidates.push_back({c_library_file_name(s.platform), "system loader", false, {}});
  }
  return plan;
}

}  // namespace executorch_openvino
