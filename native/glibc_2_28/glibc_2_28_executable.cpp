// Part of the glibc 2.28 build (glibc_2_28.h), for executables only.
//
// glibc 2.34 gave __libc_start_main a new symbol version, and the Scrt1.o
// startup object of a newer glibc calls that one (GLIBC_2.34), so an
// executable linked here would not start on glibc 2.28 to 2.33. The runner is
// therefore linked with a copy of Scrt1.o whose call is renamed (objcopy
// --redefine-sym, CMakeLists.txt) to exov_libc_start_main below, which calls
// the original version (GLIBC_2.2.5 on x86_64, GLIBC_2.17 on aarch64) that
// every glibc still exports.
//
// One difference to bridge: the new Scrt1.o passes no `init` function and
// glibc >= 2.34 then runs the executable's constructors itself, but glibc < 2.34
// expects `init` to run them (it was __libc_csu_init). Passing
// run_constructors as `init` works on both: glibc >= 2.34 calls a given
// `init` instead of running them itself ("legacy program"), so they run once.
// Destructors (DT_FINI_ARRAY) are the dynamic linker's job on every version.
#ifdef EXOV_GLIBC_BASE_VERSION  // glibc_2_28.h: x86_64 and aarch64

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <unistd.h>

extern "C" {
using MainFunction = int (*)(int, char**, char**);
using InitFunction = void (*)(int, char**, char**);
using ArrayFunction = void (*)(int, char**, char**);

int exov_original_libc_start_main(MainFunction, int, char**, InitFunction, void (*)(), void (*)(), void*);
__asm__(".symver exov_original_libc_start_main,__libc_start_main@" EXOV_GLIBC_BASE_VERSION);

// From the linker's default script and crti.o.
extern ArrayFunction __init_array_start[] __attribute__((visibility("hidden")));
extern ArrayFunction __init_array_end[] __attribute__((visibility("hidden")));
void _init();

static void run_constructors(int argc, char** argv, char** env) {
  _init();
  const std::size_t count = static_cast<std::size_t>(__init_array_end - __init_array_start);
  for (std::size_t i = 0; i < count; ++i) __init_array_start[i](argc, argv, env);
}

// libstdc++'s random.o, which the static libstdc++ brings along with its string
// code, refers to arc4random (GLIBC_2.36) for std::random_device. The runner
// never makes one; this hidden definition, from the kernel's entropy like
// glibc's, keeps the reference inside the executable.
__attribute__((visibility("hidden"))) uint32_t arc4random() {
  uint32_t value;
  if (getentropy(&value, sizeof value) != 0) std::abort();
  return value;
}

__attribute__((visibility("hidden"))) int exov_libc_start_main(MainFunction main, int argc, char** argv,
                                                               InitFunction init, void (*fini)(), void (*rtld_fini)(),
                                                               void* stack_end) {
  return exov_original_libc_start_main(main, argc, argv, init ? init : run_constructors, fini, rtld_fini, stack_end);
}
}

#endif
