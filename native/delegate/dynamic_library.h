// The platform's shared-library loader, behind one small interface.
//
// Linux/macOS: dlopen(RTLD_NOW | RTLD_LOCAL). Windows: LoadLibraryExW on an
// absolute path with LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
// LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, so the DLL's own folder, the system
// folders and folders added with AddDllDirectory are searched for its
// dependencies, never PATH or the current folder; relative paths are refused.
#pragma once

#include <string>
#include <vector>

namespace executorch_openvino {

// Opens `path`; returns nullptr and sets `error` to the loader's message.
// `dependency_dirs` are further folders searched for its dependencies (on
// Windows added with AddDllDirectory; elsewhere the library's RUNPATH decides
// and they must be empty).
void* open_library(const std::string& path, const std::vector<std::string>& dependency_dirs, std::string* error);
void* find_symbol(void* library, const char* name);
void close_library(void* library);

}  // namespace executorch_openvino
