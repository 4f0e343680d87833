#include "dynamic_library.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace executorch_openvino {

#ifdef _WIN32
namespace {
std::wstring widen(const std::string& utf8) {
  int n = MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, nullptr, 0);
  std::wstring out(n > 0 ? n - 1 : 0, L'\0');
  if (n > 1) MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, &out[0], n);
  return out;
}
std::string last_windows_error() {
  DWORD code = GetLastError();
  char* text = nullptr;
  FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                     FORMAT_MESSAGE_IGNORE_INSERTS,
                 nullptr, code, 0, reinterpret_cast<char*>(&text), 0, nullptr);
  std::string msg = "Windows error " + std::to_string(code);
  if (text) {
    msg += ": ";
    msg += text;
    LocalFree(text);
  }
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
  return msg;
}

bool is_absolute(const std::wstring& p) {
  bool drive = p.size() > 2 && p[1] == L':' && (p[2] == L'\\' || p[2] == L'/');
  bool unc = p.size() > 2 && (p[0] == L'\\' || p[0] == L'/') && (p[1] == L'\\' || p[1] == L'/');
  return drive || unc;
}
}  // namespace

void* open_library(const std::string& path, const std::vector<std::string>& dependency_dirs,
                   std::string* error) {
  std::wstring wide = widen(path);
  // LoadLibraryExW with LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR requires an absolute path.
  if (!is_absolute(wide)) {
    *error = "refused: '" + path + "' is not an absolute path (relative names would search PATH)";
    return nullptr;
  }
  for (const std::string& dir : dependency_dirs) {
    std::wstring wide_dir = widen(dir);
    // Kept for the process: OpenVINO loads its plugins, and they TBB, later.
    if (!is_absolute(wide_dir) || !AddDllDirectory(wide_dir.c_str())) {
      *error = "could not add the dependency folder '" + dir + "': " +
               (is_absolute(wide_dir) ? last_windows_error() : std::string("not an absolute path"));
      return nullptr;
    }
  }
  HMODULE h = LoadLibraryExW(wide.c_str(), nullptr,
                             LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (!h) *error = last_windows_error();
  return reinterpret_cast<void*>(h);
}

void* find_symbol(void* library, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(reinterpret_cast<HMODULE>(library), name));
}

void close_library(void* library) { FreeLibrary(reinterpret_cast<HMODULE>(library)); }

#else

void* open_library(const std::string& path, const std::vector<std::string>& dependency_dirs,
                   std::string* error) {
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
