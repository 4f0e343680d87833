// Part of the glibc 2.28 build (glibc_2_28.h).
//
// libstdc++ 11+ built on glibc >= 2.32 reads glibc's __libc_single_threaded
// (GLIBC_2.32) to skip atomic reference counting in single-threaded programs.
// This library's own definition, hidden from other libraries, satisfies those
// references at link time, so no dependency on GLIBC_2.32 is recorded. It is
// always 0 ("maybe multi-threaded"): atomics are always used, which is correct
// in every process, only without that shortcut.
extern "C" {
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
}
