// statx answering EPERM, as sandboxes such as Docker's seccomp profile before
// 18.04 do: preloaded by tests/runtime/test_library_loading.py.
#include <errno.h>
int statx(int d, const char* p, int f, unsigned m, void* b) {
  errno = EPERM;
  return -1;
}
