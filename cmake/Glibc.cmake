# The Linux release build asks for nothing newer than glibc 2.28 and libstdc++
# 3.4.24 (manylinux_2_28, like executorch's wheels): libstdc++ and libgcc are
# linked statically with their symbols kept private, and glibc symbols are bound
# to their oldest versions (native/glibc_2_28/glibc_2_28.h). EXOV_GLIBC_2_28 OFF gives a
# build tied to this machine's glibc and libstdc++ (a manylinux_2_34 wheel with gcc 12).
#
# Set EXOV_SANITIZE (Sanitizers.cmake) before including this file: the
# sanitizer runtimes replace operator new and malloc in the whole process, and
# a private static libstdc++ would keep its own, so such a build is never 2.28.

set(EXOV_GLIBC_2_28_DIR "${CMAKE_CURRENT_LIST_DIR}/../native/glibc_2_28")
cmake_path(NORMAL_PATH EXOV_GLIBC_2_28_DIR)

if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT EXOV_SANITIZE)
  option(EXOV_GLIBC_2_28 "Linux: build for glibc 2.28 (manylinux_2_28)" ON)
else()
  set(EXOV_GLIBC_2_28 OFF)
endif()

# A library or executable of the release build.
function(exov_target_glibc_2_28 target)
  if(EXOV_GLIBC_2_28)
    target_sources(${target} PRIVATE "${EXOV_GLIBC_2_28_DIR}/glibc_2_28.cpp")
    target_compile_options(${target} PRIVATE -include "${EXOV_GLIBC_2_28_DIR}/glibc_2_28.h")
    # Before glibc 2.34 dlopen lives in libdl.so.2: name it, although this glibc needs no libdl.
    target_link_options(${target} PRIVATE -static-libstdc++ -Wl,--exclude-libs,ALL -Wl,--gc-sections
                        -Wl,--push-state,--no-as-needed -l:libdl.so.2 -Wl,--pop-state)
  endif()
endfunction()

# What an executable adds on x86_64 and aarch64: this glibc's startup object with its
# __libc_start_main call renamed (see native/glibc_2_28/glibc_2_28_executable.cpp).
function(exov_executable_glibc_2_28 target)
  if(EXOV_GLIBC_2_28 AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|aarch64")
    execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=Scrt1.o
                    OUTPUT_VARIABLE scrt1 OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
    set(startfiles "${CMAKE_CURRENT_BINARY_DIR}/startfiles")
    file(MAKE_DIRECTORY "${startfiles}")
    execute_process(COMMAND "${CMAKE_OBJCOPY}" --redefine-sym __libc_start_main=exov_libc_start_main
                            "${scrt1}" "${startfiles}/Scrt1.o" COMMAND_ERROR_IS_FATAL ANY)
    target_sources(${target} PRIVATE "${EXOV_GLIBC_2_28_DIR}/glibc_2_28_executable.cpp")
    # gcc looks for its startup files under -B folders first.
    target_link_options(${target} PRIVATE "-B${startfiles}/")
  endif()
endfunction()
