// The delegate's OpenVINO loader as a Windows DLL with one C entry point: the
// binary of the win_amd64 wheel that `nox -s windows_repair` builds, repairs
// with delvewheel and then loads under wine (loader_check.exe --via-dll).
//
// It links mingw-w64's shared C++ runtime (libstdc++-6.dll, libgcc_s_seh-1.dll,
// libwinpthread-1.dll), which no Windows machine has: the repair must vendor them.
#include "openvino_library.h"

#include <cstdio>
#include <string>

// Loads the OpenVINO C library the way the delegate does, `pip_dir` standing for
// the pip package's libs folder (NULL or "" for none). Writes "loaded:",
// "source:" and "version:" lines, or one "error:" line, into `report`
// (truncated to `size` bytes); returns 0 when OpenVINO loaded, 1 otherwise.
extern "C" __declspec(dllexport) int exov_load_openvino(const char* pip_dir, char* report, size_t size) {
  using executorch_openvino::OpenVINOLibrary;
  OpenVINOLibrary& library = OpenVINOLibrary::instance();
  library.set_pip_library_dir(pip_dir ? pip_dir : "");
  std::string error, text;
  bool loaded = library.ensure_loaded(&error);
  if (loaded) {
    executorch_openvino::LoadedLibraryInfo info = library.info();
    text = "loaded: " + info.path + "\nsource: " + info.source + "\nversion: " + info.version + "\n";
  } else {
    text = "error: " + error + "\n";
  }
  if (size > 0) std::snprintf(report, size, "%s", text.c_str());
  return loaded ? 0 : 1;
}
