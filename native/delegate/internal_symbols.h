// Marks declarations that the delegate library's files share among
// themselves. The library exports its symbols by default (CMakeLists.txt),
// so without this every shared helper would become part of its ABI.
#pragma once

#if defined(__GNUC__)
#define EXOV_INTERNAL_BEGIN _Pragma("GCC visibility push(hidden)")
#define EXOV_INTERNAL_END _Pragma("GCC visibility pop")
#else
#define EXOV_INTERNAL_BEGIN
#define EXOV_INTERNAL_END
#endif
