#include "dynamic_library.h"

#include "file_system.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace executorch_openvino {

#ifdef _WIN32
namespace {
std::string last_windows_error() {
  DWORD code = GetLastError();
  char* text = nullptr;
  FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                 code, 0, reinterpret_cast<char*>(&text), 0, nullptr);
  std::string msg = "Windows error " + std::to_string(code);
  if (text) {
    msg += ": ";
    msg += text;
    LocalFree(text);
  }
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
  return msg;
}
}  // namespace

void* open_library(const std::string& path, const std::vector<std::string>& dependency_dirs, std::string* error) {
  // LoadLibraryExW with LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR requires an absolute path, and
  // with forward slashes in it Windows does not search the DLL's own folder.
  if (!files::is_absolute(path)) {
    *error = "refused: '" + path + "' is not an absolute path (relative names would search PATH)";
    return nullptr;
  }
  for (const std::string& dir : dependency_dirs) {
    // Kept for the process: OpenVINO loads its plugins, and they TBB, later.
    if (!files::is_absolute(dir) || !AddDllDirectory(files::widen(files::with_backslashes(dir)).c_str())) {
      *error = "could not add the dependency folder '" + dir +
               "': " + (files::is_absolute(dir) ? last_windows_error() : std::string("not an absolute path"));
      return nullptr;
    }
  }
  HMODULE h = LoadLibraryExW(files::widen(files::with_backslashes(path)).c_str(), nullptr,
                             LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (!h) *error = last_windows_error();
  return reinterpret_cast<void*>(h);
}

void* find_symbol(void* library, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(reinterpret_cast<HMODULE>(library), name));
}

void close_library(void* library) { FreeLibrary(reinterpret_cast<HMODULE>(library)); }

#else

void* open_library(const std::string& path, const std::vector<std::string>& dependency_dirs, std::string* error) {
  if (!dependency_dirs.empty()) {
    *error = "dependency folders are only supported on Windows; here the library's RUNPATH finds them";
    return nullptr;
  }
  dlerror();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* msg = dlerror();
    *error = msg ? msg : "dlopen failed without a message";
  }
  return h;
}

void* find_symbol(void* library, const char* name) { return dlsym(library, name); }

void close_library(void* library) { dlclose(library); }

#endif

}  // namespace executorch_openvino
