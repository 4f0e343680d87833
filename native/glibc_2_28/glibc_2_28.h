// Force-included (-include) into every translation unit of the Linux release
// build, so the libraries ask for nothing newer than glibc 2.28: the
// manylinux_2_28 baseline of executorch's own wheels (Ubuntu 20.04, RHEL 8).
// auditwheel's manylinux_2_28 policy checks the result at repair time.
//
// glibc 2.34 moved dlopen and friends from libdl into libc under a new symbol
// version (GLIBC_2.34); every glibc still exports the original versions, which
// behave the same, so the references are bound to those. The same holds for
// pthread_create and pthread_join (std::thread), moved from libpthread.
#pragma once

#ifdef __linux__
#include <features.h>  // defines __GLIBC__; this header is read before any other
#endif
#if defined(__linux__) && defined(__GLIBC__)
#if defined(__x86_64__)
#define EXOV_GLIBC_BASE_VERSION "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define EXOV_GLIBC_BASE_VERSION "GLIBC_2.17"
#endif
#ifdef EXOV_GLIBC_BASE_VERSION
__asm__(".symver dlopen,dlopen@" EXOV_GLIBC_BASE_VERSION);
__asm__(".symver dlsym,dlsym@" EXOV_GLIBC_BASE_VERSION);
__asm__(".symver dlerror,dlerror@" EXOV_GLIBC_BASE_VERSION);
__asm__(".symver dlclose,dlclose@" EXOV_GLIBC_BASE_VERSION);
__asm__(".symver pthread_create,pthread_create@" EXOV_GLIBC_BASE_VERSION);
__asm__(".symver pthread_join,pthread_join@" EXOV_GLIBC_BASE_VERSION);
#endif
#endif
