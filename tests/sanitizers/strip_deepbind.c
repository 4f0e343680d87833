// Preloaded before the sanitizer runtimes by `nox -s sanitizers`.
//
// oneTBB (inside the openvino package) dlopens libtbbbind with RTLD_DEEPBIND,
// which AddressSanitizer refuses outright: the process exits at the first
// OpenVINO load ("incompatible with sanitizer runtime",
// github.com/google/sanitizers/issues/611). Dropping the flag lets that library
// resolve its symbols the usual way, which is what the sanitizer needs anyway.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef void* (*dlopen_fn)(const char*, int);

void* dlopen(const char* file, int mode) {
  static dlopen_fn next = NULL;
  if (next == NULL) next = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
  return next(file, mode & ~RTLD_DEEPBIND);
}
