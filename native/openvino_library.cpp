#include "openvino_library.h"

#include "dynamic_library.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace executorch_openvino {
namespace {

#if defined(_WIN32)
constexpr const char* kSystemLibraryName = "openvino_c.dll";
#elif defined(__APPLE__)
constexpr const char* kSystemLibraryName = "libopenvino_c.dylib";
#else
constexpr const char* kSystemLibraryName = "libopenvino_c.so";
#endif

// True for the C library's file names: libopenvino_c.so, libopenvino_c.so.2641,
// openvino_c.dll, libopenvino_c.2641.dylib.
bool is_c_library_name(const std::string& name) {
#if defined(_WIN32)
  return name == "openvino_c.dll";
#elif defined(__APPLE__)
  return name.rfind("libopenvino_c.", 0) == 0 && name.size() > 6 &&
         name.compare(name.size() - 6, 6, ".dylib") == 0;
#else
  return name == "libopenvino_c.so" || name.rfind("libopenvino_c.so.", 0) == 0;
#endif
}

// The C library inside `dir`, or "" when there is none. When several versions
// sit side by side the lexically greatest name wins, so the choice is stable.
std::string find_c_library_in(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "";
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (is_c_library_name(name)) names.push_back(name);
  }
  if (names.empty()) return "";
  std::sort(names.begin(), names.end());
  return (dir / names.back()).string();
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

OpenVinoLibrary& OpenVinoLibrary::instance() {
  // Intentionally leaked: OpenVINO must outlive every static destructor that
  // might still free a compiled model at process exit.
  static OpenVinoLibrary* library = new OpenVinoLibrary();
  return *library;
}

void OpenVinoLibrary::set_explicit_library_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  explicit_path_ = path;
}

void OpenVinoLibrary::set_pip_library_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mutex_);
  pip_dir_ = dir;
}

bool OpenVinoLibrary::is_loaded() {
  std::lock_guard<std::mutex> lock(mutex_);
  return core_ != nullptr;
}

LoadedLibraryInfo OpenVinoLibrary::info() {
  std::lock_guard<std::mutex> lock(mutex_);
  return info_;
}

std::vector<OpenVinoLibrary::Candidate> OpenVinoLibrary::candidates(
    std::vector<std::string>* notes) const {
  std::vector<Candidate> out;
  if (!explicit_path_.empty()) {
    out.push_back({explicit_path_, "explicit path (set_library_path)", true});
  }
  std::string env_path = env_or_empty("OPENVINO_LIB_PATH");
  std::string pip_library = pip_dir_.empty() ? "" : find_c_library_in(pip_dir_);
  if (!env_path.empty()) {
    // executorch's pybindings set OPENVINO_LIB_PATH to the pip package's
    // library when it is unset; say so rather than credit the user.
    bool is_pip = !pip_library.empty() && fs::path(env_path) == fs::path(pip_library);
    out.push_back({env_path, is_pip ? "OPENVINO_LIB_PATH (the pip openvino package)" : "OPENVINO_LIB_PATH", true});
  }
  if (!pip_dir_.empty()) {
    const std::string& found = pip_library;
    if (found.empty()) {
      notes->push_back("pip openvino package: no OpenVINO C library in " + pip_dir_);
    } else {
      out.push_back({found, "pip openvino package", false});
    }
  } else {
    notes->push_back("pip openvino package: not found (not installed, or not told by Python)");
  }
  std::string tree = env_or_empty("INTEL_OPENVINO_DIR");
  if (!tree.empty()) {
#if defined(_WIN32)
    fs::path lib_dir = fs::path(tree) / "runtime" / "bin" / "intel64" / "Release";
#elif defined(__aarch64__)
    fs::path lib_dir = fs::path(tree) / "runtime" / "lib" / "aarch64";
#else
    fs::path lib_dir = fs::path(tree) / "runtime" / "lib" / "intel64";
#endif
    std::string found = find_c_library_in(lib_dir);
    if (found.empty()) {
      notes->push_back("INTEL_OPENVINO_DIR install tree: no OpenVINO C library in " +
                       lib_dir.string());
    } else {
      out.push_back({found, "INTEL_OPENVINO_DIR install tree", false});
    }
  }
#if !defined(_WIN32)
  // Windows never asks the loader for a bare name: that would search PATH.
  out.push_back({kSystemLibraryName, "system loader", false});
#endif
  return out;
}

