#include "library_search.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

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

// The C library inside `dir`, or "" when there is none.
std::string find_c_library_in(Platform platform, const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "";
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (is_c_library_name(platform, name)) names.push_back(name);
  }
  if (names.empty()) return "";
  std::sort(names.begin(), names.end());
  return (dir / names.back()).string();
}

// The install tree's library folders, in the order tried.
std::vector<fs::path> install_tree_library_dirs(const SearchSettings& s) {
  fs::path runtime = fs::path(s.install_tree) / "runtime";
  const char* arch = s.architecture == Architecture::kArm64
                         ? (s.platform == Platform::kLinux ? "aarch64" : "arm64")
                         : "intel64";
  switch (s.platform) {
    case Platform::kWindows:
      return {runtime / "bin" / arch / "Release"};
    case Platform::kMacOS:
      return {runtime / "lib" / arch / "Release"};
    case Platform::kLinux:
    default:
      return {runtime / "lib" / arch};
  }
}

fs::path conda_library_dir(const SearchSettings& s) {
  return s.platform == Platform::kWindows ? fs::path(s.conda_prefix) / "Library" / "bin"
                                          : fs::path(s.conda_prefix) / "lib";
}

// Adds the library found in one of `dirs`, or a note naming the folders looked in.
void add_found(const SearchSettings& s, const std::vector<fs::path>& dirs, const std::string& source,
               std::vector<std::string> dependency_dirs, SearchPlan* plan) {
  std::string looked;
  for (const fs::path& dir : dirs) {
    std::string found = find_c_library_in(s.platform, dir);
    if (!found.empty()) {
      plan->candidates.push_back({found, source, false, std::move(dependency_dirs)});
      return;
    }
    looked += (looked.empty() ? "" : ", ") + dir.string();
  }
  plan->notes.push_back(source + ": no " + c_library_file_name(s.platform) + " in " + looked);
}

}  // namespace

const char* c_library_file_name(Platform platform) {
  switch (platform) {
    case Platform::kWindows: return "openvino_c.dll";
    case Platform::kMacOS: return "libopenvino_c.dylib";
    case Platform::kLinux:
    default: return "libopenvino_c.so";
  }
}

bool is_c_library_name(Platform platform, const std::string& name) {
  switch (platform) {
    case Platform::kWindows:  // file names are case-insensitive there
    {
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      return lower == "openvino_c.dll";
    }
    case Platform::kMacOS:  // libopenvino_c.dylib, libopenvino_c.2641.dylib
      return name == "libopenvino_c.dylib" || (starts_with(name, "libopenvino_c.") && ends_with(name, ".dylib"));
    case Platform::kLinux:
    default:  // libopenvino_c.so, libopenvino_c.so.2641
      return name == "libopenvino_c.so" || starts_with(name, "libopenvino_c.so.");
  }
}

SearchSettings host_search_settings(const std::string& explicit_path, const std::string& pip_dir) {
  SearchSettings s;
#if defined(_WIN32)
  s.platform = Platform::kWindows;
#elif defined(__APPLE__)
  s.platform = Platform::kMacOS;
#else
  s.platform = Platform::kLinux;
#endif
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
    std::error_code ec;
    bool is_pip = !pip_library.empty() && fs::equivalent(s.lib_path_env, pip_library, ec);
    plan.candidates.push_back(
        {s.lib_path_env, is_pip ? "OPENVINO_LIB_PATH (the pip openvino package)" : "OPENVINO_LIB_PATH", true, {}});
  }
  if (s.pip_dir.empty()) {
    plan.notes.push_back("pip openvino package: not installed (or not told by Python)");
  } else {
    add_found(s, {fs::path(s.pip_dir)}, "pip openvino package", {}, &plan);
  }
  if (!s.install_tree.empty()) {
    std::vector<std::string> dependencies;
    if (s.platform == Platform::kWindows) {
      // openvino.dll loads tbb12.dll, which the archive keeps apart.
      dependencies.push_back((fs::path(s.install_tree) / "runtime" / "3rdparty" / "tbb" / "bin").string());
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
