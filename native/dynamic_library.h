// The platform's shared-library loader, behind one small interface.
//
// Linux/macOS: dlopen(RTLD_NOW | RTLD_LOCAL). Windows: LoadLibraryExW on an
// absolute path with LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
// LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, so the DLL's own folder and the system
// folders are searched for its dependencies, never PATH or the current folder.
#pragma once

#include <string>

namespace executorch_openvino {

// Opens `path`; returns nullptr and sets `error` to the loader's message.
void* open_library(const std::string& path, std::string* error);
void* find_symbol(void* library, const char* name);
void close_library(void* library);

}  // namespace executorch_openvino