bool OpenVinoLibrary::try_open(const Candidate& c, std::string* why) {
  if (c.explicit_choice) {
    std::error_code ec;
    fs::path p(c.path);
    if (fs::is_directory(p, ec)) {
      *why = "is a folder; set it to the library file itself, e.g. " +
             (p / kSystemLibraryName).string();
      return false;
    }
    if (!fs::exists(p, ec)) {
      *why = "no such file";
      return false;
    }
  }
  // A symlink elsewhere would make the loader look for libopenvino.so next to
  // the link, not next to the real file: open the real file.
  std::error_code ec;
  fs::path real = c.explicit_choice ? fs::canonical(c.path, ec) : fs::path();
  const std::string path = (c.explicit_choice && !ec) ? real.string() : c.path;
  std::string loader_error;
  void* h = open_library(path, &loader_error);
  if (!h) {
    *why = loader_error;
    return false;
  }
  OpenVinoApi api;
  std::string missing;
#define EXOV_RESOLVE(name)                                                  \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(h, #name));   \
  if (!api.name && missing.empty()) missing = #name;
  EXOV_API_FUNCTIONS(EXOV_RESOLVE)
#undef EXOV_RESOLVE
  if (!missing.empty()) {
    close_library(h);
    *why = "opened, but it has no symbol '" + missing +
           "': it is not the OpenVINO C library (libopenvino_c) of OpenVINO 2025.4 or newer";
    return false;
  }
  ov_core_t* core = nullptr;
  if (api.ov_core_create(&core) != OK || !core) {
    const char* m = api.ov_get_last_err_msg();
    *why = std::string("opened, but ov_core_create failed: ") + (m ? m : "no message");
    close_library(h);
    return false;
  }
  ov_version_t version{};
  std::string version_text = "unknown";
  if (api.ov_get_openvino_version(&version) == OK) {
    if (version.buildNumber) version_text = version.buildNumber;
    api.ov_version_free(&version);
  }
  handle_ = h;
  api_ = api;
  core_ = core;
  info_ = {path, c.source, version_text};
  return true;
}

bool OpenVinoLibrary::ensure_loaded(std::string* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (core_) return true;
  std::vector<std::string> notes;
  std::vector<Candidate> list = candidates(&notes);
  std::string tried;
  for (const Candidate& c : list) {
    std::string why;
    if (try_open(c, &why)) return true;
    tried += "\n  - " + c.source + ": " + c.path + ": " + why;
    if (c.explicit_choice) {
      tried += "\n  (stopped here: " + c.source +
               " is an explicit choice; fix or unset it to search the other places)";
      break;
    }
  }
  for (const std::string& n : notes) tried += "\n  - " + n;
  *error = "could not load the OpenVINO C library. Places tried, in order:" + tried +
           "\nFix: `pip install openvino` (2025.4.1 to 2026.x), or set OPENVINO_LIB_PATH "
           "to the full path of " + kSystemLibraryName +
           " (or its versioned name), or call executorch_openvino.set_library_path(path).";
  return false;
}

std::vector<std::string> OpenVinoLibrary::available_devices(std::string* error) {
  std::vector<std::string> devices;
  if (!ensure_loaded(error)) return devices;
  ov_available_devices_t list{};
  if (api_.ov_core_get_available_devices(core_, &list) != OK) {
    *error = "ov_core_get_available_devices failed: " + last_openvino_message();
    return devices;
  }
  for (size_t i = 0; i < list.size; ++i) devices.emplace_back(list.devices[i]);
  api_.ov_available_devices_free(&list);
  return devices;
}

std::string OpenVinoLibrary::last_openvino_message() const {
  if (!api_.ov_get_last_err_msg) return "";
  const char* m = api_.ov_get_last_err_msg();
  return m ? std::string(m) : std::string();
}

}  // namespace executorch_openvino
