#include "openvino_library.h"

#include "dynamic_library.h"
#include "file_system.h"

namespace executorch_openvino {
namespace {

const char* system_library_name() { return c_library_file_name(host_platform()); }

}  // namespace

OpenVINOLibrary& OpenVINOLibrary::instance() {
  // Intentionally leaked: OpenVINO must outlive every static destructor that
  // might still free a compiled model at process exit.
  static OpenVINOLibrary* library = new OpenVINOLibrary();
  return *library;
}

void OpenVINOLibrary::set_explicit_library_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  explicit_path_ = path;
}

void OpenVINOLibrary::set_pip_library_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mutex_);
  pip_dir_ = dir;
}

bool OpenVINOLibrary::is_loaded() {
  std::lock_guard<std::mutex> lock(mutex_);
  return core_ != nullptr;
}

LoadedLibraryInfo OpenVINOLibrary::info() {
  std::lock_guard<std::mutex> lock(mutex_);
  return info_;
}

bool OpenVINOLibrary::try_open(const LibraryCandidate& c, std::string* why) {
  if (c.explicit_choice) {
    if (!files::is_absolute(c.path)) {
      std::string resolved = files::canonical(c.path);
      if (files::is_directory(resolved)) resolved = find_c_library(host_platform(), resolved);
      *why = "is not an absolute path; give the library file's full path" +
             (resolved.empty() ? std::string() : ", e.g. " + resolved) +
             " (a relative path would depend on the current folder)";
      return false;
    }
    if (files::is_directory(c.path)) {
      std::string inside = find_c_library(host_platform(), c.path);
      *why = "is a folder; set it to the library file itself, e.g. " +
             (inside.empty() ? files::join(c.path, system_library_name()) : inside);
      return false;
    }
    if (!files::exists(c.path)) {
      *why = "no such file";
      return false;
    }
  }
  // A symlink elsewhere would make the loader look for libopenvino.so next to
  // the link, not next to the real file: open the real file.
  std::string real = c.explicit_choice ? files::canonical(c.path) : std::string();
  const std::string path = real.empty() ? c.path : real;
  std::string loader_error;
  void* h = open_library(path, c.dependency_dirs, &loader_error);
  if (!h) {
    *why = loader_error;
    return false;
  }
  OpenVINOApi api;
  std::string missing;
#define EXOV_RESOLVE(name)                                                \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(h, #name)); \
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
  info_ = {path, c.source, version_text, {}, info_.loads + 1};
  return true;
}

bool OpenVINOLibrary::ensure_loaded(std::string* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (core_) return true;
  SearchPlan plan = plan_locked();
  std::string tried;
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const LibraryCandidate& c = plan.candidates[i];
    std::string why;
    if (try_open(c, &why)) {
      for (size_t later = i + 1; later < plan.candidates.size(); ++later) {
        const LibraryCandidate& other = plan.candidates[later];
        if (other.source != "system loader" && !files::same_file(other.path, info_.path)) {
          info_.not_used.push_back(other.source + ": " + other.path);
        }
      }
      return true;
    }
    tried += "\n  - " + c.source + ": " + c.path + ": " + why;
    if (c.explicit_choice) {
      tried += "\n  (stopped here: " + c.source + " is an explicit choice; fix or unset it to search the other places)";
      break;
    }
  }
  if (!plan.notes.empty()) tried += "\nSearched before those, holding no OpenVINO C library:";
  for (const std::string& n : plan.notes) tried += "\n  - " + n;
  *error = "could not load the OpenVINO C library. Places tried, in order:" + tried +
           "\nFix: `pip install openvino` (2025.4.1 to 2026.x), or set OPENVINO_LIB_PATH "
           "to the full path of " +
           system_library_name() +
           " (or its versioned name), or name it explicitly: from Python, "
           "executorch_openvino.set_library_path(path); with executorch-openvino-run, --openvino-lib PATH.";
  return false;
}

std::vector<std::string> OpenVINOLibrary::available_devices(std::string* error) {
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

std::string OpenVINOLibrary::device_property(const std::string& device, const std::string& key, std::string* error) {
  if (!ensure_loaded(error)) return "";
  char* value = nullptr;
  if (api_.ov_core_get_property(core_, device.c_str(), key.c_str(), &value) != OK || !value) {
    *error = "could not read " + key + " of device " + device + ": " + last_openvino_message();
    return "";
  }
  std::string text(value);
  api_.ov_free(value);
  return text;
}

SearchPlan OpenVINOLibrary::search_plan() {
  std::lock_guard<std::mutex> lock(mutex_);
  return plan_locked();
}

SearchPlan OpenVINOLibrary::plan_locked() const {
  return plan_library_search(host_search_settings(explicit_path_, pip_dir_));
}

std::string OpenVINOLibrary::last_openvino_message() const {
  if (!api_.ov_get_last_err_msg) return "";
  const char* m = api_.ov_get_last_err_msg();
  return m ? std::string(m) : std::string();
}

}  // namespace executorch_openvino
