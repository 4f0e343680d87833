#include "file_system.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>  // AT_FDCWD
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>  // makedev
#include <unistd.h>
#endif

namespace executorch_openvino {
namespace files {

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  char last = dir.back();
  bool has_separator = last == '/' || (separator() == '\\' && last == '\\');
  return has_separator ? dir + name : dir + separator() + name;
}

#ifdef _WIN32

std::wstring widen(const std::string& utf8) {
  int n = MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, nullptr, 0);
  std::wstring out(n > 0 ? n - 1 : 0, L'\0');
  if (n > 1) MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, &out[0], n);
  return out;
}

std::string with_backslashes(std::string path) {
  for (char& c : path) {
    if (c == '/') c = '\\';
  }
  return path;
}

namespace {
std::string narrow(const std::wstring& wide) {
  int n = WideCharToMultiByte(CP_UTF8, 0, wide.c_str(), -1, nullptr, 0, nullptr, nullptr);
  std::string out(n > 0 ? n - 1 : 0, '\0');
  if (n > 1) WideCharToMultiByte(CP_UTF8, 0, wide.c_str(), -1, &out[0], n, nullptr, nullptr);
  return out;
}
// A handle that follows links, for identity and final-path queries.
HANDLE open_for_query(const std::string& path) {
  return CreateFileW(widen(path).c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                     OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
}
// What the file or folder at `path` is, links followed (a dangling link does not exist).
bool query(const std::string& path, BY_HANDLE_FILE_INFORMATION* info) {
  HANDLE h = open_for_query(path);
  if (h == INVALID_HANDLE_VALUE) return false;
  bool ok = GetFileInformationByHandle(h, info);
  CloseHandle(h);
  return ok;
}
}  // namespace

char separator() { return '\\'; }

bool is_absolute(const std::string& p) {
  auto slash = [](char c) { return c == '\\' || c == '/'; };
  bool drive = p.size() > 2 && p[1] == ':' && slash(p[2]);
  bool unc = p.size() > 2 && slash(p[0]) && slash(p[1]);
  return drive || unc;
}

bool exists(const std::string& path) {
  BY_HANDLE_FILE_INFORMATION info;
  return query(path, &info);
}

bool is_directory(const std::string& path) {
  BY_HANDLE_FILE_INFORMATION info;
  return query(path, &info) && (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY);
}

bool is_regular_file(const std::string& path) {
  BY_HANDLE_FILE_INFORMATION info;
  return query(path, &info) && !(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY);
}

std::vector<std::string> list_directory(const std::string& dir) {
  std::vector<std::string> names;
  if (dir.empty()) return names;  // "" + "\*" would list the current folder's drive root
  WIN32_FIND_DATAW found;
  HANDLE h = FindFirstFileW(widen(join(dir, "*")).c_str(), &found);
  if (h == INVALID_HANDLE_VALUE) return names;
  do {
    std::wstring name = found.cFileName;
    if (name != L"." && name != L"..") names.push_back(narrow(name));
  } while (FindNextFileW(h, &found));
  FindClose(h);
  return names;
}

std::string canonical(const std::string& path) {
  HANDLE h = open_for_query(path);
  if (h == INVALID_HANDLE_VALUE) return "";
  std::wstring out(MAX_PATH, L'\0');
  DWORD n = GetFinalPathNameByHandleW(h, &out[0], static_cast<DWORD>(out.size()), FILE_NAME_NORMALIZED);
  if (n >= out.size()) {
    out.resize(n + 1);
    n = GetFinalPathNameByHandleW(h, &out[0], static_cast<DWORD>(out.size()), FILE_NAME_NORMALIZED);
  }
  CloseHandle(h);
  if (n == 0 || n >= out.size()) return "";
  out.resize(n);
  // "\\?\C:\x" -> "C:\x"; "\\?\UNC\server\share" -> "\\server\share"
  if (out.rfind(L"\\\\?\\UNC\\", 0) == 0) return narrow(L"\\\\" + out.substr(8));
  if (out.rfind(L"\\\\?\\", 0) == 0) return narrow(out.substr(4));
  return narrow(out);
}

bool same_file(const std::string& a, const std::string& b) {
  BY_HANDLE_FILE_INFORMATION ia, ib;
  return query(a, &ia) && query(b, &ib) && ia.dwVolumeSerialNumber == ib.dwVolumeSerialNumber &&
         ia.nFileIndexHigh == ib.nFileIndexHigh && ia.nFileIndexLow == ib.nFileIndexLow;
}

#else

char separator() { return '/'; }

bool is_absolute(const std::string& path) { return !path.empty() && path[0] == '/'; }

namespace {
// What stat() says about `path`, following links. On Linux through statx
// (glibc 2.28): glibc 2.33 made stat() an exported symbol of its own version,
// which a manylinux_2_28 library must not need.
struct FileStatus {
  bool exists = false;
  bool directory = false;
  bool regular = false;
  unsigned long long device = 0, inode = 0;
};
FileStatus status_of(const std::string& path) {
  FileStatus s;
#ifdef __linux__
  struct statx st;
  if (statx(AT_FDCWD, path.c_str(), 0, STATX_TYPE | STATX_INO, &st) == 0) {
    s.directory = S_ISDIR(st.stx_mode);
    s.regular = S_ISREG(st.stx_mode);
    s.device = makedev(st.stx_dev_major, st.stx_dev_minor);  // as stat's st_dev below
    s.inode = st.stx_ino;
  } else if (errno == ENOSYS || errno == EPERM) {
    // Kernels before 4.11, and sandboxes that deny statx (Docker's seccomp profile before
    // 18.04): the fstatat system call itself, whose struct stat is glibc's on x86_64 and arm64.
    struct stat old;
    if (syscall(SYS_newfstatat, AT_FDCWD, path.c_str(), &old, 0) != 0) return s;
    s.directory = S_ISDIR(old.st_mode);
    s.regular = S_ISREG(old.st_mode);
    s.device = static_cast<unsigned long long>(old.st_dev);
    s.inode = static_cast<unsigned long long>(old.st_ino);
  } else {
    return s;
  }
#else
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return s;
  s.directory = S_ISDIR(st.st_mode);
  s.regular = S_ISREG(st.st_mode);
  s.device = static_cast<unsigned long long>(st.st_dev);
  s.inode = static_cast<unsigned long long>(st.st_ino);
#endif
  s.exists = true;
  return s;
}
}  // namespace

bool exists(const std::string& path) { return status_of(path).exists; }
bool is_directory(const std::string& path) { return status_of(path).directory; }
bool is_regular_file(const std::string& path) { return status_of(path).regular; }  // links followed

std::vector<std::string> list_directory(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d) return names;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

std::string canonical(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (!resolved) return "";
  std::string out(resolved);
  free(resolved);
  return out;
}

bool same_file(const std::string& a, const std::string& b) {
  FileStatus sa = status_of(a), sb = status_of(b);
  return sa.exists && sb.exists && sa.device == sb.device && sa.inode == sb.inode;
}

#endif

}  // namespace files
}  // namespace executorch_openvino
