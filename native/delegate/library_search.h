// Where the OpenVINO C library lives on each platform, and the one order in
// which the delegate looks for it.
//
// The platform is a parameter, not the host: every layout below is unit-tested
// on any machine against simulated folders (tests/runtime/test_library_search.py).
// Apart from listing folders this code has no side effects; loading is
// openvino_library.cpp's job.
//
// Search order; the first place that is configured or present is tried first,
// and the next only when it fails to load:
//   1. an explicit path: executorch_openvino.set_library_path()   (explicit)
//   2. OPENVINO_LIB_PATH, the path of the library file             (explicit)
//   3. the pip `openvino` package's library folder (Python passes it at import)
//   4. an OpenVINO install tree named by INTEL_OPENVINO_DIR (setupvars sets it)
//   5. a conda environment: CONDA_PREFIX
//   6. the system loader, by the unversioned name (never on Windows, where a
//      bare name would search PATH and the current folder)
// An explicit choice that fails stops the search, so a typo never silently
// loads another OpenVINO. Places 3-5 that are present but not reached are
// reported, so which OpenVINO was chosen when several exist is never a guess.
//
// File names and folders, per platform (docs/design.md: the openvino 2025.4.1 and
// 2026.4.1 wheels and release archives):
//   Linux    libopenvino_c.so[.<version>]   pip: openvino/libs
//            tree: runtime/lib/intel64 or runtime/lib/aarch64     conda: lib
//   Windows  openvino_c.dll             pip: openvino\libs (TBB alongside)
//            tree: runtime\bin\intel64\Release, TBB in runtime\3rdparty\tbb\bin
//            conda: Library\bin
//   macOS    libopenvino_c[.<abi>].dylib   pip: openvino/libs
//            tree: runtime/lib/arm64/Release or runtime/lib/intel64/Release
//            conda: lib
// Only regular files (or links to them) with exactly these names count (not
// libopenvino_c.so.2641.debug); where a folder holds several versions the
// highest version number wins, so the choice is stable.
#pragma once

#include <string>
#include <vector>

namespace executorch_openvino {

enum class Platform { kLinux, kWindows, kMacOS };
enum class Architecture { kX86_64, kArm64 };

struct SearchSettings {
  Platform platform;
  Architecture architecture;
  std::string explicit_path;  // set_library_path(), "" when unset
  std::string lib_path_env;   // OPENVINO_LIB_PATH
  std::string pip_dir;        // the pip package's libs folder, "" when not installed
  std::string install_tree;   // INTEL_OPENVINO_DIR
  std::string conda_prefix;   // CONDA_PREFIX
};

struct LibraryCandidate {
  std::string path;                          // a file, or a bare name for the system loader
  std::string source;                        // which place of the search order, human-readable
  bool explicit_choice = false;              // failure stops the search
  std::vector<std::string> dependency_dirs;  // extra folders the loader must search (TBB on Windows)
};

struct SearchPlan {
  std::vector<LibraryCandidate> candidates;  // in search order
  std::vector<std::string> notes;            // places looked at that hold no library
};

// The platform this library was compiled for.
Platform host_platform();

// The settings of this process: the host platform and environment variables.
SearchSettings host_search_settings(const std::string& explicit_path, const std::string& pip_dir);

SearchPlan plan_library_search(const SearchSettings& settings);

// The unversioned file name of the C library on `platform` (libopenvino_c.so, ...).
const char* c_library_file_name(Platform platform);

// The C library file inside `dir` on `platform` (see above), or "" when there is none.
std::string find_c_library(Platform platform, const std::string& dir);

// True for the C library's file names on `platform`.
bool is_c_library_name(Platform platform, const std::string& name);

}  // namespace executorch_openvino
