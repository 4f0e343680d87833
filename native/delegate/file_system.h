// The few file-system queries the library search needs, on the host's own API
// (POSIX, or Win32 with UTF-8 paths widened).
//
// Not std::filesystem: libstdc++ exports it only from GLIBCXX_3.4.26 on, and
// its static copy pulls in locale code bound to glibc 2.33+ symbols; both would
// lift the Linux wheel above manylinux_2_28 (native/glibc_2_28/glibc_2_28.h).
#pragma once

#include <string>
#include <vector>

namespace executorch_openvino {
namespace files {

// The host's separator: '\' on Windows, '/' elsewhere.
char separator();
// `dir` and `name` joined with one separator.
std::string join(const std::string& dir, const std::string& name);

// Windows: "C:\x" or "\\server\share" (either slash); elsewhere: "/x".
bool is_absolute(const std::string& path);

bool exists(const std::string& path);
bool is_directory(const std::string& path);
// A regular file, or a link to one.
bool is_regular_file(const std::string& path);
// The names in `dir` (without "." and ".."), unsorted; empty when it cannot be read.
std::vector<std::string> list_directory(const std::string& dir);
// The absolute path with every link resolved; "" when `path` does not exist.
std::string canonical(const std::string& path);
// True when both name the same existing file (links and hard links included).
bool same_file(const std::string& a, const std::string& b);

#ifdef _WIN32
// UTF-8 to the UTF-16 that Windows' W functions take.
std::wstring widen(const std::string& utf8);
// `path` with every '/' written as '\' (INTEL_OPENVINO_DIR=C:/openvino is common).
std::string with_backslashes(std::string path);
#endif

}  // namespace files
}  // namespace executorch_openvino
